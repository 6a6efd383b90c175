"""The unit that draws one card in one language (in a fresh process): the whole card in each
format, its standalone figures, and its formula for the pages of every language. Shared by the
cards of a build and the inspection cards.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from posecards.config import PRINT_WIDTH
from posecards.content import compute_card
from posecards.engine.unitcache import plain
from posecards.engine.units import Context, Rendered
from posecards.figures.style import card_style
from posecards.garbage import collect_garbage, collections_at_fixed_points
from posecards.render.build import CardJob
from posecards.render.compose import compose_card
from posecards.render.figure import draw_standalone
from posecards.render.files import figure_bytes, figure_bytes_multi
from posecards.render.footers import footer_text
from posecards.render.outputs import (
    CARD_FORMATS,
    FIGURE_FORMATS,
    card_stem,
    formula_name,
    live_svg_name,
)
from posecards.render.text import check_figure_ids, fill_card, load_card_text


def formula_svg_bytes(tex: str, size: float) -> bytes:
    """The key formula alone, as a small SVG (the HTML shows it beside its TeX source)."""
    lines = tex.split("\n")
    fig = Figure(figsize=(12.0, 0.2 + 0.45 * len(lines)))
    for i, line in enumerate(lines):
        fig.text(0.01, 1 - (i + 0.5) / len(lines), line, fontsize=size, va="center")
    return figure_bytes(fig, "svg", tight=True, svg_text="live")  # inlined in the page


def render_card(job: CardJob, ctx: Context) -> Rendered:
    """Everything one card contributes in one language (HTML excluded), and its computed
    numbers (``meta``: the HTML pages are made from those once all cards are done)."""
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
    garbage.collections_at_fixed_points."""
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
        fig = draw_standalone(fid, content.figures[fid], lang, th.name, card=text.id, text=text)
        public, inline = encode_figure(fig, fid, lang, formats, scale, svg_text)
        files.update(public)
        helpers.update(inline)
        del fig
        collect_garbage()
    if formula:
        helpers[formula_name(stem)] = formula_svg_bytes(filled.formula_tex, 20)
    return files, helpers
