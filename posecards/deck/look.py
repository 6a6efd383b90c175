"""The deck's geometry and type sizes, from ``templates/deck.toml`` (boxes in slide inches from
the top-left, sizes in slide points). Read by the slide drawing (posecards.deck.draw), the PPTX
writer and the deck's plan (sources per slide), which must not import the drawing.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from posecards.paths import data_dir

Box = tuple[float, float, float, float]  # left, top, width, height (inches from top-left)


@dataclass(frozen=True)
class DeckLook:
    width: float
    height: float
    title_box: Box
    picture_box: Box
    title_size: float
    title_max_lines: int
    body_box: Box
    body_size: float
    sources_size: float  # the sources slides: one line or two per paper
    sources_per_slide: int
    pitfalls_per_slide: int  # the closing slides: one pitfall per card, this many per slide
    deck_title_size: float
    deck_title_box: Box
    deck_subtitle_box: Box
    agenda_box: Box
    deck_subtitle_size: float
    agenda_size: float
    min_text_px: float
    min_figure_px: float
    magnify: float
    picture_px: int
    animation_px: int

    def px_per_pt(self, fig_width_in: float) -> float:
        """Pixels at 1920 x 1080 per point of text on a figure ``fig_width_in`` wide that is
        shown across the whole slide."""
        return self.picture_px / (72.0 * fig_width_in)


@cache
def deck_look() -> DeckLook:
    data = tomllib.loads((data_dir("templates") / "deck.toml").read_text(encoding="utf-8"))
    s = dict(data["slide"])
    for key in (
        "title_box",
        "picture_box",
        "body_box",
        "deck_title_box",
        "deck_subtitle_box",
        "agenda_box",
    ):
        s[key] = tuple(float(v) for v in s[key])
    return DeckLook(**s)
