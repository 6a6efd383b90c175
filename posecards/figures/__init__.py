"""Figures: one draw function per figure id. They draw data computed elsewhere; they compute nothing.

Each ``posecards/figures/cardN.py`` defines ``DRAW: dict[str, DrawFn]``. A draw function gets a
matplotlib Figure or SubFigure to fill (the same function draws a panel of the whole card and the
standalone figure), the figure's data from posecards.content, a Labels lookup for axis text in the
card's language, and the Theme (colours, colour maps).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from posecards.cards import spec

if TYPE_CHECKING:
    from matplotlib.figure import FigureBase

    from posecards.figures.style import Theme


class Labels(Protocol):
    """``t("position")`` -> the label in the card's language (from the card's [labels] table)."""

    @property
    def lang(self) -> str: ...

    def __call__(self, key: str, **values: Any) -> str: ...


DrawFn = Callable[["FigureBase", Mapping[str, Any], Labels, "Theme"], None]


def draw_functions(card: int | str) -> dict[str, DrawFn]:
    """A card's draw functions, from its figures module (posecards.cards: ``figures/card3.py``,
    ``figures/inspect_rope.py``)."""
    module = importlib.import_module(spec(card).figures_module)
    draw: dict[str, DrawFn] = module.DRAW
    return draw
