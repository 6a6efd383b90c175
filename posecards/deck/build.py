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
A card with slides is data here too: ``config.DECK_CARD_IDS`` and its sections of
``cards/deck.toml`` (docs/cards.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from posecards._version import __version__
from posecards.config import DECK_FORMATS, DeckConfig, Look, PEParams
from posecards.deck.notes import DeckText, FilledSlideText, SlideText
from posecards.deck.plan import FRAME_KINDS, PlannedSlide, deck_sources, picture_name, plan_deck
from posecards.engine.inputs import LIBRARIES, text_name
from posecards.engine.units import Context, Plan, Rendered, Unit
from posecards.paths import data_dir
from posecards.render.files import collect_garbage, collections_at_fixed_points
from posecards.render.text import CardTextError

ANIMATION_MS = 250  # per frame
ANIMATIONS_UNIT = "animations"  # the unit that draws every animation
DECK_TEXT = "deck"  # cards/deck.toml: slide titles and speaker notes
DECK_LIBRARIES = ("python-pptx", "pypdf", "lxml")  # besides the drawing libraries of the cards
# what DIR/<lang>/notes.json records per slide: its text and its measured smallest text
NOTES_KEYS = (
    "n",
    "stem",
    "kind",
    "title",
    "notes",
    "min_text_px",
    "min_figure_px",
    "min_script_px",
    "layout_problems",
)


def _items(slide: Mapping[str, Any]) -> dict[str, Any]:
    """notes.json's "items" of a slide that lists some (agenda, pitfalls, sources), as shown."""
    return {"items": slide["items"]} if "items" in slide else {}


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


def _slide_meta(
    s: PlannedSlide, title: str, notes: str, pic: Any, pdf: tuple[str, int]
) -> dict[str, Any]:
    return {
        "n": s.n,
        "stem": s.stem,
        "kind": s.kind,
        "figure": s.figure,
        "title": title,
        "notes": notes,
        "scale": pic.scale,
        "pdf": pdf[0],  # the unit's PDF (a helper) and this slide's page in it
        "pdf_page": pdf[1],
        "picture": pic.picture_png is not None,
        "min_text_px": pic.min_text_px,
        "min_figure_px": pic.min_figure_px,
        "min_script_px": pic.min_script_px,
        "layout_problems": list(pic.problems),
    }


def _store_picture(
    out: dict[str, bytes],
    helpers: dict[str, bytes],
    lang: str,
    s: PlannedSlide,
    pic: Any,
    book: Any,
    pdf_name: str,
) -> tuple[str, int]:
    """Keep a slide's pictures; write its PDF page into the unit's book (name, page)."""
    out[f"{lang}/slides/{s.stem}.png"] = pic.png
    out[f"{lang}/slides/{s.stem}.svg"] = pic.svg
    if pic.picture_png is not None:
        helpers[picture_name(lang, s.stem)] = pic.picture_png
    return pdf_name, book.add(pic.pdf_figure, pic.pdf_dpi)


def animation_values(name: str, params: PEParams) -> dict[str, Any]:
    """The numbers an animation slide's text quotes, from the same frame data it draws."""
    from posecards.deck import frames

    if name == "rope":
        r = frames.rope_frames()
        return {
            "theta": r.theta,
            "offset": r.offset,
            "rel_angle": float(r.angle_k[0] - r.angle_q[0]),
            "score": float(r.score[0]),
            "score_spread": float(r.score.max() - r.score.min()),
            "frames": len(r.m),
        }
    if name == "clocks":
        c = frames.clock_frames(params)
        values: dict[str, Any] = {"d_model": c.d_model, "base": c.base, "frames": len(c.positions)}
        values["pairs"] = ", ".join(str(int(p)) for p in c.pairs)
        values["n_clocks"] = len(c.pairs)
        values["omega_fast"] = float(c.omega[0])
        values["omega_slow"] = float(c.omega[-1])
        values["slow_pair"] = int(c.pairs[-1])
        values["slow_turns"] = float(c.omega[-1] * c.positions[-1] / (2 * 3.141592653589793))
        return values
    a = frames.alibi_frames()
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


def _animation_data(name: str, params: PEParams) -> tuple[Any, int]:
    from posecards.deck import frames

    if name == "rope":
        r = frames.rope_frames()
        return r, len(r.m)
    if name == "clocks":
        c = frames.clock_frames(params)
        return c, len(c.positions)
    a = frames.alibi_frames()
    return a, len(a.query)


def _animation_size() -> tuple[float, float]:
    from posecards.deck.look import deck_look

    look = deck_look()
    return (look.picture_box[2] / look.magnify, look.picture_box[3] / look.magnify)


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
    from posecards.deck.notes import fill_slide
    from posecards.render.text import fill, load_card_text

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
    items = []
    for c in cards:
        item = deck.closing_items.get(c)
        if item is None:
            raise CardTextError(f"deck.toml: no [closing.items.{c}] for card {c}")
        items.append(fill(item.get(lang), card_numbers[c], f"deck.toml: 'closing.items.{c}'"))
    return filled, {"items": items}


def render_card_slides(job: CardSlidesJob, ctx: Context) -> Rendered:
    """The slides of one card in one language, and their titles and notes."""
    from posecards.content import compute_card
    from posecards.deck import draw as d
    from posecards.deck.notes import fill_slide, load_deck_text
    from posecards.deck.pdf import PageBook
    from posecards.engine.unitcache import plain
    from posecards.figures import draw_functions
    from posecards.figures.style import card_style
    from posecards.render.build import footer_text
    from posecards.render.compose import compose_card
    from posecards.render.text import CardLabels, check_figure_ids, fill_card, load_card_text

    text = load_card_text(job.card)
    deck = load_deck_text()
    content = compute_card(job.card, job.params)
    check_figure_ids(text, content.figures)
    numbers = plain(content.numbers)
    labels = CardLabels(text.labels, job.lang, text.path.name)
    # the pictures' alt texts: the card's and the panels' descriptions (as on the HTML pages)
    filled_card = fill_card(text, job.lang, numbers)
    alts = {fid: alt for fid, _title, alt, _caption in filled_card.panels}
    draw = draw_functions(job.card)
    out: dict[str, bytes] = {}
    helpers: dict[str, bytes] = {}
    meta = []
    book = PageBook()
    pdf_name = f"{job.lang}/card-{job.card}.pages.pdf"
    with collections_at_fixed_points():
        with card_style(job.theme) as th:
            for s in job.slides:
                slide_text, values = card_slide_text(s, deck, numbers, job.params)
                if s.kind == "overview":
                    filled = fill_card(text, job.lang, numbers)
                    fig = compose_card(
                        filled,
                        text,
                        content.figures,
                        th,
                        "slide",
                        footer_text(job.params, Look(job.theme, "slide"), job.lang),
                    )
                    pic = d.card_slide(fig)
                elif s.kind == "panel":
                    assert s.figure is not None
                    fid = s.figure
                    title = fill_slide(slide_text, job.lang, values).title

                    def draw_panel(sub: Any, fid: str = fid) -> None:
                        draw[fid](sub, content.figures[fid], labels, th)

                    pic = d.figure_slide(title, th, draw_panel)
                else:  # animation
                    assert s.figure is not None
                    title = fill_slide(slide_text, job.lang, values).title
                    data, n_frames = _animation_data(s.figure, job.params)
                    name = s.figure

                    def draw_frame(
                        sub: Any, name: str = name, data: Any = data, n: int = n_frames
                    ) -> None:
                        d.draw_animation_frame(sub, name, data, n // 2, th)

                    pic = d.figure_slide(title, th, draw_frame)
                filled_slide = fill_slide(slide_text, job.lang, values)
                page = _store_picture(out, helpers, job.lang, s, pic, book, pdf_name)
                meta.append(_slide_meta(s, filled_slide.title, filled_slide.notes, pic, page))
                overview = s.kind == "overview"
                meta[-1]["alt"] = filled_card.thesis if overview else alts.get(s.figure or "", "")
                del pic
                collect_garbage()
            helpers[pdf_name] = book.close()
    return Rendered(out, helpers, {"numbers": numbers, "slides": meta})


def render_frame_slides(job: FrameJob, ctx: Context) -> Rendered:
    """The title slide, the closing (pitfalls) slide and the sources slides of one language
    (they quote numbers of the cards: from the card slide units it needs)."""
    from posecards.deck import draw as d
    from posecards.deck.look import deck_look
    from posecards.deck.notes import load_deck_text
    from posecards.deck.pdf import PageBook
    from posecards.figures.style import card_style

    deck = load_deck_text()
    card_numbers = {
        c: ctx.needs[card_slides_unit(c, job.numbers_from)].meta["numbers"] for c in job.cards
    }
    values = frame_values(job.params, len(job.cards))
    out: dict[str, bytes] = {}
    helpers: dict[str, bytes] = {}
    meta = []
    book = PageBook()
    pdf_name = f"{job.lang}/frame.pages.pdf"
    with collections_at_fixed_points():
        with card_style(job.theme) as th:
            for s in job.slides:
                filled, extra = frame_slide_words(s, deck, job.lang, values, card_numbers)
                if s.kind == "title":
                    pic = d.title_slide(filled.title, extra["subtitle"], extra["items"], th)
                elif s.kind == "sources":
                    size = deck_look().sources_size
                    pic = d.bullets_slide(filled.title, extra["items"], th, size)
                else:
                    pic = d.bullets_slide(filled.title, extra["items"], th)
                page = _store_picture(out, helpers, job.lang, s, pic, book, pdf_name)
                meta.append({**_slide_meta(s, filled.title, filled.notes, pic, page), **extra})
                del pic
                collect_garbage()
            helpers[pdf_name] = book.close()
    return Rendered(out, helpers, {"slides": meta})


def render_animations(job: AnimationJob, ctx: Context) -> Rendered:
    """GIF and APNG of every animation (mathematics only on them: the same file in every
    language's folder). One unit for all: an animation is drawn in about as long as a fresh
    process takes to import matplotlib and load the fonts."""
    from posecards.deck import draw as d
    from posecards.figures.style import card_style

    out: dict[str, bytes] = {}
    with collections_at_fixed_points():
        for name in job.names:
            with card_style(job.theme) as th:
                data, n_frames = _animation_data(name, job.params)
                frames = d.animation_frames(name, data, th, n_frames, _animation_size())
                gif, apng = d.gif_and_apng(frames, ANIMATION_MS)
                for lang in job.langs:
                    out[f"{lang}/animations/{name}.gif"] = gif
                    out[f"{lang}/animations/{name}.png"] = apng
            del frames, data
            collect_garbage()
    return Rendered(out)


def render_deck(job: AssemblyJob, ctx: Context) -> Rendered:
    """deck.pptx or deck.pdf of one language (and its notes.json), from its slide units'
    results."""
    from posecards.deck.pdf import merge_pages
    from posecards.deck.pptx import write_pptx

    lang = job.lang
    files: dict[str, bytes] = {}
    for done in ctx.needs.values():
        files.update(done.files)
        files.update(done.helpers)
    slides = sorted(
        (m for done in ctx.needs.values() for m in done.meta.get("slides", [])),
        key=lambda m: m["n"],
    )
    out: dict[str, bytes] = {}
    if job.fmt == "pptx":
        out[f"{lang}/deck.pptx"] = write_pptx(slides, files, lang, job.theme)
    else:
        out[f"{lang}/deck.pdf"] = merge_pages(
            [(files[s["pdf"]], s["pdf_page"], s["scale"]) for s in slides]
        )
    if job.notes:
        out[f"{lang}/notes.json"] = (
            json.dumps(
                [{k: m.get(k) for k in NOTES_KEYS} | _items(m) for m in slides],
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        ).encode("utf-8")
    return Rendered(out)


# what the slide-drawing processes load once (render/warm.py, and warm_pdf.py: every card's
# slides are also PDF pages; and the deck's drawing modules)
DECK_PRELOAD = (
    "posecards.render.warm",
    "posecards.render.warm_pdf",
    "posecards.deck.draw",
    "posecards.deck.frames",
    "posecards.deck.notes",
    "posecards.deck.pdf",
)


def plan_deck_build(cfg: DeckConfig) -> Plan:
    """Every unit of a deck build and the files each makes, from the options and text alone."""
    from posecards.deck.notes import ANIMATIONS
    from posecards.render.build import after_first_language, card_sources

    plan = plan_deck(cfg.cards)
    deck_text = text_name(DECK_TEXT)
    every = tuple(text_name(c) for c in cfg.cards) + (deck_text,)

    def pictures(lang: str, slides: list[PlannedSlide]) -> tuple[str, ...]:
        return tuple(f"{lang}/slides/{s.stem}.{ext}" for s in slides for ext in ("png", "svg"))

    animations = Unit(
        name=ANIMATIONS_UNIT,
        render=render_animations,
        job=AnimationJob(tuple(ANIMATIONS), cfg.theme, cfg.params, cfg.langs),
        files=tuple(
            f"{lang}/animations/{name}.{ext}"
            for name in ANIMATIONS
            for lang in cfg.langs
            for ext in ("gif", "png")
        ),
    )
    frames = tuple(s for s in plan if s.kind in FRAME_KINDS)
    first = cfg.langs[0]

    slides_of = {c: tuple(s for s in plan if s.card == c) for c in cfg.cards}

    def cards(lang: str) -> list[Unit]:
        return [
            Unit(
                name=card_slides_unit(c, lang),
                render=render_card_slides,
                job=CardSlidesJob(c, lang, cfg.theme, cfg.params, slides_of[c]),
                files=pictures(lang, list(slides_of[c])),
                texts=(text_name(c), deck_text),
                # card 1 in Chinese after English: it finds the cached UMAP layout
                after=after_first_language(c, lang, cfg.langs, card_slides_unit),
            )
            for c in cfg.cards
        ]

    def title_and_closing(lang: str) -> Unit:
        # the closing slide quotes the cards' numbers: the same in every language, taken
        # from the first language's units
        return Unit(
            name=frame_unit(lang),
            render=render_frame_slides,
            job=FrameJob(lang, cfg.theme, cfg.params, cfg.cards, frames, first),
            files=pictures(lang, list(frames)),
            texts=every,
            needs=tuple(card_slides_unit(c, first) for c in cfg.cards),
        )

    def assembled(lang: str) -> list[Unit]:
        # each deck file in a fresh process of its own, side by side (the first with the notes);
        # the PPTX shows the animations, the PDF only the slides
        slides = (*(card_slides_unit(c, lang) for c in cfg.cards), frame_unit(lang))
        return [
            Unit(
                name=f"deck.{fmt} ({lang})",
                render=render_deck,
                job=AssemblyJob(lang, fmt, cfg.theme, notes=i == 0),
                files=(f"{lang}/deck.{fmt}",) + ((f"{lang}/notes.json",) if i == 0 else ()),
                texts=every,
                needs=(ANIMATIONS_UNIT, *slides) if fmt == "pptx" else slides,
                needs_files=True,
            )
            for i, fmt in enumerate(f for f in DECK_FORMATS if f in cfg.formats)
        ]

    # The order units start in: the first language's cards, then every language's title and
    # closing slides and the first language's deck, while the next language is drawn; at the
    # end only the last language's deck files are left to assemble, side by side.
    units = [animations, *cards(first), *(title_and_closing(lang) for lang in cfg.langs)]
    units += assembled(first)
    for lang in cfg.langs[1:]:
        units += [*cards(lang), *assembled(lang)]
    sources = {text_name(c): card_sources(c) for c in cfg.cards}
    sources[deck_text] = (data_dir("cards") / "deck.toml",)
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
