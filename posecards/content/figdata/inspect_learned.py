"""The data of each figure of a learned table's inspection card, as content/inspect.py computes
it and figures/inspect_learned.py draws it (``cards/inspect-learned.toml``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


# Typed: a renamed field fails mypy; field by field, in this order, what an export shows.
@dataclass(frozen=True, eq=False)
class Similarity:
    """i-similarity (and i-sinusoidal's heat map): cosine similarity of the shown rows."""

    positions: F64  # (m,) the rows shown: 0, s, 2s, ...
    similarity: F64  # (m, m)


@dataclass(frozen=True, eq=False)
class Sinusoidal(Similarity):
    """i-sinusoidal: the same for the sinusoidal table of the same width."""

    d_model: int
    base: float


@dataclass(frozen=True, eq=False)
class Norms:
    """i-norms: each row's length."""

    positions: F64  # (c,)
    norm: F64  # (c,)
    zero_rows: int


@dataclass(frozen=True, eq=False)
class Offset:
    """i-offset: mean similarity of rows k apart, the table's and the sinusoids'."""

    offset: F64  # (c,)
    model: F64  # (c,)
    sinusoidal: F64  # (c,)
    level: float  # the level named on the card (one half)
    d_model: int
