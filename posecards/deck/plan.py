"""Which slides the deck has, in which order: title, then per card its overview and one slide
per panel (and its animation), then the pitfalls. Reads only the card and deck text files."""

from __future__ import annotations

from dataclasses import dataclass

from posecards.deck.notes import load_deck_text
from posecards.render.text import load_card_text


@dataclass(frozen=True)
class PlannedSlide:
    n: int  # 1-based slide number
    kind: str  # "title" | "overview" | "panel" | "animation" | "closing"
    slug: str  # file name part: slides/<nn>-<slug>.png
    card: int | None = None
    figure: str | None = None  # panel slides: the figure id; animation slides: the name

    @property
    def stem(self) -> str:
        return f"{self.n:02d}-{self.slug}"


def plan_deck(cards: tuple[int, ...]) -> list[PlannedSlide]:
    deck = load_deck_text()
    slides = [PlannedSlide(1, "title", "title")]
    for c in cards:
        text = load_card_text(c)
        slides.append(PlannedSlide(len(slides) + 1, "overview", f"card-{c}-{text.slug}", c))
        for p in text.panels:
            slides.append(PlannedSlide(len(slides) + 1, "panel", p.id, c, p.id))
        for name, anim in deck.animations.items():
            if anim.card == c:
                slides.append(
                    PlannedSlide(len(slides) + 1, "animation", f"animation-{name}", c, name)
                )
    slides.append(PlannedSlide(len(slides) + 1, "closing", "pitfalls"))
    return slides


def picture_name(lang: str, stem: str) -> str:
    """The picture a PPTX slide shows (a helper of the deck's assembly, never written)."""
    return f"{lang}/slides/{stem}.picture.png"
