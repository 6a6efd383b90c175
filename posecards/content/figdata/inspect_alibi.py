"""The data of each figure of an ALiBi model's inspection card, as content/inspect.py computes it
and figures/inspect_alibi.py draws it (``cards/inspect-alibi.toml``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


# Typed: a renamed field fails mypy; field by field, in this order, what an export shows.
@dataclass(frozen=True, eq=False)
class Slopes:
    """i-slopes: every head's slope."""

    head: F64  # (H,) 1 .. H
    slope: F64  # (H,)


@dataclass(frozen=True, eq=False)
class Bias:
    """i-bias: the bias matrices of the steepest, a middle and the gentlest head."""

    bias: F64  # (s, L, L), -inf above the diagonal
    heads: F64  # (s,) their numbers, from 1


@dataclass(frozen=True, eq=False)
class Weights:
    """i-weights: the last query's weights over its keys, equal content, for the same heads."""

    distance: F64  # (L,) distance back, 0 = the query itself
    weights: F64  # (s, L)
    heads: F64  # (s,)


@dataclass(frozen=True, eq=False)
class Reach:
    """i-reach: the distance at which each head halves a key's weight."""

    head: F64  # (H,)
    half_distance: F64  # (H,)
    context: float  # the model's context (0: none stated)
