"""The `posecards` command line: parses options into posecards.config and calls
posecards.commands (the only layer it talks to).

Heavy libraries (torch, umap, matplotlib) are imported only by the commands that need them.
Bad input (posecards.errors.PosecardsError) gets one line on stderr and exit code 2; anything
else is an internal error: one line saying so and how to report it, exit code 70, and the
traceback with ``--debug`` or ``POSECARDS_DEBUG=1``.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from posecards import commands
from posecards._version import __version__
from posecards.config import (
    CARD_IDS,
    DECK_CARD_IDS,
    DECK_FORMATS,
    FORMATS,
    INSPECT_FORMATS,
    LANGS,
    MAX_BASE,
    MAX_D_MODEL,
    MAX_JOBS,
    MAX_MEASURE_SEEDS,
    MAX_MEASURE_STEPS,
    MAX_POSITIONS,
    MAX_SCALE,
    QUICK_SEEDS,
    QUICK_STEPS,
    SIZES,
    SVG_TEXTS,
    THEMES,
    BuildConfig,
    DeckConfig,
    ExploreConfig,
    InspectConfig,
    Look,
    MeasureConfig,
    PEParams,
)
from posecards.errors import PosecardsError

app = typer.Typer(
    name="posecards",
    help="Computed, bilingual figure cards that explain positional encodings in Transformers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_DEFAULT = BuildConfig()
_FIGURE_OUT = Path("figure.png")
_CARDS = ",".join(map(str, _DEFAULT.cards))
_LANGS = ",".join(_DEFAULT.langs)
_FORMATS = ",".join(_DEFAULT.formats)


INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug in posecards, not a problem with the input
_DEBUG = {"on": False}


def fail(message: str) -> NoReturn:
    """Bad input: one line on stderr, exit code 2."""
    raise PosecardsError(message)


def _debug() -> bool:
    return _DEBUG["on"] or os.environ.get("POSECARDS_DEBUG", "") not in ("", "0")


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


def _command(*args: Any, **kwargs: Any) -> Callable[[F], F]:
    """``@app.command(...)`` with the error handling of ``guarded``."""

    def register(fn: F) -> F:
        app.command(*args, **kwargs)(guarded(fn))
        return fn

    return register


def _version(value: bool) -> None:
    if value:
        typer.echo(f"posecards {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            help="On an internal error, print the traceback (also: POSECARDS_DEBUG=1).",
        ),
    ] = False,
) -> None:
    """Computed, bilingual figure cards that explain positional encodings in Transformers."""
    _DEBUG["on"] = debug


def _progress(quiet: bool) -> Callable[[str], None]:
    """Progress lines on stderr, each with the seconds since the command started."""
    t0 = time.perf_counter()

    def say(msg: str) -> None:
        if not quiet:
            typer.echo(f"[{time.perf_counter() - t0:5.1f}s] {msg}", err=True)

    return say


def _choices(option: str, raw: str, valid: tuple[str, ...]) -> tuple[str, ...]:
    items = tuple(x.strip().lower() for x in raw.split(",") if x.strip())
    if not items:
        fail(f"{option} is empty; choose from: {','.join(valid)}")
    for x in items:
        if x not in valid:
            fail(f"{option}: unknown value {x!r}; choose from: {','.join(valid)}")
    return tuple(v for v in valid if v in items)  # one canonical order: same options, same site


def _jobs(jobs: int | None) -> int:
    import os

    if jobs is None:
        return os.cpu_count() or 1
    if not 1 <= jobs <= MAX_JOBS:
        fail(f"--jobs must be from 1 to {MAX_JOBS}, got {jobs}")
    return jobs


def _one(option: str, raw: str, valid: tuple[str, ...]) -> str:
    value = raw.strip().lower()
    if value not in valid:
        fail(f"{option}: unknown value {raw!r}; choose one of: {', '.join(valid)}")
    return value


def _scale(scale: int) -> int:
    if not 1 <= scale <= MAX_SCALE:
        fail(f"--scale must be from 1 to {MAX_SCALE}, got {scale}")
    return scale


def _params(d_model: int, base: float, positions: int) -> PEParams:
    if d_model <= 0 or d_model % 2 or d_model > MAX_D_MODEL:
        fail(f"--d-model must be an even integer from 2 to {MAX_D_MODEL}, got {d_model}")
    if not math.isfinite(base) or base <= 1 or base > MAX_BASE:
        fail(f"--base must be a number greater than 1 and at most {MAX_BASE:.4g}, got {base}")
    if positions < 2 or positions > MAX_POSITIONS:
        fail(f"--positions must be from 2 to {MAX_POSITIONS}, got {positions}")
    return PEParams(d_model=d_model, base=base, positions=positions)


D = PEParams()
OptDModel = Annotated[int, typer.Option("--d-model", help="Model width d_model (even).")]
OptBase = Annotated[float, typer.Option("--base", help="Frequency base of sinusoids and RoPE.")]
OptPositions = Annotated[int, typer.Option("--positions", help="Number of positions shown.")]
OptTheme = Annotated[str, typer.Option("--theme", help=f"One of: {', '.join(THEMES)}.")]
OptLang = Annotated[str, typer.Option("--lang", help=f"Comma list of: {','.join(LANGS)}.")]
OptFormat = Annotated[str, typer.Option("--format", help=f"Comma list of: {','.join(FORMATS)}.")]
OptSize = Annotated[str, typer.Option("--size", help=f"One of: {', '.join(SIZES)}.")]
OptJobs = Annotated[
    int | None, typer.Option("--jobs", help="Parallel processes (default: one per core).")
]
OptQuiet = Annotated[bool, typer.Option("--quiet", help="No progress output.")]
OptScale = Annotated[
    int | None,
    typer.Option(
        "--scale",
        help=f"PNG resolution: N times the pixels (1 to {MAX_SCALE}; 2 = 3840 x 2160 for a "
        "slide card), tagged to print at slide size [default: 1].",
    ),
]
OptSvgText = Annotated[
    str | None,
    typer.Option(
        "--svg-text",
        help="SVG text: outline (glyphs as paths, drawn the same without fonts; the text kept "
        "as titles) or live (<text> for editing where the fonts are installed) "
        f"[default: {_DEFAULT.look.svg_text}].",
    ),
]
OptDModelOrNone = Annotated[
    int | None,
    typer.Option("--d-model", help=f"Model width d_model (even) [default: {D.d_model}]."),
]
OptBaseOrNone = Annotated[
    float | None,
    typer.Option("--base", help=f"Frequency base of sinusoids and RoPE [default: {D.base:g}]."),
]
OptPositionsOrNone = Annotated[
    int | None,
    typer.Option("--positions", help=f"Number of positions shown [default: {D.positions}]."),
]
OptThemeOrNone = Annotated[
    str | None,
    typer.Option("--theme", help=f"One of: {', '.join(THEMES)} [default: {_DEFAULT.look.theme}]."),
]
OptLangOrNone = Annotated[
    str | None,
    typer.Option("--lang", help=f"Comma list of: {','.join(LANGS)} [default: {_LANGS}]."),
]
OptFormatOrNone = Annotated[
    str | None,
    typer.Option("--format", help=f"Comma list of: {','.join(FORMATS)} [default: {_FORMATS}]."),
]
OptSizeOrNone = Annotated[
    str | None,
    typer.Option("--size", help=f"One of: {', '.join(SIZES)} [default: {_DEFAULT.look.size}]."),
]


@_command()
def build(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = _DEFAULT.out,
    cards: Annotated[
        str | None, typer.Option("--cards", help=f"Comma list of card numbers [default: {_CARDS}].")
    ] = None,
    lang: OptLangOrNone = None,
    format: OptFormatOrNone = None,
    theme: OptThemeOrNone = None,
    size: OptSizeOrNone = None,
    d_model: OptDModelOrNone = None,
    base: OptBaseOrNone = None,
    positions: OptPositionsOrNone = None,
    scale: OptScale = None,
    svg_text: OptSvgText = None,
    jobs: OptJobs = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Check that DIR is what this build would make (its recipe and file hashes, "
            "without drawing); write nothing. Options not given come from DIR's manifest.",
        ),
    ] = False,
    render: Annotated[
        bool,
        typer.Option(
            "--render",
            help="With --check: also render afresh and compare (PNG by pixel RMS, SVG and HTML "
            "after renaming generated ids). Slow.",
        ),
    ] = False,
    quiet: OptQuiet = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Ignore the build cache; render everything.")
    ] = False,
) -> None:
    """Build the cards into DIR: PNG/SVG/PDF cards and figures, HTML pages, index, manifest."""
    given: dict[str, Any] = {}
    if cards is not None:
        card_ids = _choices("--cards", cards, tuple(map(str, CARD_IDS)))
        given["cards"] = tuple(sorted(int(c) for c in card_ids))
    if lang is not None:
        given["langs"] = _choices("--lang", lang, LANGS)
    if format is not None:
        given["formats"] = _choices("--format", format, FORMATS)
    if theme is not None:
        given["theme"] = _one("--theme", theme, THEMES)
    if size is not None:
        given["size"] = _one("--size", size, SIZES)
    if scale is not None:
        given["scale"] = _scale(scale)
    if svg_text is not None:
        given["svg_text"] = _one("--svg-text", svg_text, SVG_TEXTS)
    given.update(_given_params(d_model, base, positions))
    commands.not_a_folder(out)
    if render and not check:
        fail("--render goes with --check (it compares DIR with a fresh render)")
    cfg = commands.build_config(
        out, given, check=check, jobs=_jobs(jobs), quiet=quiet, cache=not no_cache
    )
    if check:
        _report(cfg.out, commands.check(cfg, given, render, _progress(quiet)))
    commands.build(cfg, _progress(quiet))


def _given_params(d_model: int | None, base: float | None, positions: int | None) -> dict[str, Any]:
    """The PE parameters set on the command line (checked), by name."""
    if d_model is None and base is None and positions is None:
        return {}
    p = _params(
        D.d_model if d_model is None else d_model,
        D.base if base is None else base,
        D.positions if positions is None else positions,
    )
    given: dict[str, Any] = {}
    for name, raw, value in (
        ("d_model", d_model, p.d_model),
        ("base", base, p.base),
        ("positions", positions, p.positions),
    ):
        if raw is not None:
            given[name] = value
    return given


def _report(out: Path, verdict: Any) -> NoReturn:
    """A --check verdict on stdout: exit 0 when fresh, 1 with one line per reason when not."""
    if verdict.reasons:
        typer.echo(f"{len(verdict.stale)} of {verdict.files} file(s) out of date in {out}:")
        for line in verdict.reasons:
            typer.echo(f"  {line}")
        raise typer.Exit(1)
    typer.echo(f"{out} is up to date ({verdict.files} files)")
    raise typer.Exit(0)


@_command()
def deck(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = DeckConfig.out,
    lang: OptLangOrNone = None,
    format: Annotated[
        str | None,
        typer.Option("--format", help=f"Comma list of: {','.join(DECK_FORMATS)} [default: both]."),
    ] = None,
    cards: Annotated[
        str | None,
        typer.Option(
            "--cards",
            help=f"Comma list of card numbers [default: {','.join(map(str, DECK_CARD_IDS))}].",
        ),
    ] = None,
    theme: OptThemeOrNone = None,
    d_model: OptDModelOrNone = None,
    base: OptBaseOrNone = None,
    positions: OptPositionsOrNone = None,
    jobs: OptJobs = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Check that DIR is what this deck build would make (its recipe and file "
            "hashes, without drawing); write nothing. Options not given come from DIR's manifest.",
        ),
    ] = False,
    quiet: OptQuiet = False,
) -> None:
    """Build the lecture deck into DIR/<lang>/: deck.pptx (speaker notes), deck.pdf, slide
    pictures and animations."""
    given: dict[str, Any] = {}
    if cards is not None:
        card_ids = _choices("--cards", cards, tuple(map(str, DECK_CARD_IDS)))
        given["cards"] = tuple(sorted(int(c) for c in card_ids))
    if lang is not None:
        given["langs"] = _choices("--lang", lang, LANGS)
    if format is not None:
        given["formats"] = _choices("--format", format, DECK_FORMATS)
    if theme is not None:
        given["theme"] = _one("--theme", theme, THEMES)
    given.update(_given_params(d_model, base, positions))
    commands.not_a_folder(out)
    cfg = commands.deck_config(out, given, check=check, jobs=_jobs(jobs), quiet=quiet, cache=True)
    if check:
        _report(cfg.out, commands.check(cfg, given))
    commands.deck(cfg, _progress(quiet))


@_command("inspect")
def inspect_model(
    path: Annotated[
        str,
        typer.Argument(
            help="Local model folder (config.json + weights), .safetensors, .gguf or config.json."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output folder (default: out/inspect/<model name>)."),
    ] = None,
    lang: OptLang = _LANGS,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help=f"Comma list of: {','.join(INSPECT_FORMATS)} (json: the layer-by-layer reading).",
        ),
    ] = _FORMATS,
    theme: OptTheme = _DEFAULT.look.theme,
    size: OptSize = _DEFAULT.look.size,
    tensor: Annotated[
        str | None,
        typer.Option("--tensor", help="Read this 2-D tensor as the position table."),
    ] = None,
    offset: Annotated[
        int | None,
        typer.Option(
            "--offset", help="Table rows before position 0 (default: from the model type)."
        ),
    ] = None,
    weights: Annotated[
        bool,
        typer.Option(
            "--weights",
            help="RoPE models: read the q/k weights, layer by layer, and draw how the trained "
            "model uses each frequency.",
        ),
    ] = False,
    jobs: OptJobs = None,
    quiet: OptQuiet = False,
) -> None:
    """Build the inspection card of a local model: its learned table, RoPE or ALiBi settings."""
    if offset is not None and offset < 0:
        fail(f"--offset must be 0 or more, got {offset}")
    cfg = InspectConfig(
        out=out,
        langs=_choices("--lang", lang, LANGS),
        formats=_choices("--format", format, INSPECT_FORMATS),
        look=Look(theme=_one("--theme", theme, THEMES), size=_one("--size", size, SIZES)),
        tensor=tensor,
        offset=offset,
        weights=weights,
        jobs=_jobs(jobs),
        quiet=quiet,
    )
    commands.not_a_folder(out)
    commands.inspect(path, cfg, _progress(quiet))


def _stdout(text: str) -> None:
    """Print to stdout; a reader that stopped reading (``posecards list | head``) ends the
    command quietly with exit code 0."""
    import os

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # no more output can go anywhere: point stdout at /dev/null so the final flush is quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None


def _figure_id(raw: str) -> str:
    """A known figure id (case-insensitive), or one line naming the nearest ones."""
    import difflib

    ids = commands.figure_ids()
    value = raw.strip().lower()
    if value in ids:
        return value
    near = difflib.get_close_matches(value, list(ids), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(near)}? " if near else ""
    fail(f"unknown figure id {raw!r}; {hint}'posecards list' shows all ids")


_EXPLORE = ExploreConfig()


@_command()
def explore(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output HTML file.")] = _EXPLORE.out,
    lang: Annotated[
        str, typer.Option("--lang", help=f"Language it opens in: {', '.join(LANGS)}.")
    ] = _EXPLORE.lang,
    theme: OptTheme = _EXPLORE.theme,
) -> None:
    """Write the interactive explorer: one offline HTML file that recomputes every view."""
    cfg = ExploreConfig(
        out=out, lang=_one("--lang", lang, LANGS), theme=_one("--theme", theme, THEMES)
    )
    if out.exists() and out.is_dir():
        fail(f"--out {out} is a folder")
    if out.suffix.lower() not in (".html", ".htm"):
        fail(f"--out must end in .html, got {out.name!r}")
    if why := commands.writable(out.parent if str(out.parent) else Path(".")):
        fail(f"cannot write to --out {out}: {why}")
    size = commands.explore(cfg)
    typer.echo(f"wrote {out} ({size:,} bytes)", err=True)


@_command("list")
def list_cards() -> None:
    """List the cards and their figure ids (titles with the default parameters filled in);
    figures that are not on the card itself are marked "figure page only"."""
    _stdout(commands.list_cards(D))


@_command()
def placeholders(
    card: Annotated[int, typer.Argument(help=f"Card number ({', '.join(map(str, CARD_IDS))}).")],
    d_model: OptDModel = D.d_model,
    base: OptBase = D.base,
    positions: OptPositions = D.positions,
) -> None:
    """List a card's placeholders (card file and its deck slides) with their current values,
    and which variant of each text field the card chose."""
    if card not in CARD_IDS:
        fail(f"unknown card {card}; choose one of: {', '.join(map(str, CARD_IDS))}")
    params = _params(d_model, base, positions)
    _stdout(commands.placeholders(card, params))


@_command()
def figure(
    figure_id: Annotated[str, typer.Argument(help="Figure id (see 'posecards list').")],
    out_raw: Annotated[
        str, typer.Option("--out", "-o", help="Output file (.png, .svg or .pdf).")
    ] = str(_FIGURE_OUT),
    lang: Annotated[str, typer.Option("--lang", help="en or zh.")] = "en",
    theme: OptTheme = "light",
    d_model: OptDModel = D.d_model,
    base: OptBase = D.base,
    positions: OptPositions = D.positions,
    svg_text: OptSvgText = None,
) -> None:
    """Render one figure on its own."""
    fid = _figure_id(figure_id)
    out = Path(out_raw)
    if out.is_dir() or out_raw.endswith(("/", "\\")):
        fail(f"--out {out} is a folder; give a file name, e.g. --out {out / fid}.png")
    fmt = out.suffix.lstrip(".").lower()
    if fmt not in ("png", "svg", "pdf"):
        fail(f"--out must end in .png, .svg or .pdf, got {out.name!r}")
    lang_ = _one("--lang", lang, LANGS)
    theme_ = _one("--theme", theme, THEMES)
    params = _params(d_model, base, positions)
    svg_text_ = _one("--svg-text", svg_text or Look().svg_text, SVG_TEXTS)
    if why := commands.writable(out.parent if str(out.parent) else Path(".")):
        fail(f"cannot write to --out {out}: {why}")
    commands.figure(fid, params, lang_, theme_, fmt, out, svg_text=svg_text_)
    typer.echo(f"wrote {out}", err=True)


@_command()
def data(
    figure_id: Annotated[str, typer.Argument(help="Figure id (see 'posecards list').")],
    format: Annotated[str, typer.Option("--format", help="csv or json.")] = "json",
    d_model: OptDModel = D.d_model,
    base: OptBase = D.base,
    positions: OptPositions = D.positions,
) -> None:
    """Print the numbers behind a figure (CSV or JSON) on stdout."""
    fid = _figure_id(figure_id)
    fmt = _one("--format", format, ("csv", "json"))
    params = _params(d_model, base, positions)
    _stdout(commands.data(fid, params, fmt))


_MEASURE = MeasureConfig()


@_command()
def measure(
    out: Annotated[
        Path, typer.Option("--out", help="Results file to write (JSON).")
    ] = _MEASURE.out,
    seeds: Annotated[
        int | None, typer.Option("--seeds", help=f"Seeds per scheme (default {_MEASURE.seeds}).")
    ] = None,
    steps: Annotated[
        int | None,
        typer.Option("--steps", help=f"Training steps per model (default {_MEASURE.steps})."),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help=f"{QUICK_SEEDS} seed, {QUICK_STEPS} steps (unless given): for CI."
        ),
    ] = False,
    jobs: OptJobs = None,
    quiet: OptQuiet = False,
) -> None:
    """Train a small transformer per position scheme and seed (CPU); measure loss by position."""
    seeds_ = seeds if seeds is not None else (QUICK_SEEDS if quick else _MEASURE.seeds)
    steps_ = steps if steps is not None else (QUICK_STEPS if quick else _MEASURE.steps)
    if not 1 <= seeds_ <= MAX_MEASURE_SEEDS:
        fail(f"--seeds must be from 1 to {MAX_MEASURE_SEEDS}, got {seeds_}")
    if not 1 <= steps_ <= MAX_MEASURE_STEPS:
        fail(f"--steps must be from 1 to {MAX_MEASURE_STEPS}, got {steps_}")
    if out.exists() and out.is_dir():
        fail(f"--out {out} is a folder")
    if out.suffix.lower() != ".json":
        fail(f"--out must end in .json, got {out.name!r}")
    if why := commands.writable(out.parent):
        fail(f"cannot write to --out {out}: {why}")
    cfg = MeasureConfig(out=out, seeds=seeds_, steps=steps_, jobs=_jobs(jobs), quiet=quiet)
    say = _progress(quiet)
    seconds = commands.measure(cfg, None if quiet else say)
    say(f"wrote {cfg.out} ({seconds:.0f} s)")


def main() -> None:
    app()
