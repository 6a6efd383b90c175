"""The `posecards` command line: parses options into posecards.config and calls
posecards.commands (the only layer it talks to).

Heavy libraries (torch, umap, matplotlib) are imported only by the commands that need them.
The options shared by the commands and their checks are in posecards.cli_options; how an error
becomes one line and an exit code (2 for bad input, 70 for a bug) in posecards.cli_errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from posecards import commands
from posecards._version import __version__
from posecards.cli_errors import DEBUG, F, fail, guarded, write_stdout
from posecards.cli_options import (
    BUILD_DEFAULT,
    DEFAULT_CARDS,
    DEFAULT_FORMATS,
    DEFAULT_LANGS,
    FIGURE_OUT,
    PE_DEFAULT,
    OptBase,
    OptBaseOrNone,
    OptDModel,
    OptDModelOrNone,
    OptFormatOrNone,
    OptJobs,
    OptLang,
    OptLangOrNone,
    OptPositions,
    OptPositionsOrNone,
    OptQuiet,
    OptScale,
    OptSize,
    OptSizeOrNone,
    OptSvgText,
    OptTheme,
    OptThemeOrNone,
    check_calculator_options,
    choices,
    given_params,
    jobs_of,
    json_out,
    measure_counts,
    one_of,
    params_of,
    progress,
    scale_of,
)
from posecards.config import (
    CALCULATORS_ID,
    CARD_IDS,
    DECK_CARD_IDS,
    DECK_FORMATS,
    FORMATS,
    INSPECT_FORMATS,
    LANGS,
    QUICK_SEEDS,
    QUICK_STEPS,
    SIZES,
    SVG_TEXTS,
    THEMES,
    DeckConfig,
    ExploreConfig,
    InspectConfig,
    Look,
    MeasureConfig,
)

app = typer.Typer(
    name="posecards",
    help="Computed, bilingual figure cards that explain positional encodings in Transformers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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
    DEBUG["on"] = debug


@_command()
def build(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = BUILD_DEFAULT.out,
    cards: Annotated[
        str | None,
        typer.Option("--cards", help=f"Comma list of card numbers [default: {DEFAULT_CARDS}]."),
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
        card_ids = choices("--cards", cards, tuple(map(str, CARD_IDS)))
        given["cards"] = tuple(sorted(int(c) for c in card_ids))
    if lang is not None:
        given["langs"] = choices("--lang", lang, LANGS)
    if format is not None:
        given["formats"] = choices("--format", format, FORMATS)
    if theme is not None:
        given["theme"] = one_of("--theme", theme, THEMES)
    if size is not None:
        given["size"] = one_of("--size", size, SIZES)
    if scale is not None:
        given["scale"] = scale_of(scale)
    if svg_text is not None:
        given["svg_text"] = one_of("--svg-text", svg_text, SVG_TEXTS)
    given.update(given_params(d_model, base, positions))
    commands.not_a_folder(out)
    if render and not check:
        fail("--render goes with --check (it compares DIR with a fresh render)")
    cfg = commands.build_config(
        out, given, check=check, jobs=jobs_of(jobs), quiet=quiet, cache=not no_cache
    )
    if check:
        _report(cfg.out, commands.check(cfg, given, render, progress(quiet)))
    commands.build(cfg, progress(quiet))


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
        card_ids = choices("--cards", cards, tuple(map(str, DECK_CARD_IDS)))
        given["cards"] = tuple(sorted(int(c) for c in card_ids))
    if lang is not None:
        given["langs"] = choices("--lang", lang, LANGS)
    if format is not None:
        given["formats"] = choices("--format", format, DECK_FORMATS)
    if theme is not None:
        given["theme"] = one_of("--theme", theme, THEMES)
    given.update(given_params(d_model, base, positions))
    commands.not_a_folder(out)
    cfg = commands.deck_config(out, given, check=check, jobs=jobs_of(jobs), quiet=quiet, cache=True)
    if check:
        _report(cfg.out, commands.check(cfg, given))
    commands.deck(cfg, progress(quiet))


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
    lang: OptLang = DEFAULT_LANGS,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help=f"Comma list of: {','.join(INSPECT_FORMATS)} (json: the layer-by-layer reading).",
        ),
    ] = DEFAULT_FORMATS,
    theme: OptTheme = BUILD_DEFAULT.look.theme,
    size: OptSize = BUILD_DEFAULT.look.size,
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
    activations: Annotated[
        bool,
        typer.Option(
            "--activations",
            help="With --weights: also run the model through transformers on posecards' own "
            "text (2,048 tokens at most) and measure its queries, keys and attention.",
        ),
    ] = False,
    text: Annotated[
        Path | None,
        typer.Option("--text", help="Run --activations on this UTF-8 text file instead."),
    ] = None,
    jobs: OptJobs = None,
    quiet: OptQuiet = False,
) -> None:
    """Build the inspection card of a local model: its learned table, RoPE or ALiBi settings."""
    if offset is not None and offset < 0:
        fail(f"--offset must be 0 or more, got {offset}")
    cfg = InspectConfig(
        out=out,
        langs=choices("--lang", lang, LANGS),
        formats=choices("--format", format, INSPECT_FORMATS),
        look=Look(theme=one_of("--theme", theme, THEMES), size=one_of("--size", size, SIZES)),
        tensor=tensor,
        offset=offset,
        weights=weights or activations or text is not None,
        activations=activations or text is not None,
        text=text,
        jobs=jobs_of(jobs),
        quiet=quiet,
    )
    commands.not_a_folder(out)
    commands.inspect(path, cfg, progress(quiet))


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
        out=out, lang=one_of("--lang", lang, LANGS), theme=one_of("--theme", theme, THEMES)
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
    write_stdout(commands.list_cards(PE_DEFAULT))


@_command()
def placeholders(
    card: Annotated[int, typer.Argument(help=f"Card number ({', '.join(map(str, CARD_IDS))}).")],
    d_model: OptDModel = PE_DEFAULT.d_model,
    base: OptBase = PE_DEFAULT.base,
    positions: OptPositions = PE_DEFAULT.positions,
) -> None:
    """List a card's placeholders (card file and its deck slides) with their current values,
    and which variant of each text field the card chose."""
    if card not in CARD_IDS:
        fail(f"unknown card {card}; choose one of: {', '.join(map(str, CARD_IDS))}")
    params = params_of(d_model, base, positions)
    write_stdout(commands.placeholders(card, params))


@_command()
def figure(
    figure_id: Annotated[str, typer.Argument(help="Figure id (see 'posecards list').")],
    out_raw: Annotated[
        str, typer.Option("--out", "-o", help="Output file (.png, .svg or .pdf).")
    ] = str(FIGURE_OUT),
    lang: Annotated[str, typer.Option("--lang", help="en or zh.")] = "en",
    theme: OptTheme = "light",
    d_model: OptDModel = PE_DEFAULT.d_model,
    base: OptBase = PE_DEFAULT.base,
    positions: OptPositions = PE_DEFAULT.positions,
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
    lang_ = one_of("--lang", lang, LANGS)
    theme_ = one_of("--theme", theme, THEMES)
    params = params_of(d_model, base, positions)
    svg_text_ = one_of("--svg-text", svg_text or Look().svg_text, SVG_TEXTS)
    if why := commands.writable(out.parent if str(out.parent) else Path(".")):
        fail(f"cannot write to --out {out}: {why}")
    commands.figure(fid, params, lang_, theme_, fmt, out, svg_text=svg_text_)
    typer.echo(f"wrote {out}", err=True)


@_command()
def data(
    figure_id: Annotated[
        str,
        typer.Argument(
            help="Figure id (see 'posecards list'), or rope-calculators: Liu et al.'s critical"
            " dimension, Men et al.'s base bound and the factor each scaling method needs, for"
            " --head-dim, --base, --context (and --target)."
        ),
    ],
    format: Annotated[str, typer.Option("--format", help="csv or json.")] = "json",
    d_model: OptDModel = PE_DEFAULT.d_model,
    base: OptBase = PE_DEFAULT.base,
    positions: OptPositions = PE_DEFAULT.positions,
    head_dim: Annotated[
        int, typer.Option("--head-dim", help="rope-calculators: dimensions of one head.")
    ] = 128,
    context: Annotated[
        int, typer.Option("--context", help="rope-calculators: the trained context (tokens).")
    ] = 4096,
    target: Annotated[
        int | None,
        typer.Option("--target", help="rope-calculators: a longer context to scale to."),
    ] = None,
    smallest_base: Annotated[
        bool,
        typer.Option(
            "--smallest-base",
            help="rope-calculators: also search the smallest base that keeps the bound (a scan"
            " of bases: seconds for 1,024 tokens, minutes for 32,768).",
        ),
    ] = False,
) -> None:
    """Print the numbers behind a figure (CSV or JSON) on stdout."""
    fmt = one_of("--format", format, ("csv", "json"))
    if figure_id.strip().lower() == CALCULATORS_ID:
        params_of(d_model, base, positions)  # --base checked as everywhere
        check_calculator_options(head_dim, context, target)
        write_stdout(commands.rope_calculators(head_dim, base, context, target, smallest_base, fmt))
        return
    fid = _figure_id(figure_id)
    params = params_of(d_model, base, positions)
    write_stdout(commands.data(fid, params, fmt))


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
    """Train a small transformer per task, position scheme and seed (CPU); measure its loss.

    Two tasks: each token depends on the token two back (loss by position), and recall of a
    key's value written at a random earlier position (loss at the questions, by distance)."""
    seeds_, steps_ = measure_counts(seeds, steps, quick)
    json_out(out)
    if why := commands.writable(out.parent):
        fail(f"cannot write to --out {out}: {why}")
    cfg = MeasureConfig(out=out, seeds=seeds_, steps=steps_, jobs=jobs_of(jobs), quiet=quiet)
    say = progress(quiet)
    seconds = commands.measure(cfg, None if quiet else say)
    say(f"wrote {cfg.out} ({seconds:.0f} s)")


def main() -> None:
    app()
