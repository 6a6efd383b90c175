"""Softmax in float64, with masked (-inf) scores getting weight exactly 0.

Attention turns scores into weights with

    w_j = exp(s_j - max_k s_k) / Σ_k exp(s_k - max_k s_k)

Subtracting the row maximum changes nothing mathematically (softmax ignores a constant added
to all scores) but keeps exp() from overflowing. A score of -inf (a causal mask) gets w_j = 0.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64


def softmax(scores: npt.ArrayLike, axis: int = -1) -> F64:
    """Softmax of ``scores`` along ``axis``, same shape, float64; each slice sums to 1.

    Entries equal to -inf get weight 0. A slice must hold at least one finite score, and no
    entry may be NaN or +inf (ValueError otherwise).
    """
    s = np.asarray(scores, dtype=np.float64)  # (..., n, ...)
    if s.size == 0:
        raise ValueError("scores must not be empty")
    if np.any(np.isnan(s)) or np.any(s == np.inf):
        raise ValueError("scores must be finite numbers or -inf (masked)")
    top = np.max(s, axis=axis, keepdims=True)  # (..., 1, ...)
    if np.any(top == -np.inf):
        raise ValueError("every softmax slice needs at least one finite score (not all masked)")
    e = np.exp(s - top)  # (..., n, ...) in [0, 1]; exp(-inf) = 0
    return np.asarray(e / e.sum(axis=axis, keepdims=True), dtype=np.float64)
