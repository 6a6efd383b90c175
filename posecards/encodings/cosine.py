"""Cosine similarity between arbitrary vectors (rows), in float64.

    cos(a, b) = a·b / (|a|·|b|)   in [-1, 1]

1 means the same direction; for position encodings, two positions with cosine 1 (and equal
norms) carry exactly the same vector and cannot be told apart. (For 1-D sinusoidal encodings
the closed form lives in ``similarity.py``; this is the general version for any vectors.)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64


def _rows(name: str, x: npt.ArrayLike) -> F64:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]  # (1, d)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty (n, d) array of row vectors")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite numbers")
    norms = np.linalg.norm(arr, axis=1)  # (n,)
    if np.any(norms == 0.0):
        raise ValueError(f"{name} has a zero vector: its cosine similarity is undefined")
    return np.asarray(arr / norms[:, None], dtype=np.float64)  # (n, d) unit rows


def cosine_similarity(a: npt.ArrayLike, b: npt.ArrayLike) -> F64:
    """Matrix C[i, j] = cos(a_i, b_j) of rows a (n, d) and b (m, d), shape (n, m).

    A 1-D input counts as one row. Values are clipped to [-1, 1] (rounding can exceed 1 by an ulp).
    """
    ua = _rows("a", a)  # (n, d)
    ub = _rows("b", b)  # (m, d)
    if ua.shape[1] != ub.shape[1]:
        raise ValueError(f"a and b must have the same width d, got {ua.shape[1]} and {ub.shape[1]}")
    return np.clip(ua @ ub.T, -1.0, 1.0)  # (n, m)
