"""`posecards inspect`: the inspection card of a local model, in every format, in memory.

The checkpoint is read and the numbers computed here, in the calling process (only the one
tensor needed is read); each language is then drawn in a fresh process, as in a build, so the
bytes do not depend on what was drawn before. Writing is left to ``build.write_outputs``.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.config import InspectConfig, Look
from posecards.content import CardContent
from posecards.model.checkpoint import Checkpoint
from posecards.model.names import display_name, model_slug
from posecards.model.positions import Found, LearnedPositions, RopePositions
from posecards.render import buildcache
from posecards.render.build import PageSource, html_pages


def source_text(ckpt: Checkpoint, found: Found, lang: str) -> str:
    """Which tensor and which config keys the card was made from (the footer's first part)."""
    keys = ", ".join(found.config_keys) if found.config_keys else "-"
    name = display_name(ckpt.name)
    if isinstance(found, LearnedPositions):
        rows, width = found.shape
        what = (
            f"{display_name(found.tensor)} ({rows} × {width}, {found.dtype}) "
            f"{'来自' if lang == 'zh' else 'from'} {ckpt.tensors[found.tensor].file.name}"
        )
    else:
        what = "config.json" + (" （未读取张量）" if lang == "zh" else " (no tensor)")
    ignored = ""
    if isinstance(found, RopePositions) and found.ignored_keys:
        label = "未使用的键" if lang == "zh" else "keys not used"
        ignored = f" · {label}: {', '.join(found.ignored_keys)}"
    if found.defaults:
        label = "默认值" if lang == "zh" else "defaults"
        ignored += f" · {label}: {', '.join(found.defaults)}"
    if lang == "zh":
        return f"模型 {name} · 读取 {what} · 配置键：{keys}{ignored}"
    return f"Model {name} · read {what} · config keys: {keys}{ignored}"


def inspect_footer(ckpt: Checkpoint, found: Found, look: Look, lang: str) -> str:
    src = source_text(ckpt, found, lang)
    if lang == "zh":
        from posecards.render.build import THEME_NAMES_ZH

        theme_zh = THEME_NAMES_ZH.get(look.theme, look.theme)
        return f"{src} · 主题：{theme_zh} · posecards {__version__} · 所有数字均由代码计算"
    return f"{src} · theme {look.theme} · posecards {__version__} · every number computed"


@dataclass(frozen=True)
class InspectJob:
    """One language of the inspection card: everything a fresh process needs to draw it."""

    card: str  # "inspect-learned", "inspect-rope" or "inspect-alibi"
    lang: str
    formats: tuple[str, ...]
    look: Look
    stem: str
    content: CardContent
    footer: str


def render_inspection(job: InspectJob) -> dict[str, bytes]:
    import gc

    from posecards.figures.style import card_style
    from posecards.render.build import render_unit
    from posecards.render.text import check_figure_ids, load_card_text

    text = load_card_text(job.card)
    check_figure_ids(text, job.content.figures)
    gc.disable()  # collections only at fixed points: see render_card
    try:
        with card_style(job.look.theme) as th:
            return render_unit(
                text,
                job.content,
                job.stem,
                th,
                lang=job.lang,
                formats=job.formats,
                size=job.look.size,
                footer=job.footer,
                scale=job.look.scale,
            )
    finally:
        gc.enable()


def _printable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _printable(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_printable(v) for v in value]
    return value


def inspect_outputs(
    cfg: InspectConfig,
    ckpt: Checkpoint,
    found: Found,
    content: CardContent,
    progress: Callable[[str], None] | None = None,
) -> dict[str, bytes]:
    """Every output file of an inspection, keyed by path relative to DIR."""
    card = str(content.card)
    stem = model_slug(ckpt.name)
    drawn = tuple(f for f in cfg.formats if f != "json")  # --format json: the reading only
    jobs = [
        InspectJob(
            card,
            lang,
            drawn,
            cfg.look,
            stem,
            content,
            inspect_footer(ckpt, found, cfg.look, lang),
        )
        for lang in cfg.langs
    ]
    files: dict[str, bytes] = {}
    if drawn:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=max(1, min(len(jobs), cfg.jobs)), mp_context=ctx, max_tasks_per_child=1
        ) as pool:
            for job, result in zip(jobs, pool.map(render_inspection, jobs), strict=True):
                files.update(result)
                if progress:
                    progress(f"inspection card ({job.lang}) rendered")
    if "html" in drawn:
        from posecards.render.text import load_card_text

        src = PageSource(load_card_text(card), content.numbers, stem, "")
        files.update(
            html_pages(
                [src],
                cfg.langs,
                drawn,
                cfg.look,
                lambda lang: inspect_footer(ckpt, found, cfg.look, lang),
                files,
            )
        )
        files = {
            k: v
            for k, v in files.items()
            if "/." not in k
            and not (k.endswith(".svg") and "/figures/" in k and "svg" not in drawn)
        }
    if "json" in cfg.formats:
        from posecards.content.reading import inspection_json

        files[f"{stem}.json"] = inspection_json(ckpt.name, ckpt.config, found)
    files = dict(sorted(files.items()))
    files["manifest.json"] = _manifest(cfg, ckpt, found, files)
    return files


def _manifest(
    cfg: InspectConfig, ckpt: Checkpoint, found: Found, files: Mapping[str, bytes]
) -> bytes:
    """The same manifest as a build's (recipe inputs, units, sha256 of every file), plus the
    model it was made from."""
    from posecards.render.manifest import PAGES, card_unit, inputs_of, manifest_bytes

    card = f"inspect-{found.kind}"
    text = buildcache.card_text_name(card)
    units: dict[str, tuple[list[str], list[str]]] = {
        card_unit(card, lang): ([text], [f for f in files if f.startswith(f"{lang}/")])
        for lang in cfg.langs
    }
    pages = [f for f in files if f.endswith(".html")]
    readings = [f for f in files if "/" not in f and f.endswith(".json")]
    if readings:  # --format json: the layer-by-layer reading (content/reading.py)
        units["reading"] = ([text], readings)
    if pages:
        units[PAGES] = ([text], pages)
        for lang in cfg.langs:
            made = units[card_unit(card, lang)][1]
            made[:] = [f for f in made if f not in pages]
    model = {
        "name": ckpt.name,
        "format": ckpt.format,
        "weights": [{"file": p.name, "bytes": p.stat().st_size} for p in ckpt.weights],
        "config": "config.json" if ckpt.config_file else None,
        "found": _printable(asdict(found)),
    }
    options = {"languages": list(cfg.langs), "formats": list(cfg.formats), "look": asdict(cfg.look)}
    return manifest_bytes(
        "posecards inspect", options, inputs_of([card]), units, files, extra={"model": model}
    )


def default_out(ckpt: Checkpoint) -> Path:
    return Path("out") / "inspect" / model_slug(ckpt.name)
