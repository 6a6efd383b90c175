"""The units of the lecture deck that draw or assemble (each in a fresh process): a card's
slides in one language, the title and closing slides, the animations, and the deck files.
``deck.build`` plans them, naming these functions without importing them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from posecards._version import __version__
from posecards.config import Look, PEParams
from posecards.content import compute_card
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
from posecards.deck.notes import FilledSlideText, fill_slide, load_deck_text
from posecards.deck.pdf import PageBook, merge_pages
from posecards.deck.plan import PlannedSlide, deck_sources, picture_name
from posecards.deck.pptx import write_pptx
from posecards.engine.unitcache import plain
from posecards.engine.units import Context, Rendered
from posecards.figures import draw_functions
from posecards.figures.style import card_style
from posecards.render.compose import compose_card
from posecards.render.fields import CardTextError
from posecards.render.files import collect_garbage, collections_at_fixed_points
from posecards.render.fill import fill
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
                if s.kind == "overview":
                    slide_text = deck.cards.get(job.card)
                    if slide_text is None:
                        raise CardTextError(f"deck.toml: no [cards.{job.card}] for card {job.card}")
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
                    values: Mapping[str, Any] = numbers
                elif s.kind == "panel":
                    assert s.figure is not None
                    slide_text = deck.panels.get(s.figure)
                    if slide_text is None:
                        raise CardTextError(
                            f"deck.toml: no [panels.{s.figure}] (speaker notes) for card {job.card}"
                        )
                    fid = s.figure
                    values = numbers
                    title = fill_slide(slide_text, job.lang, values).title

                    def draw_panel(sub: Any, fid: str = fid) -> None:
                        draw[fid](sub, content.figures[fid], labels, th)

                    pic = d.figure_slide(title, th, draw_panel)
                else:  # animation
                    assert s.figure is not None
                    slide_text = deck.animations[s.figure]
                    values = {**numbers, **animation_values(s.figure, job.params)}
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
    deck = load_deck_text()
    card_numbers = {
        c: ctx.needs[card_slides_unit(c, job.numbers_from)].meta["numbers"] for c in job.cards
    }
    params = {
        "d_model": job.params.d_model,
        "base": job.params.base,
        "positions": job.params.positions,
        "version": __version__,
        "n_cards": len(job.cards),
    }
    out: dict[str, bytes] = {}
    helpers: dict[str, bytes] = {}
    meta = []
    book = PageBook()
    pdf_name = f"{job.lang}/frame.pages.pdf"
    with collections_at_fixed_points():
        with card_style(job.theme) as th:
            for s in job.slides:
                if s.kind == "title":
                    filled = fill_slide(deck.title, job.lang, params)
                    subtitle = fill(
                        deck.subtitle.get(job.lang), params, "deck.toml: 'deck.subtitle'"
                    )
                    agenda = [f"{c}. {load_card_text(c).title.get(job.lang)}" for c in job.cards]
                    pic = d.title_slide(filled.title, subtitle, agenda, th)
                    extra = {"subtitle": subtitle, "items": agenda}
                elif s.kind == "sources":
                    filled = fill_slide(deck.sources, job.lang, params)
                    pages = deck_sources(job.cards)
                    items = [src.text(job.lang) for src in pages[s.page]]
                    title = filled.title
                    if len(pages) > 1:
                        title = f"{title} ({s.page + 1}/{len(pages)})"
                    pic = d.bullets_slide(title, items, th, deck_look().sources_size)
                    filled = FilledSlideText(title, filled.notes)
                    extra = {"items": items}
                else:
                    filled = fill_slide(deck.closing, job.lang, params)
                    items = []
                    for c in job.cards:
                        item = deck.closing_items.get(c)
                        if item is None:
                            raise CardTextError(f"deck.toml: no [closing.items.{c}] for card {c}")
                        items.append(
                            fill(
                                item.get(job.lang),
                                card_numbers[c],
                                f"deck.toml: 'closing.items.{c}'",
                            )
                        )
                    pic = d.bullets_slide(filled.title, items, th)
                    extra = {"items": items}
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
