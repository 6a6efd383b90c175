"""The units of the lecture deck that draw or assemble (each in a fresh process): a card's
slides in one language, the title and closing slides, the animations, and the deck files.
``deck.build`` plans them, naming these functions without importing them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from posecards.config import Look, PEParams
from posecards.content import compute_card
from posecards.deck import animate
from posecards.deck import draw as d
from posecards.deck import frames as deck_frames
from posecards.deck.build import (
    AnimationJob,
    AssemblyJob,
    CardSlidesJob,
    FrameJob,
    card_slides_unit,
)
from posecards.deck.look import deck_look
from posecards.deck.notes import fill_slide, load_deck_text
from posecards.deck.pdf import PageBook, merge_pages
from posecards.deck.plan import PlannedSlide, picture_name
from posecards.deck.pptx import write_pptx
from posecards.deck.slide_text import card_slide_text, frame_slide_words, frame_values
from posecards.engine.unitcache import plain
from posecards.engine.units import Context, Rendered
from posecards.figures import draw_functions
from posecards.figures.style import card_style
from posecards.garbage import collect_garbage, collections_at_fixed_points
from posecards.render.compose import compose_card
from posecards.render.footers import footer_text
from posecards.render.text import CardLabels, check_figure_ids, fill_card, load_card_text

ANIMATION_MS = 250  # per frame


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


def _animation_data(name: str, params: PEParams) -> tuple[Any, int]:

    if name == "rope":
        r = deck_frames.rope_frames()
        return r, len(r.m)
    if name == "clocks":
        c = deck_frames.clock_frames(params)
        return c, len(c.positions)
    a = deck_frames.alibi_frames()
    return a, len(a.query)


def _animation_size() -> tuple[float, float]:

    look = deck_look()
    return (look.picture_box[2] / look.magnify, look.picture_box[3] / look.magnify)


def render_card_slides(job: CardSlidesJob, ctx: Context) -> Rendered:
    """The slides of one card in one language, and their titles and notes."""
    text = load_card_text(job.card)
    deck = load_deck_text()
    content = compute_card(job.card, job.params)
    check_figure_ids(text, content.figures)
    numbers = plain(content.numbers)
    labels = CardLabels(text.labels, job.lang, text.path.name)
    # the pictures' alt texts: the card's and the panels' descriptions (as on the HTML pages)
    filled_card = fill_card(text, job.lang, numbers)
    alts = {fid: alt for fid, _title, alt, _caption in (*filled_card.panels, *filled_card.figures)}
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
                        animate.draw_animation_frame(sub, name, data, n // 2, th)

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
    out: dict[str, bytes] = {}
    with collections_at_fixed_points():
        for name in job.names:
            with card_style(job.theme) as th:
                data, n_frames = _animation_data(name, job.params)
                frames = animate.animation_frames(name, data, th, n_frames, _animation_size())
                gif, apng = animate.gif_and_apng(frames, ANIMATION_MS)
                for lang in job.langs:
                    out[f"{lang}/animations/{name}.gif"] = gif
                    out[f"{lang}/animations/{name}.png"] = apng
            del frames, data
            collect_garbage()
    return Rendered(out)


def render_deck(job: AssemblyJob, ctx: Context) -> Rendered:
    """deck.pptx or deck.pdf of one language (and its notes.json), from its slide units'
    results."""
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
