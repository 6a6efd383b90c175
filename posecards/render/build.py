"""`posecards build`: compute, draw and write every card, figure, page, the index and manifest.

All outputs of a build are made in memory first; only when everything succeeded are they written,
each to a temporary name and renamed into place, so a failed build leaves DIR as it was.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.cache import file_mode
from posecards.config import PRINT_WIDTH, BuildConfig, Look, PEParams
from posecards.render import buildcache
from posecards.render.buildcache import plain_numbers
from posecards.render.manifest import build_manifest

LANG_LABEL = {"en": "English", "zh": "中文"}


def cache_friendly_order(units: list[Any], first_lang: str) -> list[Any]:
    """``units`` (each with ``.card`` and ``.lang``) in rendering order: a card whose costly
    computation is cached and shared by its languages (content.SHARED_ACROSS_LANGUAGES) renders
    in its first language first and in the others last, so those find the cached result instead
    of computing it alongside; everything else keeps its order."""
    from posecards.content import SHARED_ACROSS_LANGUAGES

    late = [u for u in units if u.card in SHARED_ACROSS_LANGUAGES and u.lang != first_lang]
    return [u for u in units if u not in late] + late


def card_stem(card: int, slug: str) -> str:
    return f"card-{card}-{slug}"


THEME_NAMES_ZH = {"light": "浅色", "dark": "深色"}


def footer_text(params: PEParams, look: Look, lang: str, card: int | None = None) -> str:
    theme_zh = THEME_NAMES_ZH.get(look.theme, look.theme)
    if card == 5:  # measured: the card does not use d_model/base/positions
        from posecards.experiment.files import measurements_path

        data = measurements_path().name
        if lang == "zh":
            return f"数据：{data}（posecards measure）· 主题：{theme_zh} · posecards {__version__}"
        return f"Data: {data} (posecards measure) · theme {look.theme} · posecards {__version__}"
    # the base as the card text prints it (thousands grouped)
    base = f"{params.base:,.0f}" if float(params.base).is_integer() else f"{params.base:g}"
    if lang == "zh":
        return (
            f"参数：d_model = {params.d_model} · base = {base} · positions = {params.positions}"
            f" · 主题：{theme_zh} · posecards {__version__} · 所有数字均由代码计算"
        )
    return (
        f"Parameters: d_model = {params.d_model} · base = {base} · positions = {params.positions}"
        f" · theme {look.theme} · posecards {__version__} · every number computed"
    )


@dataclass(frozen=True)
class CardJob:
    """One card in one language: the unit of work, always run in a fresh process (below)."""

    card: int
    lang: str
    formats: tuple[str, ...]
    look: Look
    params: PEParams


def formula_svg_bytes(tex: str, size: float) -> bytes:
    """The key formula alone, as a small SVG (the HTML shows it beside its TeX source)."""
    from matplotlib.figure import Figure

    from posecards.render.files import figure_bytes

    lines = tex.split("\n")
    fig = Figure(figsize=(12.0, 0.2 + 0.45 * len(lines)))
    for i, line in enumerate(lines):
        fig.text(0.01, 1 - (i + 0.5) / len(lines), line, fontsize=size, va="center")
    return figure_bytes(fig, "svg", tight=True, svg_text="live")  # inlined in the page


def render_card(job: CardJob) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Everything one card contributes, keyed by path relative to DIR (HTML excluded), and the
    card's computed numbers (the HTML pages are made from those once all cards are done)."""
    from posecards.content import compute_card
    from posecards.figures.style import card_style
    from posecards.render.text import check_figure_ids, load_card_text

    text = load_card_text(job.card)
    content = compute_card(job.card, job.params)
    check_figure_ids(text, content.figures)
    stem = card_stem(job.card, text.slug)
    out: dict[str, bytes] = {}
    # Garbage collection only at fixed points: matplotlib caches text metrics in weakly keyed
    # caches, and a collection at a load-dependent moment changes which measurements are
    # cached, which moves layout by an ulp. Collecting after each figure keeps bytes identical.
    gc.disable()
    try:
        with card_style(job.look.theme) as th:
            out.update(
                render_unit(
                    text,
                    content,
                    stem,
                    th,
                    lang=job.lang,
                    formats=job.formats,
                    size=job.look.size,
                    footer=footer_text(job.params, job.look, job.lang, job.card),
                    scale=job.look.scale,
                    svg_text=job.look.svg_text,
                )
            )
    finally:
        gc.enable()
    return out, plain_numbers(content.numbers)


