"""`posecards inspect`: the plan of a model's inspection card, in every format.

The checkpoint is read and the numbers computed in the calling process before the plan is made
(only the one tensor needed is read); posecards.engine then draws each language in a fresh
process, as in a build (``render.inspect_units``, named, not imported: planning imports no
matplotlib), so the bytes do not depend on what was drawn before, and makes the pages.
Another output made from the reading (a file that is not drawn) is one more unit of the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posecards.cards import spec
from posecards.config import InspectConfig, Look
from posecards.content import CardContent
from posecards.content.reading import inspection_json
from posecards.engine.inputs import text_name
from posecards.engine.units import Context, Deferred, Plan, Rendered, Unit
from posecards.model.checkpoint import Checkpoint
from posecards.model.names import model_slug
from posecards.model.positions import Found
from posecards.render.build import PRELOAD, WARM_PDF, card_sources
from posecards.render.footers import inspect_footer
from posecards.render.outputs import card_unit, unit_files
from posecards.render.text import load_card_text

RENDER_INSPECTION = Deferred("posecards.render.inspect_units", "render_inspection")
RENDER_PAGES = Deferred("posecards.render.inspect_units", "render_inspection_pages")


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


@dataclass(frozen=True)
class InspectPagesJob:
    card: str
    langs: tuple[str, ...]
    formats: tuple[str, ...]
    look: Look
    stem: str
    numbers: Mapping[str, Any]
    footers: tuple[tuple[str, str], ...]  # (lang, footer)


@dataclass(frozen=True)
class ReadingJob:
    """--format json: the reading of the model as ``<stem>.json`` (content/reading.py)."""

    name: str
    stem: str
    config: Mapping[str, Any]
    found: Found
    document: bytes | None = None  # made with the card's content (the weights reading)


def render_reading(job: ReadingJob, ctx: Context) -> Rendered:
    if job.document is not None:
        return Rendered({f"{job.stem}.json": job.document})
    return Rendered({f"{job.stem}.json": inspection_json(job.name, job.config, job.found)})


def _printable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _printable(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_printable(v) for v in value]
    return value


def _model_record(ckpt: Checkpoint, found: Found) -> dict[str, Any]:
    """What the manifest records of the model read."""
    return {
        "name": ckpt.name,
        "format": ckpt.format,
        "weights": [{"file": p.name, "bytes": p.stat().st_size} for p in ckpt.weights],
        "config": "config.json" if ckpt.config_file else None,
        "gguf_metadata": list(ckpt.gguf.metadata_keys) if ckpt.gguf else None,
        "found": _printable(asdict(found)),
    }


def _pages_unit(
    cfg: InspectConfig,
    card: str,
    drawn: tuple[str, ...],
    stem: str,
    content: CardContent,
    footers: tuple[tuple[str, str], ...],
    units: list[Unit],
) -> Unit:
    """The HTML pages of an inspection (the card's and each figure's, per language), made after
    every drawing unit in ``units``."""
    text = load_card_text(card)
    pages = [f"{lang}/{stem}.html" for lang in cfg.langs]
    pages += [f"{lang}/figures/{p.id}.html" for lang in cfg.langs for p in text.figures]
    return Unit(
        name="pages",
        render=RENDER_PAGES,
        job=InspectPagesJob(card, cfg.langs, drawn, cfg.look, stem, content.numbers, footers),
        files=("index.html", *pages),
        texts=(text_name(card),),
        needs=tuple(u.name for u in units if u.name != "reading"),
        spawn=False,
        cache=False,
    )


def plan_inspection(
    cfg: InspectConfig,
    out: Path,
    ckpt: Checkpoint,
    found: Found,
    content: CardContent | None,
    document: bytes | None = None,
) -> Plan:
    """Every unit of an inspection: a drawing per language, then the pages. Not cached: the
    units' input is the model reading, computed afresh each time. ``content`` None: nothing is
    drawn (``--format json`` of a learned table whose values the folder does not hold)."""
    card = str(content.card) if content is not None else "inspect-learned"
    text = load_card_text(card)
    stem = model_slug(ckpt.name)
    name = text_name(card)
    footers = (
        tuple(
            (lang, inspect_footer(ckpt, found, cfg.look, lang, cfg.weights)) for lang in cfg.langs
        )
        if content is not None
        else ()
    )
    drawn = tuple(f for f in cfg.formats if f != "json")  # --format json alone draws nothing
    html, first = "html" in cfg.formats, cfg.langs[0]
    units = [
        Unit(
            name=card_unit(card, lang),
            render=RENDER_INSPECTION,
            job=InspectJob(
                card, lang, drawn, cfg.look, stem, content, footer, formula=html and lang == first
            ),
            files=unit_files(stem, text.figure_ids, lang, drawn),
            texts=(name,),
            cache=False,
        )
        for lang, footer in footers
        if drawn and content is not None
    ]
    if "json" in cfg.formats:
        units.append(
            Unit(
                name="reading",
                render=render_reading,
                job=ReadingJob(ckpt.name, stem, dict(ckpt.config), found, document),
                files=(f"{stem}.json",),
                texts=(name,),
                spawn=False,
                cache=False,
            )
        )
    if html and content is not None:
        units.append(_pages_unit(cfg, card, drawn, stem, content, footers, units))
    return Plan(
        made_by="posecards inspect",
        out=out,
        options={
            "languages": list(cfg.langs),
            "formats": list(cfg.formats),
            "look": asdict(cfg.look),
            **({"weights": True} if cfg.weights else {}),
        },
        units=tuple(units),
        sources={name: card_sources(card)},
        what="inspection",
        extra={"model": _model_record(ckpt, found)},
        # what its drawing processes load once (render/warm.py, warm_pdf.py where it writes
        # PDFs, this module, its figures)
        preload=(
            *PRELOAD,
            *((WARM_PDF,) if "pdf" in drawn else ()),
            "posecards.render.inspect_units",
            spec(card).figures_module,
        ),
    )


def default_out(ckpt: Checkpoint, weights: bool = False) -> Path:
    return Path("out") / "inspect" / (model_slug(ckpt.name) + ("-weights" if weights else ""))
