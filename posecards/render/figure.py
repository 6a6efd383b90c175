"""One figure on its own: the same draw function as the card panel, on its own canvas."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from posecards.config import CARD_IDS, PEParams
from posecards.content import compute_card
from posecards.figures import draw_functions
from posecards.figures.roles import freeze_tick_sizes, page_roles
from posecards.figures.style import card_style, theme
from posecards.render.files import figure_bytes
from posecards.render.text import CardLabels, CardText, load_card_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from matplotlib.figure import Figure

# size of a standalone figure, in inches (at 100 dpi: 800 x 600 px)
STANDALONE_SIZE = (8.0, 6.0)


def figure_card(figure_id: str) -> int:
    """The card a figure id belongs to: ids start with 'c<N>-'."""
    match = re.fullmatch(r"c(\d+)-[a-z0-9-]+", figure_id)
    if match and int(match.group(1)) in CARD_IDS:
        return int(match.group(1))
    raise ValueError(f"unknown figure id {figure_id!r}; run 'posecards list' to see the ids")


def draw_standalone(
    figure_id: str,
    data: Mapping[str, Any],
    lang: str,
    theme_name: str,
    size: tuple[float, float] = STANDALONE_SIZE,
    card: int | str | None = None,
    text: CardText | None = None,
) -> Figure:
    """Draw one figure on a new Figure. Call inside ``card_style(theme_name)``.

    ``card``: the card the figure belongs to (default: from the id, 'c<N>-...'); ``text``: its
    card text, if read already (a card's unit draws all its figures from the text it read).
    """
    card = figure_card(figure_id) if card is None else card
    text = load_card_text(card) if text is None else text
    draw = draw_functions(card)
    if figure_id not in draw:
        raise ValueError(f"unknown figure id {figure_id!r}; run 'posecards list' to see the ids")

    fig = Figure(figsize=size, layout="constrained")
    labels = CardLabels(text.labels, lang, text.path.name)
    with page_roles("figure"):
        draw[figure_id](fig, data, labels, theme(theme_name))
        freeze_tick_sizes(fig)
    return fig


def render_figure(
    figure_id: str,
    params: PEParams,
    lang: str = "en",
    theme_name: str = "light",
    fmt: str = "png",
    svg_text: str = "outline",
) -> bytes:
    """Compute and draw one figure; return the encoded file (SVG text per ``svg_text``)."""
    content = compute_card(figure_card(figure_id), params)
    if figure_id not in content.figures:
        raise ValueError(f"unknown figure id {figure_id!r}; run 'posecards list' to see the ids")
    with card_style(theme_name):
        fig = draw_standalone(figure_id, content.figures[figure_id], lang, theme_name)
        return figure_bytes(fig, fmt, svg_text=svg_text)
