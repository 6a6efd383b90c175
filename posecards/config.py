"""Defaults, in small frozen dataclasses. CLI options map onto these fields one to one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CARD_IDS: tuple[int, ...] = (1, 2, 3, 4)
LANGS: tuple[str, ...] = ("en", "zh")
FORMATS: tuple[str, ...] = ("png", "svg", "pdf", "html")
THEMES: tuple[str, ...] = ("light", "dark")
DECK_FORMATS: tuple[str, ...] = ("pptx", "pdf")
# size name -> (width, height) in inches at 100 dpi for PNG: slide = 1920 x 1080 px
SIZES: dict[str, tuple[float, float]] = {
    "slide": (19.2, 10.8),
    "4x3": (16.0, 12.0),
    "a4": (11.69, 16.54),
    "square": (14.0, 14.0),
}
MAX_D_MODEL = 65536
MAX_POSITIONS = 131072
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
    """How a card looks: theme and page size."""

    theme: str = "light"
    size: str = "slide"


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
    jobs: int = 1
    quiet: bool = False


@dataclass(frozen=True)
class DeckConfig:
    """One `posecards deck` run (slide pictures and animations are always written)."""

    out: Path = Path("out/deck")
    cards: tuple[int, ...] = CARD_IDS
    langs: tuple[str, ...] = LANGS
    formats: tuple[str, ...] = DECK_FORMATS
    theme: str = "light"
    params: PEParams = field(default_factory=PEParams)
    jobs: int = 1  # the CLI defaults to one per core
    check: bool = False
    quiet: bool = False
    cache: bool = True
