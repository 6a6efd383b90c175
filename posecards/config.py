"""Defaults, in small frozen dataclasses. CLI options map onto these fields one to one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from posecards import cards as registry

CARD_IDS: tuple[int, ...] = registry.CARD_IDS  # the registry of cards: posecards/cards.py
LANGS: tuple[str, ...] = ("en", "zh")
FORMATS: tuple[str, ...] = ("png", "svg", "pdf", "html")
# posecards inspect also writes its reading as DIR/<name>.json (docs/inspect-json.md)
INSPECT_FORMATS: tuple[str, ...] = (*FORMATS, "json")
THEMES: tuple[str, ...] = ("light", "dark")
SVG_TEXTS: tuple[str, ...] = ("outline", "live")  # --svg-text
DECK_FORMATS: tuple[str, ...] = ("pptx", "pdf")
# Cards the lecture deck has slides and speaker notes for (its default --cards).
DECK_CARD_IDS: tuple[int, ...] = registry.DECK_CARD_IDS
# page sizes (their geometry: templates/layouts.toml; slide = 1920 x 1080 px)
SIZES: tuple[str, ...] = ("slide", "4x3", "a4", "square")
# size name -> physical width in inches a PNG card is tagged with (pHYs), so slide software places
# it at slide size: a 16:9 slide is 13.333 in wide, a 4:3 slide 10 in, A4 8.27 in
PRINT_WIDTH: dict[str, float] = {"slide": 13.333, "4x3": 10.0, "a4": 8.27, "square": 7.5}
MAX_SCALE = 4  # --scale: PNG pixels per figure pixel (2 = 3840 x 2160 for a slide card)
MAX_D_MODEL = 65536
MAX_POSITIONS = 131072
CALCULATORS_ID = "rope-calculators"  # `posecards data` takes it in place of a figure id
MAX_CALC_HEAD_DIM = 1024  # posecards data rope-calculators: --head-dim
MAX_CALC_CONTEXT = 1 << 24  # --context, --target (16,777,216 tokens)
MAX_JOBS = 64
# Largest --base: float32's largest finite value (np.finfo(np.float32).max). Card 2 shows how
# the common float32 code computes base ** (2i/d); a larger base is inf in float32.
MAX_BASE = 3.4028234663852886e38


@dataclass(frozen=True)
class PEParams:
    """The parameters every computed number on a card depends on."""

    d_model: int = 512
    base: float = 10000.0
    positions: int = 128


@dataclass(frozen=True)
class Look:
    """How a card looks: theme, page size, the PNG resolution (--scale), and the SVG text
    (--svg-text: "outline", glyphs as paths, or "live" <text>; posecards.render.files)."""

    theme: str = "light"
    size: str = "slide"
    scale: int = 1
    svg_text: str = "outline"


@dataclass(frozen=True)
class BuildConfig:
    """One `posecards build` run."""

    out: Path = Path("out")
    cards: tuple[int, ...] = CARD_IDS
    langs: tuple[str, ...] = LANGS
    formats: tuple[str, ...] = ("png", "svg", "html")
    look: Look = field(default_factory=Look)
    params: PEParams = field(default_factory=PEParams)
    jobs: int = 1  # the CLI defaults to one per core
    check: bool = False
    quiet: bool = False
    cache: bool = True  # --no-cache: render everything afresh


@dataclass(frozen=True)
class InspectConfig:
    """One `posecards inspect` run (the model path and --tensor/--offset are checked first)."""

    out: Path | None = None  # default: out/inspect/<model-slug>
    langs: tuple[str, ...] = LANGS
    formats: tuple[str, ...] = ("png", "svg", "html")
    look: Look = field(default_factory=Look)
    tensor: str | None = None  # --tensor NAME: read this 2-D tensor as the position table
    offset: int | None = None  # --offset N: table rows before position 0 (default: detect)
    weights: bool = False  # --weights: how the trained model uses each RoPE frequency
    # --activations / --text FILE: also run the model on text (posecards' own, or FILE)
    activations: bool = False
    text: Path | None = None
    jobs: int = 1
    quiet: bool = False


@dataclass(frozen=True)
class ExploreConfig:
    """One `posecards explore` run: the interactive explorer page (also DIR/explore.html)."""

    out: Path = Path("explore.html")
    lang: str = "en"  # the language the page opens in (it carries both)
    theme: str = "light"  # the theme it opens in (it carries both)


@dataclass(frozen=True)
class MeasureSetup:
    """The experiment behind card 5 (`posecards measure`): task, model and training settings."""

    vocab: int = 16  # symbols of the synthetic language
    follow: float = 0.75  # P(x_t = perm(x_{t-2})) beyond the uniform share; see experiment.task
    train_length: int = 64
    eval_multiples: tuple[int, ...] = (1, 2, 4, 8)
    layers: int = 2
    d_model: int = 64
    heads: int = 4
    d_ff: int = 256
    batch: int = 32
    lr: float = 3e-3
    warmup: int = 30
    weight_decay: float = 0.01
    eval_sequences: int = 64
    t5_buckets: int = 32
    rope_base: float = 10000.0
    # the long-range task (experiment.recall): K keys, V values, facts per sequence
    recall_keys: int = 8
    recall_values: int = 8
    recall_pairs: int = 4


@dataclass(frozen=True)
class MeasureConfig:
    """One `posecards measure` run. --quick: 1 seed and QUICK_STEPS steps unless given."""

    out: Path = Path("measurements.json")
    seeds: int = 3
    steps: int = 300
    jobs: int = 1  # the CLI defaults to one per core
    quiet: bool = False
    setup: MeasureSetup = field(default_factory=MeasureSetup)
    tasks: tuple[str, ...] = ("local", "recall")  # experiment.tasks.TASK_IDS, every task


QUICK_SEEDS = 1
QUICK_STEPS = 120
MAX_MEASURE_SEEDS = 100
MAX_MEASURE_STEPS = 100_000


@dataclass(frozen=True)
class DeckConfig:
    """One `posecards deck` run (slide pictures and animations are always written)."""

    out: Path = Path("out/deck")
    cards: tuple[int, ...] = DECK_CARD_IDS
    langs: tuple[str, ...] = LANGS
    formats: tuple[str, ...] = DECK_FORMATS
    theme: str = "light"
    params: PEParams = field(default_factory=PEParams)
    jobs: int = 1  # the CLI defaults to one per core
    check: bool = False
    quiet: bool = False
    cache: bool = True
