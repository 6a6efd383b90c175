"""`posecards build`: the plan of a build (every card, figure, page, the explorer) and the
jobs of its units. posecards.engine runs it: cached units are loaded, the others rendered,
each card in a fresh process; outputs are made in memory and written only when all succeeded.
The plan names the code that draws (``render.card_unit``, ``render.pages``, ``render.explore``)
without importing it (``engine.units.Deferred``): planning imports no matplotlib.

A card is data to this plan: its declaration (``posecards/cards.py``), ``cards/cardN.toml`` (slug,
panels, figures), ``content/cardN.py`` and ``figures/cardN.py``; nothing here names a card
(docs/architecture.md, "A card declares itself").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from posecards.cards import spec
from posecards.config import BuildConfig, DeckConfig, ExploreConfig, Look, PEParams
from posecards.content import card_inputs
from posecards.engine.inputs import text_name
from posecards.engine.units import Deferred, Plan, Unit
from posecards.paths import data_dir
from posecards.render.outputs import EXPLORE, INDEX, card_stem, card_unit, pages_unit, unit_files
from posecards.render.text import CardText, load_card_text


def after_first_language(
    card: int, lang: str, langs: tuple[str, ...], unit_name: Callable[[int, str], str]
) -> tuple[str, ...]:
    """The units (named by ``unit_name``) that card ``card``'s unit in ``lang`` starts after:
    for a card whose costly computation is cached and shared by its languages
    (``CardSpec.shared_across_languages``), its unit in the first language, so that the others
    find the cached result as soon as it is made instead of computing it alongside; else none."""
    if spec(card).shared_across_languages and lang != langs[0]:
        return (unit_name(card, langs[0]),)
    return ()


@dataclass(frozen=True)
class CardJob:
    """One card in one language: the unit of work, always run in a fresh process."""

    card: int
    lang: str
    formats: tuple[str, ...]
    look: Look
    params: PEParams
    formula: bool = False  # draw the card's formula for the pages of every language


@dataclass(frozen=True)
class PagesJob:
    """The HTML pages of one language of a build (made in this process from the cards'
    results)."""

    cards: tuple[int, ...]
    lang: str
    langs: tuple[str, ...]
    formats: tuple[str, ...]
    look: Look
    params: PEParams


@dataclass(frozen=True)
class IndexJob:
    langs: tuple[str, ...]
    look: Look
    params: PEParams
    # the lecture deck's files found beside the build (DECK_FOLDER/<lang>/deck.pdf, ...), which
    # the index links; a deck not built is named with the command that builds it instead
    decks: tuple[str, ...] = ()


# where `posecards deck` writes by default, seen from where `posecards build` does: "deck"
DECK_FOLDER = DeckConfig().out.relative_to(BuildConfig().out).as_posix()
DECK_FILES = ("deck.pdf", "deck.pptx")


def decks_beside(cfg: BuildConfig) -> tuple[str, ...]:
    """The deck files (``"en/deck.pdf"``, ...) of the build's languages already in its
    DECK_FOLDER: the index links only those."""
    folder = cfg.out / DECK_FOLDER
    return tuple(
        f"{lang}/{name}"
        for lang in cfg.langs
        for name in DECK_FILES
        if (folder / lang / name).is_file()
    )


def card_sources(card: int | str) -> tuple[Any, ...]:
    """The files a card's text digest is made of: its text, and the data files it reads."""
    return (data_dir("cards") / spec(card).text_file, *card_inputs(card))


# what the drawing processes load once (render/warm.py), rather than once per card unit
PRELOAD = ("posecards.render.warm",)
WARM_PDF = "posecards.render.warm_pdf"  # and where the plan writes PDFs


# the code that draws, named (a plan imports none of it)
RENDER_CARD = Deferred("posecards.render.card_unit", "render_card")
RENDER_PAGES = Deferred("posecards.render.pages", "render_pages")
RENDER_INDEX = Deferred("posecards.render.pages", "render_index")
RENDER_EXPLORE = Deferred("posecards.render.explore", "render_explore")


