"""Every text a figure draws keeps WCAG AA contrast (4.5:1) with what it sits on, in both themes:
the cards (slide size, both languages), every figure on its own canvas (the figure files and
pages), and the deck's title, closing and animation slides (its panel slides redraw the same
figures).

Measured, not assumed: posecards.render.contrast draws the figure, finds every drawn text and
its ink boxes, draws it again with the texts transparent and reads the pixels under them
(a heat-map cell, a legend frame, a tinted band, the page).

The same draw of each card and figure is measured for its layout as tests/test_layout.py
measures the other page sizes and the figures in Chinese (posecards.render.contrast
.contrasts_and_layout: one draw for both checks).
"""

from __future__ import annotations

from typing import Any

import pytest

from posecards.config import CARD_IDS, PEParams
from posecards.figures.roles import page_scale
from posecards.figures.style import card_style
from posecards.render.contrast import (
    MIN_TEXT_CONTRAST,
    card_figures,
    contrasts_and_layout,
    low_contrast,
    text_contrasts,
)
from posecards.render.measure import texts_under_panels
from posecards.render.text import load_card_text

THEMES = ("light", "dark")
CARDS = CARD_IDS


def _problems(name: str, fig: Any) -> list[str]:
    return [f"{name}: {c.describe()}" for c in low_contrast(fig)]


@pytest.mark.slow
@pytest.mark.parametrize("theme_name", THEMES)
@pytest.mark.parametrize("card", CARDS)
def test_slide_card_and_figures_keep_4_5_to_1_and_their_layout(
    card: int, theme_name: str, computed_cards: dict[int, Any]
) -> None:
    """The card (slide size, its own footer) in both languages; its figures on their own
    canvases in English (their colours do not depend on the language): every text at 4.5:1 or
    more. The same draw of each is the layout check of tests/test_layout.py (which measures
    the other page sizes and the figures in Chinese): no text under its floor, none touching,
    outside the page or on the data it labels, no card text under a panel."""
    problems: list[str] = []
    measured = 0
    drawn: list[str] = []
    for lang in ("en", "zh"):
        one = {card: computed_cards[card]}
        for name, fig in card_figures(theme_name, lang, one, standalone=lang == "en"):
            whole = name == f"card {card}"
            found, report = contrasts_and_layout(fig, page_scale("slide" if whole else "figure"))
            if whole:
                report.under_panels = texts_under_panels(fig)  # inside the card's style
            measured += len(found)
            problems += [
                f"{name} {lang}: {c.describe()}" for c in found if c.ratio < MIN_TEXT_CONTRAST
            ]
            assert report.texts, (name, lang)
            problems += [f"{name} {lang} layout: {p}" for p in report.problems()]
            drawn.append(f"{name} {lang}")
    assert measured > 100
    # both cards, and every panel and figure-page figure of its text on its own canvas
    text = load_card_text(card)
    figures = {f"{f.id} en" for f in (*text.panels, *text.figures)}
    assert drawn[0] == f"card {card} en" and drawn[-1] == f"card {card} zh"
    assert sorted(drawn[1:-1]) == sorted(figures), drawn
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("theme_name", THEMES)
def test_deck_slide_text_keeps_4_5_to_1(theme_name: str) -> None:
    """The title slide, the closing slide and the three animations' slides."""
    from posecards.deck import animate
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
                animate.draw_animation_frame(sub, name, data, n // 2, th)

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
