"""The footers of the cards and their pages: what a card was computed from (the parameters, the
measurements, the published configs: ``posecards.cards.DataFrom``; a model's reading for an
inspection card), the theme and the version, in the card's language.
"""

from __future__ import annotations

from collections.abc import Callable

from posecards._version import __version__
from posecards.cards import DataFrom, spec
from posecards.config import Look, PEParams
from posecards.content.configs import model_ids
from posecards.experiment.files import measurements_path
from posecards.formatting import group
from posecards.model.checkpoint import Checkpoint
from posecards.model.names import display_name
from posecards.model.positions import Found, LearnedPositions, RopePositions

THEME_NAMES_ZH = {"light": "浅色", "dark": "深色"}


def _measurements_footer(params: PEParams, look: Look, lang: str) -> str:
    """Card 5's: measured, the card does not use d_model/base/positions."""
    theme_zh = THEME_NAMES_ZH.get(look.theme, look.theme)
    data = measurements_path().name
    if lang == "zh":
        return f"数据：{data}（posecards measure）· 主题：{theme_zh} · posecards {__version__}"
    return f"Data: {data} (posecards measure) · theme {look.theme} · posecards {__version__}"


def _configs_footer(params: PEParams, look: Look, lang: str) -> str:
    """Card 6's: published configs, the card does not use d_model/base/positions."""
    theme_zh = THEME_NAMES_ZH.get(look.theme, look.theme)
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


def _parameters_footer(params: PEParams, look: Look, lang: str) -> str:
    theme_zh = THEME_NAMES_ZH.get(look.theme, look.theme)
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


# a card's footer says what it was computed from (posecards.cards.DataFrom)
FOOTERS: dict[DataFrom, Callable[[PEParams, Look, str], str]] = {
    DataFrom.PARAMETERS: _parameters_footer,
    DataFrom.MEASUREMENTS: _measurements_footer,
    DataFrom.CONFIGS: _configs_footer,
}


def footer_text(params: PEParams, look: Look, lang: str, card: int | None = None) -> str:
    """The footer of card ``card`` (None: the build's, as on its index and deck): what it was
    computed from, the theme, the version."""
    data = spec(card).data if card is not None else DataFrom.PARAMETERS
    return FOOTERS[data](params, look, lang)


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
        theme_zh = THEME_NAMES_ZH.get(look.theme, look.theme)
        return f"{src} · 主题：{theme_zh} · posecards {__version__} · 所有数字均由代码计算"
    return f"{src} · theme {look.theme} · posecards {__version__} · every number computed"
