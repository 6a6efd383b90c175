"""The four terms of an attention score when position is added to the input (Dai et al. 2019,
section 3.3; the expansion every relative scheme starts from).

With token vectors x_i, position vectors p_i and projections W_q, W_k (d_model, d_head):

    s_ij = (x_i + p_i)ᵀ W_q W_kᵀ (x_j + p_j)
         = x_iᵀ W_q W_kᵀ x_j     content → content   (cc)
         + x_iᵀ W_q W_kᵀ p_j     content → position  (cp)
         + p_iᵀ W_q W_kᵀ x_j     position → content  (pc)
         + p_iᵀ W_q W_kᵀ p_j     position → position (pp)

Each relative scheme keeps, replaces or drops some of these four (posecards card 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64


@dataclass(frozen=True)
class ScoreTerms:
    """The four (n, n) terms of s_ij; their sum is the score of (x + p)."""

    cc: F64  # (n, n) content → content
    cp: F64  # (n, n) content → position
    pc: F64  # (n, n) position → content
    pp: F64  # (n, n) position → position

    @property
    def total(self) -> F64:
        return np.asarray(self.cc + self.cp + self.pc + self.pp, dtype=np.float64)  # (n, n)


def _matrix(name: str, value: npt.ArrayLike) -> F64:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {arr.shape}")
    return arr


def score_terms(
    x: npt.ArrayLike, p: npt.ArrayLike, w_q: npt.ArrayLike, w_k: npt.ArrayLike
) -> ScoreTerms:
    """The four terms of (x_i + p_i)ᵀ W_q W_kᵀ (x_j + p_j), unscaled (no 1/√d).

    x, p: (n, d_model) token and position vectors; w_q, w_k: (d_model, d_head).
    """
    xx, pp = _matrix("x", x), _matrix("p", p)
    wq, wk = _matrix("w_q", w_q), _matrix("w_k", w_k)
    if xx.shape != pp.shape:
        raise ValueError(f"x and p must have the same shape, got {xx.shape} and {pp.shape}")
    if wq.shape != wk.shape or wq.shape[0] != xx.shape[1]:
        raise ValueError(
            f"w_q and w_k must both be (d_model = {xx.shape[1]}, d_head), "
            f"got {wq.shape} and {wk.shape}"
        )
    qx, qp = xx @ wq, pp @ wq  # (n, d_head) each: content and position queries
    kx, kp = xx @ wk, pp @ wk  # (n, d_head) each: content and position keys
    return ScoreTerms(cc=qx @ kx.T, cp=qx @ kp.T, pc=qp @ kx.T, pp=qp @ kp.T)
