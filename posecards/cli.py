"""The `posecards` command line: parses options into posecards.config and calls render.

Heavy libraries (torch, umap, matplotlib) are imported only by the commands that need them.
Bad input gets one line on stderr and exit code 2.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from posecards._version import __version__
from posecards.config import (
    CARD_IDS,
    DECK_FORMATS,
    FORMATS,
    LANGS,
    MAX_BASE,
    MAX_D_MODEL,
    MAX_JOBS,
    MAX_POSITIONS,
    SIZES,
    THEMES,
    BuildConfig,
    DeckConfig,
    InspectConfig,
    Look,
    PEParams,
)

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


def fail(message: str) -> NoReturn:
    """One line on stderr, exit code 2."""
    typer.echo(f"posecards: error: {message}", err=True)
    raise typer.Exit(2)


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
) -> None:
    """Computed, bilingual figure cards that explain positional encodings in Transformers."""


def _choices(option: str, raw: str, valid: tuple[str, ...]) -> tuple[str, ...]:
    items = tuple(x.strip() for x in raw.split(",") if x.strip())
    if not items:
        fail(f"{option} is empty; choose from: {','.join(valid)}")
    for x in items:
        if x not in valid:
            fail(f"{option}: unknown value {x!r}; choose from: {','.join(valid)}")
    return tuple(dict.fromkeys(items))


def _jobs(jobs: int | None) -> int:
    import os

    if jobs is None:
        return os.cpu_count() or 1
    if not 1 <= jobs <= MAX_JOBS:
        fail(f"--jobs must be from 1 to {MAX_JOBS}, got {jobs}")
    return jobs


def _one(option: str, raw: str, valid: tuple[str, ...]) -> str:
    value = raw.strip()
    if value not in valid:
        fail(f"{option}: unknown value {raw!r}; choose one of: {', '.join(valid)}")
    return value


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


@app.command()
def build(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = _DEFAULT.out,
    cards: Annotated[str, typer.Option("--cards", help="Comma list of card numbers.")] = _CARDS,
    lang: OptLang = _LANGS,
    format: OptFormat = _FORMATS,
    theme: OptTheme = _DEFAULT.look.theme,
    size: OptSize = _DEFAULT.look.size,
    d_model: OptDModel = D.d_model,
    base: OptBase = D.base,
    positions: OptPositions = D.positions,
    jobs: OptJobs = None,
    check: Annotated[
        bool, typer.Option("--check", help="Compare a fresh build with DIR; write nothing.")
    ] = False,
    quiet: OptQuiet = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Ignore the build cache; render everything.")
    ] = False,
) -> None:
    """Build the cards into DIR: PNG/SVG/PDF cards and figures, HTML pages, index, manifest."""
    card_ids = _choices("--cards", cards, tuple(map(str, CARD_IDS)))
    cfg = BuildConfig(
        out=out,
        cards=tuple(sorted(int(c) for c in card_ids)),
        langs=_choices("--lang", lang, LANGS),
        formats=_choices("--format", format, FORMATS),
        look=Look(
            theme=_one("--theme", theme, THEMES),
            size=_one("--size", size, tuple(SIZES)),
        ),
        params=_params(d_model, base, positions),
        jobs=_jobs(jobs),
        check=check,
        quiet=quiet,
        cache=not no_cache,
    )
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a folder")
    _run_build(cfg)


def _writable(out: Path) -> str | None:
    """Why ``out`` cannot be written to, or None (checked before any work starts)."""
    import os

    probe = out.resolve()
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None


def _run_build(cfg: BuildConfig | DeckConfig, what: str = "cards") -> None:
    import signal
    import time

    from posecards.render.build import build_outputs, check_outputs, write_outputs
    from posecards.render.lock import BuildLockedError, build_lock

    if what == "deck":
        from posecards.deck.build import build_deck as make
    else:
        make = build_outputs  # type: ignore[assignment]

    t0 = time.perf_counter()

    def progress(msg: str) -> None:
        if not cfg.quiet:
            typer.echo(f"[{time.perf_counter() - t0:5.1f}s] {msg}", err=True)

    if not cfg.check and (why := _writable(cfg.out)):
        fail(f"cannot write to --out {cfg.out}: {why}")

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        with build_lock(cfg.out, wait=not cfg.check):
            progress(f"building {what} {','.join(map(str, cfg.cards))} ({','.join(cfg.langs)})")
            files = make(cfg, progress, use_cache=cfg.cache)  # type: ignore[arg-type]
            if cfg.check:
                stale = check_outputs(cfg.out, files)
                if stale:
                    typer.echo(f"{len(stale)} file(s) out of date in {cfg.out}:")
                    for line in stale:
                        typer.echo(f"  {line}")
                    raise typer.Exit(1)
                typer.echo(f"{cfg.out} is up to date ({len(files)} files)")
                return
            try:
                written = write_outputs(cfg.out, files)
            except OSError as exc:
                fail(f"cannot write to {cfg.out}: {exc.strerror or exc}")
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        typer.echo(f"posecards: interrupted; {cfg.out} was left as it was", err=True)
        raise typer.Exit(130) from None
    except BuildLockedError as exc:
        fail(str(exc))
    except MemoryError:
        fail(
            f"out of memory for d_model={cfg.params.d_model}, positions={cfg.params.positions}; "
            "lower --d-model or --positions"
        )
    except (ValueError, RuntimeError, OSError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    if written:
        progress(f"wrote {len(written)} of {len(files)} files to {cfg.out}")
    else:
        progress(f"{cfg.out} is up to date ({len(files)} files)")


@app.command()
def deck(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = DeckConfig.out,
    lang: OptLang = _LANGS,
    format: Annotated[
        str, typer.Option("--format", help=f"Comma list of: {','.join(DECK_FORMATS)}.")
    ] = ",".join(DECK_FORMATS),
    cards: Annotated[str, typer.Option("--cards", help="Comma list of card numbers.")] = _CARDS,
    theme: OptTheme = _DEFAULT.look.theme,
    d_model: OptDModel = D.d_model,
    base: OptBase = D.base,
    positions: OptPositions = D.positions,
    jobs: OptJobs = None,
    check: Annotated[
        bool, typer.Option("--check", help="Compare a fresh build with DIR; write nothing.")
    ] = False,
    quiet: OptQuiet = False,
) -> None:
    """Build the lecture deck into DIR/<lang>/: deck.pptx (speaker notes), deck.pdf, slide
    pictures and animations."""
    card_ids = _choices("--cards", cards, tuple(map(str, CARD_IDS)))
    cfg = DeckConfig(
        out=out,
        cards=tuple(sorted(int(c) for c in card_ids)),
        langs=_choices("--lang", lang, LANGS),
        formats=_choices("--format", format, DECK_FORMATS),
        theme=_one("--theme", theme, THEMES),
        params=_params(d_model, base, positions),
        jobs=_jobs(jobs),
        check=check,
        quiet=quiet,
    )
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a folder")
    _run_build(cfg, "deck")


@app.command("inspect")
def inspect_model(
    path: Annotated[
        str, typer.Argument(help="Local model folder (config.json + weights) or .safetensors file.")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output folder (default: out/inspect/<model name>)."),
    ] = None,
    lang: OptLang = _LANGS,
    format: OptFormat = _FORMATS,
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
    jobs: OptJobs = None,
    quiet: OptQuiet = False,
) -> None:
    """Build the inspection card of a local model: its learned table, RoPE or ALiBi settings."""
    if offset is not None and offset < 0:
        fail(f"--offset must be 0 or more, got {offset}")
    cfg = InspectConfig(
        out=out,
        langs=_choices("--lang", lang, LANGS),
        formats=_choices("--format", format, FORMATS),
        look=Look(theme=_one("--theme", theme, THEMES), size=_one("--size", size, tuple(SIZES))),
        tensor=tensor,
        offset=offset,
        jobs=_jobs(jobs),
        quiet=quiet,
    )
    if out is not None and out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a folder")
    _run_inspect(path, cfg)


def _run_inspect(path: str, cfg: InspectConfig) -> None:
    import signal
    import time
    import warnings

    from posecards.content.inspect import compute_inspection
    from posecards.model.checkpoint import CheckpointError, open_checkpoint
    from posecards.model.positions import InspectOptions, find_positions
    from posecards.render.build import write_outputs
    from posecards.render.inspect import default_out, inspect_outputs
    from posecards.render.lock import BuildLockedError, build_lock

    t0 = time.perf_counter()

    def progress(msg: str) -> None:
        if not cfg.quiet:
            typer.echo(f"[{time.perf_counter() - t0:5.1f}s] {msg}", err=True)

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    out = cfg.out
    # a checkpoint is untrusted input: warnings from torch or numpy about odd tensors would add
    # lines to stderr; problems are reported as errors instead
    warnings.simplefilter("ignore")
    try:
        ckpt = open_checkpoint(path)
        found = find_positions(ckpt, InspectOptions(tensor=cfg.tensor, offset=cfg.offset))
        if cfg.offset is not None and found.kind != "learned":
            fail(f"--offset applies to a learned position table; {ckpt.name} uses {found.kind}")
        out = out if out is not None else default_out(ckpt)
        if out.exists() and not out.is_dir():
            fail(f"--out {out} exists and is not a folder")
        if why := _writable(out):
            fail(f"cannot write to --out {out}: {why}")
        progress(f"{ckpt.name}: {found.kind} positions; computing")
        content = compute_inspection(ckpt, found)
        with build_lock(out, wait=True):
            files = inspect_outputs(cfg, ckpt, found, content, progress)
            try:
                written = write_outputs(out, files)
            except OSError as exc:
                fail(f"cannot write to {out}: {exc.strerror or exc}")
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        where = f"{out} was left as it was" if out is not None else "nothing was written"
        typer.echo(f"posecards: interrupted; {where}", err=True)
        raise typer.Exit(130) from None
    except BuildLockedError as exc:
        fail(str(exc))
    except MemoryError:
        fail(f"out of memory while inspecting {path}")
    except (CheckpointError, ValueError, RuntimeError, OSError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 -- a malformed checkpoint must not print a traceback
        first = str(exc).splitlines()[0] if str(exc) else ""
        fail(f"cannot inspect {path}: {type(exc).__name__}{': ' + first if first else ''}")
    progress(f"wrote {len(written)} of {len(files)} files to {out}")


@app.command("list")
def list_cards() -> None:
    """List the cards and their figure ids."""
    from posecards.render.text import load_card_text

    for c in CARD_IDS:
        text = load_card_text(c)
        typer.echo(f"card {c}  {text.slug}: {text.title.en} / {text.title.zh}")
        for p in text.panels:
            typer.echo(f"    {p.id:<22} {p.title.en}")


@app.command()
def figure(
    figure_id: Annotated[str, typer.Argument(help="Figure id (see 'posecards list').")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output file (.png, .svg or .pdf).")
    ] = _FIGURE_OUT,
    lang: Annotated[str, typer.Option("--lang", help="en or zh.")] = "en",
    theme: OptTheme = "light",
    d_model: OptDModel = D.d_model,
    base: OptBase = D.base,
    positions: OptPositions = D.positions,
) -> None:
    """Render one figure on its own."""
    from posecards.render.figure import render_figure

    fmt = out.suffix.lstrip(".").lower()
    if fmt not in ("png", "svg", "pdf"):
        fail(f"--out must end in .png, .svg or .pdf, got {out.name!r}")
    lang_ = _one("--lang", lang, LANGS)
    theme_ = _one("--theme", theme, THEMES)
    params = _params(d_model, base, positions)
    try:
        data = render_figure(figure_id, params, lang_, theme_, fmt)
    except (ValueError, RuntimeError) as exc:
        fail(str(exc).splitlines()[0])
    from posecards.render.files import write_bytes_atomic

    if out.exists() and out.is_dir():
        fail(f"--out {out} is a folder")
    write_bytes_atomic(out, data)
    typer.echo(f"wrote {out}", err=True)


@app.command()
def data(
    figure_id: Annotated[str, typer.Argument(help="Figure id (see 'posecards list').")],
    format: Annotated[str, typer.Option("--format", help="csv or json.")] = "json",
    d_model: OptDModel = D.d_model,
    base: OptBase = D.base,
    positions: OptPositions = D.positions,
) -> None:
    """Print the numbers behind a figure (CSV or JSON) on stdout."""
    from posecards.content import compute_card
    from posecards.render.data import to_csv, to_json
    from posecards.render.figure import figure_card

    fmt = _one("--format", format, ("csv", "json"))
    params = _params(d_model, base, positions)
    try:
        content = compute_card(figure_card(figure_id), params)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    if figure_id not in content.figures:
        fail(f"unknown figure id {figure_id!r}; run 'posecards list' to see the ids")
    values = content.figures[figure_id]
    sys.stdout.write(to_csv(values) if fmt == "csv" else to_json(values))


def main() -> None:
    app()
