"""Transformer-XL's relative attention score (Dai et al. 2019, eq. 4), one head, as XLNet runs it
(transformers ``XLNetRelativeAttention.rel_attn_core``).

With query i at position M + i (M memory tokens), key j at position j and R_(i-j) the sinusoid of
the distance (``sinusoidal_pe``, "half" layout, no learned table):

    A_ij = q_iᵀ k_j              (a) content → content         q = W_q E_x, k = W_k,E E_x
         + q_iᵀ r_(i-j)          (b) content-dependent position bias    r = W_k,R R
         + uᵀ k_j                (c) global content bias        u: (d_head,) learned, one per head
         + vᵀ r_(i-j)            (d) global position bias       v: (d_head,) learned, one per head

XLNet computes (a)+(c) as (q + u)ᵀ k (``r_w_bias``) and (b)+(d) as (q + v)ᵀ r (``r_r_bias``),
against every distance, then moves each row into key order with ``rel_shift``; the sum is
scaled by 1/√d_head before the softmax.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64
from posecards.encodings.rel_shift import rel_shift
from posecards.encodings.softmax import softmax


@dataclass(frozen=True)
class XlTerms:
    """The four (Q, K) terms of A_ij, unscaled, in key order."""

    a: F64  # (Q, K) q_iᵀ k_j
    b: F64  # (Q, K) q_iᵀ r_(i-j)
    c: F64  # (Q, K) uᵀ k_j
    d: F64  # (Q, K) vᵀ r_(i-j)

    @property
    def total(self) -> F64:
        return np.asarray(self.a + self.b + self.c + self.d, dtype=np.float64)  # (Q, K)


def xl_terms(
    q: npt.ArrayLike,
    k: npt.ArrayLike,
    r: npt.ArrayLike,
    u: npt.ArrayLike,
    v: npt.ArrayLike,
) -> XlTerms:
    """The four terms from q (Q, d), k (K, d), the projected encodings r (R, d) of the distances
    ``xl_relative_distances(Q, K)`` (R = K + Q) and the biases u, v (d,)."""
    qq, kk, rr = (np.asarray(a, dtype=np.float64) for a in (q, k, r))
    uu, vv = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    n_k = kk.shape[0]
    if rr.shape[0] != n_k + qq.shape[0]:
        raise ValueError(f"r must have K + Q = {n_k + qq.shape[0]} rows, got {rr.shape[0]}")
    ones = np.ones((qq.shape[0], 1))  # (Q, 1): a bias is the same for every query
    return XlTerms(
        a=qq @ kk.T,
        b=rel_shift(qq @ rr.T, n_k),  # (Q, R) → (Q, K)
        c=ones @ (uu @ kk.T)[None, :],
        d=rel_shift(ones @ (vv @ rr.T)[None, :], n_k),
    )


@dataclass(frozen=True)
class XlAttention:
    terms: XlTerms
    weights: F64  # (Q, K) softmax_j(A_ij / √d)
    outputs: F64  # (Q, d) Σ_j w_ij v_j


def xl_attention(
    q: npt.ArrayLike,
    k: npt.ArrayLike,
    values: npt.ArrayLike,
    r: npt.ArrayLike,
    u: npt.ArrayLike,
    v: npt.ArrayLike,
) -> XlAttention:
    """One head of relative attention without a mask (XLNet's "bi" attention)."""
    terms = xl_terms(q, k, r, u, v)
    d_head = np.asarray(q).shape[-1]
    weights = softmax(terms.total / np.sqrt(d_head), axis=-1)  # (Q, K)
    return XlAttention(terms, weights, weights @ np.asarray(values, dtype=np.float64))
