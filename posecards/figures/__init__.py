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

if TYPE_CHECKING:
    from matplotlib.figure import FigureBase

    from posecards.figures.style import Theme


class Labels(Protocol):
    """``t("position")`` -> the label in the card's language (from the card's [labels] table)."""

    @property
    def lang(self) -> str: ...

    def __call__(self, key: str, **values: Any) -> str: ...


DrawFn = Callable[["FigureBase", Mapping[str, Any], Labels, "Theme"], None]


# inspection cards whose figures live in a module of their own
OWN_MODULE: dict[str, str] = {"inspect-weights": "weights"}


def draw_functions(card: int | str) -> dict[str, DrawFn]:
    """Card N's draw functions (``figures/cardN.py``); an inspection card's (``inspect.py``)."""
    name = f"card{int(card)}" if isinstance(card, int) else OWN_MODULE.get(card, "inspect")
    module = importlib.import_module(f"posecards.figures.{name}")
    draw: dict[str, DrawFn] = module.DRAW
    return draw