def live_svg_name(lang: str, fid: str) -> str:
    """Where a build keeps the live-text SVG of a figure that its HTML pages inline."""
    return f"{lang}/figures/.{fid}.live.svg"


def render_unit(
    text: Any,
    content: Any,
    stem: str,
    th: Any,
    *,
    lang: str,
    formats: tuple[str, ...],
    size: str,
    footer: str,
    scale: int = 1,
    svg_text: str = "outline",
) -> dict[str, bytes]:
    """The whole card and its standalone figures for one language, encoded (inside card_style).

    Shared by the four cards and the inspection card; garbage collection must be disabled by
    the caller (see render_card).
    """
    from posecards.render.compose import compose_card
    from posecards.render.figure import draw_standalone
    from posecards.render.files import figure_bytes_multi
    from posecards.render.text import fill_card

    out: dict[str, bytes] = {}
    filled = fill_card(text, lang, content.numbers)
    whole = [f for f in formats if f in ("png", "svg", "pdf")]
    if whole:
        fig = compose_card(filled, text, content.figures, th, size, footer)
        print_width = PRINT_WIDTH[size]
        for fmt, data in figure_bytes_multi(fig, whole, scale, print_width, svg_text).items():
            out[f"{lang}/{stem}.{fmt}"] = data
        del fig
        gc.collect()
    # the standalone SVGs as asked; the pages inline live-text twins (hidden: not outputs)
    wanted = [f for f in ("png", "svg") if f in formats] + (
        ["svg-live"] if "html" in formats else []
    )
    for fid, *_ in (*filled.panels, *filled.figures):  # on the card, then figure pages only
        fig = draw_standalone(fid, content.figures[fid], lang, th.name, card=text.id)
        for fmt, data in figure_bytes_multi(fig, wanted, scale, svg_text=svg_text).items():
            out[
                live_svg_name(lang, fid) if fmt == "svg-live" else f"{lang}/figures/{fid}.{fmt}"
            ] = data
        del fig
        gc.collect()
    if "html" in formats:
        out[f"{lang}/.{stem}.formula.svg"] = formula_svg_bytes(filled.formula_tex, 20)
    return out


@dataclass(frozen=True)
class PageSource:
    """One card of an HTML build: its text, computed numbers, file stem and nav label prefix."""

    text: Any  # CardText
    numbers: Mapping[str, Any]
    stem: str
    prefix: str  # "1. " before the title in the nav and index, or ""


