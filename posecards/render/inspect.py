"""`posecards inspect`: the plan of a model's inspection card, in every format.

The checkpoint is read and the numbers computed in the calling process before the plan is made
(only the one tensor needed is read); posecards.engine then draws each language in a fresh
process, as in a build, so the bytes do not depend on what was drawn before, and makes the pages.
Another output made from the reading (a file that is not drawn) is one more unit of the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.config import InspectConfig, Look
from posecards.content import CardContent
from posecards.engine.inputs import text_name
from posecards.engine.units import Context, Plan, Rendered, Unit
from posecards.model.checkpoint import Checkpoint
from posecards.model.names import display_name, model_slug
from posecards.model.positions import Found, LearnedPositions, RopePositions
from posecards.render.build import (
    PRELOAD,
    WARM_PDF,
    PageSource,
    card_sources,
    card_unit,
    html_pages,
    render_unit,
    theme_name,
    unit_files,
)
from posecards.render.ui import ui_text


def source_text(ckpt: Checkpoint, found: Found, lang: str) -> str:
    """Which tensor and which config keys the card was made from (the footer's first part;
    templates/ui.toml: ``inspect_*``)."""
    keys = ", ".join(found.config_keys) if found.config_keys else "-"
    if isinstance(found, LearnedPositions):
        rows, width = found.shape
        what = ui_text(
            lang,
            "inspect_tensor",
            tensor=display_name(found.tensor),
            rows=rows,
            width=width,
            dtype=found.dtype,
            file=ckpt.tensors[found.tensor].file.name,
        )
    else:
        what = ui_text(lang, "inspect_no_tensor")
    parts = [ui_text(lang, "inspect_source", name=display_name(ckpt.name), what=what, keys=keys)]
    if isinstance(found, RopePositions) and found.ignored_keys:
        parts.append(ui_text(lang, "inspect_keys_not_used", keys=", ".join(found.ignored_keys)))
    if found.defaults:
        parts.append(ui_text(lang, "inspect_defaults", keys=", ".join(found.defaults)))
    return " · ".join(parts)


def inspect_footer(ckpt: Checkpoint, found: Found, look: Look, lang: str) -> str:
    return ui_text(
        lang,
        "footer_inspect",
        source=source_text(ckpt, found, lang),
        theme=theme_name(look, lang),
        version=__version__,
    )


@dataclass(frozen=True)
class InspectJob:
    """One language of the inspection card: everything a fresh process needs to draw it."""

    card: str  # "inspect-learned", "inspect-rope", "inspect-layers" or "inspect-alibi"
    lang: str
    formats: tuple[str, ...]
    look: Look
    stem: str
    content: CardContent
    footer: str
    formula: bool = False  # draw the card's formula for the pages of every language


def render_inspection(job: InspectJob, ctx: Context) -> Rendered:
    from posecards.figures.style import card_style
    from posecards.render.files import collections_at_fixed_points
    from posecards.render.text import check_figure_ids, load_card_text

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


@dataclass(frozen=True)
class InspectPagesJob:
    card: str
    langs: tuple[str, ...]
    formats: tuple[str, ...]
    look: Look
    stem: str
    numbers: Mapping[str, Any]
    footers: tuple[tuple[str, str], ...]  # (lang, footer)


def render_inspection_pages(job: InspectPagesJob, ctx: Context) -> Rendered:
    from posecards.render.text import load_card_text

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


@dataclass(frozen=True)
class ReadingJob:
    """--format json: the reading of the model as ``<stem>.json`` (content/reading.py)."""

    name: str
    stem: str
    config: Mapping[str, Any]
    found: Found


def render_reading(job: ReadingJob, ctx: Context) -> Rendered:
    from posecards.content.reading import inspection_json

    return Rendered({f"{job.stem}.json": inspection_json(job.name, job.config, job.found)})


def _printable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _printable(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_printable(v) for v in value]
    return value


def plan_inspection(
    cfg: InspectConfig, out: Path, ckpt: Checkpoint, found: Found, content: CardContent
) -> Plan:
    """Every unit of an inspection: a drawing per language, then the pages. Not cached: the
    units' input is the model reading, computed afresh each time."""
    from posecards.render.text import load_card_text

    card = str(content.card)
    text = load_card_text(card)
    stem = model_slug(ckpt.name)
    name = text_name(card)
    footers = tuple((lang, inspect_footer(ckpt, found, cfg.look, lang)) for lang in cfg.langs)
    drawn = tuple(f for f in cfg.formats if f != "json")  # --format json alone draws nothing
    html, first = "html" in cfg.formats, cfg.langs[0]
    units = [
        Unit(
            name=card_unit(card, lang),
            render=render_inspection,
            job=InspectJob(
                card, lang, drawn, cfg.look, stem, content, footer, formula=html and lang == first
            ),
            files=unit_files(stem, text.figure_ids, lang, drawn),
            texts=(name,),
            cache=False,
        )
        for lang, footer in footers
        if drawn
    ]
    if "json" in cfg.formats:
        units.append(
            Unit(
                name="reading",
                render=render_reading,
                job=ReadingJob(ckpt.name, stem, dict(ckpt.config), found),
                files=(f"{stem}.json",),
                texts=(name,),
                spawn=False,
                cache=False,
            )
        )
    if html:
        pages = [f"{lang}/{stem}.html" for lang in cfg.langs]
        pages += [f"{lang}/figures/{p.id}.html" for lang in cfg.langs for p in text.figures]
        units.append(
            Unit(
                name="pages",
                render=render_inspection_pages,
                job=InspectPagesJob(
                    card, cfg.langs, drawn, cfg.look, stem, content.numbers, footers
                ),
                files=("index.html", *pages),
                texts=(name,),
                needs=tuple(u.name for u in units if u.name != "reading"),
                spawn=False,
                cache=False,
            )
        )
    model = {
        "name": ckpt.name,
        "format": ckpt.format,
        "weights": [{"file": p.name, "bytes": p.stat().st_size} for p in ckpt.weights],
        "config": "config.json" if ckpt.config_file else None,
        "found": _printable(asdict(found)),
    }
    return Plan(
        made_by="posecards inspect",
        out=out,
        options={
            "languages": list(cfg.langs),
            "formats": list(cfg.formats),
            "look": asdict(cfg.look),
        },
        units=tuple(units),
        sources={name: card_sources(card)},
        what="inspection",
        extra={"model": model},
        # what its drawing processes load once (render/warm.py, warm_pdf.py where it writes
        # PDFs, this module, its figures)
        preload=(
            *PRELOAD,
            *((WARM_PDF,) if "pdf" in drawn else ()),
            "posecards.render.inspect",
            "posecards.figures.inspect",
        ),
    )


def default_out(ckpt: Checkpoint) -> Path:
    return Path("out") / "inspect" / model_slug(ckpt.name)
