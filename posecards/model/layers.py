"""A model's positions layer by layer, read from config.json as transformers 5.23.0 reads it.

``read_layers(config)`` finds the text model (``text_config`` of a multimodal config, or the flat
keys of a Qwen2-VL one), fills every missing key with its config class's default
(``posecards/model/families.py``), standardizes ``rope_parameters`` as the class does (4.x
``rope_scaling``/``rope_theta``/``rope_local_base_freq``/``rotary_pct``/``rotary_emb_base``/
``partial_rotary_factor``; 5.x flat, per layer type, or mixed), fills ``layer_types`` as the class
does, and returns for every layer its attention kind (full, sliding with its window, chunked,
linear), whether it rotates q and k and with which RoPE, plus the softmax-scale rule, the query
temperature and MRoPE. Nothing here computes frequencies (``content/inspect.py`` does, with
``posecards.encodings``).

Which keys were read, which defaults were filled and what was assumed (an unknown model_type) are
recorded, so the card can name them. A config transformers would reject or crash on is a
``CheckpointError`` with one line.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from posecards.encodings.mla import mla_softmax_scale
from posecards.encodings.rope_scaling import CONFIG_ROPE_TYPES, ROPE_REGISTRY, SCALING_KEYS
from posecards.model.checkpoint import CheckpointError
from posecards.model.families import ASSUMED, COMPOSITE, FAMILIES, Family

# "none": no self-attention kernel in the layer (state-space, convolution or cross-attention)
ATTENTION_KINDS = ("full", "sliding", "chunked", "linear", "none")
# transformers layer_types value -> attention kind on the card / in the JSON
_KIND = {
    "full_attention": "full",
    "sliding_attention": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
}
_LEGACY_LAYER_TYPES = {"attention": "full_attention", "mamba": "linear_attention"}
# keys of a rope_parameters dict that are not frequency scaling but are read elsewhere
_OTHER_ROPE_KEYS = ("mrope_section", "mrope_interleaved", "llama_4_scaling_beta")
_FREQ_KEYS = (*SCALING_KEYS, "mrope_section")
# aliases transformers' attribute_map resolves (GPT-J, GPT-2-style names)
_ALIASES: dict[str, tuple[str, ...]] = {
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "num_attention_heads": ("num_attention_heads", "n_head", "n_heads"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer", "n_layers", "num_layers"),
    "max_position_embeddings": ("max_position_embeddings", "n_positions", "max_seq_len"),
}
MAX_LAYERS = 4096
MAX_HEAD_DIM = 65536


@dataclass(frozen=True)
class RopeKind:
    """One set of RoPE frequencies (one rotary module, or one layer type of it)."""

    key: str  # "rope" (one module for every layer) or the layer type ("full_attention", ...)
    rope_type: str
    theta: float
    head_dim: int  # slots the rotary module sees (MLA: qk_rope_head_dim)
    parameters: Mapping[str, Any]  # the standardized dict, frequency keys only
    partial_in_default: bool
    layout: str  # "half" or "interleaved"
    max_position_embeddings: int
    head_slots: int  # slots of one q/k head (MLA: qk_nope_head_dim + qk_rope_head_dim)
    first_slot: int = 0  # MLA: the rotated part starts after the qk_nope_head_dim slots
    mrope_section: tuple[int, int, int] | None = None
    mrope_layout: str | None = None  # "chunked" or "interleaved"
    ignored_keys: tuple[str, ...] = ()
    axes: tuple[str, ...] | None = (
        None  # MRoPE axis of every pair, as transformers' module turns it
    )


@dataclass(frozen=True)
class Layer:
    index: int
    attention: str  # "full", "sliding", "chunked", "linear" or "none" (no self-attention)
    window: int | None  # sliding window or chunk size
    position: str  # "rope" or "none"
    rope: str | None  # key into ModelLayers.rope


@dataclass(frozen=True)
class SoftmaxScale:
    """What transformers multiplies q . k by in the first attention layer (rule + its inputs)."""

    rule: str  # "head_dim", "query_pre_attn_scalar", "one", "mla", "attention_multiplier"
    head_dim: int
    value_key: float | None = None  # query_pre_attn_scalar / attention_multiplier
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    parameters: Mapping[str, Any] = field(default_factory=dict)  # MLA: rope_parameters


def softmax_value(s: SoftmaxScale) -> float:
    """What transformers multiplies q . k by under one rule (ValueError: a bad MLA dict)."""
    if s.rule == "head_dim":
        return float(s.head_dim**-0.5)
    if s.rule == "query_pre_attn_scalar":
        return float(s.value_key**-0.5)  # type: ignore[operator]
    if s.rule in ("attention_multiplier", "measured"):
        return float(s.value_key)  # type: ignore[arg-type]
    if s.rule == "one":
        return 1.0
    return mla_softmax_scale(s.qk_nope_head_dim, s.qk_rope_head_dim, s.parameters)


@dataclass(frozen=True)
class QueryTemperature:
    """tau(p) = 1 + scale ln(1 + floor((p + shift) / floor_len)) on the queries."""

    kind: str  # "llama4" or "ministral3"
    scale: float
    floor_len: float
    shift: float
    layers: tuple[int, ...]  # the layers that apply it
    keys: tuple[str, ...]  # the config keys it came from


@dataclass(frozen=True)
class Note:
    """Where transformers only warns, or a key does something other than its name says: a key
    for the card's label (``cards/inspect-layers.toml``), its values, and the English line."""

    key: str  # "llama3_step", "tuning_not_bool", "mrope_interleaved_unread"
    values: Mapping[str, Any]
    text: str


