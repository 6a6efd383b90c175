"""A build's HTML pages: each card's page and the pages of its figures that are not on it, one
language at a time, from the card text and the SVGs the card units drew (with the web fonts
they use), and the index of them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from posecards.config import Look
from posecards.engine.unitcache import plain
from posecards.engine.units import Context, Rendered, Say, quiet
from posecards.figures.style import theme
from posecards.render.build import DECK_FILES, DECK_FOLDER, IndexJob, PagesJob
from posecards.render.compose import layout
from posecards.render.explore import card_link
from posecards.render.footers import footer_text
from posecards.render.html import (
    PanelView,
    card_page,
    embed_fonts,
    figure_page,
    index_page,
    inline_svg,
)
from posecards.render.outputs import card_stem, card_unit, formula_name, live_svg_name, pages_unit
from posecards.render.text import FilledCard, fill_card, load_card_text
from posecards.render.ui import ui_strings


@dataclass(frozen=True)
class PageSource:
    """One card of an HTML build: its text, computed numbers, file stem and nav label prefix."""

    text: Any  # CardText
    numbers: Mapping[str, Any]
    stem: str
    prefix: str  # "1. " before the title in the nav and index, or ""


def _view(
    fid: str,
    title: str,
    alt: str,
    caption: str,
    svg: bytes,
    downloads: str,
    formats: tuple[str, ...],
) -> PanelView:
    """A figure as a page shows it (``downloads``: the folder of its files, from the page)."""
    return PanelView(
        id=fid,
        title=title,
        alt=alt,
        caption=caption,
        svg=inline_svg(svg, fid, alt),
        downloads=[
            (fmt.upper(), f"{downloads}{fid}.{fmt}") for fmt in ("png", "svg") if fmt in formats
        ],
    )


def _index_entry(
    src: PageSource,
    filled: FilledCard,
    lang: str,
    files: Mapping[str, bytes],
    formats: tuple[str, ...],
    look: Look,
) -> dict[str, Any]:
    """What the index shows of one card in one language."""
    stem = src.stem
    lay = layout(look.size)
    return {
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


@dataclass(frozen=True)
class _Pages:
    """What every page of one language shares."""

    lang: str
    others: list[str]  # the other languages (the first is linked)
    formats: tuple[str, ...]
    files: Mapping[str, bytes]
    theme: dict[str, Any]
    explore: Callable[[Any], str] | None = None  # a card's link to the explorer, if any


def _figure_pages(
    pg: _Pages, src: PageSource, filled: FilledCard, footer: str, made: Callable[[str, str], None]
) -> list[tuple[str, str, str]]:
    """The pages of a card's figures that are not on the card (``made(rel, page)`` gets each);
    the card page's links to them: (title, caption, href)."""
    lang, others = pg.lang, pg.others
    more = []
    for fid, title, alt, caption in filled.figures:
        svg = pg.files[live_svg_name(lang, fid)]
        view = _view(fid, title, alt, caption, svg, "", pg.formats)
        rel = f"{lang}/figures/{fid}.html"
        page = figure_page(
            lang=lang,
            card=filled,
            figure=view,
            card_page=(f"{src.prefix}{filled.title}", f"../{src.stem}.html"),
            other_lang=(others[0], f"../../{others[0]}/figures/{fid}.html") if others else None,
            footer=footer,
            theme=pg.theme,
        )
        made(rel, page)
        more.append((title, caption, f"figures/{fid}.html"))
    return more


