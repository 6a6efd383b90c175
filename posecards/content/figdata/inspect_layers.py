"""The data of each figure of the layer-by-layer inspection card, as content/inspect_layers.py
computes it and figures/inspect_layers.py draws it (``cards/inspect-layers.toml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


# Typed: a renamed field fails mypy; field by field, in this order, what an export shows.
@dataclass(frozen=True, eq=False)
class LayerStrip:
    """i-layer-strip: every layer's attention kind and RoPE."""

    attention: F64  # (n,) index into layer_types.ATTENTION_KINDS
    rope: F64  # (n,) index into kinds, -1: no RoPE
    kinds: list[str]  # the RoPE kinds' keys ("rope" or a layer type)
    thetas: list[float]  # (kinds,)
    windows: dict[str, float]  # attention kind -> its window or chunk


@dataclass(frozen=True, eq=False)
class Llama3Step:
    """A llama3 RoPE whose high_freq_factor <= low_freq_factor: a step, not a band."""

    key: str  # the RoPE kind
    low: float
    high: float
    at: float  # the wavelength of the step
    factor: float


@dataclass(frozen=True, eq=False)
class KindSpectrum:
    """One RoPE kind's turning pairs."""

    key: str
    theta: float
    rope_type: str
    factor: float
    head_slots: float
    pair: F64  # (t,) frequency index of the turning pairs
    wavelength: F64  # (t,) positions per turn
    still_from: float  # the first pair that never turns
    pairs: float  # pairs of a whole q/k head
    zero: bool  # still pairs turn at frequency 0 (proportional), not absent
    axes: F64 | None  # (t,) MRoPE axis (0 t, 1 h, 2 w) of each turning pair


@dataclass(frozen=True, eq=False)
class Spectrum:
    """i-spectrum: the wavelength of every pair per RoPE kind."""

    kinds: list[KindSpectrum]
    context: float
    notes: list[Llama3Step]


@dataclass(frozen=True, eq=False)
class MropeUnread:
    """mrope_interleaved is in config.json, but the module's layout is fixed."""

    layout: str  # "chunked" or "interleaved": what the module does


@dataclass(frozen=True, eq=False)
class KindSlots:
    """One RoPE kind's head: what drives each slot."""

    key: str
    theta: float
    rope_type: str
    factor: float
    code: F64  # (head_slots,) pair index or MRoPE axis; -1 not rotated, -2 frequency 0
    layout: str
    mrope: bool
    first: float  # the first rotated slot


@dataclass(frozen=True, eq=False)
class HeadSlots:
    """i-head-slots: which slots of a head rotate, per RoPE kind."""

    kinds: list[KindSlots]
    notes: list[MropeUnread]


@dataclass(frozen=True, eq=False)
class TuningNotBool:
    """Llama 4's attn_temperature_tuning given as something other than true/false."""

    value: Any


@dataclass(frozen=True, eq=False)
class Scales:
    """i-scales: the query temperature against position, the softmax scale and the factors."""

    position: F64  # (m,)
    tau: F64  # (m,)
    temperature: str  # "llama4", "ministral3" or "none"
    layers_with: float
    softmax: float
    softmax_rule: str
    head_dim: float
    kinds: list[str]
    factors: list[float]
    context: float
    notes: list[TuningNotBool]
