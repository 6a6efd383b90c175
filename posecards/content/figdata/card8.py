"""The data of each card-8 figure, as content/card8.py computes it and figures/card8.py draws it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card8.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Terms:
    """c8-terms: the four terms' sizes on a seeded example, and what each scheme does with them."""

    rms: F64  # (4,) rms of cc, cp, pc, pp
    schemes: list[str]  # the rows: "sinusoid", "shaw", "xl", "t5", "deberta", "rope", "alibi"
    kinds: list[list[str]]  # (schemes, 4): label key of what the scheme puts in each term


@dataclass(frozen=True, eq=False)
class Shaw:
    """c8-shaw: the clipped distance each (query, key) reads, and the table's size."""

    clipped: I64  # (n, n) clip(j - i, -k, k)
    clip: int
    rows: int  # 2k + 1


@dataclass(frozen=True, eq=False)
class XlTerms:
    """c8-xl: Transformer-XL's four terms (a) to (d), one head, in key order."""

    a: F64  # (Q, K)
    b: F64  # (Q, K)
    c: F64  # (Q, K)
    d: F64  # (Q, K)
    memory: int  # M


@dataclass(frozen=True, eq=False)
class Shift:
    """c8-shift: the distance of every column of bd and, after the shift, of every key."""

    columns: F64  # (Q, R) the distance each column of bd holds (the same in every row)
    picked: I64  # (Q, K) the column the shift puts at (i, j)
    shifted: F64  # (Q, K) the distances after the shift: M + i - j
    memory: int  # M


@dataclass(frozen=True, eq=False)
class ShiftXl:
    """c8-shift-xl (figure page): Transformer-XL's own shift, a zero column padded on the left."""

    columns: F64  # (Q, R) the distance each column of bd holds, K - 1 .. 0
    shifted: F64  # (Q, R) what the zero-pad shift puts at (i, j)
    visible: I64  # (Q, R) 1 where a causal query sees the key (j <= M + i), else 0
    memory: int  # M


@dataclass(frozen=True, eq=False)
class Deberta:
    """c8-deberta: the three disentangled terms, each over √(3d)."""

    c2c: F64  # (n, n)
    c2p: F64  # (n, n)
    p2c: F64  # (n, n)
    d_head: int


@dataclass(frozen=True, eq=False)
class Linear:
    """c8-linear: the numerator weights of linear attention with RoPE, and their signs."""

    numerator: F64  # (n, n) (R_i φ(q_i))ᵀ(R_j φ(k_j)) / Σ_j φ(q_i)ᵀφ(k_j)
    negative: int  # how many are < 0
