"""What posecards reports as a problem with its input, as opposed to a bug in posecards.

``PosecardsError`` and its subclasses are bad input (an option, a card file, a checkpoint, an
output folder that cannot be written): the command line prints one line and exits 2. Anything
else that escapes a command is an internal error: the command line says so and how to report it
(``posecards --debug ...`` or ``POSECARDS_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations


class PosecardsError(Exception):
    """Bad input: one line on stderr (``line()``), exit code ``exit_code``."""

    exit_code = 2

    def line(self) -> str:
        text = str(self).strip()
        return f"posecards: error: {text.splitlines()[0] if text else type(self).__name__}"


class Interrupted(PosecardsError):
    """Ctrl-C or SIGTERM: the outputs were left as they were."""

    exit_code = 130

    def line(self) -> str:
        return f"posecards: interrupted; {self}"