@dataclass(frozen=True)
class ModelLayers:
    model_type: str  # the text model's
    family: str  # the families.py row used ("unknown" if none)
    modeling: str  # the transformers module it was read from
    num_layers: int
    layers: tuple[Layer, ...]
    rope: Mapping[str, RopeKind]
    softmax: SoftmaxScale
    temperature: QueryTemperature | None
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...]  # "key = value" filled from the config class
    assumed: tuple[str, ...] = ()  # what an unknown model_type was assumed to do
    notes: tuple[Note, ...] = ()  # where transformers only warns (and what it computes)
    ignored_keys: tuple[str, ...] = ()
    text_prefix: str = ""  # "text_config." when the text model is nested
    max_position_embeddings: int | None = None
    original_max_position_embeddings: int | None = None  # top-level key (Phi-3 style)
    transformers_version: str | None = None  # the transformers the reading came from (None: table)

    @property
    def rope_layers(self) -> tuple[int, ...]:
        return tuple(la.index for la in self.layers if la.position == "rope")


def _finite(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class _Text:
    """The text model's config: reads with the class defaults, recording keys and defaults."""

    def __init__(self, data: Mapping[str, Any], prefix: str, family: Family) -> None:
        self.data = data
        self.prefix = prefix
        self.family = family
        self.used: list[str] = []
        self.defaults: list[str] = []

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        """config.json's value (None if absent), recorded as read."""
        if key in self.data:
            self.note(key)
            return self.data[key]
        return None

    def note(self, key: str) -> None:
        dotted = self.prefix + key
        if dotted not in self.used:
            self.used.append(dotted)

    def get(self, key: str) -> Any:
        """config.json's value if the key is present (even null), else the class default."""
        for k in _ALIASES.get(key, (key,)):
            if k in self.data:
                self.note(k)
                return self.data[k]
        for k in _ALIASES.get(key, (key,)):
            if k in self.family.defaults:
                value = self.family.defaults[k]
                if value is not None:
                    self.default(k, value)
                return value
        return None

    def default(self, key: str, value: Any) -> None:
        shown = value
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            shown = int(value)  # 10000.0 -> 10000, as config.json would write it
        text = f"{key} = {shown}"
        if text not in self.defaults:
            self.defaults.append(text)

    def integer(self, key: str, low: int = 1, high: int = 1 << 31, value: Any = None) -> int:
        v = self.get(key) if value is None else value
        if not _finite(v) or v != int(v) or not low <= int(v) <= high:
            raise CheckpointError(
                f"config.json: {self.prefix}{key} must be an integer from {low} to {high:,}, "
                f"got {v!r}"
            )
        return int(v)

    def optional_int(self, key: str, low: int = 1, high: int = 1 << 31) -> int | None:
        v = self.get(key)
        return None if v is None else self.integer(key, low, high, v)

    def real(self, key: str, value: Any = None, low: float = 0.0) -> float:
        v = self.get(key) if value is None else value
        if not _finite(v) or not float(v) > low:
            raise CheckpointError(
                f"config.json: {self.prefix}{key} must be a finite number above {low:g}, got {v!r}"
            )
        return float(v)


def _text_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], str, str]:
    """(the text model's dict, key prefix, its model_type)."""
    outer = config.get("model_type")
    outer = outer if isinstance(outer, str) else ""
    text = config.get("text_config")
    if text is not None:
        if not isinstance(text, Mapping):
            raise CheckpointError(f"config.json: text_config must be an object, got {text!r}")
        inner = text.get("model_type")
        if not isinstance(inner, str) or not inner:
            inner = COMPOSITE.get(outer, outer)
        return dict(text), "text_config.", inner
    # Qwen2-VL and Qwen2.5-VL hub configs are flat: the text keys sit at the top level
    return dict(config), "", COMPOSITE.get(outer, outer)