def html_pages(
    sources: list[PageSource],
    langs: tuple[str, ...],
    formats: tuple[str, ...],
    look: Look,
    footer: Callable[[str], str],
    files: Mapping[str, bytes],
    explore: str | None = None,
    card_footer: Callable[[str, Any], str] | None = None,
) -> dict[str, bytes]:
    """Card pages and the index (linking to the explorer page ``explore`` if given), from the
    card text and the already rendered SVGs. ``card_footer(lang, card id)``: the footer of a
    card's own pages, if it differs from the index's (card 5 states its data, not d_model)."""
    from posecards.figures.style import theme
    from posecards.render.compose import layout
    from posecards.render.html import PanelView, card_page, figure_page, index_page, inline_svg
    from posecards.render.text import fill_card

    th = asdict(theme(look.theme))
    out: dict[str, bytes] = {}
    entries: list[dict[str, Any]] = []
    lay = layout(look.size)
    for lang in langs:
        filled_all = [fill_card(src.text, lang, src.numbers) for src in sources]
        nav = [
            (f"{src.prefix}{filled.title}", f"{src.stem}.html")
            for src, filled in zip(sources, filled_all, strict=True)
        ]
        for src, filled in zip(sources, filled_all, strict=True):
            stem = src.stem
            page_footer = card_footer(lang, src.text.id) if card_footer else footer(lang)
            page_downloads = [
                (fmt.upper(), f"{stem}.{fmt}")
                for fmt in ("png", "svg", "pdf")
                if f"{lang}/{stem}.{fmt}" in files
            ]
            panels = []
            for fid, title, alt, caption in filled.panels:
                svg = files[live_svg_name(lang, fid)]
                panels.append(
                    PanelView(
                        id=fid,
                        title=title,
                        alt=alt,
                        caption=caption,
                        svg=inline_svg(svg, fid, alt),
                        downloads=[
                            (fmt.upper(), f"figures/{fid}.{fmt}")
                            for fmt in ("png", "svg")
                            if fmt in formats
                        ],
                    )
                )
            formula = files[f"{lang}/.{stem}.formula.svg"]
            others = [x for x in langs if x != lang]
            # figures computed and drawn but not on the card: a page each, linked from the card
            more = []
            for fid, title, alt, caption in filled.figures:
                view = PanelView(
                    id=fid,
                    title=title,
                    alt=alt,
                    caption=caption,
                    svg=inline_svg(files[live_svg_name(lang, fid)], fid, alt),
                    downloads=[
                        (fmt.upper(), f"{fid}.{fmt}") for fmt in ("png", "svg") if fmt in formats
                    ],
                )
                out[f"{lang}/figures/{fid}.html"] = figure_page(
                    lang=lang,
                    card=filled,
                    figure=view,
                    card_page=(f"{src.prefix}{filled.title}", f"../{stem}.html"),
                    other_lang=(others[0], f"../../{others[0]}/figures/{fid}.html")
                    if others
                    else None,
                    footer=page_footer,
                    theme=th,
                ).encode("utf-8")
                more.append((title, caption, f"figures/{fid}.html"))
            html = card_page(
                lang=lang,
                card=filled,
                panels=panels,
                formula_svg=inline_svg(formula, f"{stem}-formula", filled.formula_tex),
                downloads=page_downloads,
                other_lang=(others[0], f"../{others[0]}/{stem}.html") if others else None,
                footer=page_footer,
                theme=th,
                nav=[(label, href, href == f"{stem}.html") for label, href in nav],
                more=more,
            )
            out[f"{lang}/{stem}.html"] = html.encode("utf-8")
            entries.append(
                {
                    "lang": lang,
                    "title": f"{src.prefix}{filled.title}",
                    "thesis": filled.thesis,
                    "page": f"{lang}/{stem}.html",
                    "preview": f"{lang}/{stem}.png" if f"{lang}/{stem}.png" in files else "",
                    "alt": filled.thesis,
                    "w": round(lay.width * 100),
                    "h": round(lay.height * 100),
                    "downloads": [
                        (f"{LANG_LABEL[lang]} {fmt.upper()}", f"{lang}/{stem}.{fmt}")
                        for fmt in ("png", "svg", "pdf")
                        if f"{lang}/{stem}.{fmt}" in files
                    ],
                    "figures": [
                        (f"{fid}.{fmt}", f"{lang}/figures/{fid}.{fmt}")
                        for fid, *_ in (*filled.panels, *filled.figures)
                        for fmt in ("png", "svg")
                        if fmt in formats
                    ],
                }
            )
    out["index.html"] = index_page(
        entries=entries, footer=footer("en"), theme=th, explore=explore
    ).encode("utf-8")
    return out


def _html_pages(
    cfg: BuildConfig, files: dict[str, bytes], numbers: Mapping[int, Mapping[str, Any]]
) -> dict[str, bytes]:
    """The pages of a `posecards build`."""
    from posecards.render.text import load_card_text

    sources = []
    for c in cfg.cards:
        text = load_card_text(c)
        sources.append(PageSource(text, numbers[c], card_stem(c, text.slug), f"{c}. "))
    return html_pages(
        sources,
        cfg.langs,
        cfg.formats,
        cfg.look,
        lambda lang: footer_text(cfg.params, cfg.look, lang),
        files,
        explore="explore.html",
        card_footer=lambda lang, card: footer_text(cfg.params, cfg.look, lang, card),
    )


