"""Which slides the deck has, in which order: title, then per card its overview and one slide
per panel (and its animation), then the pitfalls, then the sources. Reads only the card and deck
text files."""

from __future__ import annotations

from dataclasses import dataclass

from posecards.deck.notes import load_deck_text
from posecards.render.parse import Source
from posecards.render.text import CardText, load_card_text

# Slides made by the frame unit (not by one card's unit): they quote several cards
FRAME_KINDS = ("title", "closing", "sources")


@dataclass(frozen=True)
class PlannedSlide:
    n: int  # 1-based slide number
    kind: str  # "title" | "overview" | "panel" | "animation" | "closing" | "sources"
    slug: str  # file name part: slides/<nn>-<slug>.png
    card: int | None = None
    figure: str | None = None  # panel slides: the figure id; animation slides: the name
    page: int = 0  # sources or closing slides: which page (deck_sources, closing_pages)

    @property
    def stem(self) -> str:
        return f"{self.n:02d}-{self.slug}"


def plan_deck(cards: tuple[int, ...]) -> list[PlannedSlide]:
    deck = load_deck_text()
    texts = [load_card_text(c) for c in cards]
    slides = [PlannedSlide(1, "title", "title")]
    for c, text in zip(cards, texts, strict=True):
        slides.append(PlannedSlide(len(slides) + 1, "overview", f"card-{c}-{text.slug}", c))
        for p in text.panels:
            slides.append(PlannedSlide(len(slides) + 1, "panel", p.id, c, p.id))
        for f in text.figures:  # a figure-page figure with speaker notes gets a slide too
            if f.id in deck.panels:
                slides.append(PlannedSlide(len(slides) + 1, "panel", f.id, c, f.id))
        for name, anim in deck.animations.items():
            if anim.card == c:
                slides.append(
                    PlannedSlide(len(slides) + 1, "animation", f"animation-{name}", c, name)
                )
    closing = closing_pages(cards)
    for i in range(len(closing)):
        slug = "pitfalls" if len(closing) == 1 else f"pitfalls-{i + 1}"
        slides.append(PlannedSlide(len(slides) + 1, "closing", slug, page=i))
    pages = _paged_sources(texts)
    for i in range(len(pages)):
        slug = "sources" if len(pages) == 1 else f"sources-{i + 1}"
        slides.append(PlannedSlide(len(slides) + 1, "sources", slug, page=i))
    return slides


def closing_pages(cards: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The deck's cards cut into pages of ``pitfalls_per_slide`` (templates/deck.toml) for the
    closing slides, one pitfall per card."""
    from posecards.deck.look import deck_look

    per = deck_look().pitfalls_per_slide
    return [tuple(cards[i : i + per]) for i in range(0, len(cards), per)]


def deck_sources(cards: tuple[int, ...]) -> list[list[Source]]:
    """The sources of the deck's cards, each once, in the order the cards first cite them, cut
    into pages of ``sources_per_slide`` (templates/deck.toml) for the last slides."""
    return _paged_sources([load_card_text(c) for c in cards])


def _paged_sources(texts: list[CardText]) -> list[list[Source]]:
    from posecards.deck.look import deck_look

    seen: dict[str, Source] = {}
    for text in texts:
        for s in text.sources:
            seen.setdefault(s.key, s)
    per = deck_look().sources_per_slide
    every = list(seen.values())
    return [every[i : i + per] for i in range(0, len(every), per)]


def picture_name(lang: str, stem: str) -> str:
    """The picture a PPTX slide shows (a helper of the deck's assembly, never written)."""
    return f"{lang}/slides/{stem}.picture.png"
