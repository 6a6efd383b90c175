"""The words of the deck's slides, without drawing them: which text of cards/deck.toml a slide
shows and the values it is filled with (a card's numbers; an animation's own numbers, from the
same frame data it draws; the title, closing and sources slides' lists). The slide units
(deck/units.py) draw with them; tests/text_snapshots.py records them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posecards._version import __version__
from posecards.config import PEParams
from posecards.deck import frames as deck_frames
from posecards.deck.notes import DeckText, FilledSlideText, SlideText, fill_slide
from posecards.deck.plan import PlannedSlide, closing_pages, deck_sources
from posecards.render.fields import CardTextError
from posecards.render.fill import fill
from posecards.render.text import load_card_text


def animation_values(name: str, params: PEParams) -> dict[str, Any]:
    """The numbers an animation slide's text quotes, from the same frame data it draws."""
    if name == "rope":
        r = deck_frames.rope_frames()
        return {
            "theta": r.theta,
            "offset": r.offset,
            "rel_angle": float(r.angle_k[0] - r.angle_q[0]),
            "score": float(r.score[0]),
            "score_spread": float(r.score.max() - r.score.min()),
            "frames": len(r.m),
        }
    if name == "clocks":
        c = deck_frames.clock_frames(params)
        values: dict[str, Any] = {"d_model": c.d_model, "base": c.base, "frames": len(c.positions)}
        values["pairs"] = ", ".join(str(int(p)) for p in c.pairs)
        values["n_clocks"] = len(c.pairs)
        values["omega_fast"] = float(c.omega[0])
        values["omega_slow"] = float(c.omega[-1])
        values["slow_pair"] = int(c.pairs[-1])
        values["slow_turns"] = float(c.omega[-1] * c.positions[-1] / (2 * 3.141592653589793))
        return values
    a = deck_frames.alibi_frames()
    last = a.weights[-1]  # (H, L)
    return {
        "heads": ", ".join(str(int(h)) for h in a.heads),
        "slope_first": float(a.slopes[0]),
        "slope_last": float(a.slopes[-1]),
        "keys": a.weights.shape[2],
        "near_first": float(last[0, -1]),
        "far_first": float(last[0, 0]),
        "near_last": float(last[-1, -1]),
        "far_last": float(last[-1, 0]),
    }


def card_slide_text(
    s: PlannedSlide, deck: DeckText, numbers: Mapping[str, Any], params: PEParams
) -> tuple[SlideText, Mapping[str, Any]]:
    """The text of one of a card's slides (overview, panel or animation) in cards/deck.toml,
    and the values it is filled with (the card's numbers; an animation's own numbers too)."""
    if s.kind == "overview":
        overview = deck.cards.get(s.card) if s.card is not None else None
        if overview is None:
            raise CardTextError(f"deck.toml: no [cards.{s.card}] for card {s.card}")
        return overview, numbers
    assert s.figure is not None
    if s.kind == "panel":
        panel = deck.panels.get(s.figure)
        if panel is None:
            raise CardTextError(
                f"deck.toml: no [panels.{s.figure}] (speaker notes) for card {s.card}"
            )
        return panel, numbers
    return deck.animations[s.figure], {**numbers, **animation_values(s.figure, params)}


def frame_values(params: PEParams, n_cards: int) -> dict[str, Any]:
    """The values the title, closing and sources slides' own text is filled with."""
    return {
        "d_model": params.d_model,
        "base": params.base,
        "positions": params.positions,
        "version": __version__,
        "n_cards": n_cards,
    }


def frame_slide_words(
    s: PlannedSlide,
    deck: DeckText,
    lang: str,
    values: Mapping[str, Any],
    card_numbers: Mapping[int, Mapping[str, Any]],
) -> tuple[FilledSlideText, dict[str, Any]]:
    """Title and notes of a title, closing or sources slide in ``lang``, and what it lists
    ("items": the agenda, each card's pitfall, the sources; the title slide's "subtitle").
    ``card_numbers``: the numbers of the deck's cards, in deck order."""
    cards = tuple(card_numbers)
    if s.kind == "title":
        filled = fill_slide(deck.title, lang, values)
        subtitle = fill(deck.subtitle.get(lang), values, "deck.toml: 'deck.subtitle'")
        agenda = [f"{c}. {load_card_text(c).title.get(lang)}" for c in cards]
        return filled, {"subtitle": subtitle, "items": agenda}
    if s.kind == "sources":
        filled = fill_slide(deck.sources, lang, values)
        pages = deck_sources(cards)
        title = filled.title
        if len(pages) > 1:
            title = f"{title} ({s.page + 1}/{len(pages)})"
        items = [src.text(lang) for src in pages[s.page]]
        return FilledSlideText(title, filled.notes), {"items": items}
    filled = fill_slide(deck.closing, lang, values)
    closing = closing_pages(cards)
    if len(closing) > 1:
        filled = FilledSlideText(f"{filled.title} ({s.page + 1}/{len(closing)})", filled.notes)
    items = []
    for c in closing[s.page]:
        item = deck.closing_items.get(c)
        if item is None:
            raise CardTextError(f"deck.toml: no [closing.items.{c}] for card {c}")
        items.append(fill(item.get(lang), card_numbers[c], f"deck.toml: 'closing.items.{c}'"))
    return filled, {"items": items}
