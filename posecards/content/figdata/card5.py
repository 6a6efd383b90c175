"""The data of each card-5 figure, as content/card5.py computes it and figures/card5.py draws it."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, cast

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card5.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Band:
    """One curve of loss by position: the mean over seeds and its range, one value per window."""

    mean: F64  # (windows,)
    lo: F64  # (windows,)
    hi: F64  # (windows,)


class _Bands:
    """Curves stored flat as <key>_mean, <key>_lo, <key>_hi (as exported), read by key."""

    def band(self, key: str) -> Band:
        return Band(*(getattr(self, f"{key}_{part}") for part in ("mean", "lo", "hi")))

    def bands(self) -> tuple[Band, ...]:
        """Every curve stored, in field order."""
        names = [f.name for f in fields(cast(Any, self))]
        return tuple(self.band(n.removesuffix("_mean")) for n in names if n.endswith("_mean"))


@dataclass(frozen=True, eq=False)
class Beyond(_Bands):
    """c5-beyond: loss by position past the training length, one band per scheme."""

    schemes: list[str]
    train_length: int
    eval_length: int
    entropy: float
    uniform: float
    window: int
    n_seeds: int
    position: F64  # (64,)
    nope_mean: F64  # (64,)
    nope_lo: F64  # (64,)
    nope_hi: F64  # (64,)
    learned_mean: F64  # (64,)
    learned_lo: F64  # (64,)
    learned_hi: F64  # (64,)
    sinusoidal_mean: F64  # (64,)
    sinusoidal_lo: F64  # (64,)
    sinusoidal_hi: F64  # (64,)
    rope_mean: F64  # (64,)
    rope_lo: F64  # (64,)
    rope_hi: F64  # (64,)
    alibi_mean: F64  # (64,)
    alibi_lo: F64  # (64,)
    alibi_hi: F64  # (64,)
    t5_mean: F64  # (64,)
    t5_lo: F64  # (64,)
    t5_hi: F64  # (64,)


@dataclass(frozen=True, eq=False)
class RopeScaling(_Bands):
    """c5-rope-scaling: loss by position of RoPE rescaled at inference, one band per method."""

    methods: list[str]
    train_length: int
    eval_length: int
    factor: float
    entropy: float
    uniform: float
    rope_base: float
    head_dim: int
    window: int
    yarn_attention: float
    yarn_score_factor: float
    position: F64  # (64,)
    none_mean: F64  # (64,)
    none_lo: F64  # (64,)
    none_hi: F64  # (64,)
    linear_mean: F64  # (64,)
    linear_lo: F64  # (64,)
    linear_hi: F64  # (64,)
    ntk_mean: F64  # (64,)
    ntk_lo: F64  # (64,)
    ntk_hi: F64  # (64,)
    yarn_mean: F64  # (64,)
    yarn_lo: F64  # (64,)
    yarn_hi: F64  # (64,)


@dataclass(frozen=True, eq=False)
class Table:
    """c5-table: measured loss per row and evaluation length, mean and range over seeds."""

    rows: list[str]
    eval_lengths: F64  # (4,)
    multiples: F64  # (4,)
    mean: F64  # (9, 4)
    lo: F64  # (9, 4)
    hi: F64  # (9, 4)
    entropy: float
    uniform: float
    train_length: int
    held: float
    held_cells: npt.NDArray[np.bool_]  # (9, 4)
    # the long-range task beside it: recall accuracy (%) at 1x (every question) and at the
    # longest length (questions whose fact lies >= train_length back), mean over seeds
    recall_multiples: F64  # (2,)
    recall_accuracy: F64  # (9, 2)
    recall_chance: float  # percent


@dataclass(frozen=True, eq=False)
class Recall:
    """The long-range task (in c5-table's last columns and the text), accuracy (%) per row and evaluation length, mean and
    range over seeds: at 1x over every question, beyond over the questions whose fact lies at
    least train_length tokens back."""

    rows: list[str]
    eval_lengths: F64  # (4,)
    multiples: F64  # (4,)
    accuracy: F64  # (9, 4) percent
    lo: F64  # (9, 4)
    hi: F64  # (9, 4)
    loss: F64  # (9, 4) nats, mean over seeds
    chance: float  # percent: 100 / V
    chance_loss: float  # ln V
    train_length: int
    keys: int
    values: int
    pairs: int


@dataclass(frozen=True, eq=False)
class Quoted:
    """c5-quoted: the ALiBi paper's perplexities, quoted from posecards/data/quoted.toml."""

    methods: list[str]
    eval_lengths: F64  # (4,)
    perplexity: F64  # (4, 4)
    train_length: int
    source: str
    source_zh: str
    citation: str