def has_rope_keys(config: Mapping[str, Any]) -> bool:
    """Whether a config names RoPE (for an unknown model_type), its text model's keys included."""
    text, _, model_type = _text_config(config)
    keys = (
        "rope_parameters",
        "rope_scaling",
        "rope_theta",
        "rotary_emb_base",
        "rotary_pct",
        "rotary_dim",
        "partial_rotary_factor",
        "rope_local_base_freq",
    )
    return model_type in FAMILIES or any(text.get(k) is not None for k in keys)


# ---------------------------------------------------------------- layer types


def _layer_types(t: _Text, n: int) -> list[str]:
    """config.layer_types as the config class fills it."""
    fam = t.family
    if fam.layer_types == "none" and fam is not ASSUMED:
        return []  # the config class has no layer_types field: config.json's is not read
    given = t.raw("layer_types")
    if given is not None:
        if not isinstance(given, list) or not all(isinstance(x, str) for x in given):
            raise CheckpointError(f"config.json: {t.prefix}layer_types must be a list of strings")
        types = [str(_LEGACY_LAYER_TYPES.get(x, x)) for x in given]
        if len(types) != n:
            raise CheckpointError(
                f"config.json: {t.prefix}layer_types has {len(types)} entries for "
                f"{n} layers (num_hidden_layers)"
            )
        if fam.layer_types == "gemma4" and types and types[-1] != "full_attention":
            types[-1] = "full_attention"  # Gemma4TextConfig forces the last layer to full
        return types
    rule = fam.layer_types
    if rule == "none":
        return []
    if rule.startswith("every_"):  # sliding except every P-th layer (Gemma 2, gpt-oss, OLMo 3)
        p = int(rule.removeprefix("every_"))
        return ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(n)]
    if rule in ("gemma3", "cohere2"):  # kwargs sliding_window_pattern, default 6 resp. 4
        p = t.get("sliding_window_pattern")
        if p is None:
            p = 6 if rule == "gemma3" else 4
            t.default("sliding_window_pattern", p)
        p = t.integer("sliding_window_pattern", value=p)
        return ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(n)]
    if rule == "gemma4":
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]
        types[-1] = "full_attention"
        return types
    if rule == "max_window_layers":  # Qwen2: sliding from layer max_window_layers on
        window = _window(t)
        first = t.integer("max_window_layers", low=0)
        return [
            "sliding_attention" if window is not None and i >= first else "full_attention"
            for i in range(n)
        ]
    if rule == "qwen2_moe":  # Qwen2-MoE: every other layer below max_window_layers slides
        window = _window(t)
        last = t.integer("max_window_layers", low=0)
        return [
            "sliding_attention"
            if (i + 1) % 2 and i < last and window is not None
            else "full_attention"
            for i in range(n)
        ]
    if rule == "qwen3_next":
        p = t.get("full_attention_interval")
        if p is None:
            p = 4
            t.default("full_attention_interval", 4)
        p = t.integer("full_attention_interval", value=p)
        return ["linear_attention" if (i + 1) % p else "full_attention" for i in range(n)]
    if rule == "llama4":
        return ["chunked_attention" if r else "full_attention" for r in _no_rope_layers(t, n)]
    if rule == "smollm3":  # sliding on NoPE layers, only with use_sliding_window
        window = _window(t) if t.get("use_sliding_window") else None
        return [
            "sliding_attention" if window is not None and not r else "full_attention"
            for r in _no_rope_layers(t, n)
        ]
    raise AssertionError(f"internal error: unknown layer_types rule {rule!r}")


