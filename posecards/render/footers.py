"""The footers of the cards and their pages: what a card was computed from (the parameters, the
measurements, the published configs: ``posecards.cards.DataFrom``; a model's reading for an
inspection card), the theme and the version, in the card's language; their words are in
templates/ui.toml (``footer_*``, ``inspect_*``, ``theme_*``).
"""

from __future__ import annotations

from collections.abc import Callable

from posecards._version import __version__
from posecards.cards import DataFrom, spec
from posecards.config import Look, PEParams
from posecards.content.census import census_version
from posecards.content.configs import model_ids
from posecards.experiment.files import measurements_path
from posecards.formatting import group
from posecards.model.checkpoint import Checkpoint
from posecards.model.families import TRANSFORMERS_VERSION
from posecards.model.names import display_name
from posecards.model.positions import Found, LearnedPositions, RopePositions
from posecards.render.ui import ui_strings, ui_text


def theme_name(look: Look, lang: str) -> str:
    """The theme's name in ``lang`` (templates/ui.toml: ``theme_<name>``)."""
    return ui_strings(lang).get(f"theme_{look.theme}", look.theme)


def _common(look: Look, lang: str) -> dict[str, str]:
    """What every footer ends with: the theme and the version."""
    return {"theme": theme_name(look, lang), "version": __version__}


def _measurements_footer(params: PEParams, look: Look, lang: str) -> str:
    """Card 5's: measured, the card does not use d_model/base/positions."""
    return ui_text(lang, "footer_measured", data=measurements_path().name, **_common(look, lang))


def _configs_footer(params: PEParams, look: Look, lang: str) -> str:
    """Card 6's: published configs, the card does not use d_model/base/positions."""
    return ui_text(lang, "footer_configs", ids=", ".join(model_ids()), **_common(look, lang))


def _census_footer(params: PEParams, look: Look, lang: str) -> str:
    """Card 10's: the measurements and the census (its transformers version, from the file)."""
    return ui_text(
        lang,
        "footer_census",
        data=measurements_path().name,
        version_hf=census_version(),
        **_common(look, lang),
    )


def _parameters_footer(params: PEParams, look: Look, lang: str) -> str:
    # the base as the card text prints it (thousands grouped)
    base = group(params.base) if float(params.base).is_integer() else f"{params.base:g}"
    return ui_text(
        lang,
        "footer_parameters",
        d_model=params.d_model,
        base=base,
        positions=params.positions,
        **_common(look, lang),
    )


# a card's footer says what it was computed from (posecards.cards.DataFrom)
FOOTERS: dict[DataFrom, Callable[[PEParams, Look, str], str]] = {
    DataFrom.PARAMETERS: _parameters_footer,
    DataFrom.MEASUREMENTS: _measurements_footer,
    DataFrom.CONFIGS: _configs_footer,
    DataFrom.CENSUS: _census_footer,
}


def footer_text(params: PEParams, look: Look, lang: str, card: int | None = None) -> str:
    """The footer of card ``card`` (None: the build's, as on its index and deck): what it was
    computed from, the theme, the version."""
    data = spec(card).data if card is not None else DataFrom.PARAMETERS
    return FOOTERS[data](params, look, lang)


def source_text(ckpt: Checkpoint, found: Found, lang: str, weights: bool = False) -> str:
    """Which tensor and which config keys the card was made from (the footer's first part;
    templates/ui.toml: ``inspect_*``)."""
    keys = ", ".join(found.config_keys) if found.config_keys else "-"
    if weights:  # the weights card: q/k of every rotating layer, one layer at a time
        files = ", ".join(p.name for p in ckpt.weights[:2]) + (
            " …" if len(ckpt.weights) > 2 else ""
        )
        what = ui_text(lang, "inspect_weights", files=files)
    elif isinstance(found, LearnedPositions):
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
    elif ckpt.gguf is not None:  # a GGUF file: its metadata, mapped to a config
        what = ui_text(lang, "inspect_gguf", file=ckpt.gguf.path.name)
    else:
        what = ui_text(lang, "inspect_no_tensor")
    parts = [ui_text(lang, "inspect_source", name=display_name(ckpt.name), what=what, keys=keys)]
    reading = getattr(found, "reading", None)  # a RoPE model's layer-by-layer reading
    if reading is not None and reading.transformers_version:
        parts.append(ui_text(lang, "inspect_through", version=reading.transformers_version))
    elif reading is not None:
        parts.append(ui_text(lang, "inspect_by_table", version=TRANSFORMERS_VERSION))
    if isinstance(found, RopePositions) and found.ignored_keys:
        parts.append(ui_text(lang, "inspect_keys_not_used", keys=", ".join(found.ignored_keys)))
    if found.defaults:
        parts.append(ui_text(lang, "inspect_defaults", keys=", ".join(found.defaults)))
    return " · ".join(parts)


def inspect_footer(
    ckpt: Checkpoint, found: Found, look: Look, lang: str, weights: bool = False
) -> str:
    """An inspection card's footer: the model's reading, the theme, the version."""
    return ui_text(
        lang,
        "footer_inspect",
        source=source_text(ckpt, found, lang, weights),
        theme=theme_name(look, lang),
        version=__version__,
    )
