"""``rope_parameters`` standardized as the config class does (transformers 5.23.0).

4.x ``rope_scaling``/``rope_theta``/``rope_local_base_freq``/``rotary_pct``/``rotary_emb_base``/
``partial_rotary_factor``; 5.x flat, per layer type, or mixed. One function per
``Family.rope`` rule (``_RULES``): the generic ``RotaryEmbeddingConfigMixin`` and its small
variants (GPT-NeoX, Phi-3, Qwen2-VL, GPT-J), Gemma 3 and OLMo 3 (one dict per layer type, filled
from the flat keys), Gemma 4 (taken as given). Each returns the standardized dict, its
per-layer-type keys (empty: one flat dict) and the key it came from.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from posecards.encodings.rope_scaling import ROPE_REGISTRY
from posecards.model.checkpoint import CheckpointError
from posecards.model.families import ASSUMED, RopeRule
from posecards.model.text_config import TextConfig

Standardized = tuple[dict[str, Any], list[str], str]
# (text config, rope_scaling, rope_parameters, layer types, max_position_embeddings)
Rule = Callable[
    [TextConfig, "dict[str, Any] | None", "dict[str, Any] | None", Sequence[str], "int | None"],
    Standardized,
]


def _original_length(rope_type: Any) -> bool:
    """standardize_rope_params fills original_max_position_embeddings for this type."""
    declared = ROPE_REGISTRY.get(rope_type) if isinstance(rope_type, str) else None
    return declared is not None and declared.original_length


def _standardize(
    t: TextConfig, rp: dict[str, Any], layer_types: Sequence[str], max_pos: int | None
) -> tuple[dict[str, Any], list[str]]:
    """RotaryEmbeddingConfigMixin.standardize_rope_params: rope_type from 'type', and
    original_max_position_embeddings for llama3/yarn/longrope. Returns the dict and its
    per-layer-type keys (empty: one flat dict)."""
    nested = [k for k in rp if k in set(layer_types)]
    if not nested:
        rp.setdefault("rope_type", rp.get("type", "default"))
        if _original_length(rp["rope_type"]):
            top = t.raw("original_max_position_embeddings")
            if top is None and "original_max_position_embeddings" in t.family.defaults:
                top = t.get("original_max_position_embeddings")  # Phi-3: a class field
            if top is not None:  # HF: the attribute wins over the dict's value
                rp["original_max_position_embeddings"] = top
            else:
                rp.setdefault("original_max_position_embeddings", max_pos)
        return rp, []
    for k in nested:
        sub = rp[k]
        if sub is None:
            continue
        if not isinstance(sub, Mapping):
            raise CheckpointError(f"config.json: rope_parameters.{k} must be an object")
        sub = rp[k] = dict(sub)
        sub.setdefault("rope_type", sub.get("type", "default"))
        if _original_length(sub["rope_type"]):
            sub.setdefault("original_max_position_embeddings", max_pos)
    return rp, nested


def _has_key(rp: Mapping[str, Any], layer_types: Sequence[str], key: str) -> bool:
    subs = [v for k, v in rp.items() if k in set(layer_types) and isinstance(v, Mapping)]
    return any(key in s for s in subs) if subs else key in rp


# ---------------------------------------------------------------- Gemma 3, OLMo 3


def _full_attention(
    t: TextConfig, rs: dict[str, Any] | None, rp: dict[str, Any] | None, glob: float
) -> dict[str, Any]:
    """rope_parameters with its full-attention entry: rope_scaling merged in, rope_theta set."""
    if rp is None:
        rp = {
            "sliding_attention": {"rope_type": "default"},
            "full_attention": {"rope_type": "default"},
        }
    if rs is not None:
        if not isinstance(rp.get("full_attention"), Mapping):
            raise CheckpointError(
                "config.json: rope_scaling with a rope_parameters that has no "
                "full_attention entry (transformers cannot merge them)"
            )
        rp["full_attention"] = {**rp["full_attention"], **rs}
    if rp.get("full_attention") is None:
        rp["full_attention"] = {"rope_type": "default"}
    full_theta = t.raw("rope_theta")
    if full_theta is None:
        full_theta = glob
        t.default("rope_theta", glob)
    rp["full_attention"] = dict(rp["full_attention"])
    rp["full_attention"].setdefault("rope_theta", full_theta)
    return rp


def _per_layer_type(
    t: TextConfig,
    rs: dict[str, Any] | None,
    rp: dict[str, Any] | None,
    layer_types: Sequence[str],
    max_pos: int | None,
) -> Standardized:
    """Gemma 3 and OLMo 3: one dict per layer type, filled from rope_theta (full attention) and
    rope_local_base_freq (Gemma 3's sliding layers; OLMo 3's get the default)."""
    fam = t.family
    theta = fam.theta
    glob = theta["global"] if isinstance(theta, Mapping) else theta
    local = theta["local"] if isinstance(theta, Mapping) else theta
    rp = _full_attention(t, rs, rp, glob)
    if rp.get("sliding_attention") is None:
        rp["sliding_attention"] = {"rope_type": "default"}
    rp["sliding_attention"] = dict(rp["sliding_attention"])
    if fam.rope == "gemma3":
        local_theta = t.raw("rope_local_base_freq")
    else:  # OLMo 3 pops rope_theta twice: the sliding layers get the default
        local_theta = None
    if local_theta is None:
        local_theta = local
        if "rope_theta" not in rp["sliding_attention"]:
            key = "rope_local_base_freq" if fam.rope == "gemma3" else "sliding rope_theta"
            t.default(key, local)
    rp["sliding_attention"].setdefault("rope_theta", local_theta)
    out, nested = _standardize(t, rp, layer_types, max_pos)
    return out, nested, "rope_parameters"


def _gemma4(
    t: TextConfig,
    rs: dict[str, Any] | None,
    rp: dict[str, Any] | None,
    layer_types: Sequence[str],
    max_pos: int | None,
) -> Standardized:
    """Gemma 4: rope_parameters per layer type, taken as given (the class's own when none)."""
    if rs is not None:
        raise CheckpointError(
            "config.json: Gemma 4 reads rope_parameters (per layer type), not rope_scaling"
        )
    if rp is None:
        rp = copy.deepcopy(dict(t.family.rope_defaults or {}))
        t.default("rope_parameters", "sliding θ 10,000, full proportional 0.25 θ 1,000,000")
    out, nested = _standardize(t, rp, layer_types, max_pos)
    for k in nested:
        if out[k] is not None and out[k].get("rope_theta") is None:
            raise CheckpointError(f"config.json: rope_parameters.{k} has no rope_theta")
    return out, nested, "rope_parameters"


# ---------------------------------------------------------------- the generic mixin


def _key_names(t: TextConfig) -> tuple[str, str]:
    """The config keys of the base and the partial factor."""
    fam = t.family
    if fam.rope == "gpt_neox":
        return "rotary_emb_base", "rotary_pct"
    if fam is ASSUMED:  # an unknown config: whichever of the names it uses
        theta_key = (
            "rope_theta"
            if t.raw("rope_theta") is not None or not t.has("rotary_emb_base")
            else "rotary_emb_base"
        )
        partial_key = (
            "partial_rotary_factor"
            if t.has("partial_rotary_factor") or not t.has("rotary_pct")
            else "rotary_pct"
        )
        return theta_key, partial_key
    return "rope_theta", "partial_rotary_factor"


def _fill_flat_keys(t: TextConfig, rp: dict[str, Any], layer_types: Sequence[str]) -> None:
    """rope_theta and partial_rotary_factor from the flat keys (or the class's) into each dict."""
    fam = t.family
    theta_key, partial_key = _key_names(t)
    theta = t.raw(theta_key)
    theta_default = theta is None
    if theta_default:
        theta = fam.theta if not isinstance(fam.theta, Mapping) else fam.theta["global"]
    partial = t.raw(partial_key)
    if partial is None:
        if fam.rope == "gpt_neox":
            partial = 0.25
        elif fam.rope == "phi3":
            partial = 1.0
        else:
            partial = fam.partial
        if partial is not None and not _has_key(rp, layer_types, "partial_rotary_factor"):
            t.default(partial_key, partial)
    if theta_default and not _has_key(rp, layer_types, "rope_theta"):
        t.default(theta_key, theta)
    nested = [k for k in rp if k in set(layer_types)]
    for sub in [rp[k] for k in nested] or [rp]:
        if isinstance(sub, dict):
            sub.setdefault("rope_theta", theta)
            if partial is not None:
                sub.setdefault("partial_rotary_factor", partial)


def _generic(
    t: TextConfig,
    rs: dict[str, Any] | None,
    rp: dict[str, Any] | None,
    layer_types: Sequence[str],
    max_pos: int | None,
) -> Standardized:
    """RotaryEmbeddingConfigMixin and its small variants (GPT-NeoX, Phi-3, Qwen2-VL, GPT-J)."""
    fam = t.family
    source = "rope_scaling" if rs else "rope_parameters"
    if rp is None and fam.rope_defaults is not None:
        rp = copy.deepcopy(dict(fam.rope_defaults))
        if "max_position_embeddings" in rp:  # Ministral 3 stores its own length here
            rp["max_position_embeddings"] = max_pos
        t.default("rope_parameters", f"{rp.get('rope_type') or rp.get('type')} (class default)")
    rp = rs or rp or {}
    _fill_flat_keys(t, rp, layer_types)
    if fam.rope == "qwen2_vl" and rp.get("rope_type", rp.get("type")) == "mrope":
        rp["rope_type"] = "default"  # Qwen2VLTextConfig: legacy type 'mrope' is default RoPE
    out, nested = _standardize(t, rp, layer_types, max_pos)
    if fam.rope == "phi3" and out.get("rope_type") in ("su", "yarn"):
        out["rope_type"] = "longrope"
    return out, nested, source


_RULES: dict[RopeRule, Rule] = {
    "generic": _generic,
    "gpt_neox": _generic,
    "phi3": _generic,
    "qwen2_vl": _generic,
    "gptj": _generic,
    "gemma3": _per_layer_type,
    "olmo3": _per_layer_type,
    "gemma4": _gemma4,
}


def rope_parameters(t: TextConfig, layer_types: Sequence[str], max_pos: int | None) -> Standardized:
    """The standardized rope_parameters, its per-layer-type keys, and the key it came from."""
    rs = t.object("rope_scaling")
    rp = t.object("rope_parameters")
    return _RULES[t.family.rope](t, rs, rp, layer_types, max_pos)