def _window(t: _Text) -> int | None:
    """The sliding window the attention uses (Qwen2-style configs gate it by use_sliding_window)."""
    window = t.get("sliding_window")
    if t.family.window_gate and not t.get("use_sliding_window"):
        return None
    if window is None:
        return None
    return t.integer("sliding_window", value=window)


def _no_rope_layers(t: _Text, n: int) -> list[int]:
    """no_rope_layers[i] == 1: layer i rotates (Llama 4, SmolLM3: the name is the inverse)."""
    given = t.raw("no_rope_layers")
    # Llama 4 replaces an empty list by the default; SmolLM3 only a missing one
    use_default = not given if t.family.model_type == "llama4_text" else given is None
    if use_default:
        interval = t.integer("no_rope_layer_interval")
        return [int((i + 1) % interval != 0) for i in range(n)]
    if not isinstance(given, list) or len(given) != n:
        raise CheckpointError(
            f"config.json: {t.prefix}no_rope_layers must be a list of {n} entries (0 or 1)"
        )
    return [int(bool(x)) for x in given]


# ---------------------------------------------------------------- rope_parameters


def _dict(t: _Text, key: str) -> dict[str, Any] | None:
    v = t.raw(key)
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise CheckpointError(f"config.json: {t.prefix}{key} must be an object, got {v!r}")
    return copy.deepcopy(dict(v))


def _original_length(rope_type: Any) -> bool:
    """standardize_rope_params fills original_max_position_embeddings for this type."""
    declared = ROPE_REGISTRY.get(rope_type) if isinstance(rope_type, str) else None
    return declared is not None and declared.original_length


