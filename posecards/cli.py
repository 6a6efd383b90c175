"""The `posecards` command line: parses options into posecards.config and calls render.

Heavy libraries (torch, umap, matplotlib) are imported only by the commands that need them.
Bad input gets one line on stderr and exit code 2.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

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
    THEMES,
    BuildConfig,
    DeckConfig,
    ExploreConfig,
    InspectConfig,
    Look,
    MeasureConfig,
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


@app.command()
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
        given["size"] = _one("--size", size, tuple(SIZES))
    if scale is not None:
        given["scale"] = _scale(scale)
    given.update(_given_params(d_model, base, positions))
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a folder")
    opts = _defaults()
    if check:
        from posecards.render.manifest import read_manifest, recorded_options

        doc = read_manifest(out)
        recorded = recorded_options(doc) if doc is not None else None
        opts.update(recorded or {})
    opts.update(given)
    cfg = BuildConfig(
        out=out,
        cards=opts["cards"],
        langs=opts["langs"],
        formats=opts["formats"],
        look=Look(theme=opts["theme"], size=opts["size"], scale=opts["scale"]),
        params=PEParams(d_model=opts["d_model"], base=opts["base"], positions=opts["positions"]),
        jobs=_jobs(jobs),
        check=check,
        quiet=quiet,
        cache=not no_cache,
    )
    if render and not check:
        fail("--render goes with --check (it compares DIR with a fresh render)")
    if check:
        _run_check(cfg, given, render)
        return
    _run_build(cfg)


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


def _defaults() -> dict[str, Any]:
    return {
        "cards": _DEFAULT.cards,
        "langs": _DEFAULT.langs,
        "formats": _DEFAULT.formats,
        "theme": _DEFAULT.look.theme,
        "size": _DEFAULT.look.size,
        "scale": _DEFAULT.look.scale,
        "d_model": D.d_model,
        "base": D.base,
        "positions": D.positions,
    }


def _run_check(cfg: BuildConfig | DeckConfig, given: dict[str, Any], render: bool = False) -> None:
    """--check: judge DIR by its recipe and file hashes (no drawing); exit 1 if stale.
    --render (cards): also compare with a fresh render, with a tolerance."""
    from posecards.render.lock import BuildLockedError, build_lock
    from posecards.render.manifest import check_site, compare_render

    try:
        with build_lock(cfg.out, wait=False):
            if isinstance(cfg, DeckConfig):
                from posecards.deck.manifest import check_deck

                verdict = check_deck(cfg, given)
            else:
                verdict = check_site(cfg, given)
            if render and not verdict.reasons and isinstance(cfg, BuildConfig):
                import time

                from posecards.render.build import build_outputs

                t0 = time.perf_counter()

                def progress(msg: str) -> None:
                    if not cfg.quiet:
                        typer.echo(f"[{time.perf_counter() - t0:5.1f}s] {msg}", err=True)

                fresh = build_outputs(cfg, progress, use_cache=cfg.cache)
                for line in compare_render(cfg.out, fresh):
                    verdict.add(line, [line.split(": ", 1)[1].split(" (")[0]])
    except BuildLockedError as exc:
        fail(str(exc))
    except (ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    if verdict.reasons:
        n = len(verdict.stale)
        typer.echo(f"{n} of {verdict.files} file(s) out of date in {cfg.out}:")
        for line in verdict.reasons:
            typer.echo(f"  {line}")
        raise typer.Exit(1)
    typer.echo(f"{cfg.out} is up to date ({verdict.files} files)")


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

    from posecards.render.build import build_outputs, write_outputs
    from posecards.render.lock import BuildLockedError, build_lock

    if what == "deck":
        from posecards.deck.build import build_deck as make
    else:
        make = build_outputs  # type: ignore[assignment]

    t0 = time.perf_counter()

    def progress(msg: str) -> None:
        if not cfg.quiet:
            typer.echo(f"[{time.perf_counter() - t0:5.1f}s] {msg}", err=True)

    if why := _writable(cfg.out):
        fail(f"cannot write to --out {cfg.out}: {why}")

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        with build_lock(cfg.out, wait=not cfg.check):
            progress(f"building {what} {','.join(map(str, cfg.cards))} ({','.join(cfg.langs)})")
            files = make(cfg, progress, use_cache=cfg.cache)  # type: ignore[arg-type]
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
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a folder")
    from posecards.deck.manifest import default_deck_options

    opts = default_deck_options()
    if check:
        from posecards.deck.manifest import recorded_deck_options
        from posecards.render.manifest import read_manifest

        doc = read_manifest(out)
        recorded = recorded_deck_options(doc) if doc is not None else None
        opts.update(recorded or {})
    opts.update(given)
    cfg = DeckConfig(
        out=out,
        cards=opts["cards"],
        langs=opts["langs"],
        formats=opts["formats"],
        theme=opts["theme"],
        params=PEParams(d_model=opts["d_model"], base=opts["base"], positions=opts["positions"]),
        jobs=_jobs(jobs),
        check=check,
        quiet=quiet,
    )
    if check:
        _run_check(cfg, given)
        return
    _run_build(cfg, "deck")


@app.command("inspect")
def inspect_model(
    path: Annotated[
        str,
        typer.Argument(
            help="Local model folder (config.json + weights), .safetensors file or config.json."
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


def _figure_ids() -> dict[str, int]:
    """Every figure id of the cards, on the card or on figure pages only (from the card text:
    nothing is computed)."""
    from posecards.render.text import load_card_text

    return {fid: c for c in CARD_IDS for fid in load_card_text(c).figure_ids}


def _figure_id(raw: str) -> str:
    """A known figure id (case-insensitive), or one line naming the nearest ones."""
    import difflib

    ids = _figure_ids()
    value = raw.strip().lower()
    if value in ids:
        return value
    near = difflib.get_close_matches(value, list(ids), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(near)}? " if near else ""
    fail(f"unknown figure id {raw!r}; {hint}'posecards list' shows all ids")


_EXPLORE = ExploreConfig()


@app.command()
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
    if why := _writable(out.parent if str(out.parent) else Path(".")):
        fail(f"cannot write to --out {out}: {why}")
    from posecards.render.explore import explore_bytes
    from posecards.render.files import write_bytes_atomic

    try:
        data = explore_bytes(cfg)
        write_bytes_atomic(out, data)
    except (ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    typer.echo(f"wrote {out} ({len(data):,} bytes)", err=True)


@app.command("list")
def list_cards() -> None:
    """List the cards and their figure ids (titles with the default parameters filled in);
    figures that are not on the card itself are marked "figure page only"."""
    from posecards.content import title_numbers
    from posecards.render.text import fill, load_card_text

    lines = []
    for c in CARD_IDS:
        text = load_card_text(c)
        entries = (*text.panels, *text.figures)
        raw = [text.title.en, text.title.zh, *(p.title.en for p in entries)]
        numbers = title_numbers(c, D) if any("{{" in t for t in raw) else {}

        def filled(t: str, where: str, numbers: Mapping[str, Any] = numbers) -> str:
            return fill(t, numbers, where) if "{{" in t else t

        where = text.path.name
        title = f"{filled(text.title.en, where)} / {filled(text.title.zh, where)}"
        lines.append(f"card {c}  {text.slug}: {title}")
        lines += [f"    {p.id:<22} {filled(p.title.en, where)}" for p in text.panels]
        lines += [
            f"    {p.id:<22} {filled(p.title.en, where)}  (figure page only)" for p in text.figures
        ]
    _stdout("\n".join(lines) + "\n")


@app.command()
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
) -> None:
    """Render one figure on its own."""
    from posecards.render.figure import render_figure

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
    if why := _writable(out.parent if str(out.parent) else Path(".")):
        fail(f"cannot write to --out {out}: {why}")
    try:
        data = render_figure(fid, params, lang_, theme_, fmt)
    except (ValueError, RuntimeError) as exc:
        fail(str(exc).splitlines()[0])
    from posecards.render.files import write_bytes_atomic

    try:
        write_bytes_atomic(out, data)
    except OSError as exc:
        fail(f"cannot write to --out {out}: {exc.strerror or exc}")
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

    fid = _figure_id(figure_id)
    fmt = _one("--format", format, ("csv", "json"))
    params = _params(d_model, base, positions)
    try:
        content = compute_card(_figure_ids()[fid], params)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    if fid not in content.figures:
        fail(f"unknown figure id {figure_id!r}; run 'posecards list' to see the ids")
    values = content.figures[fid]
    _stdout(to_csv(values) if fmt == "csv" else to_json(values))


_MEASURE = MeasureConfig()


@app.command()
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
    if why := _writable(out.parent):
        fail(f"cannot write to --out {out}: {why}")
    cfg = MeasureConfig(out=out, seeds=seeds_, steps=steps_, jobs=_jobs(jobs), quiet=quiet)
    _run_measure(cfg)


def _run_measure(cfg: MeasureConfig) -> None:
    import time

    from posecards.experiment.run import run_all, to_json
    from posecards.render.files import write_bytes_atomic

    t0 = time.perf_counter()

    def echo(msg: str) -> None:
        typer.echo(f"[{time.perf_counter() - t0:5.1f}s] {msg}", err=True)

    try:
        doc = run_all(cfg, None if cfg.quiet else echo)
        write_bytes_atomic(cfg.out, to_json(doc))
    except KeyboardInterrupt:
        typer.echo(f"posecards: interrupted; {cfg.out} was not written", err=True)
        raise typer.Exit(130) from None
    except MemoryError:
        fail("out of memory while training")
    except (ValueError, RuntimeError, OSError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    if not cfg.quiet:
        echo(f"wrote {cfg.out} ({doc['environment']['seconds']:.0f} s)")


def main() -> None:
    app()
