"""What multiplies q . k besides the rotation: the softmax scale transformers hands the attention
kernel in the first attention layer (``Family.softmax``: one rule each in ``_RULES``) and the
query temperature of Llama 4's NoPE layers and Ministral 3 (``Family.temperature``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from posecards.model.checkpoint import CheckpointError
from posecards.model.families import SoftmaxRule
from posecards.model.layer_records import Layer, Note, QueryTemperature, RopeKind, SoftmaxScale
from posecards.model.rope_kinds import HeadShape, gemma4_head_dims
from posecards.model.text_config import TextConfig, finite

# (text config, the first attention layer's head slots, head shape, rope_parameters)
Rule = Callable[[TextConfig, int, HeadShape, Mapping[str, Any]], SoftmaxScale]


def _mla(t: TextConfig, head_dim: int, shape: HeadShape, rp: Mapping[str, Any]) -> SoftmaxScale:
    """DeepSeek's MLA: (d_nope + d_rope)^(-1/2), times YaRN's mscale(s, mscale_all_dim)^2."""
    params = {k: rp.get(k) for k in ("rope_type", "factor", "mscale_all_dim") if k in rp}
    if params.get("rope_type", "default") != "default" and rp.get("mscale_all_dim"):
        if not finite(rp.get("factor")):
            raise CheckpointError(
                "config.json: MLA with YaRN mscale_all_dim needs rope_scaling.factor "
                "(transformers reads it for the softmax scale)"
            )
    nope, rope = shape.nope_dim, shape.rope_dim
    return SoftmaxScale("mla", nope + rope, None, nope, rope, params)


_RULES: dict[SoftmaxRule, Rule] = {
    "head_dim": lambda t, d, shape, rp: SoftmaxScale("head_dim", d),
    "query_pre_attn_scalar": lambda t, d, shape, rp: SoftmaxScale(
        "query_pre_attn_scalar", d, t.real("query_pre_attn_scalar")
    ),
    "attention_multiplier": lambda t, d, shape, rp: SoftmaxScale(
        "attention_multiplier", d, t.real("attention_multiplier")
    ),
    "one": lambda t, d, shape, rp: SoftmaxScale("one", d),
    "mla": _mla,
}


def read_softmax_scale(
    t: TextConfig,
    layers: Sequence[Layer],
    kinds: Mapping[str, RopeKind],
    layer_types: Sequence[str],
    shape: HeadShape,
    rp: Mapping[str, Any],
) -> SoftmaxScale:
    """The rule and inputs of the softmax scale of the first attention layer."""
    first = next((la for la in layers if la.attention != "linear"), layers[0])
    # the whole head: GPT-J and CodeGen divide by sqrt(head_dim), not sqrt(rotary_dim)
    head = (
        kinds[first.rope].head_slots
        if first.rope is not None and first.rope in kinds
        else shape.head_dim
    )
    if t.family.head_dim == "gemma4":
        head = gemma4_head_dims(t, layer_types, shape.head_dim).get(
            layer_types[first.index], shape.head_dim
        )
    return _RULES[t.family.softmax](t, head, shape, rp)


# ---------------------------------------------------------------- query temperature


def _llama4(t: TextConfig, layers: Sequence[Layer], notes: list[Note]) -> QueryTemperature | None:
    """Llama 4: the NoPE layers' queries, when attn_temperature_tuning is true."""
    tuning = t.get("attn_temperature_tuning")
    if tuning is not None and not isinstance(tuning, bool):
        notes.append(
            Note(
                "tuning_not_bool",
                {"value": tuning},
                f"{t.prefix}attn_temperature_tuning = {tuning!r}: transformers 5.23.0's "
                "Llama4TextConfig refuses a value that is not true/false (strict "
                "validation); its attention code uses it as a truth value, and so does "
                "this card",
            )
        )
    if not tuning:
        return None
    nope = tuple(la.index for la in layers if la.position == "none")
    if not nope:
        return None
    scale = t.get("attn_scale")
    floor = t.get("floor_scale")
    if not finite(scale) or not finite(floor) or floor <= 0:
        raise CheckpointError("config.json: attn_scale and floor_scale must be numbers")
    keys = tuple(t.prefix + k for k in ("attn_temperature_tuning", "attn_scale", "floor_scale"))
    return QueryTemperature("llama4", float(scale), float(floor), 1.0, nope, keys)


def _ministral3(layers: Sequence[Layer], rp: Mapping[str, Any]) -> QueryTemperature:
    """Ministral 3: every layer's queries, from rope_parameters.llama_4_scaling_beta."""
    beta = rp.get("llama_4_scaling_beta")
    length = rp.get("original_max_position_embeddings")
    if beta is None:
        raise CheckpointError(
            "config.json: ministral3 rope_parameters has no llama_4_scaling_beta "
            "(transformers multiplies the queries by 1 + beta ln(...) and fails without it)"
        )
    if not finite(beta) or not finite(length) or length <= 0:
        raise CheckpointError(
            "config.json: llama_4_scaling_beta and original_max_position_embeddings must be numbers"
        )
    every = tuple(la.index for la in layers)
    return QueryTemperature(
        "ministral3",
        float(beta),
        float(length),
        0.0,
        every,
        ("rope_parameters.llama_4_scaling_beta",),
    )


def read_query_temperature(
    t: TextConfig, layers: Sequence[Layer], rp: Mapping[str, Any], notes: list[Note]
) -> QueryTemperature | None:
    if t.family.temperature == "llama4":
        return _llama4(t, layers, notes)
    if t.family.temperature == "ministral3":
        return _ministral3(layers, rp)
    return None
