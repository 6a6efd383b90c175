"""The units of `posecards inspect` that draw (in a fresh process each, as in a build): the
inspection card in one language, and the pages of every language.
"""

from __future__ import annotations

from posecards.engine.units import Context, Rendered
from posecards.figures.style import card_style
from posecards.garbage import collections_at_fixed_points
from posecards.render.card_unit import render_unit
from posecards.render.inspect import InspectJob, InspectPagesJob
from posecards.render.pages import PageSource, html_pages
from posecards.render.text import check_figure_ids, load_card_text


def render_inspection(job: InspectJob, ctx: Context) -> Rendered:
    text = load_card_text(job.card)
    check_figure_ids(text, job.content.figures)
    with collections_at_fixed_points(), card_style(job.look.theme) as th:
        files, helpers = render_unit(
            text,
            job.content,
            job.stem,
            th,
            lang=job.lang,
            formats=job.formats,
            size=job.look.size,
            footer=job.footer,
            scale=job.look.scale,
            svg_text=job.look.svg_text,
            formula=job.formula,
        )
    return Rendered(files, helpers)


def render_inspection_pages(job: InspectPagesJob, ctx: Context) -> Rendered:
    files: dict[str, bytes] = {}
    for done in ctx.needs.values():
        files.update(done.files)
        files.update(done.helpers)
    footers = dict(job.footers)
    src = PageSource(load_card_text(job.card), job.numbers, job.stem, "")
    pages = html_pages(
        [src], job.langs, job.formats, job.look, footers.__getitem__, files, say=ctx.say
    )
    return Rendered(pages)