def _standardize(
    t: _Text, rp: dict[str, Any], layer_types: Sequence[str], max_pos: int | None
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


def _rope_parameters(
    t: _Text, layer_types: Sequence[str], max_pos: int | None
) -> tuple[dict[str, Any], list[str], str]:
    """The standardized rope_parameters, its per-layer-type keys, and the key it came from."""
    fam = t.family
    rs = _dict(t, "rope_scaling")
    rp = _dict(t, "rope_parameters")
    source = "rope_scaling" if rs else "rope_parameters"
    if fam.rope in ("gemma3", "olmo3"):
        theta = fam.theta
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
        glob = theta["global"] if isinstance(theta, Mapping) else theta
        local = theta["local"] if isinstance(theta, Mapping) else theta
        full_theta = t.raw("rope_theta")
        if full_theta is None:
            full_theta = glob
            t.default("rope_theta", glob)
        rp["full_attention"] = dict(rp["full_attention"])
        rp["full_attention"].setdefault("rope_theta", full_theta)
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
    if fam.rope == "gemma4":
        if rs is not None:
            raise CheckpointError(
                "config.json: Gemma 4 reads rope_parameters (per layer type), not rope_scaling"
            )
        if rp is None:
            rp = copy.deepcopy(dict(fam.rope_defaults or {}))
            t.default("rope_parameters", "sliding θ 10,000, full proportional 0.25 θ 1,000,000")
        out, nested = _standardize(t, rp, layer_types, max_pos)
        for k in nested:
            if out[k] is not None and out[k].get("rope_theta") is None:
                raise CheckpointError(f"config.json: rope_parameters.{k} has no rope_theta")
        return out, nested, "rope_parameters"
    # the generic mixin and its small variants
    if rp is None and fam.rope_defaults is not None:
        rp = copy.deepcopy(dict(fam.rope_defaults))
        if "max_position_embeddings" in rp:  # Ministral 3 stores its own length here
            rp["max_position_embeddings"] = max_pos
        t.default("rope_parameters", f"{rp.get('rope_type') or rp.get('type')} (class default)")
    rp = rs or rp or {}
    if fam.rope == "gpt_neox":
        theta_key, partial_key = "rotary_emb_base", "rotary_pct"
    elif fam is ASSUMED:  # an unknown config: whichever of the names it uses
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
    else:
        theta_key, partial_key = "rope_theta", "partial_rotary_factor"
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
    if fam.rope == "qwen2_vl" and rp.get("rope_type", rp.get("type")) == "mrope":
        rp["rope_type"] = "default"  # Qwen2VLTextConfig: legacy type 'mrope' is default RoPE
    out, nested = _standardize(t, rp, layer_types, max_pos)
    if fam.rope == "phi3" and out.get("rope_type") in ("su", "yarn"):
        out["rope_type"] = "longrope"
    return out, nested, source


def _has_key(rp: Mapping[str, Any], layer_types: Sequence[str], key: str) -> bool:
    subs = [v for k, v in rp.items() if k in set(layer_types) and isinstance(v, Mapping)]
    return any(key in s for s in subs) if subs else key in rp


# ---------------------------------------------------------------- the reading


def _layout(t: _Text) -> str:
    fam = t.family
    if fam.layout == "rope_interleave":
        return "interleaved" if t.get("rope_interleave") else "half"
    if fam is ASSUMED and t.raw("rope_interleave") is True:
        return "interleaved"
    return fam.layout


def _head_dim(t: _Text, hidden: int | None, heads: int | None) -> int:
    value = t.get("head_dim") if t.family.head_dim in ("field", "gemma4") else None
    if value:
        return t.integer("head_dim", high=MAX_HEAD_DIM, value=value)
    if hidden is None or heads is None:
        raise CheckpointError(
            "config.json: RoPE needs head_dim or hidden_size and num_attention_heads"
        )
    d = hidden // heads
    if not 2 <= d <= MAX_HEAD_DIM:
        raise CheckpointError(
            f"config.json: hidden_size / num_attention_heads = {d} is not a head size"
        )
    return d


def _raw_at(t: _Text, path: str) -> Mapping[str, Any]:
    """The dict config.json holds at a dotted path of the text config (empty if none)."""
    node: Any = t.data
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _split_params(
    t: _Text, params: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The frequency keys of one rope_parameters dict, and the keys no rotary module reads;
    the keys config.json itself holds are recorded as read."""
    freq = {k: v for k, v in params.items() if k in _FREQ_KEYS and k != "type"}
    if "rope_type" not in freq and "type" in params:
        freq["rope_type"] = params["type"]
    ignored = tuple(
        sorted(str(k) for k in params if k not in _FREQ_KEYS and k not in _OTHER_ROPE_KEYS)
    )
    paths = [where]
    if where.endswith(".full_attention") and t.family.rope in ("gemma3", "olmo3"):
        paths.append("rope_scaling")  # merged into the full-attention parameters
    for path in paths:
        for k in _raw_at(t, path):
            if k not in ignored:
                t.note(f"{path}.{k}")
    return freq, ignored


def _rope_type(params: Mapping[str, Any], where: str) -> str:
    rope_type = params.get("rope_type")
    if not isinstance(rope_type, str) or rope_type not in CONFIG_ROPE_TYPES:
        raise CheckpointError(
            f"config.json: {where}: unknown rope_type {rope_type!r}; transformers 5.23.0 knows "
            f"{', '.join(CONFIG_ROPE_TYPES)}"
        )
    return rope_type


def _theta(params: Mapping[str, Any], where: str) -> float:
    theta = params.get("rope_theta")
    if not _finite(theta) or theta <= 1.0:
        raise CheckpointError(
            f"config.json: {where}.rope_theta must be a number above 1, got {theta!r}"
        )
    return float(theta)


def read_layers(config: Mapping[str, Any]) -> ModelLayers:
    """Every layer of the text model of ``config`` (a config.json dict), as transformers runs it."""
    text, prefix, model_type = _text_config(config)
    fam = FAMILIES.get(model_type, ASSUMED)
    t = _Text(text, prefix, fam)
    if prefix:
        t.used.append("text_config")
    if "model_type" in text:
        t.note("model_type")
    assumed: list[str] = []
    notes: list[Note] = []
    if fam is ASSUMED:
        assumed.append(f"model_type {model_type or '(none)'!r} is not in posecards' family table")

    n_raw = t.get("num_hidden_layers")
    n = None if n_raw is None else t.integer("num_hidden_layers", high=MAX_LAYERS, value=n_raw)
    if n is None:
        n = 1
        assumed.append("one layer (num_hidden_layers missing)")
    hidden = t.optional_int("hidden_size", high=1 << 24)
    heads = t.optional_int("num_attention_heads", high=4096)
    max_pos = t.optional_int("max_position_embeddings")
    layer_types = _layer_types(t, n)

    # ---- head sizes and rope_parameters
    rp, nested, source = _rope_parameters(t, layer_types, max_pos)
    layout = _layout(t)
    mla = fam.head_dim == "mla"
    if mla:
        rope_dim = t.integer("qk_rope_head_dim", high=MAX_HEAD_DIM)
        nope_dim = t.integer("qk_nope_head_dim", low=0, high=MAX_HEAD_DIM)
        head_dim = rope_dim
    else:
        head_dim = _head_dim(t, hidden, heads)
        rope_dim, nope_dim = head_dim, 0
    if nested:  # mixed: flat keys beside the per-layer-type dicts are not read
        for k in rp:
            if k not in nested and k not in ("rope_theta", "partial_rotary_factor", "rope_type"):
                t.note(f"{source}.{k}")
    per_type = fam.rotary == "per_layer_type"
    if nested and not per_type:
        raise CheckpointError(
            f"config.json: {source} has one entry per layer type ({', '.join(nested)}), but "
            f"transformers' {model_type} has one rotary module for every layer"
        )
    if per_type and not nested:
        raise CheckpointError(
            f"config.json: {model_type} reads {source} per layer type; got one flat dict"
        )

    kinds: dict[str, RopeKind] = {}
    ignored_all: list[str] = []
    if fam.layer_types == "none" and fam is not ASSUMED and "layer_types" in text:
        ignored_all.append("layer_types")  # set as a plain attribute, read by no module

    def kind(
        key: str, params: Mapping[str, Any], where: str, kind_head_dim: int, slots: int = 0
    ) -> RopeKind:
        freq, ignored = _split_params(t, params, where)
        rope_type = _rope_type(freq, where)
        theta = _theta(freq, where)
        mrope_section: tuple[int, int, int] | None = None
        if fam.mrope is not None:
            sec = params.get("mrope_section")
            if sec is None:
                sec = list(fam.mrope_default or ())
                t.default("mrope_section", sec)
            if (
                not isinstance(sec, list | tuple)
                or len(sec) != 3
                or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sec)
            ):
                raise CheckpointError(
                    f"config.json: {where}.mrope_section must be three integers (t, h, w), "
                    f"got {sec!r}"
                )
            mrope_section = (int(sec[0]), int(sec[1]), int(sec[2]))
            if sum(mrope_section) != kind_head_dim // 2:
                raise CheckpointError(
                    f"config.json: {where}.mrope_section {list(mrope_section)} sums to "
                    f"{sum(mrope_section)}, not head_dim/2 = {kind_head_dim // 2}"
                )
            if "mrope_interleaved" in params:
                notes.append(
                    Note(
                        "mrope_interleaved_unread",
                        {"layout": fam.mrope},
                        f"{where}.mrope_interleaved is not read by transformers: its "
                        f"{model_type} module is always {fam.mrope}",
                    )
                )
        else:
            extra = [k for k in ("mrope_section", "mrope_interleaved") if k in params]
            ignored = tuple(sorted({*ignored, *extra}))
        if fam.temperature != "ministral3" and "llama_4_scaling_beta" in params:
            ignored = tuple(sorted({*ignored, "llama_4_scaling_beta"}))
        freq.pop("mrope_section", None)
        if rope_type == "llama3":
            lo, hi = freq.get("low_freq_factor"), freq.get("high_freq_factor")
            if _finite(lo) and _finite(hi) and hi <= lo:
                length = freq.get("original_max_position_embeddings")
                notes.append(
                    Note(
                        "llama3_step",
                        {
                            "key": key,
                            "low": float(lo),
                            "high": float(hi),
                            "at": float(length) / float(lo) if _finite(length) else 0.0,
                            "factor": float(freq.get("factor") or 1.0),
                        },
                        f"{where}: high_freq_factor {hi:g} <= low_freq_factor {lo:g}: "
                        "transformers warns and scales as a step (wavelengths beyond "
                        f"original_max_position_embeddings / {lo:g} divided by factor, the "
                        "others kept); so does this card",
                    )
                )
        ignored_all.extend(f"{where}.{k}" for k in ignored)
        declared = ROPE_REGISTRY[rope_type]
        if fam.head_dim_none and not text.get("head_dim") and declared.head_dim_without_fallback:
            raise CheckpointError(
                f"config.json: transformers 5.23.0 cannot build this {model_type} model: its "
                f"config class leaves head_dim None and the {rope_type} RoPE reads it without a "
                "fallback (add head_dim to config.json)"
            )
        if max_pos is None and declared.max_position:
            raise CheckpointError(
                f"config.json: rope_type {rope_type!r} needs max_position_embeddings"
            )
        return RopeKind(
            key=key,
            rope_type=rope_type,
            theta=theta,
            head_dim=kind_head_dim,
            parameters=freq,
            partial_in_default=fam.partial_in_default,
            layout=layout,
            max_position_embeddings=max_pos or 0,
            head_slots=slots or (nope_dim + kind_head_dim if mla else kind_head_dim),
            first_slot=nope_dim,
            mrope_section=mrope_section,
            mrope_layout=fam.mrope,
            ignored_keys=ignored,
        )

    if per_type:
        head_dims = _gemma4_head_dims(t, layer_types, head_dim) if fam.head_dim == "gemma4" else {}
        for lt in sorted(set(layer_types)):
            if lt not in rp:
                raise CheckpointError(
                    f"config.json: rope_parameters has no entry for layer type {lt!r}"
                )
            if rp[lt] is None:
                raise CheckpointError(
                    f"config.json: rope_parameters.{lt} is null; transformers' {model_type} "
                    "rotary module needs frequencies for every layer type"
                )
            kinds[lt] = kind(lt, rp[lt], f"{source}.{lt}", head_dims.get(lt, head_dim))
    else:
        # GPT-J (and an unknown config naming it): rotary_dim slots rotate, as a head of its own
        rotary = None
        if fam.head_dim == "rotary_dim":
            rotary = t.get("rotary_dim")
        elif fam is ASSUMED:
            rotary = t.raw("rotary_dim")
        if rotary:
            dim = t.integer("rotary_dim", high=head_dim, value=rotary)
            kinds["rope"] = kind("rope", rp, source, dim, slots=head_dim)
        else:
            kinds["rope"] = kind("rope", rp, source, head_dim)

    # ---- layers
    window = _window(t)
    chunk = t.get("attention_chunk_size") if "chunked_attention" in layer_types else None
    rope_flags = _no_rope_layers(t, n) if fam.rope_layers == "no_rope_layers" else [1] * n
    if fam.window == "all" and not layer_types:
        layer_types = ["sliding_attention" if window is not None else "full_attention"] * n
    if not layer_types:
        layer_types = ["full_attention"] * n
    layers: list[Layer] = []
    for i, lt in enumerate(layer_types):
        kind_name = _KIND.get(lt)
        if kind_name is None:
            raise CheckpointError(
                f"config.json: layer type {lt!r} of layer {i} is not one posecards reads "
                f"({', '.join(_KIND)})"
            )
        win: int | None = None
        if kind_name == "sliding":
            if window is None:
                kind_name = "full"  # the attention module gets sliding_window=None
            else:
                win = window
        if kind_name == "chunked":
            if chunk is None:
                raise CheckpointError(
                    "config.json: chunked_attention layers need attention_chunk_size "
                    "(transformers raises)"
                )
            win = t.integer("attention_chunk_size", value=chunk)
        rotates = kind_name != "linear" and bool(rope_flags[i])
        if fam.rope_layers == "sliding":  # Cohere 2: RoPE only where sliding_window is set
            rotates = rotates and win is not None
        key = (lt if per_type else "rope") if rotates else None
        layers.append(Layer(i, kind_name, win, "rope" if rotates else "none", key))
    used_kinds = {la.rope for la in layers if la.rope is not None}
    kinds = {k: v for k, v in kinds.items() if k in used_kinds}  # empty: no layer rotates

    # ---- softmax scale (first attention layer) and query temperature
    first = next((la for la in layers if la.attention != "linear"), layers[0])
    # the whole head: GPT-J and CodeGen divide by sqrt(head_dim), not sqrt(rotary_dim)
    first_head = kinds[first.rope].head_slots if first.rope in kinds else head_dim
    if fam.head_dim == "gemma4":
        first_head = _gemma4_head_dims(t, layer_types, head_dim).get(
            layer_types[first.index], head_dim
        )
    softmax = _softmax(t, fam, first_head, nope_dim, rope_dim, rp)
    temperature = _temperature(t, fam, layers, rp, notes)
    if fam is ASSUMED:
        assumed += [
            f"{layout} pair layout",
            "RoPE on every layer",
            "softmax scale 1/sqrt(head_dim)",
        ]
    return ModelLayers(
        model_type=model_type,
        family=fam.model_type,
        modeling=fam.modeling if fam is not ASSUMED else "",
        num_layers=n,
        layers=tuple(layers),
        rope=kinds,
        softmax=softmax,
        temperature=temperature,
        config_keys=tuple(t.used),
        defaults=tuple(t.defaults),
        assumed=tuple(assumed),
        notes=tuple(notes),
        ignored_keys=tuple(dict.fromkeys(ignored_all)),
        text_prefix=prefix,
        max_position_embeddings=max_pos,
        original_max_position_embeddings=(
            t.optional_int("original_max_position_embeddings")
            if t.has("original_max_position_embeddings")
            or "original_max_position_embeddings" in fam.defaults
            else None
        ),
    )


def _gemma4_head_dims(t: _Text, layer_types: Sequence[str], head_dim: int) -> dict[str, int]:
    """Gemma 4: full-attention layers use global_head_dim (per_layer_config overrides)."""
    per_layer = t.raw("per_layer_config")
    if per_layer is not None:
        if not isinstance(per_layer, Mapping):
            raise CheckpointError("config.json: per_layer_config must be an object")
        out: dict[str, int] = {}
        for lt in set(layer_types):
            dims = set()
            for i, x in enumerate(layer_types):
                if x == lt:
                    # transformers' save_pretrained writes zero-padded keys ("05")
                    over: Any = (
                        next(
                            (v for k, v in per_layer.items() if str(k).isdigit() and int(k) == i),
                            {},
                        )
                        or {}
                    )
                    dims.add(
                        over.get("head_dim", head_dim) if isinstance(over, Mapping) else head_dim
                    )
            if len(dims) != 1:
                raise CheckpointError(
                    f"config.json: per_layer_config gives {lt} layers different head_dims"
                )
            out[lt] = t.integer("per_layer_config.head_dim", value=dims.pop(), high=MAX_HEAD_DIM)
        return out
    glob = t.raw("global_head_dim")
    if glob is None:
        glob = 512
        t.default("global_head_dim", 512)
    return {
        "full_attention": t.integer("global_head_dim", value=glob, high=MAX_HEAD_DIM),
        "sliding_attention": head_dim,
    }


def _softmax(
    t: _Text, fam: Family, head_dim: int, nope: int, rope: int, rp: Mapping[str, Any]
) -> SoftmaxScale:
    if fam.softmax == "query_pre_attn_scalar":
        return SoftmaxScale("query_pre_attn_scalar", head_dim, t.real("query_pre_attn_scalar"))
    if fam.softmax == "attention_multiplier":
        return SoftmaxScale("attention_multiplier", head_dim, t.real("attention_multiplier"))
    if fam.softmax == "one":
        return SoftmaxScale("one", head_dim)
    if fam.softmax == "mla":
        params = {k: rp.get(k) for k in ("rope_type", "factor", "mscale_all_dim") if k in rp}
        if params.get("rope_type", "default") != "default" and rp.get("mscale_all_dim"):
            if not _finite(rp.get("factor")):
                raise CheckpointError(
                    "config.json: MLA with YaRN mscale_all_dim needs rope_scaling.factor "
                    "(transformers reads it for the softmax scale)"
                )
        return SoftmaxScale("mla", nope + rope, None, nope, rope, params)
    return SoftmaxScale("head_dim", head_dim)


def _temperature(
    t: _Text, fam: Family, layers: Sequence[Layer], rp: Mapping[str, Any], notes: list[Note]
) -> QueryTemperature | None:
    if fam.temperature == "llama4":
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
        if not _finite(scale) or not _finite(floor) or floor <= 0:
            raise CheckpointError("config.json: attn_scale and floor_scale must be numbers")
        keys = tuple(t.prefix + k for k in ("attn_temperature_tuning", "attn_scale", "floor_scale"))
        return QueryTemperature("llama4", float(scale), float(floor), 1.0, nope, keys)
    if fam.temperature == "ministral3":
        beta = rp.get("llama_4_scaling_beta")
        length = rp.get("original_max_position_embeddings")
        if beta is None:
            raise CheckpointError(
                "config.json: ministral3 rope_parameters has no llama_4_scaling_beta "
                "(transformers multiplies the queries by 1 + beta ln(...) and fails without it)"
            )
        if not _finite(beta) or not _finite(length) or length <= 0:
            raise CheckpointError(
                "config.json: llama_4_scaling_beta and original_max_position_embeddings must be "
                "numbers"
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
    return None
