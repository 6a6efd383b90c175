"""Learned absolute position embeddings (BERT, GPT-2): one trained row per position.

The table W has shape (n_positions, d_model) and the encoding of position p is simply W[p].
At initialisation every entry is drawn i.i.d. from normal(0, std) with std = 0.02 (BERT's and
GPT-2's ``initializer_range``). There is no formula that extends the table: position
n_positions has no row, which is why such models cannot read past their trained length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_positive_int


class PositionOutOfRangeError(IndexError):
    """A position outside 0..n_positions-1 was looked up in a learned table."""


def table_nbytes(n_positions: int, d_model: int, dtype: npt.DTypeLike = "float32") -> int:
    """Memory of a learned table in bytes: n_positions · d_model · itemsize(dtype).

    Works without allocating the table, e.g. for a 131072 × 12288 table stored in ``"float16"``.
    """
    n = check_positive_int("n_positions", n_positions)
    d = check_positive_int("d_model", d_model)
    return n * d * np.dtype(dtype).itemsize


@dataclass(frozen=True, eq=False)
class LearnedPositionTable:
    """A learned position table at initialisation: ``weight`` (n_positions, d_model) float64.

    ``weight`` is read-only; ``lookup`` returns W[p] and refuses positions without a row.
    """

    weight: F64  # (n_positions, d_model)

    @property
    def n_positions(self) -> int:
        return int(self.weight.shape[0])

    @property
    def d_model(self) -> int:
        return int(self.weight.shape[1])

    def lookup(self, positions: int | npt.ArrayLike) -> F64:
        """Rows W[p] for ``positions`` (an int n means 0..n-1, else an array), shape (n, d_model).

        Raises :class:`PositionOutOfRangeError` (an IndexError) if any position is < 0 or
        >= n_positions, and ValueError if a position is not a whole number.
        """
        if isinstance(positions, (int, np.integer)) and not isinstance(positions, bool):
            idx: I64 = np.arange(check_positive_int("positions", int(positions)), dtype=np.int64)
        else:
            raw = np.asarray(positions).reshape(-1)  # (n,)
            if raw.size == 0:
                raise ValueError("positions must not be empty")
            if raw.dtype.kind not in "iu":
                as_float = raw.astype(np.float64)
                if not np.all(np.isfinite(as_float)) or np.any(as_float != np.round(as_float)):
                    raise ValueError("positions must be whole numbers to look up a learned table")
            idx = raw.astype(np.int64)  # (n,)
        n = self.n_positions
        bad = (idx < 0) | (idx >= n)  # (n,)
        if np.any(bad):
            p = int(idx[np.argmax(bad)])
            where = "beyond" if p >= n else "before the start of"
            raise PositionOutOfRangeError(
                f"position {p} is {where} the learned table ({n} rows: positions 0..{n - 1}); "
                "a learned table has no row to look up"
            )
        return self.weight[idx]  # (n, d_model)

    def nbytes(self, dtype: npt.DTypeLike = "float32") -> int:
        """Memory of this table stored in ``dtype``: n_positions · d_model · itemsize."""
        return table_nbytes(self.n_positions, self.d_model, dtype)


def learned_pe(
    n_positions: int, d_model: int, std: float = 0.02, seed: int = 0
) -> LearnedPositionTable:
    """A learned table as BERT/GPT-2 initialise it: W[p, j] ~ normal(0, std), i.i.d.

    Drawn with ``numpy.random.default_rng(seed)`` so a card is reproducible.
    """
    n = check_positive_int("n_positions", n_positions)
    d = check_positive_int("d_model", d_model)
    s = float(std)
    if not math.isfinite(s) or s <= 0.0:
        raise ValueError(f"std must be a finite number > 0, got {std!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    weight = rng.normal(0.0, s, size=(n, d)).astype(np.float64)  # (n_positions, d_model)
    weight.setflags(write=False)
    return LearnedPositionTable(weight=weight)
