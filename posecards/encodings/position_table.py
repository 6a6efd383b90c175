"""Diagnostics of a position table read from a model: norms, cosine similarity, offset profile.

For a table P of shape (n, d) (row p = the vector added for position p), with unit rows
u_p = P_p / |P_p|:

    C[p, q]  = u_p · u_q                                   cosine similarity
    g(k)     = mean over p of u_p · u_{p+k}                mean similarity at offset k

A zero row has no direction: its cosines are undefined (NaN in C), and g averages only over the
pairs p, p+k whose rows are both non-zero (g(k) is NaN when there is no such pair).

A table that encodes distance smoothly has C bright near the diagonal and g falling with k
(a sinusoidal table has g = f of ``similarity.py``). g is the mean of the k-th diagonal of C;
it is computed without forming C: Σ_p u_p·u_{p+k} = Σ_c (autocorrelation of column c)(k), one
FFT per column (zero-padded to avoid wrap-around), in chunks of columns, O(n d log n); the number
of valid pairs at each offset is the autocorrelation of the non-zero mask.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64

_CHUNK_ELEMENTS = 4 * 1024 * 1024  # columns per FFT chunk: (2n) × columns <= 4M complex


def as_table(table: npt.ArrayLike) -> F64:
    """A finite float64 (positions, width) table, or ValueError."""
    arr = np.asarray(table, dtype=np.float64)  # (n, d)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(
            f"a position table is a non-empty (positions, width) array, got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=1))[0])
        raise ValueError(f"the position table holds a non-finite value (row {bad})")
    return arr


def row_norms(table: npt.ArrayLike) -> F64:
    """|P_p| for every position, shape (n,)."""
    return np.asarray(np.linalg.norm(as_table(table), axis=1), dtype=np.float64)  # (n,)


def unit_rows(table: npt.ArrayLike) -> F64:
    """P_p / |P_p|, zero rows left at zero, shape (n, d)."""
    arr = as_table(table)  # (n, d)
    # divide by the largest entry first: squares of tiny entries would underflow to subnormals
    peak = np.abs(arr).max(axis=1)  # (n,)
    scaled = arr / np.where(peak > 0, peak, 1.0)[:, None]  # (n, d), entries in [-1, 1]
    norms = np.linalg.norm(scaled, axis=1)  # (n,)
    return scaled / np.where(norms > 0, norms, 1.0)[:, None]  # (n, d)


def _autocorrelation(x: F64, size: int) -> F64:
    """Σ_p x[p] x[p+k] for k = 0..n-1, summed over the columns of x (n, c): shape (n,)."""
    spec = np.fft.rfft(x, n=size, axis=0)  # (size/2+1, c)
    lagged: F64 = np.fft.irfft(spec * np.conj(spec), n=size, axis=0)  # (size, c)
    summed: F64 = lagged[: x.shape[0]].sum(axis=1)  # (n,)
    return summed


def table_similarity(table: npt.ArrayLike, rows: npt.ArrayLike | None = None) -> F64:
    """C[a, b] = u_{r_a} · u_{r_b} for the given row indices (default: all), clipped to [-1, 1];
    NaN in the rows and columns of zero rows."""
    u = unit_rows(table)  # (n, d)
    if rows is not None:
        idx = np.asarray(rows, dtype=np.int64)  # (m,)
        if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= u.shape[0]:
            raise ValueError(f"rows must be 1-D indices from 0 to {u.shape[0] - 1}")
        u = u[idx]  # (m, d)
    sim = np.clip(u @ u.T, -1.0, 1.0)  # (m, m)
    zero = ~np.any(u != 0, axis=1)  # (m,)
    sim[zero, :] = np.nan
    sim[:, zero] = np.nan
    return sim


def table_offset_profile(table: npt.ArrayLike) -> F64:
    """g(k), k = 0..n-1: the mean cosine similarity of non-zero rows k apart, shape (n,).

    g(0) = 1 unless every row is zero; g(k) is NaN where no pair of non-zero rows is k apart.
    """
    u = unit_rows(table)  # (n, d)
    n, d = u.shape
    size = 1 << (2 * n - 1).bit_length()  # >= 2n - 1: no circular wrap-around
    total = np.zeros(n, dtype=np.float64)  # (n,)
    cols = max(1, _CHUNK_ELEMENTS // size)
    for c in range(0, d, cols):
        total += _autocorrelation(u[:, c : c + cols], size)
    nonzero = np.any(u != 0, axis=1).astype(np.float64)[:, None]  # (n, 1)
    pairs = np.round(_autocorrelation(nonzero, size))  # (n,) pairs of non-zero rows k apart
    g = np.full(n, np.nan)  # (n,)
    np.divide(total, pairs, out=g, where=pairs > 0)
    clipped: F64 = np.clip(g, -1.0, 1.0)  # (n,)
    return clipped
