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
from posecards.render.ui import ui_strings, ui_text

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


def formula_name(stem: str) -> str:
    """The key formula of a card page, drawn alone (a helper of the pages, never written): the
    same mathematics in every language, drawn once, by the unit of the first language."""
    return f"{stem}.formula.svg"


def theme_name(look: Look, lang: str) -> str:
    """The theme's name in ``lang`` (templates/ui.toml: ``theme_<name>``)."""
    return ui_strings(lang).get(f"theme_{look.theme}", look.theme)


def footer_text(params: PEParams, look: Look, lang: str, card: int | None = None) -> str:
    """A card's footer (templates/ui.toml: ``footer_*``)."""
    common = {"theme": theme_name(look, lang), "version": __version__}
    if card == 5:  # measured: the card does not use d_model/base/positions
        from posecards.experiment.files import measurements_path

        return ui_text(lang, "footer_measured", data=measurements_path().name, **common)
    if card == 6:  # published configs: the card does not use d_model/base/positions
        from posecards.content.configs import model_ids

        return ui_text(lang, "footer_configs", ids=", ".join(model_ids()), **common)
    # the base as the card text prints it (thousands grouped)
    base = group(params.base) if float(params.base).is_integer() else f"{params.base:g}"
    return ui_text(
        lang,
        "footer_parameters",
        d_model=params.d_model,
        base=base,
        positions=params.positions,
        **common,
    )


@dataclass(frozen=True)
class CardJob:
    """One card in one language: the unit of work, always run in a fresh process."""

    card: int
    lang: str
    formats: tuple[str, ...]
    look: Look
    params: PEParams
    formula: bool = False  # draw the card's formula for the pages of every language


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
            formula=job.formula,
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
    formula: bool = False,
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The whole card and its standalone figures for one language, encoded (inside card_style):
    its files and its helpers (``formula``: also the card's formula, which the pages of every
    language inline). Shared by the cards and the inspection card; called inside
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
    if formula:
        helpers[formula_name(stem)] = formula_svg_bytes(filled.formula_tex, 20)
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


def language_pages(
    sources: list[PageSource],
    lang: str,
    langs: tuple[str, ...],
    formats: tuple[str, ...],
    look: Look,
    footer: Callable[[str], str],
    files: Mapping[str, bytes],
    card_footer: Callable[[str, Any], str] | None = None,
    say: Say = quiet,
) -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """The card pages of one language and the pages of its figures that are not on their card,
    from the card text and the already rendered SVGs, with their web fonts (one subset per face
    for all of them: embed_fonts); and the index's entries for its cards. ``card_footer(lang,
    card id)``: the footer of a card's own pages, if it differs from the index's (card 5 states
    its data, not d_model)."""
    from posecards.figures.style import theme
    from posecards.render.compose import layout
    from posecards.render.html import PanelView, card_page, embed_fonts, figure_page, inline_svg
    from posecards.render.text import fill_card

    th = asdict(theme(look.theme))
    out: dict[str, str] = {}  # the pages, their fonts still to embed
    entries: list[dict[str, Any]] = []
    lay = layout(look.size)
    total = sum(1 + len(src.text.figures) for src in sources)

    def made(rel: str) -> None:
        say(f"page {len(out)} of {total}: {rel}")

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
        formula = files[formula_name(stem)]
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
                other_lang=(others[0], f"../../{others[0]}/figures/{fid}.html") if others else None,
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
                    (f"{ui_strings(lang)['language_name']} {fmt.upper()}", f"{lang}/{stem}.{fmt}")
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
    say(f"web fonts for {lang}: {len(out)} page(s)")
    rels = list(out)
    pages = embed_fonts([out[rel] for rel in rels])
    return {rel: page.encode("utf-8") for rel, page in zip(rels, pages, strict=True)}, entries


def index_html(
    entries: list[dict[str, Any]],
    look: Look,
    footer: str,
    explore: str | None = None,
    say: Say = quiet,
) -> bytes:
    """The index of a build's pages (``entries``: language_pages' of every language, in order),
    linking to the explorer page ``explore`` if given, with its own web fonts (it draws both
    languages)."""
    from posecards.figures.style import theme
    from posecards.render.html import embed_fonts, index_page

    page = index_page(
        entries=entries, footer=footer, theme=asdict(theme(look.theme)), explore=explore
    )
    say("web fonts for the index: 1 page(s)")
    return embed_fonts([page])[0].encode("utf-8")


