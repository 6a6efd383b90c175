"""The command line's options: their types and help (shared by the commands), the defaults they
show, and the checks that turn raw values into posecards.config values (bad input: one line,
exit 2, through cli_errors.fail)."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from posecards.cli_errors import fail
from posecards.config import (
    FORMATS,
    LANGS,
    MAX_BASE,
    MAX_CALC_CONTEXT,
    MAX_CALC_HEAD_DIM,
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
    MeasureConfig,
    PEParams,
)

BUILD_DEFAULT = BuildConfig()
FIGURE_OUT = Path("figure.png")
DEFAULT_CARDS = ",".join(map(str, BUILD_DEFAULT.cards))
DEFAULT_LANGS = ",".join(BUILD_DEFAULT.langs)
DEFAULT_FORMATS = ",".join(BUILD_DEFAULT.formats)


def progress(quiet: bool) -> Callable[[str], None]:
    """Progress lines on stderr, each with the seconds since the command started."""
    t0 = time.perf_counter()

    def say(msg: str) -> None:
        if not quiet:
            typer.echo(f"[{time.perf_counter() - t0:5.1f}s] {msg}", err=True)

    return say


def choices(option: str, raw: str, valid: tuple[str, ...]) -> tuple[str, ...]:
    items = tuple(x.strip().lower() for x in raw.split(",") if x.strip())
    if not items:
        fail(f"{option} is empty; choose from: {','.join(valid)}")
    for x in items:
        if x not in valid:
            fail(f"{option}: unknown value {x!r}; choose from: {','.join(valid)}")
    return tuple(v for v in valid if v in items)  # one canonical order: same options, same site


def jobs_of(jobs: int | None) -> int:

    if jobs is None:
        return os.cpu_count() or 1
    if not 1 <= jobs <= MAX_JOBS:
        fail(f"--jobs must be from 1 to {MAX_JOBS}, got {jobs}")
    return jobs


def one_of(option: str, raw: str, valid: tuple[str, ...]) -> str:
    value = raw.strip().lower()
    if value not in valid:
        fail(f"{option}: unknown value {raw!r}; choose one of: {', '.join(valid)}")
    return value


def scale_of(scale: int) -> int:
    if not 1 <= scale <= MAX_SCALE:
        fail(f"--scale must be from 1 to {MAX_SCALE}, got {scale}")
    return scale


def params_of(d_model: int, base: float, positions: int) -> PEParams:
    if d_model <= 0 or d_model % 2 or d_model > MAX_D_MODEL:
        fail(f"--d-model must be an even integer from 2 to {MAX_D_MODEL}, got {d_model}")
    if not math.isfinite(base) or base <= 1 or base > MAX_BASE:
        fail(f"--base must be a number greater than 1 and at most {MAX_BASE:.4g}, got {base}")
    if positions < 2 or positions > MAX_POSITIONS:
        fail(f"--positions must be from 2 to {MAX_POSITIONS}, got {positions}")
    return PEParams(d_model=d_model, base=base, positions=positions)


PE_DEFAULT = PEParams()
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
        f"[default: {BUILD_DEFAULT.look.svg_text}].",
    ),
]
OptDModelOrNone = Annotated[
    int | None,
    typer.Option("--d-model", help=f"Model width d_model (even) [default: {PE_DEFAULT.d_model}]."),
]
OptBaseOrNone = Annotated[
    float | None,
    typer.Option(
        "--base", help=f"Frequency base of sinusoids and RoPE [default: {PE_DEFAULT.base:g}]."
    ),
]
OptPositionsOrNone = Annotated[
    int | None,
    typer.Option(
        "--positions", help=f"Number of positions shown [default: {PE_DEFAULT.positions}]."
    ),
]
OptThemeOrNone = Annotated[
    str | None,
    typer.Option(
        "--theme", help=f"One of: {', '.join(THEMES)} [default: {BUILD_DEFAULT.look.theme}]."
    ),
]
OptLangOrNone = Annotated[
    str | None,
    typer.Option("--lang", help=f"Comma list of: {','.join(LANGS)} [default: {DEFAULT_LANGS}]."),
]
OptFormatOrNone = Annotated[
    str | None,
    typer.Option(
        "--format", help=f"Comma list of: {','.join(FORMATS)} [default: {DEFAULT_FORMATS}]."
    ),
]
OptSizeOrNone = Annotated[
    str | None,
    typer.Option(
        "--size", help=f"One of: {', '.join(SIZES)} [default: {BUILD_DEFAULT.look.size}]."
    ),
]


def given_params(d_model: int | None, base: float | None, positions: int | None) -> dict[str, Any]:
    """The PE parameters set on the command line (checked), by name."""
    if d_model is None and base is None and positions is None:
        return {}
    p = params_of(
        PE_DEFAULT.d_model if d_model is None else d_model,
        PE_DEFAULT.base if base is None else base,
        PE_DEFAULT.positions if positions is None else positions,
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


def check_calculator_options(head_dim: int, context: int, target: int | None) -> None:
    """`posecards data rope-calculators`: an even head dim, a context and a longer target."""
    if head_dim < 2 or head_dim % 2 or head_dim > MAX_CALC_HEAD_DIM:
        fail(f"--head-dim must be an even integer from 2 to {MAX_CALC_HEAD_DIM}, got {head_dim}")
    if not 2 <= context <= MAX_CALC_CONTEXT:
        fail(f"--context must be from 2 to {MAX_CALC_CONTEXT}, got {context}")
    if target is not None and not context < target <= MAX_CALC_CONTEXT:
        fail(
            f"--target must be above --context ({context}) and at most {MAX_CALC_CONTEXT},"
            f" got {target}"
        )


def measure_counts(seeds: int | None, steps: int | None, quick: bool) -> tuple[int, int]:
    """`posecards measure`'s seeds and steps: as given, else --quick's, else the defaults."""
    default = MeasureConfig()
    seeds_ = seeds if seeds is not None else (QUICK_SEEDS if quick else default.seeds)
    steps_ = steps if steps is not None else (QUICK_STEPS if quick else default.steps)
    if not 1 <= seeds_ <= MAX_MEASURE_SEEDS:
        fail(f"--seeds must be from 1 to {MAX_MEASURE_SEEDS}, got {seeds_}")
    if not 1 <= steps_ <= MAX_MEASURE_STEPS:
        fail(f"--steps must be from 1 to {MAX_MEASURE_STEPS}, got {steps_}")
    return seeds_, steps_


def json_out(out: Path) -> None:
    """An --out that names a JSON file, not a folder."""
    if out.exists() and out.is_dir():
        fail(f"--out {out} is a folder")
    if out.suffix.lower() != ".json":
        fail(f"--out must end in .json, got {out.name!r}")
