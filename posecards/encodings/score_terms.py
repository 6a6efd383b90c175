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

from posecards.encodings._checks import F64, check_positive, check_positive_int
from posecards.encodings.seeded import seeded_normals
from posecards.encodings.sinusoidal import sinusoidal_pe


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


def seeded_score_terms(
    n_tokens: int, d_model: int, d_head: int, base: float, seed: int, content_rms: float
) -> ScoreTerms:
    """The four terms of a seeded example that the explorer repeats (posecards/explore_js):
    ``n_tokens`` token vectors x = content_rms·z, sinusoids p (``sinusoidal_pe``, interleaved),
    W_q and W_k = z/√d_model, all z drawn in that order, row by row, from one stream of
    ``seeded_normals(seed, ...)``. x: (n, d_model); W_q, W_k: (d_model, d_head).
    """
    n = check_positive_int("n_tokens", n_tokens)
    dh = check_positive_int("d_head", d_head)
    c = check_positive("content_rms", content_rms)
    p = sinusoidal_pe(n, d_model, base)  # (n, d_model); checks d_model and base
    d = p.shape[1]
    z = seeded_normals(seed, n * d + 2 * d * dh)  # (n·d + 2·d·d_head,)
    x = z[: n * d].reshape(n, d) * c  # (n, d_model)
    w_q = z[n * d : n * d + d * dh].reshape(d, dh) / np.sqrt(d)  # (d_model, d_head)
    w_k = z[n * d + d * dh :].reshape(d, dh) / np.sqrt(d)  # (d_model, d_head)
    return score_terms(x, p, w_q, w_k)
