"""The relative shift (Dai et al. 2019, appendix B): from scores against every relative distance
to scores against every key, by one reshape, without a gather.

Transformer-XL / XLNet score query i against the projected encodings R_r of a list of distances
(query length Q, key length K = memory M + Q):

    XLNet ("bi"):        distances K, K-1, ..., -Q+1                 (R = K + Q rows)
    Transformer-XL:      distances K-1, K-2, ..., 0                   (R = K rows)

so bd[i, c] = q_iᵀ W_R R_(distance c), a (Q, R) matrix. Query i sits at position M + i and key j
at j, so the score for (i, j) needs the column whose distance is M + i - j.

XLNet's ``rel_shift_bnij``: view (Q, R) as (R, Q), drop the first row (Q numbers), view the rest
as (Q, R - 1), keep K columns. Element (i, j) then sits at flat index i·R + (Q - i + j):

    shifted[i, j] = bd[i, Q - i + j]          distance K - (Q - i + j) = M + i - j    (exact)

Transformer-XL's ``_rel_shift``: pad one zero column on the left, view (Q, R + 1) as (R + 1, Q),
drop the first row, view as (Q, R):

    shifted[i, j] = bd[i, Q - 1 - i + j]      distance M + i - j, for j <= M + i
                    (for j > M + i: a zero or a number of the next row, hidden by the causal mask)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_positive_int

ATTN_TYPES: tuple[str, ...] = ("bi", "uni")


def xl_relative_distances(q_len: int, k_len: int, attn_type: str = "bi") -> F64:
    """The distances whose encodings R XLNet builds (``relative_positional_encoding``): K down to
    -Q + 1 ("bi", K + Q of them) or K down to 0 ("uni", K + 1); float64 (R,)."""
    q = check_positive_int("q_len", q_len)
    k = check_positive_int("k_len", k_len)
    if attn_type not in ATTN_TYPES:
        raise ValueError(f"unknown attn_type {attn_type!r}; choose one of: {', '.join(ATTN_TYPES)}")
    end = -q if attn_type == "bi" else -1
    return np.arange(k, end, -1, dtype=np.float64)  # (R,)


def _scores(name: str, x: npt.ArrayLike) -> F64:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < 2:
        raise ValueError(f"{name} must have shape (..., Q, R), got {arr.shape}")
    return arr


def rel_shift(bd: npt.ArrayLike, k_len: int) -> F64:
    """XLNet's relative shift of bd (..., Q, R) to (..., Q, K): reshape (R, Q), drop the first row,
    reshape (Q, R - 1), keep the first K columns. Needs K <= R - 1."""
    x = _scores("bd", bd)
    *lead, q, r = x.shape
    k = check_positive_int("k_len", k_len)
    if k > r - 1:
        raise ValueError(f"k_len must be <= R - 1 = {r - 1}, got {k_len}")
    y = x.reshape(*lead, r, q)[..., 1:, :]  # (..., R - 1, Q): the first Q numbers dropped
    return np.ascontiguousarray(y.reshape(*lead, q, r - 1)[..., :k])  # (..., Q, K)


def rel_shift_columns(q_len: int, k_len: int) -> I64:
    """The column of bd that XLNet's shift puts at (i, j): Q - i + j, int64 (Q, K)."""
    q = check_positive_int("q_len", q_len)
    k = check_positive_int("k_len", k_len)
    return (q - np.arange(q)[:, None] + np.arange(k)[None, :]).astype(np.int64)  # (Q, K)


def rel_shift_zero_pad(bd: npt.ArrayLike) -> F64:
    """Transformer-XL's ``_rel_shift`` of bd (..., Q, R): pad a zero column on the left, reshape
    (R + 1, Q), drop the first row, reshape (Q, R). Same shape out."""
    x = _scores("bd", bd)
    *lead, q, r = x.shape
    padded = np.concatenate([np.zeros((*lead, q, 1)), x], axis=-1)  # (..., Q, R + 1)
    y = padded.reshape(*lead, r + 1, q)[..., 1:, :]  # (..., R, Q)
    return np.ascontiguousarray(y.reshape(*lead, q, r))  # (..., Q, R)


def rel_shift_zero_pad_columns(q_len: int, r_len: int) -> I64:
    """The column of bd Transformer-XL's shift puts at (i, j): Q - 1 - i + j where j <= R - Q + i
    (the keys a causal query sees), -1 elsewhere; int64 (Q, R)."""
    q = check_positive_int("q_len", q_len)
    r = check_positive_int("r_len", r_len)
    if r < q:
        raise ValueError(f"r_len must be >= q_len = {q}, got {r_len}")
    col = q - 1 - np.arange(q)[:, None] + np.arange(r)[None, :]  # (Q, R)
    return np.where(col <= r - 1, col, -1).astype(np.int64)
