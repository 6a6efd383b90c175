"""What the probe of the installed transformers reads (``posecards.model.probe``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class ProbeError(Exception):
    """transformers cannot build or run this config, or the probe cannot follow it (one line)."""


@dataclass(frozen=True)
class ProbedRope:
    key: str  # "rope" (one set of frequencies) or the layer type
    inv_freq: np.ndarray  # (rotated pairs,) the module's float32 buffer, as float64
    attention_factor: float  # what cos and sin are multiplied by
    parameters: Mapping[str, Any]  # the config's standardized rope_parameters for this key
    head_slots: int  # slots of one q head as the attention kernel gets it
    pairs: tuple[int, ...]  # (head_slots,) partner slot of each slot, -1 where nothing turns
    layout: str  # "half", "interleaved" or "other"
    axes: tuple[str, ...] | None = None  # MRoPE: the axis (t, h, w, ...) of every pair
    head_seen: bool = (
        True  # the head size is the kernel's (False: attention in the layer's own code)
    )


@dataclass(frozen=True)
class ProbedLayer:
    index: int
    attention: bool  # an attention kernel was called in this layer
    rope: str | None  # key of the frequencies it rotates q and k with; None: no rotation
    mask: str | None  # "full", "sliding", "chunked", or None (no mask function tagged it)
    window: int | None
    scaling: float | None  # the softmax scale the attention kernel was handed
    head_slots: int | None = None  # the last dimension of the q the kernel was handed
    prescale: str | None = None  # what q is multiplied by before the kernel, in the module's code


@dataclass(frozen=True)
class ProbedTable:
    """A learned position table added to the input: position p reads row p + offset."""

    name: str  # the module's name in the text model ("embeddings.position_embeddings")
    rows: int
    width: int
    offset: int  # measured: the row transformers reads for position 0
    module: str  # the table's class ("Embedding", "BartLearnedPositionalEmbedding")
    owner: str  # the module whose forward adds it ("embeddings", "encoder", "" for the model)


@dataclass(frozen=True)
class ProbedBias:
    """A T5-style relative position bias: one learned value per (bucket, head), added to q·k."""

    name: str  # the attention module holding the table ("encoder.block.0.layer.0.SelfAttention")
    num_buckets: int
    max_distance: int
    bidirectional: bool  # False in a decoder: keys after the query share bucket 0
    heads: int
    rows: int  # the table's rows (= num_buckets)


@dataclass(frozen=True)
class ProbeReading:
    transformers_version: str
    model_type: str  # the text model's
    text_path: tuple[str, ...]  # the keys leading to the text config ("text_config", ...)
    model_class: str
    layers: tuple[ProbedLayer, ...]
    rope: Mapping[str, ProbedRope]
    learned: tuple[str, ...] = ()  # position tables added to the input (module name: rows x width)
    relative: tuple[str, ...] = ()  # relative-position modules inside attention (bias tables, ...)
    absolute: tuple[str, ...] = ()  # other names outside the layers that speak of position
    config: Any = field(repr=False, default=None)  # the text config object
    tables: tuple[ProbedTable, ...] = ()  # learned position tables, measured (no RoPE only)
    biases: tuple[ProbedBias, ...] = ()  # T5-style relative biases, measured (no RoPE only)
