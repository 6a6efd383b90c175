"""`posecards build`: the plan of a build (every card, figure, page, the explorer) and the
units it is made of. posecards.engine runs it: cached units are loaded, the others rendered,
each card in a fresh process; outputs are made in memory and written only when all succeeded.

A card is data to this plan: ``config.CARD_IDS``, ``cards/cardN.toml`` (slug, panels, figures),
``content/cardN.py`` and ``figures/cardN.py``; nothing here names a card (docs/cards.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from posecards._version import __version__
from posecards.config import PRINT_WIDTH, BuildConfig, ExploreConfig, Look, PEParams
from posecards.engine.inputs import text_name
from posecards.engine.units import Context, Plan, Rendered, Say, Unit, quiet
from posecards.formatting import group
from posecards.paths import data_dir

LANG_LABEL = {"en": "English", "zh": "中文"}
PAGES = "pages"
EXPLORE = "explore"
CARD_FORMATS = ("pdf", "png", "svg")  # a whole card
FIGURE_FORMATS = ("png", "svg")  # a standalone figure


def after_first_language(
    card: int, lang: str, langs: tuple[str, ...], unit_name: Callable[[int, str], str]
) -> tuple[str, ...]:
    """The units (named by ``unit_name``) that card ``card``'s unit in ``lang`` starts after:
    for a card whose costly computation is cached and shared by its languages
    (content.SHARED_ACROSS_LANGUAGES), its unit in the first language, so that the others find
    the cached result as soon as it is made instead of computing it alongside; else none."""
    from posecards.content import SHARED_ACROSS_LANGUAGES

    if card in SHARED_ACROSS_LANGUAGES and lang != langs[0]:
        return (unit_name(card, langs[0]),)
    return ()


def card_stem(card: int, slug: str) -> str:
    return f"card-{card}-{slug}"


def card_unit(card: int | str, lang: str) -> str:
    """The name of the unit that makes one card's files in one language: ``card 3 (en)``."""
    return f"card {card} ({lang})"


def formula_name(lang: str, stem: str) -> str:
    """The key formula of a card page, drawn alone (a helper of the pages, never written)."""
    return f"{lang}/{stem}.formula.svg"


THEME_NAMES_ZH = {"light": "浅色", "dark": "深色"}


def footer_text(params: PEParams, look: Look, lang: str, card: int | None = None) -> str:
    theme_zh = THEME_NAMES_ZH.get(look.theme, look.theme)
    if card == 5:  # measured: the card does not use d_model/base/positions
        from posecards.experiment.files import measurements_path

        data = measurements_path().name
        if lang == "zh":
            return f"数据：{data}（posecards measure）· 主题：{theme_zh} · posecards {__version__}"
        return f"Data: {data} (posecards measure) · theme {look.theme} · posecards {__version__}"
    if card == 6:  # published configs: the card does not use d_model/base/positions
        from posecards.content.configs import model_ids

        ids = ", ".join(model_ids())
        if lang == "zh":
            return (
                f"配置：{ids}（Hugging Face 上发布的 config.json，按 transformers 5.23.0 的方式读取）"
                f" · 主题：{theme_zh} · posecards {__version__}"
            )
        return (
            f"Configs: {ids} (config.json as published on Hugging Face, read as transformers"
            f" 5.23.0 reads it) · theme {look.theme} · posecards {__version__}"
        )
    # the base as the card text prints it (thousands grouped)
    base = group(params.base) if float(params.base).is_integer() else f"{params.base:g}"
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
    """One card in one language: the unit of work, always run in a fresh process."""

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


