"""The data of each card-10 figure, as content/card10.py computes it and figures/card10.py draws it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


# The data of each figure (what its draw function in figures/card10.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Within:
    """c10-within: every scheme at the training length, both measured tasks."""

    schemes: list[str]  # experiment.positions.SCHEMES
    local_loss: F64  # (schemes,) two-back task, mean loss over seeds at 1x (nats)
    recall: F64  # (schemes,) recall task, % right at 1x (mean over seeds)
    uniform_loss: float  # loss of a uniform guess
    chance: float  # % right by guessing


@dataclass(frozen=True, eq=False)
class Beyond:
    """c10-beyond: the two-back task's loss at 1x and past the training length at the longest."""

    schemes: list[str]
    loss_1x: F64  # (schemes,)
    loss_max: F64  # (schemes,) positions beyond train_length, at max_multiple x
    max_multiple: int


@dataclass(frozen=True, eq=False)
class Far:
    """c10-far: recall of facts beyond the training length at the longest length, in the
    two-back task's order at that length (best first)."""

    schemes: list[str]  # ordered by the two-back loss at max_multiple x, lowest first
    recall_max: F64  # (schemes,) % right, facts >= train_length back
    chance: float
    max_multiple: int


@dataclass(frozen=True, eq=False)
class Extend:
    """c10-extend: the factor each scaling method needs (calculator, the measured model's head,
    base and lengths) and RoPE's measured recall at the longest length with each."""

    methods: list[str]  # scaling_needed.METHODS
    factor: F64  # (methods,) smallest factor leaving no pair an unseen angle
    measured: list[str]  # "none" and the methods posecards measure ran
    recall_max: F64  # (measured,) % right beyond the training length at max_multiple x
    linear_ratio: float  # (T - 1) / (L - 1): position interpolation's closed form
    max_multiple: int


@dataclass(frozen=True, eq=False)
class Base:
    """c10-base: base against trained context of every RoPE default config of the census and
    of the published configs, and whether Men et al.'s bound holds for it."""

    context: F64  # (models,) max_position_embeddings
    base: F64  # (models,) rope_theta of the full-attention frequencies
    holds: F64  # (models,) 1: sum_i cos(m theta_i) >= 0 over the context, 0: not
    published: F64  # (models,) 1: a published config of docs/examples, 0: a default config
    names: list[str]


@dataclass(frozen=True, eq=False)
class Census:
    """c10-census: how many text models of the default configs (and of the published configs)
    fall in each category."""

    categories: list[str]  # census.CATEGORIES shown, in order
    defaults: F64  # (categories,) model count, default configs
    published: F64  # (categories,) model count, published configs
    n_defaults: int  # text models read
    n_published: int
