"""The data of each card-7 figure, as content/card7.py computes it and figures/card7.py draws it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card7.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Steps:
    """c7-precision, one dtype: where the worst angle error so far steps up."""

    x: F64  # (c+2,) positions
    y: F64  # (c+2,) worst error so far (rad)
    first: int  # the first integer the dtype cannot hold


@dataclass(frozen=True, eq=False)
class Slopes:
    """c7-alibi, one head count."""

    trained: F64  # (n,) Press et al.'s rule
    naive: F64  # (n,) 2^(-8h/n)
    worst_head: int  # 1-based


@dataclass(frozen=True, eq=False)
class Layout:
    """c7-layout: scores with Meta's interleaved rotation, a half-layout port without and with
    the permutation."""

    reference: F64  # (400,)
    not_permuted: F64  # (400,)
    permuted: F64  # (400,)
    head_dim: int
    base: float
    err_wrong: float
    err_fixed: float
    threads: list[str]  # the shipped ones, the first threads_on_card of them on the card
    threads_by_kind: dict[str, list[str]]  # kind (shipped, question, related) -> threads
    threads_on_card: int


@dataclass(frozen=True, eq=False)
class Precision:
    """c7-precision: the worst angle error so far of positions stored in each dtype."""

    dtypes: list[str]
    x_bfloat16: F64  # (18,)
    x_float16: F64  # (4,)
    x_float32: F64  # (2,)
    y_bfloat16: F64  # (18,)
    y_float16: F64  # (4,)
    y_float32: F64  # (2,)
    first_bfloat16: int
    first_float16: int
    first_float32: int
    positions: int
    half_turn: float
    threads: list[str]  # the shipped ones, the first threads_on_card of them on the card
    threads_by_kind: dict[str, list[str]]  # kind (shipped, question, related) -> threads
    threads_on_card: int

    def steps(self, dtype: str) -> Steps:
        """One dtype's staircase: "bfloat16", "float16" or "float32"."""
        return Steps(*(getattr(self, f"{part}_{dtype}") for part in ("x", "y", "first")))


@dataclass(frozen=True, eq=False)
class Alibi:
    """c7-alibi: trained slopes against the geometric sequence, per head count."""

    heads: list[int]
    trained_12: F64  # (12,)
    naive_12: F64  # (12,)
    worst_head_12: int
    trained_40: F64  # (40,)
    naive_40: F64  # (40,)
    worst_head_40: int
    threads: list[str]  # the shipped ones, the first threads_on_card of them on the card
    threads_by_kind: dict[str, list[str]]  # kind (shipped, question, related) -> threads
    threads_on_card: int

    def slopes(self, heads: int) -> Slopes:
        """The slopes of one head count (12 or 40)."""
        return Slopes(
            *(getattr(self, f"{part}_{heads}") for part in ("trained", "naive", "worst_head"))
        )


@dataclass(frozen=True, eq=False)
class Yarn:
    """c7-yarn: where YaRN's attention factor is applied, and what each placement gives."""

    placements: list[str]
    cos_sin: F64  # (3,)
    softmax: F64  # (3,)
    rope_part: F64  # (3,)
    content_part: F64  # (3,)
    factor: float
    mscale: float
    mscale_all_dim: float
    threads: list[str]  # the shipped ones, the first threads_on_card of them on the card
    threads_by_kind: dict[str, list[str]]  # kind (shipped, question, related) -> threads
    threads_on_card: int


@dataclass(frozen=True, eq=False)
class Dynamic:
    """c7-dynamic: dynamic NTK's base per call, recomputed and kept."""

    calls: F64  # (4,)
    base_per_call: F64  # (4,)
    base_kept: F64  # (4,)
    base_ticks: F64  # (3,)
    angle_error: F64  # (64,)
    head_dim: int
    max_position_embeddings: int
    factor: float
    threads: list[str]  # the shipped ones, the first threads_on_card of them on the card
    threads_by_kind: dict[str, list[str]]  # kind (shipped, question, related) -> threads
    threads_on_card: int


@dataclass(frozen=True, eq=False)
class PositionIds:
    """c7-position-ids: position ids and scores of a left-padded prompt, three ways."""

    key: F64  # (11,)
    ids_mask: F64  # (11,)
    ids_shift: F64  # (11,)
    ids_gap: F64  # (11,)
    score_mask: F64  # (11,)
    score_shift: F64  # (11,)
    score_gap: F64  # (11,)
    pads: int
    threads: list[str]  # the shipped ones, the first threads_on_card of them on the card
    threads_by_kind: dict[str, list[str]]  # kind (shipped, question, related) -> threads
    threads_on_card: int


@dataclass(frozen=True, eq=False)
class ChannelSpeeds:
    """c7-channel-speeds: each channel's rotation speed, trained and as a port applies it."""

    channel: F64  # (128,)
    trained: F64  # (128,)
    not_permuted: F64  # (128,)
    permuted: F64  # (128,)
    right_channels: int
    worst_ratio: float
    head_dim: int
    base: float


# the panels that name their threads (figures/card7.py's rule box reads them)
Cited = Layout | Precision | Alibi | Yarn | Dynamic | PositionIds