def html_pages(
    sources: list[PageSource],
    langs: tuple[str, ...],
    formats: tuple[str, ...],
    look: Look,
    footer: Callable[[str], str],
    files: Mapping[str, bytes],
    card_footer: Callable[[str, Any], str] | None = None,
    say: Say = quiet,
) -> dict[str, bytes]:
    """Every language's pages and the index, in one go (an inspection's pages)."""
    pages: dict[str, bytes] = {}
    entries: list[dict[str, Any]] = []
    for lang in langs:
        made, listed = language_pages(
            sources, lang, langs, formats, look, footer, files, card_footer, say
        )
        pages.update(made)
        entries += listed
    pages["index.html"] = index_html(entries, look, footer(langs[0]), say=say)
    return pages


def pages_unit(lang: str) -> str:
    return f"pages ({lang})"


INDEX = "index"


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


def render_pages(job: PagesJob, ctx: Context) -> Rendered:
    """The pages of one language of a `posecards build`, from the card units' files, helpers and
    numbers (the formulas from the units of the first language); ``meta``: the index's entries
    for them."""
    from posecards.engine.unitcache import plain
    from posecards.render.text import load_card_text

    files: dict[str, bytes] = {}
    for done in ctx.needs.values():
        files.update(done.files)
        files.update(done.helpers)
    sources = []
    for c in job.cards:
        text = load_card_text(c)
        numbers = ctx.needs[card_unit(c, job.lang)].meta
        sources.append(PageSource(text, numbers, card_stem(c, text.slug), f"{c}. "))
    pages, entries = language_pages(
        sources,
        job.lang,
        job.langs,
        job.formats,
        job.look,
        lambda lang: footer_text(job.params, job.look, lang),
        files,
        card_footer=lambda lang, card: footer_text(job.params, job.look, lang, card),
        say=ctx.say,
    )
    # as a cache hit gives them (a JSON round trip): the index is the same either way
    return Rendered(pages, meta=plain({"entries": entries}))


@dataclass(frozen=True)
class IndexJob:
    langs: tuple[str, ...]
    look: Look
    params: PEParams


def render_index(job: IndexJob, ctx: Context) -> Rendered:
    """The index of a `posecards build`, from the entries of every language's pages."""
    entries = [e for lang in job.langs for e in ctx.needs[pages_unit(lang)].meta["entries"]]
    footer = footer_text(job.params, job.look, job.langs[0])
    page = index_html(entries, job.look, footer, explore="explore.html", say=ctx.say)
    return Rendered({"index.html": page})


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
WARM_PDF = "posecards.render.warm_pdf"  # and where the plan writes PDFs


def plan_build(cfg: BuildConfig) -> Plan:
    """Every unit of a build and the files each makes, from the options and card text alone."""
    from posecards.content import FIRST_TIME
    from posecards.render.text import load_card_text

    texts = {c: load_card_text(c) for c in cfg.cards}
    html = "html" in cfg.formats
    # one language after the other: its pages are made while the next language is drawn
    jobs = [
        CardJob(c, lang, cfg.formats, cfg.look, cfg.params, formula=html and lang == cfg.langs[0])
        for lang in cfg.langs
        for c in cfg.cards
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
    if html:
        every = tuple(text_name(c) for c in cfg.cards)
        for lang in cfg.langs:
            # its card pages, and a page for each figure not on its card (linked from it)
            pages = [f"{lang}/{card_stem(c, texts[c].slug)}.html" for c in cfg.cards]
            pages += [f"{lang}/figures/{p.id}.html" for c in cfg.cards for p in texts[c].figures]
            needs = [card_unit(c, lang) for c in cfg.cards]
            needs += [card_unit(c, cfg.langs[0]) for c in cfg.cards if lang != cfg.langs[0]]
            units.append(
                Unit(
                    name=pages_unit(lang),
                    render=render_pages,
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
                render=render_index,
                job=IndexJob(cfg.langs, cfg.look, cfg.params),
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
        preload=(*PRELOAD, WARM_PDF) if "pdf" in cfg.formats else PRELOAD,
    )