def _card_units(cfg: BuildConfig, texts: dict[int, CardText]) -> list[Unit]:
    """One unit per card and language, one language after the other (its pages are made while
    the next language is drawn); the first language's units also draw the formulas."""
    html = "html" in cfg.formats
    jobs = [
        CardJob(c, lang, cfg.formats, cfg.look, cfg.params, formula=html and lang == cfg.langs[0])
        for lang in cfg.langs
        for c in cfg.cards
    ]
    units = []
    for job in jobs:
        text = texts[job.card]
        stem = card_stem(job.card, text.slug)
        note = spec(job.card).first_time
        units.append(
            Unit(
                name=card_unit(job.card, job.lang),
                render=RENDER_CARD,
                job=job,
                files=unit_files(stem, text.figure_ids, job.lang, cfg.formats),
                texts=(text_name(job.card),),
                note=f"card {job.card} {note}" if note else "",
                after=after_first_language(job.card, job.lang, cfg.langs, card_unit),
                preload=card_modules(job.card),
            )
        )
    return units


def card_modules(card: int | str) -> tuple[str, ...]:
    """What a card's drawing process imports beyond render/warm.py: the heavy libraries its
    content imports lazily (``CardSpec.imports``), its content and figures modules."""
    s = spec(card)
    return (*s.imports, s.content_module, s.figures_module)


def _page_units(cfg: BuildConfig, texts: dict[int, CardText]) -> list[Unit]:
    """The pages of each language, the index and the explorer."""
    every = tuple(text_name(c) for c in cfg.cards)
    units = []
    for lang in cfg.langs:
        # its card pages, and a page for each figure not on its card (linked from it)
        pages = [f"{lang}/{card_stem(c, texts[c].slug)}.html" for c in cfg.cards]
        pages += [f"{lang}/figures/{p.id}.html" for c in cfg.cards for p in texts[c].figures]
        needs = [card_unit(c, lang) for c in cfg.cards]
        needs += [card_unit(c, cfg.langs[0]) for c in cfg.cards if lang != cfg.langs[0]]
        units.append(
            Unit(
                name=pages_unit(lang),
                render=RENDER_PAGES,
                job=PagesJob(cfg.cards, lang, cfg.langs, cfg.formats, cfg.look, cfg.params),
                files=tuple(pages),
                texts=every,
                needs=tuple(needs),
                spawn=False,
            )
        )
    units.append(
        Unit(
            name=INDEX,
            render=RENDER_INDEX,
            job=IndexJob(cfg.langs, cfg.look, cfg.params, decks_beside(cfg)),
            files=("index.html",),
            texts=every,
            needs=tuple(pages_unit(lang) for lang in cfg.langs),
            spawn=False,
        )
    )
    # the interactive explorer: its own text file (cards/explore.toml), templates and code
    units.append(
        Unit(
            name=EXPLORE,
            render=RENDER_EXPLORE,
            job=ExploreConfig(lang=cfg.langs[0], theme=cfg.look.theme),
            files=("explore.html",),
            texts=(text_name(EXPLORE),),
            spawn=False,
        )
    )
    return units


def plan_build(cfg: BuildConfig) -> Plan:
    """Every unit of a build and the files each makes, from the options and card text alone."""
    texts = {c: load_card_text(c) for c in cfg.cards}
    units = _card_units(cfg, texts)
    sources = {text_name(c): card_sources(c) for c in cfg.cards}
    if "html" in cfg.formats:
        units += _page_units(cfg, texts)
        sources[text_name(EXPLORE)] = (data_dir("cards") / f"{EXPLORE}.toml",)
    return Plan(
        made_by="posecards build",
        out=cfg.out,
        options={
            "cards": list(cfg.cards),
            "languages": list(cfg.langs),
            "formats": list(cfg.formats),
            "look": asdict(cfg.look),
            "parameters": asdict(cfg.params),
        },
        units=tuple(units),
        sources=sources,
        preload=(*PRELOAD, WARM_PDF) if "pdf" in cfg.formats else PRELOAD,
    )
