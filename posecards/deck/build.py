"""`posecards deck`: the same engine as `posecards build`, for the lecture deck.

Units, each rendered in a fresh process and kept in the build cache (posecards.render.buildcache):
- one per (card, language): the card's overview, panel and animation slides (pictures, PDF
  pages, PPTX pictures) and the slides' titles and notes;
- one for the animations (language-free: their text is mathematics only);
- one per language for the title and closing slides (after the cards: they quote their numbers);
- one per language for the assembled deck.pptx and deck.pdf (no drawing: python-pptx, pypdf).
Outputs are made in memory and written by posecards.render.build.write_outputs (atomic).
"""

from __future__ import annotations

import gc
import hashlib
import json
import multiprocessing
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from posecards._version import __version__
from posecards.config import DeckConfig, Look, PEParams
from posecards.deck.plan import FRAME_KINDS, PlannedSlide, deck_sources, plan_deck
from posecards.render import buildcache
from posecards.render.paths import data_dir

ANIMATION_MS = 250  # per frame
HIDDEN = ".deck"  # per-unit PDF pages and PPTX pictures: inputs of the assembly, not outputs
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


def _deck_digest() -> str:
    """The deck text and the libraries only the deck uses."""
    from posecards.deck.manifest import DECK_LIBRARIES

    h = hashlib.sha256((data_dir("cards") / "deck.toml").read_bytes())
    for name in DECK_LIBRARIES:
        try:
            h.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name}=-".encode())
    return h.hexdigest()


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
    numbers: str  # JSON {card: {placeholder: value}}, from the card units


@dataclass(frozen=True)
class AnimationJob:
    name: str
    theme: str
    params: PEParams


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
        "pdf": pdf[0],  # the unit's PDF (hidden) and this slide's page in it
        "pdf_page": pdf[1],
        "picture": pic.picture_png is not None,
        "min_text_px": pic.min_text_px,
        "min_figure_px": pic.min_figure_px,
        "min_script_px": pic.min_script_px,
        "layout_problems": list(pic.problems),
    }


def _store_picture(
    out: dict[str, bytes], lang: str, s: PlannedSlide, pic: Any, book: Any, pdf_name: str
) -> tuple[str, int]:
    """Keep a slide's pictures; write its PDF page into the unit's book (name, page)."""
    out[f"{lang}/slides/{s.stem}.png"] = pic.png
    out[f"{lang}/slides/{s.stem}.svg"] = pic.svg
    if pic.picture_png is not None:
        out[f"{lang}/{HIDDEN}/{s.stem}.picture.png"] = pic.picture_png
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
    from posecards.deck.draw import deck_look

    look = deck_look()
    return (look.picture_box[2] / look.magnify, look.picture_box[3] / look.magnify)


