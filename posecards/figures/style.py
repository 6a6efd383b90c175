"""The look of every figure, applied inside a context (no import-time side effects).

Fonts: Noto Sans CJK SC (OFL) comes first in ``font.family`` so that Chinese glyphs render and
strings with ``$math$`` keep the same font; DejaVu Sans is the fallback for symbols.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from posecards.errors import PosecardsError

if TYPE_CHECKING:
    from matplotlib.colors import Colormap

STYLE_DIR = Path(__file__).resolve().parent.parent / "style"
CJK_FAMILY = "Noto Sans CJK SC"
# Where a free (OFL) Noto Sans CJK SC is found: mplfonts' copy first, then Debian's fonts-noto-cjk.
_DEBIAN_CJK = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf"),
)
CJK_INSTALL_HINT = "install it with 'pip install mplfonts' or 'apt-get install fonts-noto-cjk'"


class MissingFontError(PosecardsError, RuntimeError):
    """No CJK font is available, so Chinese text would render as empty boxes."""


@dataclass(frozen=True)
class Theme:
    """Colours and colour maps of one theme (from style/theme.toml)."""

    name: str
    sequential: str
    diverging: str
    background: str
    text: str
    muted: str
    accent: str
    warn: str
    ok: str
    box: str
    box_edge: str
    pitfall_box: str
    neutral: str
    marks: str  # colour map of dots coloured by a value ...
    marks_range: tuple[float, float]  # ... used over this part only (contrast with background)
    sequential_range: tuple[float, float]  # part of `sequential` for one-sided scales
    categorical: tuple[str, ...]  # distinct colours for categories (e.g. RoPE pairs), in order


@cache
def theme(name: str) -> Theme:
    data = tomllib.loads((STYLE_DIR / "theme.toml").read_text(encoding="utf-8"))
    if name not in data:
        raise ValueError(f"unknown theme {name!r}; choose one of: {', '.join(data)}")
    values = dict(data[name])
    values["categorical"] = tuple(values.get("categorical", ()))
    values["marks_range"] = tuple(values["marks_range"])
    values["sequential_range"] = tuple(values["sequential_range"])
    return Theme(name=name, **values)


CUT_MAPS = ("marks", "sequential")  # the colour maps theme.toml cuts, by role


def visible_cmap(th: Theme, role: str) -> Colormap:
    """The theme's colour map for ``role``, cut to the part that stands out on the background.

    "marks": dots coloured by a value (``th.marks`` over ``th.marks_range``); "sequential":
    one-sided heat-map scales whose cells meet the background, such as causal bias maps
    (``th.sequential`` over ``th.sequential_range``). The cuts live in style/theme.toml; a cut of
    [0, 1] is the map itself.
    """
    import matplotlib as mpl
    from matplotlib.colors import ListedColormap

    if role not in CUT_MAPS:
        raise ValueError(f"unknown colour-map role {role!r}; choose one of: {', '.join(CUT_MAPS)}")
    name: str = getattr(th, role)
    lo, hi = getattr(th, f"{role}_range")
    base = mpl.colormaps[name]
    if (lo, hi) == (0.0, 1.0):
        return base
    return ListedColormap(base(np.linspace(lo, hi, 256)), name=f"{name}-{th.name}-{role}")


def cjk_font_path() -> Path:
    """Path of a free Noto Sans CJK SC font file, or MissingFontError saying how to get one."""
    spec = importlib.util.find_spec("mplfonts")
    candidates: list[Path] = []
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            # never SimHei (not a free font), only the OFL Noto file
            candidates.append(Path(loc) / "fonts" / "NotoSansCJKsc-Regular.otf")
    candidates.extend(_DEBIAN_CJK)
    for path in candidates:
        if path.is_file():
            return path
    raise MissingFontError(f"no Chinese font (Noto Sans CJK SC) found; {CJK_INSTALL_HINT}")


@cache
def _register_cjk_font() -> str:
    from matplotlib import font_manager

    path = cjk_font_path()
    font_manager.fontManager.addfont(str(path))
    return font_manager.FontProperties(fname=str(path)).get_name()


class _GlyphLog(logging.Handler):
    """Collects matplotlib's 'Glyph ... missing from font' log records."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.missing: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if "glyph" in msg.lower():  # "Glyph N missing from font(s)", "does not have a glyph"
            self.missing.append(msg)


class MissingGlyphError(PosecardsError, RuntimeError):
    """A character had no glyph in any configured font."""


@contextlib.contextmanager
def card_style(theme_name: str = "light") -> Iterator[Theme]:
    """Apply posecards' matplotlib style and fonts for the duration of the block.

    Raises MissingGlyphError at the end of the block if any glyph was reported missing
    (matplotlib reports those through logging and warnings).
    """
    import warnings

    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    th = theme(theme_name)
    family = _register_cjk_font()
    styles = [str(STYLE_DIR / "card.mplstyle"), str(STYLE_DIR / f"{th.name}.mplstyle")]
    handler = _GlyphLog()
    loggers = [logging.getLogger("matplotlib"), logging.getLogger("matplotlib.font_manager")]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        with (
            plt.style.context(styles),
            plt.rc_context({"font.family": [family, "DejaVu Sans"]}),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            yield th
        glyph_warnings = [str(w.message) for w in caught if "glyph" in str(w.message).lower()]
        for w in caught:
            if "glyph" not in str(w.message).lower():
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    finally:
        for lg in loggers:
            lg.removeHandler(handler)
    missing = handler.missing + glyph_warnings
    if missing:
        raise MissingGlyphError(f"missing glyph: {missing[0]}")
