"""What a trained RoPE model does with each frequency pair, from its q/k weights (float64).

A head's query is ``q = W_q x`` (``W_q``: ``(head_dim, d_in)`` rows of one head; the input
norm's gain γ folded in as ``W_q diag(γ)``). RoPE turns slots ``(r0, r1)`` of pair k together by
``m θ_k``, so everything pair k can carry is set by its two rows:

- pair norm ``‖W[r0]‖² + ‖W[r1]‖²`` (square-rooted): how much of the input reaches pair k
  (Barbero et al., ICLR 2025, measure the same on activations);
- pair cosine ``cos(W[r0], W[r1])`` (Chen & Yan, NeurIPS 2024): near 0, the pair's two slots
  carry different content; near ±1, they carry one direction, which RoPE then turns with the
  position alone;
- use ``‖W_q pair‖ · ‖W_k pair‖`` of a query head and its key head: the largest pair k's term of
  ``q · k`` can be for unit inputs' worth of norm, the weights-based measure of how much a head
  leans on pair k;
- with biases, the content-free score ``b_qᵀ R((m − n) θ) b_k`` against the distance m − n.

``critical_dimension`` (Liu et al., ICLR 2024) and ``minimum_base`` (Men et al., 2024) need only
the head size, the base and the context. Every function that forms pairs names its layout:
``"half"`` pairs rows (k, k + rotated/2) (transformers' ``rotate_half``), ``"interleaved"`` rows
(2k, 2k + 1) (GGML / Meta, and a llama.cpp-converted GGUF file before de-permutation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_even_dim, check_layout


def pair_rows(rotated_dim: int, layout: str) -> I64:
    """``(rotated_dim/2, 2)`` the two rows (slots of a head) of each pair k, in rotation order
    (``x0 cos − x1 sin``, ``x1 cos + x0 sin``): ``"half"`` (k, k + rotated_dim/2),
    ``"interleaved"`` (2k, 2k + 1). Rows from ``rotated_dim`` on do not rotate."""
    check_layout(layout)
    rotated_dim = check_even_dim("rotated_dim", rotated_dim)
    k = np.arange(rotated_dim // 2, dtype=np.int64)  # (pairs,)
    if layout == "half":
        return np.stack([k, k + rotated_dim // 2], axis=1)  # (pairs, 2)
    return np.stack([2 * k, 2 * k + 1], axis=1)  # (pairs, 2)


def _head(w: Any, h: int, shape: tuple[int, ...] | None) -> npt.NDArray[np.floating]:
    """Head h's ``(head_dim, d_in)`` rows, checked to be floats of the first head's shape."""
    a = np.asarray(w[h])
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.floating) or (shape and a.shape != shape):
        raise ValueError(
            f"w must hold float heads (head_dim, d_in), got {a.dtype} {a.shape} for head {h}"
        )
    return a


BLOCK_BYTES = 384 * 1024  # float64 rows widened at a time: they stay in a core's cache


def row_stats(
    w: Any, rows: I64, gamma: F64 | None = None, *, bfloat16: bool = False
) -> tuple[F64, F64]:
    """``(sq, dot)``: the squared norm of every row ``(heads, head_dim)`` and the dot product of
    each pair's two rows ``(heads, pairs)`` of ``W diag(γ)``, in float64:

        sq[h, s]  = Σ_d W[h, s, d]² γ_d²
        dot[h, p] = Σ_d W[h, r0(p), d] W[h, r1(p), d] γ_d²

    ``w``: ``(heads, head_dim, d_in)`` floats, or a sequence of heads whose items are
    ``(head_dim, d_in)`` float arrays (``model.weights.StoredHeads.stats`` hands a checkpoint's
    float16/float32 weight as stored, and a bfloat16 one as below). A few pairs' rows at a time are copied into one small float64 buffer
    (exact from float16 and float32, and so are their products), multiplied in place and reduced
    against γ² by a matrix-vector product: the whole tensor, or even one head, is never held in
    float64.

    ``bfloat16=True``: ``w`` is a ``(heads, head_dim, d_in)`` uint16 array of bfloat16 bit
    patterns (a checkpoint's BF16 weight as stored), widened block by block straight into the
    float64 buffer (the pattern as the top half of a float32, exact): the same float64 values,
    hence the same sums, as widening it first, with no float32 copy of a head. Nothing is
    checked finite here: a NaN or ±inf in a row makes that row's ``sq`` NaN or +inf wherever γ_d
    is not 0 (every term W²γ² is ≥ 0, so no inf − inf cancels it)."""
    if bfloat16:
        if not (isinstance(w, np.ndarray) and w.dtype == np.uint16 and w.ndim == 3):
            raise ValueError("bfloat16 weights must be a (heads, head_dim, d_in) uint16 array")
    elif isinstance(w, np.ndarray) and w.ndim != 3:
        raise ValueError(f"w must be (heads, head_dim, d_in), got {w.shape}")
    heads = len(w)
    if heads == 0:
        raise ValueError("w has no heads")
    first_head = w[0] if bfloat16 else _head(w, 0, None)
    head_dim, d_in = first_head.shape
    g2 = np.ones(d_in) if gamma is None else np.asarray(gamma, np.float64).reshape(d_in) ** 2
    pairs = rows.shape[0]
    step, blocks, rest = _blocks(rows, head_dim, d_in)
    sq = np.empty((heads, head_dim), dtype=np.float64)  # (heads, head_dim)
    dot = np.empty((heads, pairs), dtype=np.float64)  # (heads, pairs)
    buf = np.empty((2 * step, d_in), dtype=np.float64)  # (2 n, d_in): a block's r0 rows, r1 rows
    prod = np.empty((step, d_in), dtype=np.float64)  # (n, d_in)
    # bfloat16: a block's patterns, shifted into the top half of a float32's bits
    bits = np.empty((2 * step, d_in), dtype=np.uint32) if bfloat16 else None  # (2 n, d_in)
    for h in range(heads):
        if bfloat16:
            wh = w[h]  # (head_dim, d_in) uint16
        else:
            wh = first_head if h == 0 else _head(w, h, (head_dim, d_in))  # (head_dim, d_in)
        for k0, k1, r0, r1 in blocks:
            n = k1 - k0
            both = buf[: 2 * n]  # (2 n, d_in)
            if bits is not None:
                u = bits[: 2 * n]  # (2 n, d_in)
                np.copyto(u[:n], wh[r0], casting="safe")
                np.copyto(u[n:], wh[r1], casting="safe")
                np.left_shift(u, 16, out=u)
                np.copyto(both, u.view(np.float32), casting="safe")
            else:
                np.copyto(both[:n], wh[r0], casting="safe")
                np.copyto(both[n:], wh[r1], casting="safe")
            np.multiply(both[:n], both[n:], out=prod[:n])  # W[r0] W[r1], elementwise
            np.matmul(prod[:n], g2, out=dot[h, k0:k1])
            np.multiply(both, both, out=both)  # W²
            s = both @ g2  # (2 n,)
            sq[h, r0], sq[h, r1] = s[:n], s[n:]
        if rest.size:
            left = (
                (wh[rest].astype(np.uint32) << 16).view(np.float32) if bfloat16 else wh[rest]
            ).astype(np.float64)  # (unrotated, d_in)
            sq[h, rest] = (left * left) @ g2
    return sq, dot


def _blocks(rows: I64, head_dim: int, d_in: int) -> tuple[int, list[Any], I64]:
    """Pairs a block, each block's ``(k0, k1, r0 rows, r1 rows)``, and the rows that do not
    rotate (ascending)."""
    pairs = rows.shape[0]
    step = max(1, BLOCK_BYTES // (16 * d_in))  # pairs a block: 2 rows of d_in float64 each
    blocks = [
        (
            k,
            min(k + step, pairs),
            _as_slice(rows[k : k + step, 0]),
            _as_slice(rows[k : k + step, 1]),
        )
        for k in range(0, pairs, step)
    ]
    still = np.ones(head_dim, dtype=bool)  # (head_dim,)
    still[rows.reshape(-1)] = False
    return step, blocks, np.flatnonzero(still)


def _as_slice(idx: I64) -> slice | I64:
    """A slice for an evenly spaced index (both layouts' rows are: no copy), else the index."""
    v = idx.tolist()  # a block's few pairs: plain ints are quicker than array calls
    if len(v) > 1 and (step := v[1] - v[0]) > 0 and v == list(range(v[0], v[-1] + 1, step)):
        return slice(v[0], v[-1] + 1, step)
    return idx


def norms_from(sq: F64, rows: I64) -> F64:
    """``(heads, pairs)`` pair norms ``sqrt(‖r0‖² + ‖r1‖²)`` from the squared row norms."""
    out: F64 = np.sqrt(sq[:, rows[:, 0]] + sq[:, rows[:, 1]])
    return out


def cosines_from(sq: F64, dot: F64, rows: I64) -> F64:
    """``(heads, pairs)`` cosine between each pair's two rows (Chen & Yan); NaN where a row is
    zero."""
    den = np.sqrt(sq[:, rows[:, 0]] * sq[:, rows[:, 1]])  # (heads, pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: F64 = np.where(den > 0, dot / den, np.nan)
    return out


def pair_norms(w: npt.ArrayLike, rows: I64) -> F64:
    """``(heads, pairs)`` ``sqrt(‖w[h, r0]‖² + ‖w[h, r1]‖²)`` of ``w`` ``(heads, head_dim, d_in)``."""
    return norms_from(row_stats(w, rows)[0], rows)


def pair_cosines(w: npt.ArrayLike, rows: I64) -> F64:
    """``(heads, pairs)`` cosine between the two rows of each pair (Chen & Yan); NaN where a row
    is zero."""
    sq, dot = row_stats(w, rows)
    return cosines_from(sq, dot, rows)


def unrotated_norms(sq: F64, rotated: npt.ArrayLike) -> F64:
    """``(heads,)`` norm of the rows of each head that do not rotate (partial rotary), from the
    squared row norms and the ``(head_dim,)`` mask ``rotated`` (True where a slot is in a pair)."""
    out: F64 = np.sqrt(sq[:, ~np.asarray(rotated, dtype=bool)].sum(axis=1))
    return out


def kv_head_of(n_heads: int, n_kv: int) -> I64:
    """``(n_heads,)`` the key/value head each query head reads (grouped-query attention: query
    head h uses key head ``h // (n_heads / n_kv)``, transformers' ``repeat_kv``)."""
    if n_kv <= 0 or n_heads % n_kv:
        raise ValueError(f"n_heads {n_heads} is not a multiple of n_kv {n_kv}")
    return np.arange(n_heads, dtype=np.int64) // (n_heads // n_kv)  # (n_heads,)


def pair_use(q_norms: F64, k_norms: F64, kv_head: I64) -> F64:
    """``(heads, pairs)`` ``‖W_q pair‖ · ‖W_k pair‖`` of each query head with its key head."""
    return np.asarray(q_norms, np.float64) * np.asarray(k_norms, np.float64)[kv_head]


def shares(values: F64) -> F64:
    """Each row divided by its sum (a head's use of each pair as a share of its total)."""
    v = np.asarray(values, dtype=np.float64)
    total = v.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, v / total, np.nan)


def bias_score(b_q: F64, b_k: F64, inv_freq: F64, rows: I64, distances: F64) -> F64:
    """``(..., distances)`` ``b_qᵀ R(Δθ) b_k`` summed over pairs, where Δ = m − n is the query's
    position minus the key's, and R turns the key at n and the query at m as RoPE does:

        q_m · k_n = Σ_k (q0 k0 + q1 k1) cos(Δ θ_k) + (q0 k1 − q1 k0) sin(Δ θ_k)

    with (q0, q1) = b_q[..., rows[k]], (k0, k1) = b_k[..., rows[k]]; slots that do not rotate add
    their plain dot product (a constant). ``b_q``, ``b_k``: ``(head_dim,)`` or ``(heads,
    head_dim)`` (query heads with the key head each reads)."""
    b_q = np.asarray(b_q, dtype=np.float64)  # (..., head_dim)
    b_k = np.asarray(b_k, dtype=np.float64)  # (..., head_dim)
    theta = np.asarray(inv_freq, dtype=np.float64)  # (pairs,)
    if theta.shape != (rows.shape[0],):
        raise ValueError(f"inv_freq has {theta.size} values for {rows.shape[0]} pairs")
    q0, q1 = b_q[..., rows[:, 0]], b_q[..., rows[:, 1]]  # (..., pairs)
    k0, k1 = b_k[..., rows[:, 0]], b_k[..., rows[:, 1]]
    a = q0 * k0 + q1 * k1  # (..., pairs)
    b = q0 * k1 - q1 * k0
    angle = np.outer(np.asarray(distances, dtype=np.float64), theta)  # (distances, pairs)
    rotated = np.zeros(b_q.shape[-1], dtype=bool)
    rotated[rows.reshape(-1)] = True
    rest = np.einsum("...s,...s->...", b_q[..., ~rotated], b_k[..., ~rotated])  # (...)
    out: F64 = a @ np.cos(angle).T + b @ np.sin(angle).T + np.asarray(rest)[..., None]
    return out  # (..., distances)