def render_card_slides(job: CardSlidesJob) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The slides of one card in one language, and their titles and notes."""
    from posecards.content import compute_card
    from posecards.deck import draw as d
    from posecards.deck.notes import fill_slide, load_deck_text
    from posecards.deck.pdf import PageBook
    from posecards.figures import draw_functions
    from posecards.figures.style import card_style
    from posecards.render.build import footer_text
    from posecards.render.compose import compose_card
    from posecards.render.text import CardLabels, check_figure_ids, fill_card, load_card_text

    text = load_card_text(job.card)
    deck = load_deck_text()
    content = compute_card(job.card, job.params)
    check_figure_ids(text, content.figures)
    numbers = buildcache.plain_numbers(content.numbers)
    labels = CardLabels(text.labels, job.lang, text.path.name)
    draw = draw_functions(job.card)
    out: dict[str, bytes] = {}
    meta = []
    book = PageBook()
    pdf_name = f"{job.lang}/{HIDDEN}/card-{job.card}.pdf"
    gc.disable()
    try:
        with card_style(job.theme) as th:
            for s in job.slides:
                if s.kind == "overview":
                    slide_text = deck.cards.get(job.card)
                    if slide_text is None:
                        raise ValueError(f"deck.toml: no [cards.{job.card}] for card {job.card}")
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
                        raise ValueError(
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
                page = _store_picture(out, job.lang, s, pic, book, pdf_name)
                meta.append(_slide_meta(s, filled_slide.title, filled_slide.notes, pic, page))
                del pic
                gc.collect()
            out[pdf_name] = book.close()
    finally:
        gc.enable()
    return out, {"numbers": numbers, "slides": meta}


def render_frame_slides(job: FrameJob) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The title slide, the closing (pitfalls) slide and the sources slides of one language."""
    from posecards.deck import draw as d
    from posecards.deck.notes import FilledSlideText, fill_slide, load_deck_text
    from posecards.deck.pdf import PageBook
    from posecards.figures.style import card_style
    from posecards.render.text import fill, load_card_text

    deck = load_deck_text()
    card_numbers = {int(c): v for c, v in json.loads(job.numbers).items()}
    params = {
        "d_model": job.params.d_model,
        "base": job.params.base,
        "positions": job.params.positions,
        "version": __version__,
        "n_cards": len(job.cards),
    }
    out: dict[str, bytes] = {}
    meta = []
    book = PageBook()
    pdf_name = f"{job.lang}/{HIDDEN}/frame.pdf"
    gc.disable()
    try:
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
                    pic = d.bullets_slide(title, items, th, d.deck_look().sources_size)
                    filled = FilledSlideText(title, filled.notes)
                    extra = {"items": items}
                else:
                    filled = fill_slide(deck.closing, job.lang, params)
                    items = []
                    for c in job.cards:
                        item = deck.closing_items.get(c)
                        if item is None:
                            raise ValueError(f"deck.toml: no [closing.items.{c}] for card {c}")
                        items.append(
                            fill(
                                item.get(job.lang),
                                card_numbers[c],
                                f"deck.toml: 'closing.items.{c}'",
                            )
                        )
                    pic = d.bullets_slide(filled.title, items, th)
                    extra = {"items": items}
                page = _store_picture(out, job.lang, s, pic, book, pdf_name)
                meta.append({**_slide_meta(s, filled.title, filled.notes, pic, page), **extra})
                del pic
                gc.collect()
            out[pdf_name] = book.close()
    finally:
        gc.enable()
    return out, {"slides": meta}


def render_animations(job: AnimationJob) -> tuple[dict[str, bytes], dict[str, Any]]:
    """GIF and APNG of one animation (mathematics only on it: one file for all languages)."""
    from posecards.deck import draw as d
    from posecards.figures.style import card_style

    out: dict[str, bytes] = {}
    gc.disable()
    try:
        with card_style(job.theme) as th:
            data, n_frames = _animation_data(job.name, job.params)
            frames = d.animation_frames(job.name, data, th, n_frames, _animation_size())
            gif, apng = d.gif_and_apng(frames, ANIMATION_MS)
            out[f"animations/{job.name}.gif"] = gif
            out[f"animations/{job.name}.png"] = apng
    finally:
        gc.enable()
    return out, {}


def _describe(job: Any) -> str:
    if isinstance(job, CardSlidesJob):
        return f"card {job.card} slides ({job.lang})"
    if isinstance(job, AnimationJob):
        return f"animation {job.name}"
    return f"title and closing slides ({job.lang})"


def _run(fn: Callable[[Any], Any], args: tuple[Any, ...]) -> Any:
    return fn(*args)


def _assemble(
    lang: str, slides: list[dict[str, Any]], files: Mapping[str, bytes], cfg: DeckConfig
) -> dict[str, bytes]:
    from posecards.deck.pdf import merge_pages
    from posecards.deck.pptx import write_pptx

    out: dict[str, bytes] = {}
    if "pptx" in cfg.formats:
        out[f"{lang}/deck.pptx"] = write_pptx(slides, files, lang, cfg.theme)
    if "pdf" in cfg.formats:
        out[f"{lang}/deck.pdf"] = merge_pages(
            [(files[s["pdf"]], s["pdf_page"], s["scale"]) for s in slides]
        )
    return out


