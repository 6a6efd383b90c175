"""Text sizes by role (tick, legend, annotation, panel title ...), not by literal.

The sizes live in ``posecards/style/roles.toml`` (points on the slide page). A page multiplies
them by its scale: the composer enters ``page_roles("a4")`` while it lays out an A4 card, the
lecture deck ``page_roles("deck")`` or ``text_scale(f)`` when it redraws a panel for a slide.
Inside the block ``fontsize(role)`` gives the size in points and matplotlib's rcParams for ticks,
legends and labels follow the same roles. Nothing happens at import time.
"""

from __future__ import annotations

import contextlib
import contextvars
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from posecards.paths import STYLE_DIR

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import FigureBase

# mathtext draws sub/superscripts at this fraction of the text size (matplotlib's SHRINK_FACTOR)
SCRIPT_FRACTION = 0.7

_SCALE: contextvars.ContextVar[float] = contextvars.ContextVar("posecards_text_scale", default=1.0)


@dataclass(frozen=True)
class RoleSheet:
    """The contents of roles.toml."""

    roles: Mapping[str, float]  # role -> points on the slide page
    floor_text: float  # points on the slide page
    floor_script: float
    pages: Mapping[str, float]  # page name -> text scale
    rc: Mapping[str, str]  # rcParam -> role


@cache
def role_sheet() -> RoleSheet:
    sheet = tomllib.loads((STYLE_DIR / "roles.toml").read_text(encoding="utf-8"))
    return RoleSheet(
        roles=MappingProxyType({k: float(v) for k, v in sheet["roles"].items()}),
        floor_text=float(sheet["floor"]["text"]),
        floor_script=float(sheet["floor"]["script"]),
        pages=MappingProxyType({k: float(v) for k, v in sheet["pages"].items()}),
        rc=MappingProxyType(dict(sheet["rc"])),
    )


def current_scale() -> float:
    """The text scale of the page being drawn (1.0 outside any ``text_scale`` block)."""
    return _SCALE.get()


def fontsize(role: str) -> float:
    """Size in points of text in ``role`` on the current page."""
    roles = role_sheet().roles
    if role not in roles:
        raise ValueError(f"unknown text role {role!r}; choose one of: {', '.join(roles)}")
    return roles[role] * _SCALE.get()


def floor_px(dpi: float = 100.0, script: bool = False, scale: float | None = None) -> float:
    """The smallest text (or sub/superscript) allowed on a page of this scale, in pixels."""
    sheet = role_sheet()
    pt = sheet.floor_script if script else sheet.floor_text
    return pt * (current_scale() if scale is None else scale) * dpi / 72.0


def page_scale(size_or_factor: str | float) -> float:
    """A page name ("slide", "4x3", "a4", "square", "figure", "deck") or a factor -> the factor."""
    if isinstance(size_or_factor, str):
        pages = role_sheet().pages
        if size_or_factor not in pages:
            raise ValueError(f"unknown page {size_or_factor!r}; choose one of: {', '.join(pages)}")
        return pages[size_or_factor]
    factor = float(size_or_factor)
    if not factor > 0:
        raise ValueError(f"text scale must be positive, got {size_or_factor!r}")
    return factor


def role_rc() -> dict[str, Any]:
    """matplotlib's text sizes (font.size, axes.titlesize ...) from their roles on the current page."""
    return {key: fontsize(role) for key, role in role_sheet().rc.items()}


@contextlib.contextmanager
def text_scale(factor: float) -> Iterator[float]:
    """Scale every role by ``factor`` for the duration of the block (rcParams included)."""
    import matplotlib as mpl

    factor = page_scale(factor)
    token = _SCALE.set(factor)
    try:
        with mpl.rc_context(role_rc()):  # type: ignore[arg-type]
            yield factor
    finally:
        _SCALE.reset(token)


@contextlib.contextmanager
def page_roles(size_or_factor: str | float) -> Iterator[float]:
    """``text_scale`` for a named page ("slide", "a4", "deck" ...) or an explicit factor."""
    with text_scale(page_scale(size_or_factor)) as factor:
        yield factor


def freeze_tick_sizes(fig: FigureBase) -> None:
    """Fix the tick-label size of every axes in ``fig`` to the current ``tick`` role.

    Tick labels (and colour-bar ticks) are created lazily at draw time; this makes them keep the
    page's size even when the figure is drawn after the ``text_scale`` block has ended.
    """
    size = fontsize("tick")
    for ax in axes_in(fig):
        ax.tick_params(axis="both", which="both", labelsize=size)


def axes_in(artist: Artist) -> list[Axes]:
    """Every Axes under ``artist`` (subfigures' axes, inset and colour-bar axes), in the order
    of ``artist.findobj(Axes)``, without walking into an axis: ``Axis.get_children`` lists
    its ticks, and makes one for each tick location (a whole Tick with its lines and labels,
    matplotlib's slowest artist) on an axes whose axis is off or before any draw needs it."""
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis

    found: list[Axes] = []
    for child in artist.get_children():
        if isinstance(child, Axis):
            continue
        found += axes_in(child)
        if isinstance(child, Axes):
            found.append(child)
    return found
