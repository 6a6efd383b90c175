"""A model with one plain RoPE on every layer, as today's RoPE inspection card reads it
(``inspect-rope``): its rotated slots, its scaling, and the context it was trained on and the one
its scaling reaches (``context_rule``). Any other RoPE model is read layer by layer
(``positions.LayeredPositions``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from posecards.encodings.rope_partial import rotary_dim
from posecards.encodings.rope_scaling import ROPE_REGISTRY
from posecards.model.checkpoint import CheckpointError
from posecards.model.layer_records import ModelLayers
from posecards.model.text_config import finite

MAX_CONTEXT = 1 << 31  # tokens


@dataclass(frozen=True)
class RopePositions:
    head_dim: int
    rotary_dim: int  # head_dim * partial_rotary_factor, or rotary_dim
    base: float
    scaling: Mapping[str, Any]  # the rope_parameters passed to rope_inv_freq (no theta)
    rope_type: str
    ignored_keys: tuple[str, ...]  # scaling keys posecards does not use
    trained_context: int
    scaled_context: int
    context_rule: str  # how the two contexts were found: "original", "linear", "extend", "none"
    max_position_embeddings: int | None
    layout: str  # "half" or "interleaved"
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()  # "rope_theta = 10000": values HF assumes when a key is absent
    reading: ModelLayers | None = None  # the layer-by-layer reading it was made from
    kind: str = "rope"


def is_plain(reading: ModelLayers) -> bool:
    """One RoPE on every layer, full attention everywhere, the standard softmax scale and nothing
    else (no MRoPE, proportional pairs, MLA split or query temperature): today's RoPE card."""
    if len(reading.rope) != 1:
        return False  # two RoPEs, or none on any layer
    kind = next(iter(reading.rope.values()))
    s = reading.softmax
    standard = s.rule == "head_dim" or (
        s.rule == "query_pre_attn_scalar" and s.value_key == s.head_dim
    )
    return (
        all(la.position == "rope" and la.attention == "full" for la in reading.layers)
        and kind.rope_type != "proportional"
        and kind.mrope_section is None
        and kind.first_slot == 0
        and standard
        and reading.temperature is None
    )


def plain_rope(reading: ModelLayers) -> RopePositions:
    """One plain RoPE on every layer: today's card (its rotated slots, scaling and contexts)."""
    kind = next(iter(reading.rope.values()))
    params = dict(kind.parameters)
    rope_type = kind.rope_type
    partial = params.get("partial_rotary_factor")
    if partial is None or (rope_type == "default" and not kind.partial_in_default):
        partial = 1.0
    try:
        rotary = rotary_dim(kind.head_dim, partial)
    except ValueError as exc:
        raise CheckpointError(f"config.json: {exc}") from None
    scaling = {
        k: v
        for k, v in params.items()
        if k not in ("type", "rope_theta", "partial_rotary_factor") and v is not None
    }
    scaling["rope_type"] = rope_type
    factor = params.get("factor") if rope_type != "default" else None
    if factor is not None and (not finite(factor) or not 0 < factor <= 65536):
        raise CheckpointError(
            f"config.json: rope factor must be a finite number above 0 and at most 65536, "
            f"got {factor!r}"
        )
    trained, scaled, rule = _contexts(reading, rope_type, params, factor, scaling)
    return RopePositions(
        head_dim=kind.head_slots,
        rotary_dim=rotary,
        base=kind.theta,
        scaling=scaling,
        rope_type=rope_type,
        ignored_keys=tuple(k.rsplit(".", 1)[-1] for k in reading.ignored_keys),
        trained_context=int(trained),
        scaled_context=int(max(scaled, trained)),
        context_rule=rule,
        max_position_embeddings=reading.max_position_embeddings,
        layout=kind.layout,
        config_keys=reading.config_keys,
        defaults=(*reading.defaults, *(f"assumed: {a}" for a in reading.assumed)),
        reading=reading,
    )


def _contexts(
    reading: ModelLayers,
    rope_type: str,
    params: Mapping[str, Any],
    factor: Any,
    scaling: dict[str, Any],
) -> tuple[int, int, str]:
    """(trained context, scaled context, the rule between them); a standardized
    original_max_position_embeddings is put into ``scaling``."""
    max_pos = reading.max_position_embeddings
    orig = params.get("original_max_position_embeddings")
    in_dict = ROPE_REGISTRY[rope_type].original_length  # the dict holds it (standardized)
    if not in_dict:
        orig = reading.original_max_position_embeddings
    if orig is not None and (not finite(orig) or orig != int(orig) or orig < 1):
        raise CheckpointError(
            f"config.json: original_max_position_embeddings must be a positive integer, "
            f"got {orig!r}"
        )
    if orig is not None and (in_dict or rope_type in ("default", "dynamic")):
        orig = int(orig)
        if in_dict:
            scaling["original_max_position_embeddings"] = orig
        # e.g. Llama 3.1: trained on 8192, max_position_embeddings 131072
        trained, rule = orig, "original"
        scaled = max(max_pos or 0, round(orig * factor) if factor else 0, orig)
    elif max_pos is None:
        raise CheckpointError("config.json: RoPE needs max_position_embeddings")
    elif rope_type == "linear" and factor:
        # position interpolation: max_position_embeddings is the stretched length
        trained, scaled, rule = max(1, round(max_pos / factor)), max_pos, "linear"
    elif factor and rope_type != "default":
        # dynamic, yarn, ntk: HF treats max_position_embeddings as the original length
        trained, scaled, rule = max_pos, round(max_pos * factor), "extend"
    else:
        trained, scaled, rule = max_pos, max_pos, "none"
    if not 1 <= trained <= MAX_CONTEXT or not 1 <= scaled <= MAX_CONTEXT:
        raise CheckpointError(f"config.json: a context of {scaled:g} tokens is out of range")
    return trained, scaled, rule