def build_outputs(
    cfg: BuildConfig, progress: Callable[[str], None] | None = None, use_cache: bool = True
) -> dict[str, bytes]:
    """Every output file of a build, in memory, keyed by path relative to DIR.

    Units whose key is in the build cache are loaded from it; the rest are rendered, each in a
    fresh process, and stored.
    """
    jobs = [
        CardJob(c, lang, cfg.formats, cfg.look, cfg.params) for c in cfg.cards for lang in cfg.langs
    ]
    keys = {
        job: buildcache.unit_key("card", job=job, text=buildcache.card_text_digest(job.card))
        for job in jobs
    }
    files: dict[str, bytes] = {}
    numbers: dict[int, dict[str, Any]] = {}
    todo = []
    for job in jobs:
        hit = buildcache.load(keys[job]) if use_cache else None
        if hit is None:
            todo.append(job)
            continue
        files.update(hit[0])
        numbers[job.card] = hit[1]
    if progress:
        progress(f"{len(jobs) - len(todo)} of {len(jobs)} card renders up to date in the cache")
    if todo:
        todo = cache_friendly_order(todo, cfg.langs[0])
        n_workers = max(1, min(len(todo), cfg.jobs))
        if progress:
            progress(f"rendering {len(todo)} card(s) in {n_workers} process(es)")
            if any(job.card == 1 for job in todo):
                progress(
                    "card 1 computes a UMAP layout: 20-35 s the first time (numba compiles it), "
                    "cached afterwards"
                )
        # Every (card, language) renders in a fresh process: matplotlib keeps font and
        # text-layout state between figures, which can move a coordinate by an ulp, so a
        # figure's bytes would otherwise depend on what the same process drew before it.
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=n_workers, mp_context=ctx, max_tasks_per_child=1
        ) as pool:
            for job, (result, nums) in zip(todo, pool.map(render_card, todo), strict=True):
                files.update(result)
                numbers[job.card] = nums
                if use_cache:
                    buildcache.store(keys[job], result, nums)
                if progress:
                    progress(f"card {job.card} ({job.lang}) rendered")
    if "html" in cfg.formats:
        pages_key = buildcache.unit_key(
            "pages",
            cfg=BuildConfig(
                cards=cfg.cards,
                langs=cfg.langs,
                formats=cfg.formats,
                look=cfg.look,
                params=cfg.params,
            ),
            units=sorted(keys.values()),
            texts=[buildcache.card_text_digest(c) for c in cfg.cards],
        )
        hit = buildcache.load(pages_key) if use_cache else None
        if hit is None:
            pages = _html_pages(cfg, files, numbers)
            if use_cache:
                buildcache.store(pages_key, pages, {})
        else:
            pages = hit[0]
        files.update(pages)
        # the interactive explorer, opening in the first language and the build's theme
        from posecards.config import ExploreConfig
        from posecards.render.explore import explore_bytes

        files["explore.html"] = explore_bytes(
            ExploreConfig(lang=cfg.langs[0], theme=cfg.look.theme)
        )
        # helper files (the formula and live-text SVGs, rendered to be inlined) are not outputs
        files = {k: v for k, v in files.items() if "/." not in k}
    files = dict(sorted(files.items()))
    files["manifest.json"] = build_manifest(cfg, files)
    return files


def write_outputs(out: Path, files: Mapping[str, bytes]) -> list[str]:
    """Write the files whose content changed, as one step that cannot be left half done.

    Every new file is first written under a temporary name next to its target; only when all
    are written are they renamed into place, with SIGINT/SIGTERM held back for those renames.
    If anything fails before that, the temporary files are removed and DIR is unchanged.
    """
    import signal
    import tempfile

    changed = []
    for rel, data in files.items():
        if not safe_relative(rel):
            raise ValueError(f"refusing to write outside the output folder: {rel!r}")
        path = out / rel
        if not (path.is_file() and path.read_bytes() == data):
            changed.append(rel)
    staged: list[tuple[str, Path]] = []
    mode = file_mode()
    _fix_modes(out, [rel for rel in files if rel not in changed], mode)
    try:
        for rel in changed:
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((rel, Path(tmp_name)))
            os.fchmod(fd, mode)  # mkstemp makes 0600; a web server must be able to read it
            with os.fdopen(fd, "wb") as fh:
                fh.write(files[rel])
        held = {signal.SIGINT, signal.SIGTERM}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            for rel, staged_path in staged:
                os.replace(staged_path, out / rel)
            staged = []
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    finally:
        for _, leftover in staged:
            leftover.unlink(missing_ok=True)
    return changed


def safe_relative(rel: str) -> bool:
    """A manifest path: relative, no '..', no backslashes, no empty parts."""
    parts = rel.split("/")
    return (
        bool(rel)
        and not rel.startswith("/")
        and "\\" not in rel
        and all(p not in ("", ".", "..") for p in parts)
    )


def _fix_modes(out: Path, unchanged: list[str], mode: int) -> None:
    """Files left 0600 by posecards 0.1.0 (written through mkstemp) get the umask's mode."""
    for rel in unchanged:
        path = out / rel
        try:
            if path.stat().st_mode & 0o777 == 0o600 and mode != 0o600:
                path.chmod(mode)
        except OSError:
            pass
