"""DeBERTa's disentangled attention (He et al. 2021, section 3.1), one head, as transformers'
``DebertaV2`` runs it (``DisentangledSelfAttention.disentangled_attention_bias``).

Each token has a content vector H_i; each relative distance a shared position vector P_r
(a table of 2s rows, s = ``position_buckets`` or ``max_relative_positions``). With
δ(i, j) = bucket(i - j) (``deberta_log_bucket``, or plain i - j) and the slot
c(i, j) = clamp(δ(i, j) + s, 0, 2s - 1):

    c2c_ij = Q^c_iᵀ K^c_j                       content → content
    c2p_ij = Q^c_iᵀ K^r_c(i,j)                  content → position   K^r = P W_k,r
    p2c_ij = K^c_jᵀ Q^r_(clamp(-δ(j, i) + s))   position → content   Q^r = P W_q,r

    score_ij = (c2c + c2p + p2c) / √(3 d)       (√(m d) with the m of the terms kept)

p2c is computed key-first: a (key j, slot) matrix K^c Q^rᵀ, gathered at row j with the index
clamp(-δ(j, i) + s) built from the key's side, then transposed to (query, key). Since δ is odd
(δ(j, i) = -δ(i, j)), its slot is c(i, j): the same slot as c2p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_positive_int
from posecards.encodings.buckets import deberta_log_bucket


def deberta_relative_positions(
    n_queries: int, n_keys: int, bucket_size: int = -1, max_position: int = -1
) -> I64:
    """``build_relative_position``: δ(i, j) = i - j, log-bucketed when both sizes are > 0;
    int64 (n_q, n_k)."""
    nq = check_positive_int("n_queries", n_queries)
    nk = check_positive_int("n_keys", n_keys)
    rel = np.arange(nq)[:, None] - np.arange(nk)[None, :]  # (n_q, n_k): i - j
    if bucket_size > 0 and max_position > 0:
        return deberta_log_bucket(rel, bucket_size, max_position)
    return rel.astype(np.int64)


def disentangled_slots(relative: npt.ArrayLike, span: int) -> I64:
    """The row of the position table each pair reads: clamp(δ + s, 0, 2s - 1), int64."""
    s = check_positive_int("span", span)
    return np.clip(np.asarray(relative, dtype=np.int64) + s, 0, 2 * s - 1).astype(np.int64)


def disentangled_scale(d_head: int, n_terms: int = 3) -> float:
    """The divisor √(m·d) of every term (m = 1 + [c2p] + [p2c]); 1/√(3d) with both."""
    return float(
        np.sqrt(check_positive_int("d_head", d_head) * check_positive_int("n_terms", n_terms))
    )


@dataclass(frozen=True)
class DisentangledTerms:
    """The three (n, n) terms, unscaled; ``total(d)`` divides by √(3d)."""

    c2c: F64
    c2p: F64
    p2c: F64

    def total(self, d_head: int) -> F64:
        return np.asarray(
            (self.c2c + self.c2p + self.p2c) / disentangled_scale(d_head, 3), dtype=np.float64
        )


def disentangled_terms(
    q_content: npt.ArrayLike,
    k_content: npt.ArrayLike,
    q_position: npt.ArrayLike,
    k_position: npt.ArrayLike,
    relative: npt.ArrayLike,
    span: int,
) -> DisentangledTerms:
    """c2c, c2p and p2c from the content query/key (n, d), the projected position table's query
    and key rows (2s, d) and δ (n, n), by the formulas of the module docstring."""
    qc, kc = np.asarray(q_content, dtype=np.float64), np.asarray(k_content, dtype=np.float64)
    qr, kr = np.asarray(q_position, dtype=np.float64), np.asarray(k_position, dtype=np.float64)
    rel = np.asarray(relative, dtype=np.int64)  # (n, n) δ(i, j)
    if qr.shape[0] != 2 * span or kr.shape[0] != 2 * span:
        raise ValueError(f"the position rows must number 2·span = {2 * span}, got {qr.shape[0]}")
    c2p_slot = disentangled_slots(rel, span)  # (n, n) c(i, j)
    p2c_slot = disentangled_slots(-rel.T, span)  # (n, n): [i, j] = clamp(-δ(j, i) + s)
    c2p = np.einsum("id,ijd->ij", qc, kr[c2p_slot])  # Q^c_i · K^r_c(i,j)
    p2c = np.einsum("jd,ijd->ij", kc, qr[p2c_slot])  # K^c_j · Q^r_(slot)
    return DisentangledTerms(c2c=qc @ kc.T, c2p=c2p, p2c=p2c)


def p2c_by_gather(
    k_content: npt.ArrayLike, q_position: npt.ArrayLike, relative: npt.ArrayLike, span: int
) -> F64:
    """p2c the way transformers computes it: (key, slot) scores K^c Q^rᵀ, gathered along the
    slots at clamp(-δ + s) (rows are keys), then transposed to (query, key); (n, n)."""
    kc, qr = np.asarray(k_content, dtype=np.float64), np.asarray(q_position, dtype=np.float64)
    by_slot = kc @ qr.T  # (n_keys, 2s)
    index = disentangled_slots(-np.asarray(relative, dtype=np.int64), span)  # (n, n)
    gathered = np.take_along_axis(by_slot, index, axis=-1)  # (n, n): [a, b] = row a at index[a, b]
    return np.ascontiguousarray(gathered.T)  # (n, n) query-major
