"""The data of each card-6 figure, as content/card6.py computes it and figures/card6.py draws it."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card6.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Head:
    """c6-partial, one model: the wavelength of each pair of its head."""

    wavelength: F64  # (head_dim/2,) inf where a pair does not turn
    fraction: F64  # (head_dim/2,) pair / (head_dim/2)
    context: int
    p: float  # partial_rotary_factor
    head: int
    theta: float


@dataclass(frozen=True, eq=False)
class Partial:
    """c6-partial: Phi-2 (phi), Qwen3-Next (qn) and Gemma 4 (g4), fields flat as exported."""

    models: list[str]
    phi_wavelength: F64  # (head_dim/2,) inf where a pair does not turn
    phi_fraction: F64  # (head_dim/2,) pair / (head_dim/2)
    phi_context: int
    phi_p: float  # partial_rotary_factor
    phi_head: int
    phi_theta: float
    qn_wavelength: F64  # (head_dim/2,) inf where a pair does not turn
    qn_fraction: F64  # (head_dim/2,) pair / (head_dim/2)
    qn_context: int
    qn_p: float  # partial_rotary_factor
    qn_head: int
    qn_theta: float
    g4_wavelength: F64  # (head_dim/2,) inf where a pair does not turn
    g4_fraction: F64  # (head_dim/2,) pair / (head_dim/2)
    g4_context: int
    g4_p: float  # partial_rotary_factor
    g4_head: int
    g4_theta: float
    slowest: dict[str, float]  # model -> its slowest turning wavelength
    context: int
    still_from: float

    def model(self, key: str) -> Head:
        """One model's head: "phi", "qn" or "g4"."""
        return Head(**{f.name: getattr(self, f"{key}_{f.name}") for f in fields(Head)})


@dataclass(frozen=True, eq=False)
class TwoRopes:
    """c6-two-ropes: Gemma 3's local and global RoPE, and which layers are full."""

    full: npt.NDArray[np.bool_]  # (62,)
    pair: F64  # (64,)
    local_inv_freq: F64  # (64,)
    full_inv_freq: F64  # (64,)
    local_wavelength: F64  # (64,)
    full_wavelength: F64  # (64,)
    window: int
    context: int
    local_theta: float
    full_theta: float
    factor: float


@dataclass(frozen=True, eq=False)
class Nope:
    """c6-nope: which layers rotate (Llama 4 Scout, SmolLM3) and Llama 4's query temperature."""

    l4_rope: npt.NDArray[np.bool_]  # (48,)
    smol_rope: npt.NDArray[np.bool_]  # (36,)
    position: F64  # (1281,)
    tau: F64  # (1281,)
    context: int
    chunk: int
    floor: float
    scale: float
    tau_end: float


@dataclass(frozen=True, eq=False)
class Mla:
    """c6-mla: DeepSeek-V3's head slots (no-RoPE and RoPE parts) and its softmax scale."""

    slots: I64  # (192,)
    nope: int
    rope: int
    heads: int
    kv_rank: int
    cos_sin: float
    softmax_scale: float
    plain_scale: float
    mscale: float
    factor: float


@dataclass(frozen=True, eq=False)
class MropeModel:
    """c6-mrope-axes, one model: which axis (t, h, w) drives each frequency of its head."""

    wavelength: F64  # (head_dim/2,)
    axes: I64  # (head_dim/2,) 0 t, 1 h, 2 w
    section: list[int]  # mrope_section
    theta: float
    tick_j: I64  # (4,) frequencies marked under the map
    tick_wavelength: F64  # (4,)
    count: I64  # (3,) frequencies per axis


@dataclass(frozen=True, eq=False)
class MropeAxes:
    """c6-mrope-axes: Qwen2.5-VL (q25, chunked) and Qwen3-VL (q3, interleaved)."""

    models: list[str]
    image_width: int
    q25: MropeModel
    q3: MropeModel

    def model(self, key: str) -> MropeModel:
        """One model: "q25" or "q3"."""
        return {"q25": self.q25, "q3": self.q3}[key]


@dataclass(frozen=True, eq=False)
class MropeIds:
    """c6-mrope-ids: the (t, h, w) position ids of text, an image, text."""

    ids: I64  # (3, 11)
    kinds: list[str]
    merge: int
    grid: list[int]
    token_grid: list[int]


@dataclass(frozen=True, eq=False)
class Models:
    """c6-models: one row per (model, RoPE kind) of the published configs."""

    model: list[str]
    name: list[str]
    kind: list[str]
    layers: F64  # (11,)
    total: F64  # (11,)
    head: F64  # (11,)
    turning: F64  # (11,)
    pairs: F64  # (11,)
    theta: F64  # (11,)
    slowest: F64  # (11,)
    context: F64  # (11,)
