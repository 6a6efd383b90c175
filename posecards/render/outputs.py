"""The names of what a card's units make: its files in one language (``unit_files``: the names
``render.card_unit.render_unit`` produces; a test holds the two together), its helpers (the
formula and the live-text figures the pages inline) and its units. Light: a plan and ``--check``
work them out from the options and the card text alone.
"""

from __future__ import annotations

EXPLORE = "explore"
INDEX = "index"
CARD_FORMATS = ("pdf", "png", "svg")  # a whole card


FIGURE_FORMATS = ("png", "svg")  # a standalone figure


def card_stem(card: int, slug: str) -> str:
    return f"card-{card}-{slug}"


def card_unit(card: int | str, lang: str) -> str:
    """The name of the unit that makes one card's files in one language: ``card 3 (en)``."""
    return f"card {card} ({lang})"


def formula_name(stem: str) -> str:
    """The key formula of a card page, drawn alone (a helper of the pages, never written): the
    same mathematics in every language, drawn once, by the unit of the first language."""
    return f"{stem}.formula.svg"


def live_svg_name(lang: str, fid: str) -> str:
    """The live-text SVG of a figure that its HTML pages inline (a helper, never written)."""
    return f"{lang}/figures/{fid}.live.svg"


def unit_files(
    stem: str, figure_ids: tuple[str, ...], lang: str, formats: tuple[str, ...]
) -> tuple[str, ...]:
    """The public files of one card (or inspection card) in one language, from its text alone
    (the names ``render_unit`` produces; a test holds the two together)."""
    made = [f"{lang}/{stem}.{fmt}" for fmt in CARD_FORMATS if fmt in formats]
    made += [
        f"{lang}/figures/{fid}.{fmt}"
        for fid in figure_ids
        for fmt in FIGURE_FORMATS
        if fmt in formats
    ]
    return tuple(made)


def pages_unit(lang: str) -> str:
    return f"pages ({lang})"
