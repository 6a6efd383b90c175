"""The data of each card-4 figure, as content/card4.py computes it and figures/card4.py draws it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card4.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Alibi:
    """c4-alibi: slopes of a few heads, one head's bias matrix and the weights it leaves."""

    heads: int
    shown_heads: I64  # (3,)
    shown_slopes: F64  # (3,)
    shown_inv_slopes: F64  # (3,)
    bias: F64  # (16, 16)
    bias_head: int
    bias_inv_slope: float
    distance: F64  # (128,)
    weights: F64  # (3, 128)
    weights_wrong_first: F64  # (128,)


@dataclass(frozen=True, eq=False)
class RopeScaling:
    """c4-rope-scaling: each scaling method's ratio of new to old frequency per pair."""

    keys: list[str]
    shown: list[str]
    pair: F64  # (64,)
    wavelength: F64  # (64,)
    ratio: F64  # (6, 64)
    factor: F64  # (6,)
    attention_factor: F64  # (6,)
    score_factor: F64  # (6,)
    seq_len: F64  # (6,)
    orig_len: float
    head_dim: int
    base: float


@dataclass(frozen=True, eq=False)
class Buckets:
    """c4-buckets: T5's relative-position bucket of each distance, encoder and decoder."""

    distance: F64  # (301,)
    encoder: F64  # (301,)
    decoder: F64  # (301,)
    num_buckets: int
    max_distance: int
    enc_exact: int
    dec_exact: int
    enc_last_start: int
    dec_last_start: int


@dataclass(frozen=True, eq=False)
class Grid2d:
    """c4-grid2d: 2-D positions, one half of the dimensions per axis, against a sum of both."""

    grid: int
    base: float
    d_model: int
    d_used: int
    d_adjusted: bool
    patches: F64  # (1, 2)
    sim_mae: F64  # (1, 14, 14)
    sim_sum: F64  # (1, 14, 14)
    collision_a: F64  # (2,)
    collision_b: F64  # (2,)
    diff_sum: float
    diff_mae: float


@dataclass(frozen=True, eq=False)
class AlibiSlopes:
    """c4-alibi-slopes: the slopes for 8, 12 and 16 heads."""

    slopes8: F64  # (8,)
    slopes12: F64  # (12,)
    slopes16: F64  # (16,)
    odd_first_extra: float
    odd_last_extra: float


@dataclass(frozen=True, eq=False)
class Deberta:
    """c4-deberta: DeBERTa's logarithmic bucket of each relative position."""

    distance: F64  # (2001,)
    bucket: F64  # (2001,)
    bucket_size: int
    max_position: int
    exact: int
    first_shared: int
    edge: int
    edge_bucket: int
    far_bucket: int


@dataclass(frozen=True, eq=False)
class UnseenAngles:
    """c4-unseen-angles: which pairs reach angles never seen within the training length."""

    methods: list[str]
    unseen: F64  # (6, 64)
    pairs_new: I64  # (6,)
    pair: F64  # (64,)
    train_length: int
    test_length: int
    threshold: float
    big_base: float
