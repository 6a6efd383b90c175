"""How the command line ends: bad input (posecards.errors.PosecardsError) gets one line on stderr
and its exit code (2); anything else is an internal error: one line saying so and how to report
it, exit code 70, and the traceback with ``--debug`` or ``POSECARDS_DEBUG=1``."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import typer

from posecards.errors import PosecardsError

INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug in posecards, not a problem with the input
DEBUG = {"on": False}


def fail(message: str) -> NoReturn:
    """Bad input: one line on stderr, exit code 2."""
    raise PosecardsError(message)


def _debug() -> bool:
    return DEBUG["on"] or os.environ.get("POSECARDS_DEBUG", "") not in ("", "0")


F = TypeVar("F", bound=Callable[..., Any])


def guarded(fn: F) -> F:
    """The one place errors become exit codes: PosecardsError -> its line and code (2; 130 when
    interrupted); any other exception -> an internal-error line and 70 (with ``--debug``
    or POSECARDS_DEBUG=1, the traceback first)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except PosecardsError as exc:
            if _debug():
                import traceback

                traceback.print_exc()
            typer.echo(exc.line(), err=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("posecards: interrupted", err=True)
            raise typer.Exit(130) from None
        except Exception as exc:
            if _debug():
                import traceback

                traceback.print_exc()
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            what = type(exc).__name__ + (f": {first}" if first else "")
            how = "" if _debug() else "; run it again with --debug (posecards --debug ...) and"
            typer.echo(
                f"posecards: internal error ({what}): this is a bug in posecards, not a problem "
                f"with your input{how} report the command and its output to the posecards "
                "developers",
                err=True,
            )
            raise typer.Exit(INTERNAL_ERROR) from None

    return wrapper  # type: ignore[return-value]


def write_stdout(text: str) -> None:
    """Print to stdout; a reader that stopped reading (``posecards list | head``) ends the
    command quietly with exit code 0."""

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # no more output can go anywhere: point stdout at /dev/null so the final flush is quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None
