"""Every text a figure draws keeps WCAG AA contrast (4.5:1) with what it sits on, in both themes:
the cards (slide size, both languages), every figure on its own canvas (the figure files and
pages), and the deck's title, closing and animation slides (its panel slides redraw the same
figures).

Measured, not assumed: posecards.render.contrast draws the figure, finds every drawn text and
its ink boxes, draws it again with the texts transparent and reads the pixels under them
(a heat-map cell, a legend frame, a tinted band, the page).
"""

from __future__ import annotations

from typing import Any

import pytest

from posecards.config import CARD_IDS, PEParams
from posecards.figures.style import card_style
from posecards.render.contrast import (
    MIN_TEXT_CONTRAST,
    card_figures,
    low_contrast,
    text_contrasts,
)

THEMES = ("light", "dark")
CARDS = CARD_IDS


@pytest.fixture(scope="module")
def contents() -> dict[int, Any]:
    from posecards.content import compute_card

    return {c: compute_card(c, PEParams()) for c in CARDS}


def _problems(name: str, fig: Any) -> list[str]:
    return [f"{name}: {c.describe()}" for c in low_contrast(fig)]


@pytest.mark.slow
@pytest.mark.parametrize("theme_name", THEMES)
@pytest.mark.parametrize("card", CARDS)
def test_card_and_figure_text_keeps_4_5_to_1(card: int, theme_name: str, contents: dict) -> None:
    """The card in both languages; its figures on their own canvases in English (their colours
    do not depend on the language)."""
    problems: list[str] = []
    measured = 0
    for lang in ("en", "zh"):
        one = {card: contents[card]}
        for name, fig in card_figures(theme_name, lang, one, standalone=lang == "en"):
            found = text_contrasts(fig)
            measured += len(found)
            problems += [
                f"{name} {lang}: {c.describe()}" for c in found if c.ratio < MIN_TEXT_CONTRAST
            ]
    assert measured > 100
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("theme_name", THEMES)
def test_deck_slide_text_keeps_4_5_to_1(theme_name: str) -> None:
    """The title slide, the closing slide and the three animations' slides."""
    from posecards.deck import draw as d
    from posecards.deck.notes import ANIMATIONS
    from posecards.deck.units import _animation_data

    problems: list[str] = []
    items = ["A pitfall long enough to wrap onto a second line of the slide's body text."] * 3
    with card_style(theme_name) as th:
        slides = [
            ("title slide", d.title_slide("Title", "Subtitle", ["1. Card"], th)),
            ("closing slide", d.bullets_slide("Pitfalls", items, th)),
        ]
        for name in ANIMATIONS:
            data, n = _animation_data(name, PEParams())

            def frame(sub: Any, name: str = name, data: Any = data, n: int = n) -> None:
                d.draw_animation_frame(sub, name, data, n // 2, th)

            slides.append((f"animation {name}", d.figure_slide(name, th, frame)))
        for name, pic in slides:
            problems += _problems(name, pic.pdf_figure)
    assert not problems, "\n".join(problems)


def test_the_measure_finds_low_contrast_and_reads_the_background() -> None:
    """Okabe-Ito's green as text on white is the issue's 3.42:1; white on a light heat-map cell
    and text on a legend frame are judged against that cell and that frame."""
    from matplotlib.figure import Figure

    with card_style("light"):
        fig = Figure(figsize=(4, 3), dpi=100)
        ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
        ax.imshow([[0.9, 0.1]], cmap="gray", vmin=0, vmax=1, extent=(0, 2, 0, 1))
        ax.set_xlim(0, 2)
        ax.text(0.5, 0.5, "white on light", color="white", ha="center", va="center")
        ax.text(1.5, 0.5, "white on dark", color="white", ha="center", va="center")
        fig.text(0.02, 0.95, "green", color="#009E73")
        fig.text(0.5, 0.95, "grey box", color="#777777", bbox={"facecolor": "#dddddd"})
        found = {c.text: c for c in text_contrasts(fig)}
    assert found["green"].ratio == pytest.approx(3.42, abs=0.01)
    assert found["white on light"].ratio < 1.5
    assert found["white on dark"].ratio > 10
    assert found["grey box"].background == pytest.approx((0xDD / 255,) * 3, abs=1e-9)
    assert found["grey box"].ratio < MIN_TEXT_CONTRAST
    # tick labels are texts too, in the axes' tick colour on the page
    assert {"0.0", "white on dark"} <= set(found)