def _card_page(
    pg: _Pages,
    src: PageSource,
    filled: FilledCard,
    footer: str,
    nav: list[tuple[str, str]],
    more: list[tuple[str, str, str]],
) -> str:
    lang, stem, others = pg.lang, src.stem, pg.others
    panels = [
        _view(fid, title, alt, caption, pg.files[live_svg_name(lang, fid)], "figures/", pg.formats)
        for fid, title, alt, caption in filled.panels
    ]
    formula = pg.files[formula_name(stem)]
    return card_page(
        lang=lang,
        card=filled,
        panels=panels,
        formula_svg=inline_svg(formula, f"{stem}-formula", filled.formula_tex),
        downloads=[
            (fmt.upper(), f"{stem}.{fmt}")
            for fmt in ("png", "svg", "pdf")
            if f"{lang}/{stem}.{fmt}" in pg.files
        ],
        other_lang=(others[0], f"../{others[0]}/{stem}.html") if others else None,
        footer=footer,
        theme=pg.theme,
        nav=[(label, href, href == f"{stem}.html") for label, href in nav],
        more=more,
        explore=pg.explore(src.text.id) if pg.explore else None,
    )


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
    explore: Callable[[Any], str] | None = None,
) -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """The card pages of one language and the pages of its figures that are not on their card,
    from the card text and the already rendered SVGs, with their web fonts (one subset per face
    for all of them: embed_fonts); and the index's entries for its cards. ``card_footer(lang,
    card id)``: the footer of a card's own pages, if it differs from the index's (card 5 states
    its data, not d_model). ``explore(card id)``: a card page's link to the explorer with
    that card's parameters (a build's pages; render.explore.card_link)."""
    pg = _Pages(
        lang, [x for x in langs if x != lang], formats, files, asdict(theme(look.theme)), explore
    )
    out: dict[str, str] = {}  # the pages, their fonts still to embed
    entries: list[dict[str, Any]] = []
    total = sum(1 + len(src.text.figures) for src in sources)

    def made(rel: str, page: str) -> None:
        out[rel] = page
        say(f"page {len(out)} of {total}: {rel}")

    filled_all = [fill_card(src.text, lang, src.numbers) for src in sources]
    nav = [
        (f"{src.prefix}{filled.title}", f"{src.stem}.html")
        for src, filled in zip(sources, filled_all, strict=True)
    ]
    for src, filled in zip(sources, filled_all, strict=True):
        page_footer = card_footer(lang, src.text.id) if card_footer else footer(lang)
        # figures computed and drawn but not on the card: a page each, linked from the card
        more = _figure_pages(pg, src, filled, page_footer, made)
        made(f"{lang}/{src.stem}.html", _card_page(pg, src, filled, page_footer, nav, more))
        entries.append(_index_entry(src, filled, lang, files, formats, look))
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
    teach: Sequence[Mapping[str, Any]] = (),
) -> bytes:
    """The index of a build's pages (``entries``: language_pages' of every language, in order),
    linking to the explorer page ``explore`` if given, with its own web fonts (it draws both
    languages)."""
    page = index_page(
        entries=entries,
        footer=footer,
        theme=asdict(theme(look.theme)),
        explore=explore,
        teach=teach,
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


def render_pages(job: PagesJob, ctx: Context) -> Rendered:
    """The pages of one language of a `posecards build`, from the card units' files, helpers and
    numbers (the formulas from the units of the first language); ``meta``: the index's entries
    for them."""
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
        explore=lambda card: card_link(card, job.params),
    )
    # as a cache hit gives them (a JSON round trip): the index is the same either way
    return Rendered(pages, meta=plain({"entries": entries}))


def teaching(job: IndexJob) -> list[dict[str, Any]]:
    """Per language of the build: what to project (the deck: its links where it was built,
    else the command that builds it) and what to hand out (the cards)."""
    out = []
    for lang in job.langs:
        links = [
            (name.rsplit(".", 1)[1].upper(), f"{DECK_FOLDER}/{lang}/{name}")
            for name in DECK_FILES
            if f"{lang}/{name}" in job.decks
        ]
        out.append({"ui": ui_strings(lang), "deck": links, "folder": DECK_FOLDER})
    return out


def render_index(job: IndexJob, ctx: Context) -> Rendered:
    """The index of a `posecards build`, from the entries of every language's pages."""
    entries = [e for lang in job.langs for e in ctx.needs[pages_unit(lang)].meta["entries"]]
    footer = footer_text(job.params, job.look, job.langs[0])
    page = index_html(
        entries, job.look, footer, explore="explore.html", say=ctx.say, teach=teaching(job)
    )
    return Rendered({"index.html": page})
