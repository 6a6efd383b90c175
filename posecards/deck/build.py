"""`posecards deck`: the plan of the lecture deck, run by the same engine as `posecards build`
(posecards.engine).

Units, each drawing one in a fresh process and kept in the unit cache:
- one per (card, language): the card's overview, panel and animation slides (pictures, PDF
  pages, PPTX pictures) and the slides' titles and notes;
- one for the animations (their text is mathematics only: the same files in every language);
- one per language for the title and closing slides (after the first language's cards: they
  quote their numbers, the same in every language);
- one per language and deck file for the assembled deck.pptx and deck.pdf (no drawing:
  python-pptx, pypdf; the first of them also writes notes.json), each in a fresh process with
  the files it assembles, the two side by side.
A card with slides is data here too: ``CardSpec.deck`` (posecards/cards.py) and its sections of
``cards/deck.toml`` (docs/cards.md). The units' code is ``deck.units``, named here, not imported:
planning imports no matplotlib.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from posecards.config import DECK_FORMATS, DeckConfig, PEParams
from posecards.deck.notes import ANIMATIONS
from posecards.deck.plan import FRAME_KINDS, PlannedSlide, plan_deck
from posecards.engine.inputs import LIBRARIES, text_name
from posecards.engine.units import Deferred, Plan, Unit
from posecards.paths import data_dir
from posecards.render.build import after_first_language, card_modules, card_sources

ANIMATIONS_UNIT = "animations"  # the unit that draws every animation


DECK_TEXT = "deck"  # cards/deck.toml: slide titles and speaker notes


DECK_LIBRARIES = ("python-pptx", "pypdf", "lxml")  # besides the drawing libraries of the cards


@dataclass(frozen=True)
class CardSlidesJob:
    card: int
    lang: str
    theme: str
    params: PEParams
    slides: tuple[PlannedSlide, ...]


@dataclass(frozen=True)
class FrameJob:
    lang: str
    theme: str
    params: PEParams
    cards: tuple[int, ...]
    slides: tuple[PlannedSlide, ...]  # the title, closing and sources slides
    # the language whose card slide units give the numbers the closing slide quotes (a card's
    # numbers are computed once for every language: the deck's first language)
    numbers_from: str


@dataclass(frozen=True)
class AnimationJob:
    names: tuple[str, ...]  # every animation, in this order in one process
    theme: str
    params: PEParams
    langs: tuple[str, ...]


@dataclass(frozen=True)
class AssemblyJob:
    lang: str
    fmt: str  # the deck this unit assembles: "pptx" or "pdf"
    theme: str
    notes: bool  # and notes.json


def card_slides_unit(card: int, lang: str) -> str:
    return f"card {card} slides ({lang})"


def frame_unit(lang: str) -> str:
    return f"title and closing slides ({lang})"


# what the slide-drawing processes load once (render/warm.py, and warm_pdf.py: every card's
# slides are also PDF pages; and the deck's drawing modules)
DECK_PRELOAD = (
    "posecards.render.warm",
    "posecards.render.warm_pdf",
    "posecards.deck.animate",
    "posecards.deck.draw",
    "posecards.deck.frames",
    "posecards.deck.notes",
    "posecards.deck.pdf",
    "posecards.deck.units",
)


# the code that draws and assembles, named (a plan imports none of it)
RENDER_CARD_SLIDES = Deferred("posecards.deck.units", "render_card_slides")
RENDER_FRAME_SLIDES = Deferred("posecards.deck.units", "render_frame_slides")
RENDER_ANIMATIONS = Deferred("posecards.deck.units", "render_animations")
RENDER_DECK = Deferred("posecards.deck.units", "render_deck")


def _pictures(lang: str, slides: tuple[PlannedSlide, ...]) -> tuple[str, ...]:
    return tuple(f"{lang}/slides/{s.stem}.{ext}" for s in slides for ext in ("png", "svg"))


def _animations(cfg: DeckConfig) -> Unit:
    return Unit(
        name=ANIMATIONS_UNIT,
        render=RENDER_ANIMATIONS,
        job=AnimationJob(tuple(ANIMATIONS), cfg.theme, cfg.params, cfg.langs),
        files=tuple(
            f"{lang}/animations/{name}.{ext}"
            for name in ANIMATIONS
            for lang in cfg.langs
            for ext in ("gif", "png")
        ),
    )


def _card_slides(cfg: DeckConfig, plan: list[PlannedSlide], lang: str) -> list[Unit]:
    deck_text = text_name(DECK_TEXT)
    slides_of = {c: tuple(s for s in plan if s.card == c) for c in cfg.cards}
    return [
        Unit(
            name=card_slides_unit(c, lang),
            render=RENDER_CARD_SLIDES,
            job=CardSlidesJob(c, lang, cfg.theme, cfg.params, slides_of[c]),
            files=_pictures(lang, slides_of[c]),
            texts=(text_name(c), deck_text),
            # card 1 in Chinese after English: it finds the cached UMAP layout
            after=after_first_language(c, lang, cfg.langs, card_slides_unit),
            preload=card_modules(c),
        )
        for c in cfg.cards
    ]


def _title_and_closing(cfg: DeckConfig, plan: list[PlannedSlide], lang: str) -> Unit:
    # the closing slide quotes the cards' numbers: the same in every language, taken
    # from the first language's units
    frames = tuple(s for s in plan if s.kind in FRAME_KINDS)
    first = cfg.langs[0]
    return Unit(
        name=frame_unit(lang),
        render=RENDER_FRAME_SLIDES,
        job=FrameJob(lang, cfg.theme, cfg.params, cfg.cards, frames, first),
        files=_pictures(lang, frames),
        texts=_every_text(cfg),
        needs=tuple(card_slides_unit(c, first) for c in cfg.cards),
    )


def _assembled(cfg: DeckConfig, lang: str) -> list[Unit]:
    # each deck file in a fresh process of its own, side by side (the first with the notes);
    # the PPTX shows the animations, the PDF only the slides
    slides = (*(card_slides_unit(c, lang) for c in cfg.cards), frame_unit(lang))
    return [
        Unit(
            name=f"deck.{fmt} ({lang})",
            render=RENDER_DECK,
            job=AssemblyJob(lang, fmt, cfg.theme, notes=i == 0),
            files=(f"{lang}/deck.{fmt}",) + ((f"{lang}/notes.json",) if i == 0 else ()),
            texts=_every_text(cfg),
            needs=(ANIMATIONS_UNIT, *slides) if fmt == "pptx" else slides,
            needs_files=True,
        )
        for i, fmt in enumerate(f for f in DECK_FORMATS if f in cfg.formats)
    ]


def _every_text(cfg: DeckConfig) -> tuple[str, ...]:
    return tuple(text_name(c) for c in cfg.cards) + (text_name(DECK_TEXT),)


def plan_deck_build(cfg: DeckConfig) -> Plan:
    """Every unit of a deck build and the files each makes, from the options and text alone."""
    plan = plan_deck(cfg.cards)
    first = cfg.langs[0]
    # The order units start in: the first language's cards, then every language's title and
    # closing slides and the first language's deck, while the next language is drawn; at the
    # end only the last language's deck files are left to assemble, side by side.
    units = [_animations(cfg), *_card_slides(cfg, plan, first)]
    units += [_title_and_closing(cfg, plan, lang) for lang in cfg.langs]
    units += _assembled(cfg, first)
    for lang in cfg.langs[1:]:
        units += [*_card_slides(cfg, plan, lang), *_assembled(cfg, lang)]
    sources = {text_name(c): card_sources(c) for c in cfg.cards}
    sources[text_name(DECK_TEXT)] = (data_dir("cards") / "deck.toml",)
    return Plan(
        made_by="posecards deck",
        out=cfg.out,
        options={
            "cards": list(cfg.cards),
            "languages": list(cfg.langs),
            "formats": list(cfg.formats),
            "look": {"theme": cfg.theme},
            "parameters": asdict(cfg.params),
        },
        units=tuple(units),
        sources=sources,
        what="deck",
        libraries=LIBRARIES + DECK_LIBRARIES,
        preload=DECK_PRELOAD,
    )