def render_card(job: CardJob, ctx: Context) -> Rendered:
    """Everything one card contributes in one language (HTML excluded), and its computed
    numbers (``meta``: the HTML pages are made from those once all cards are done)."""
    from posecards.content import compute_card
    from posecards.engine.unitcache import plain
    from posecards.figures.style import card_style
    from posecards.render.files import collections_at_fixed_points
    from posecards.render.text import check_figure_ids, load_card_text

    text = load_card_text(job.card)
    content = compute_card(job.card, job.params)
    check_figure_ids(text, content.figures)
    stem = card_stem(job.card, text.slug)
    with collections_at_fixed_points(), card_style(job.look.theme) as th:
        files, helpers = render_unit(
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
    return Rendered(files, helpers, plain(content.numbers))


def encode_figure(
    fig: Any, fid: str, lang: str, formats: tuple[str, ...], scale: int, svg_text: str = "outline"
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """A standalone figure, encoded: the files asked for (``--format``, SVG text per
    ``svg_text``), and the live-text SVG the HTML pages inline (a helper, never written)."""
    from posecards.render.files import figure_bytes_multi

    wanted = [f for f in FIGURE_FORMATS if f in formats] + (
        ["svg-live"] if "html" in formats else []
    )
    files: dict[str, bytes] = {}
    helpers: dict[str, bytes] = {}
    for fmt, data in figure_bytes_multi(fig, wanted, scale, svg_text=svg_text).items():
        if fmt == "svg-live":
            helpers[live_svg_name(lang, fid)] = data
        else:
            files[f"{lang}/figures/{fid}.{fmt}"] = data
    return files, helpers


def live_svg_name(lang: str, fid: str) -> str:
    """The live-text SVG of a figure that its HTML pages inline (a helper, never written)."""
    return f"{lang}/figures/{fid}.live.svg"


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
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The whole card and its standalone figures for one language, encoded (inside card_style):
    its files and its helpers. Shared by the cards and the inspection card; called inside
    render.files.collections_at_fixed_points."""
    from posecards.render.compose import compose_card
    from posecards.render.figure import draw_standalone
    from posecards.render.files import collect_garbage, figure_bytes_multi
    from posecards.render.text import fill_card

    files: dict[str, bytes] = {}
    helpers: dict[str, bytes] = {}
    filled = fill_card(text, lang, content.numbers)
    whole = [f for f in formats if f in CARD_FORMATS]
    if whole:
        fig = compose_card(filled, text, content.figures, th, size, footer)
        print_width = PRINT_WIDTH[size]
        for fmt, data in figure_bytes_multi(fig, whole, scale, print_width, svg_text).items():
            files[f"{lang}/{stem}.{fmt}"] = data
        del fig
        collect_garbage()
    for fid, *_ in (*filled.panels, *filled.figures):  # on the card, then figure pages only
        fig = draw_standalone(fid, content.figures[fid], lang, th.name, card=text.id)
        public, inline = encode_figure(fig, fid, lang, formats, scale, svg_text)
        files.update(public)
        helpers.update(inline)
        del fig
        collect_garbage()
    if "html" in formats:
        helpers[formula_name(lang, stem)] = formula_svg_bytes(filled.formula_tex, 20)
    return files, helpers


def unit_files(
    stem: str, figure_ids: tuple[str, ...], lang: str, formats: tuple[str, ...]
) -> tuple[str, ...]:
    """The public files of one card (or inspection card) in one language, from its text alone
    (the names ``render_unit`` produces; a test holds the two together)."""
    made = [f"{lang}/{stem}.{fmt}" for fmt in CARD_FORMATS if fmt in formats]
    made += [
        f"{lang}/figures/{fid}.{fmt}"
        for fid in figure_ids
        for fmt in FIGURE_FORMATS
        if fmt in formats
    ]
    return tuple(made)


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
    say: Say = quiet,
) -> dict[str, bytes]:
    """Card pages and the index (linking to the explorer page ``explore`` if given), from the
    card text and the already rendered SVGs. ``card_footer(lang, card id)``: the footer of a
    card's own pages, if it differs from the index's (card 5 states its data, not d_model).
    The pages of one language share their web fonts (one subset per face: embed_fonts); the
    index, which draws both languages, has its own."""
    from posecards.figures.style import theme
    from posecards.render.compose import layout
    from posecards.render.html import (
        PanelView,
        card_page,
        embed_fonts,
        figure_page,
        index_page,
        inline_svg,
    )
    from posecards.render.text import fill_card

    th = asdict(theme(look.theme))
    out: dict[str, str] = {}  # the pages, their fonts still to embed
    entries: list[dict[str, Any]] = []
    lay = layout(look.size)
    total = 1 + len(langs) * sum(1 + len(src.text.figures) for src in sources)

    def made(rel: str) -> None:
        say(f"page {len(out)} of {total}: {rel}")

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
            formula = files[formula_name(lang, stem)]
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
                )
                made(f"{lang}/figures/{fid}.html")
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
            out[f"{lang}/{stem}.html"] = html
            made(f"{lang}/{stem}.html")
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
    out["index.html"] = index_page(entries=entries, footer=footer("en"), theme=th, explore=explore)
    made("index.html")
    groups: dict[str, list[str]] = {}  # "en", "zh", "index.html" -> its pages
    for rel in out:
        groups.setdefault(rel.split("/")[0], []).append(rel)
    pages: dict[str, bytes] = {}
    for name, rels in groups.items():
        say(f"web fonts for {name if name in langs else 'the index'}: {len(rels)} page(s)")
        for rel, page in zip(rels, embed_fonts([out[rel] for rel in rels]), strict=True):
            pages[rel] = page.encode("utf-8")
    return pages


@dataclass(frozen=True)
class PagesJob:
    """The HTML pages and index of a build (made in this process from the cards' results)."""

    cards: tuple[int, ...]
    langs: tuple[str, ...]
    formats: tuple[str, ...]
    look: Look
    params: PEParams


def render_pages(job: PagesJob, ctx: Context) -> Rendered:
    """The pages of a `posecards build`, from the card units' files, helpers and numbers."""
    from posecards.render.text import load_card_text

    files: dict[str, bytes] = {}
    numbers: dict[int, Mapping[str, Any]] = {}
    for c in job.cards:
        for lang in job.langs:
            done = ctx.needs[card_unit(c, lang)]
            files.update(done.files)
            files.update(done.helpers)
            numbers[c] = done.meta
    sources = []
    for c in job.cards:
        text = load_card_text(c)
        sources.append(PageSource(text, numbers[c], card_stem(c, text.slug), f"{c}. "))
    pages = html_pages(
        sources,
        job.langs,
        job.formats,
        job.look,
        lambda lang: footer_text(job.params, job.look, lang),
        files,
        explore="explore.html",
        card_footer=lambda lang, card: footer_text(job.params, job.look, lang, card),
        say=ctx.say,
    )
    return Rendered(pages)


def render_explore(job: ExploreConfig, ctx: Context) -> Rendered:
    """The interactive explorer, opening in the build's first language and its theme."""
    from posecards.render.explore import explore_bytes

    return Rendered({"explore.html": explore_bytes(job)})


def card_sources(card: int | str) -> tuple[Any, ...]:
    """The files a card's text digest is made of: its text, and the data files it reads."""
    from posecards.content import card_inputs
    from posecards.render.text import card_file_name

    extra = card_inputs(card) if isinstance(card, int) else ()
    return (data_dir("cards") / card_file_name(card), *extra)


# what the drawing processes load once (render/warm.py), rather than once per card unit
PRELOAD = ("posecards.render.warm",)


def plan_build(cfg: BuildConfig) -> Plan:
    """Every unit of a build and the files each makes, from the options and card text alone."""
    from posecards.content import FIRST_TIME
    from posecards.render.text import load_card_text

    texts = {c: load_card_text(c) for c in cfg.cards}
    jobs = [
        CardJob(c, lang, cfg.formats, cfg.look, cfg.params) for c in cfg.cards for lang in cfg.langs
    ]
    units = []
    for job in jobs:
        text = texts[job.card]
        stem = card_stem(job.card, text.slug)
        note = FIRST_TIME.get(job.card, "")
        units.append(
            Unit(
                name=card_unit(job.card, job.lang),
                render=render_card,
                job=job,
                files=unit_files(stem, text.figure_ids, job.lang, cfg.formats),
                texts=(text_name(job.card),),
                note=f"card {job.card} {note}" if note else "",
                after=after_first_language(job.card, job.lang, cfg.langs, card_unit),
            )
        )
    sources = {text_name(c): card_sources(c) for c in cfg.cards}
    if "html" in cfg.formats:
        pages = ["index.html"] + [
            f"{lang}/{card_stem(c, texts[c].slug)}.html" for c in cfg.cards for lang in cfg.langs
        ]
        # a page for each figure that is not on its card (linked from the card page)
        pages += [
            f"{lang}/figures/{p.id}.html"
            for c in cfg.cards
            for p in texts[c].figures
            for lang in cfg.langs
        ]
        units.append(
            Unit(
                name=PAGES,
                render=render_pages,
                job=PagesJob(cfg.cards, cfg.langs, cfg.formats, cfg.look, cfg.params),
                files=tuple(pages),
                texts=tuple(text_name(c) for c in cfg.cards),
                needs=tuple(card_unit(c, lang) for c in cfg.cards for lang in cfg.langs),
                spawn=False,
            )
        )
        # the interactive explorer: its own text file (cards/explore.toml), templates and code
        units.append(
            Unit(
                name=EXPLORE,
                render=render_explore,
                job=ExploreConfig(lang=cfg.langs[0], theme=cfg.look.theme),
                files=("explore.html",),
                texts=(text_name(EXPLORE),),
                spawn=False,
            )
        )
        sources[text_name(EXPLORE)] = card_sources(EXPLORE)
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
        preload=PRELOAD,
    )
