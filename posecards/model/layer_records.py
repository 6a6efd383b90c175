"""What a layer-by-layer reading holds (``read_layers`` and ``probed.read_model`` make them):
each layer's attention and RoPE, each set of RoPE frequencies' inputs, the softmax-scale rule,
the query temperature and the notes where transformers only warns. Records only: no reading."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from posecards.encodings.mla import mla_softmax_scale


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