def build_deck(
    cfg: DeckConfig, progress: Callable[[str], None] | None = None, use_cache: bool = True
) -> dict[str, bytes]:
    """Every output file of a deck build, in memory, keyed by path relative to DIR."""
    say = progress or (lambda _msg: None)
    plan = plan_deck(cfg.cards)
    deck_digest = _deck_digest()
    card_jobs = [
        CardSlidesJob(c, lang, cfg.theme, cfg.params, tuple(s for s in plan if s.card == c))
        for c in cfg.cards
        for lang in cfg.langs
    ]
    from posecards.deck.notes import ANIMATIONS

    anim_jobs = [AnimationJob(name, cfg.theme, cfg.params) for name in ANIMATIONS]

    def key(kind: str, job: Any, **more: Any) -> str:
        return buildcache.unit_key(kind, job=job, deck=deck_digest, **more)

    keys: dict[Any, str] = {
        job: key("deck-card", job, text=buildcache.card_text_digest(job.card)) for job in card_jobs
    }
    for job in anim_jobs:
        keys[job] = key("deck-animation", job)
    results: dict[Any, tuple[dict[str, bytes], dict[str, Any]]] = {}
    todo: list[Any] = []
    for unit in [*card_jobs, *anim_jobs]:
        hit = buildcache.load(keys[unit]) if use_cache else None
        if hit is None:
            todo.append(unit)
        else:
            results[unit] = hit
    n_units = len(card_jobs) + len(anim_jobs)
    say(f"{n_units - len(todo)} of {n_units} deck renders up to date in the cache")
    ctx = multiprocessing.get_context("spawn")

    def run_all(jobs: list[Any]) -> None:
        if not jobs:
            return
        fns: dict[type, Callable[[Any], Any]] = {
            CardSlidesJob: render_card_slides,
            FrameJob: render_frame_slides,
            AnimationJob: render_animations,
        }
        # the animations first; then the cards, a card whose costly computation is cached on
        # disk (card 1's UMAP) in one language first and in the others last
        from posecards.render.build import cache_friendly_order

        cards_jobs = [j for j in jobs if isinstance(j, CardSlidesJob)]
        jobs = (
            [j for j in jobs if isinstance(j, AnimationJob)]
            + cache_friendly_order(cards_jobs, cfg.langs[0])
            + [j for j in jobs if isinstance(j, FrameJob)]
        )
        n = max(1, min(len(jobs), cfg.jobs))
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx, max_tasks_per_child=1) as pool:
            futures = {pool.submit(_run, fns[type(j)], (j,)): j for j in jobs}
            for fut in as_completed(futures):
                unit = futures[fut]
                res = fut.result()
                results[unit] = res
                if use_cache:
                    buildcache.store(keys[unit], res[0], res[1])
                say(f"{_describe(unit)} rendered")

    run_all(todo)
    numbers = {job.card: results[job][1]["numbers"] for job in card_jobs}
    frame_jobs = [
        FrameJob(
            lang,
            cfg.theme,
            cfg.params,
            cfg.cards,
            tuple(s for s in plan if s.kind in FRAME_KINDS),
            json.dumps({str(c): numbers[c] for c in cfg.cards}, sort_keys=True),
        )
        for lang in cfg.langs
    ]
    texts = [buildcache.card_text_digest(c) for c in cfg.cards]
    for fj in frame_jobs:
        keys[fj] = key("deck-frame", fj, texts=texts)
    todo = []
    for fj in frame_jobs:
        hit = buildcache.load(keys[fj]) if use_cache else None
        if hit is None:
            todo.append(fj)
        else:
            results[fj] = hit
    run_all(todo)

    files: dict[str, bytes] = {}
    for job, res in results.items():
        if not isinstance(job, AnimationJob):
            files.update(res[0])
    for job in anim_jobs:
        for rel, data in results[job][0].items():
            for lang in cfg.langs:
                files[f"{lang}/{rel}"] = data
    for lang in cfg.langs:
        slides = sorted(
            (
                m
                for job, res in results.items()
                if getattr(job, "lang", None) == lang
                for m in res[1]["slides"]
            ),
            key=lambda m: m["n"],
        )
        akey = buildcache.unit_key(
            "deck-assembly",
            lang=lang,
            formats=cfg.formats,
            theme=cfg.theme,
            units=sorted(keys.values()),
            deck=deck_digest,
        )
        hit = buildcache.load(akey) if use_cache else None
        if hit is None:
            assembled = _assemble(lang, slides, files, cfg)
            if use_cache:
                buildcache.store(akey, assembled, {})
        else:
            assembled = hit[0]
        files.update(assembled)
        files[f"{lang}/notes.json"] = (
            json.dumps(
                [{k: m.get(k) for k in NOTES_KEYS} for m in slides],
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        ).encode("utf-8")
    files = {k: v for k, v in sorted(files.items()) if f"/{HIDDEN}/" not in k}
    from posecards.deck.manifest import deck_manifest

    files["manifest.json"] = deck_manifest(cfg, files)
    return files
