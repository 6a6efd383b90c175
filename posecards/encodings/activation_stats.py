"""What a model does with its RoPE pairs on real text: statistics of measured queries, keys and
attention weights (float64). posecards.model.activations runs the model; this computes.

- Pair norms over tokens (Barbero et al. 2024, "Round and Round We Go! What makes Rotary
  Positional Encodings useful?"): for head h and pair k, the mean over tokens t of ‖x[t, h, k]‖,
  the length of the pair's 2-vector. A rotation never changes it, so q and k can be measured
  before or after RoPE turns them.
- Massive slots (Jin et al. 2025, "Massive Values in Self-Attention Modules are the Key to
  Contextual Knowledge Understanding"): slot d of head h is massive when its norm over tokens,
  M[h, d] = ‖x[:, h, d]‖₂, exceeds ``MASSIVE_FACTOR`` (5) times the head's mean M[h, :].
- Attention mass by distance: for each head, the mean over queries i of the attention weight it
  gives keys j at distance i − j in each bin [0], [1], [2, 3], [4, 7], … (powers of two).
- First-token share: the mean over queries i ≥ 1 of the weight on key 0 (an "attention sink").
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64

MASSIVE_FACTOR = 5.0  # Jin et al.: a slot's norm over tokens above 5 × its head's mean


def pair_norm_means(x: npt.ArrayLike, rows: I64) -> F64:
    """``(heads, pairs)``: mean over tokens of ‖(x[t, h, rows[k, 0]], x[t, h, rows[k, 1]])‖.

    x: ``(tokens, heads, head_dim)``; rows: ``(pairs, 2)`` the two slots of each pair in the
    layout x is stored in (``rope_use.pair_rows``).
    """
    a = np.asarray(x, dtype=np.float64)  # (tokens, heads, head_dim)
    if a.ndim != 3:
        raise ValueError(f"x must be (tokens, heads, head_dim), got shape {a.shape}")
    r = np.asarray(rows, dtype=np.int64)  # (pairs, 2)
    norms = np.hypot(a[:, :, r[:, 0]], a[:, :, r[:, 1]])  # (tokens, heads, pairs)
    out: F64 = norms.mean(axis=0)  # (heads, pairs)
    return out


def slot_norms(x: npt.ArrayLike) -> F64:
    """``(heads, head_dim)``: M[h, d] = ‖x[:, h, d]‖₂, each slot's norm over the tokens."""
    a = np.asarray(x, dtype=np.float64)  # (tokens, heads, head_dim)
    out: F64 = np.sqrt(np.einsum("thd,thd->hd", a, a))  # (heads, head_dim)
    return out


def massive_slots(x: npt.ArrayLike, factor: float = MASSIVE_FACTOR) -> npt.NDArray[np.bool_]:
    """``(heads, head_dim)`` bool: M[h, d] > factor · mean_d M[h, d] (Jin et al.'s rule)."""
    m = slot_norms(x)  # (heads, head_dim)
    out: npt.NDArray[np.bool_] = m > factor * m.mean(axis=1, keepdims=True)
    return out


def distance_edges(tokens: int) -> I64:
    """Left edges of the distance bins for ``tokens`` positions: 0, 1, 2, 4, 8, … < tokens, then
    ``tokens`` (the end): bin b holds distances edges[b] ≤ Δ < edges[b + 1]."""
    if tokens < 1:
        raise ValueError(f"tokens must be at least 1, got {tokens}")
    left = [0] + [2**p for p in range(int(np.log2(tokens)) + 1) if 2**p < tokens]
    return np.asarray([*left, tokens], dtype=np.int64)  # (bins + 1,)


def mass_by_distance(attn: npt.ArrayLike, edges: I64) -> F64:
    """``(heads, bins)``: for each head, the mean over queries i of Σ_j attn[h, i, j] over the
    keys j with i − j in each bin (``distance_edges``). attn: ``(heads, tokens, tokens)``, each
    row a query's weights (causal: zero above the diagonal). A row that sums to 1 over j ≤ i
    gives bins that sum to 1."""
    a = np.asarray(attn)  # (heads, s, s)
    heads, s, s2 = a.shape
    if s != s2:
        raise ValueError(f"attn must be (heads, tokens, tokens), got shape {a.shape}")
    # C[i, j] = Σ_{j' <= j} attn[h, i, j']; keys at distance lo <= i - j < hi of query i are
    # C[i, i - lo] - C[i, i - hi] (C at a negative column is 0): one cumulative sum per head and
    # a gather per bin edge, not a pass over the s² (query, key) pairs per bin
    i = np.arange(s, dtype=np.int64)  # (s,)
    e = np.asarray(edges, dtype=np.int64)  # (bins + 1,)
    cols = i[None, :] - e[:, None]  # (bins + 1, s): column i - edge of each query
    ok = cols >= 0
    rows_i = np.broadcast_to(i, cols.shape)[ok]
    out = np.empty((heads, e.size - 1), dtype=np.float64)
    for h in range(heads):
        c = np.cumsum(a[h], axis=1, dtype=np.float64)  # (s, s)
        upto = np.zeros(cols.shape, dtype=np.float64)  # (bins + 1, s)
        upto[ok] = c[rows_i, cols[ok]]
        out[h] = (upto[:-1] - upto[1:]).sum(axis=1)  # (bins,)
    mean: F64 = out / s  # mean over the s queries
    return mean


def first_token_share(attn: npt.ArrayLike) -> F64:
    """``(heads,)``: the mean over queries i ≥ 1 of attn[h, i, 0] (query 0 can only see key 0)."""
    a = np.asarray(attn, dtype=np.float64)  # (heads, s, s)
    if a.shape[1] < 2:
        raise ValueError("first_token_share needs at least 2 tokens")
    share: F64 = a[:, 1:, 0].mean(axis=1)  # (heads,)
    return share
