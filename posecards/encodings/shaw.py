"""Relative position representations (Shaw, Uszkoreit & Vaswani 2018): one learned vector per
clipped distance, added to the keys (a^K) and to the values (a^V) inside attention.

The distance from query i to key j is clipped to [-k, k]:

    clip(j - i) = max(-k, min(k, j - i))          2k + 1 distinct values

so a table of 2k + 1 vectors of d_head numbers serves any length; every distance beyond k
shares the last vector. With a^K_ij = w^K[clip(j - i) + k] and a^V_ij = w^V[clip(j - i) + k]:

    e_ij = q_iᵀ (k_j + a^K_ij) / √d_head
    α_ij = softmax_j(e_ij)
    z_i  = Σ_j α_ij (v_j + a^V_ij)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_positive_int
from posecards.encodings.softmax import softmax


def shaw_index(n_queries: int, n_keys: int, clip: int) -> I64:
    """Row of the (2k + 1)-row table each (query i, key j) reads: clip(j - i) + k, (n_q, n_k)."""
    nq = check_positive_int("n_queries", n_queries)
    nk = check_positive_int("n_keys", n_keys)
    k = check_positive_int("clip", clip)
    dist = np.arange(nk)[None, :] - np.arange(nq)[:, None]  # (n_q, n_k): j - i
    out: I64 = np.clip(dist, -k, k).astype(np.int64) + k  # (n_q, n_k) in 0..2k
    return out


def shaw_table_rows(clip: int) -> int:
    """How many vectors a table clipped at k holds: 2k + 1 (distances -k..k)."""
    return 2 * check_positive_int("clip", clip) + 1


@dataclass(frozen=True)
class ShawAttention:
    scores: F64  # (n, n) e_ij, scaled by 1/√d_head
    weights: F64  # (n, n) α_ij
    outputs: F64  # (n, d_head) z_i


def shaw_attention(
    q: npt.ArrayLike,
    k: npt.ArrayLike,
    v: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    clip: int,
) -> ShawAttention:
    """One head of Shaw et al.'s attention; q, k, v: (n, d_head); w_key, w_value: (2k+1, d_head)."""
    qq, kk, vv = (np.asarray(a, dtype=np.float64) for a in (q, k, v))  # (n, d) each
    wk, wv = np.asarray(w_key, dtype=np.float64), np.asarray(w_value, dtype=np.float64)
    rows = shaw_table_rows(clip)
    if wk.shape != (rows, qq.shape[1]) or wv.shape != wk.shape:
        raise ValueError(
            f"w_key and w_value must be (2k+1 = {rows}, d_head = {qq.shape[1]}), "
            f"got {wk.shape} and {wv.shape}"
        )
    n, d = qq.shape
    idx = shaw_index(n, kk.shape[0], clip)  # (n, n)
    a_key, a_value = wk[idx], wv[idx]  # (n, n, d) each: a^K_ij, a^V_ij
    # e_ij = q_i·k_j + q_i·a^K_ij, over √d
    scores = (qq @ kk.T + np.einsum("id,ijd->ij", qq, a_key)) / np.sqrt(d)  # (n, n)
    weights = softmax(scores, axis=-1)  # (n, n)
    outputs = weights @ vv + np.einsum("ij,ijd->id", weights, a_value)  # (n, d)
    return ShawAttention(scores=scores, weights=weights, outputs=outputs)
