"""How far a score matrix is from depending only on the offset ``j - i`` (being Toeplitz).

A matrix ``S[i, j]`` over evenly spaced positions depends only on the offset ``j - i`` exactly
when it is constant along every diagonal (a Toeplitz matrix). The spread of diagonal ``o`` is

    spread(o) = max_i S[i, i + o] - min_i S[i, i + o],    o = -(n_rows - 1) .. n_cols - 1

and ``max_o spread(o) = 0`` for a Toeplitz matrix (up to rounding). RoPE scores
``<R_m q, R_n k>`` are Toeplitz; additive absolute encodings ``(q + PE_m).(k + PE_n)`` are not.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64


def diagonal_offsets(shape: tuple[int, int]) -> I64:
    """The offsets ``o = j - i`` of the diagonals of an ``(n_rows, n_cols)`` matrix, ascending."""
    n_rows, n_cols = shape
    return np.arange(-(n_rows - 1), n_cols, dtype=np.int64)  # (n_rows + n_cols - 1,)


def diagonal_spread(matrix: npt.ArrayLike) -> F64:
    """``max - min`` of each diagonal ``S[i, i + o]``, in the order of :func:`diagonal_offsets`.

    ``matrix`` is 2-D ``(n_rows, n_cols)``; the result has shape ``(n_rows + n_cols - 1,)`` and
    is 0 for the two one-element corner diagonals.
    """
    s = np.asarray(matrix, dtype=np.float64)  # (n_rows, n_cols)
    if s.ndim != 2 or s.size == 0:
        raise ValueError(f"matrix must be a non-empty 2-D array, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("matrix must hold finite numbers")
    offsets = diagonal_offsets((s.shape[0], s.shape[1]))  # (n_diag,)
    out = np.empty(offsets.size, dtype=np.float64)  # (n_diag,)
    for idx, o in enumerate(offsets):
        diag = np.diagonal(s, offset=int(o))  # (length of diagonal o,)
        out[idx] = diag.max() - diag.min()
    return out
