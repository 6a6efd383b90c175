"""The data of each card-2 figure, as content/card2.py computes it and figures/card2.py draws it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card2.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Heatmap:
    """c2-heatmap: the whole encoding as one picture (rows sampled every position_step)."""

    values: F64  # (128, 512)
    wavelength_tick_dims: I64  # (5,)
    wavelength_ticks: F64  # (5,)
    positions: F64  # (128,)
    dims: I64  # (512,)
    position_step: int
    pair_step: int
    d_model: int
    n_positions: int
    base: float


@dataclass(frozen=True, eq=False)
class Curves:
    """c2-curves: a few fast and slow dimensions as curves over position."""

    fast_positions: F64  # (48,)
    fast_dims: I64  # (4,)
    fast_values: F64  # (4, 48)
    fast_wavelengths: F64  # (4,)
    slow_positions: F64  # (128,)
    slow_dims: I64  # (2,)
    slow_values: F64  # (2, 128)
    slow_wavelengths: F64  # (2,)
    n_positions: int


@dataclass(frozen=True, eq=False)
class Rotation:
    """c2-rotation: PE(p + k) = R(k) PE(p) on the first d_show dimensions."""

    r: F64  # (8, 8)
    pe_p: F64  # (8,)
    pe_pk: F64  # (8,)
    omega: F64  # (4,)
    k: int
    p: int
    d_show: int
    base: float
    d_model: int
    err: float


@dataclass(frozen=True, eq=False)
class Similarity:
    """c2-similarity: PE(p)·PE(q) against q - p, measured and by the closed form."""

    similarity: F64  # (128, 128)
    positions: F64  # (128,)
    position_step: int
    offsets: F64  # (128,)
    starts: I64  # (3,)
    measured: F64  # (3, 128)
    formula: F64  # (128,)
    offset_a: int
    offset_b: int
    f_a: float
    f_b: float
    k_mono: int
    f_mono: float
    mono_found: bool


@dataclass(frozen=True, eq=False)
class Pitfalls:
    """c2-pitfalls, c2-float32 and c2-layouts: the dimension-index bug (bug_), the pair
    layouts (layout_) and float32 angles (f32_)."""

    bug_starts: F64  # (128,)
    bug_offset: int
    bug_cos_bug: F64  # (128,)
    bug_cos_correct: F64  # (128,)
    bug_d_model: int
    bug_base: float
    layout_perm_diff: float
    layout_raw_diff: float
    layout_sim_diff: float
    layout_t2t_sim_diff: float
    f32_positions: F64  # (128,)
    f32_pairs: I64  # (256,)
    f32_angle_error: F64  # (128, 256)
    f32_max_error: float
    f32_max_position: int
    f32_max_pair: int
    f32_slow_from: int
