"""Similarity between sinusoidal encodings depends only on the offset between positions.

For each pair, sin(pω)sin(qω) + cos(pω)cos(qω) = cos((q-p)ω), so

    PE(p)·PE(p+k) = Σ_i cos(k·ω_i)

whatever p is and whatever the layout of the pairs. Every PE(p) has squared norm d/2, so the
cosine similarity is

    f(k) = (1/(d/2)) Σ_i cos(k·ω_i),     f(0) = 1,  f(-k) = f(k).

This module computes f over the distinct offsets only, then indexes the (n, n) matrix out of it,
so the n×d encoding matrix and its n×n×d products are never formed.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, as_positions
from posecards.encodings.sinusoidal import pair_frequencies

# Largest number of cos(k·ω_i) terms held at once: offsets × d/2 <= 8M float64 (64 MB).
_CHUNK_ELEMENTS = 8 * 1024 * 1024
# Rows of the similarity matrix handled at once for uneven positions (rows × n <= 64K).
_CHUNK_ROWS_ELEMENTS = 64 * 1024


def _profile(offsets: F64, omega: F64) -> F64:
    """f(k) = mean_i cos(k·ω_i) for a 1-D array of offsets, in chunks of offsets."""
    out = np.empty(offsets.shape[0], dtype=np.float64)  # (m,)
    step = max(1, _CHUNK_ELEMENTS // omega.shape[0])
    for start in range(0, offsets.shape[0], step):
        k = offsets[start : start + step]  # (chunk,)
        out[start : start + step] = np.cos(k[:, None] * omega[None, :]).mean(axis=1)  # (chunk,)
    return out


def _rows_per_block(n: int) -> int:
    return max(1, _CHUNK_ROWS_ELEMENTS // n)


def _distinct_offsets(pos: F64) -> F64:
    """Sorted distinct differences q - p of uneven positions, shape (m,).

    Whole-number positions with a span s where 2s+1 <= 8n² are marked in a boolean array of
    2s+1 entries, block by block of rows (no n² temporaries); otherwise ``np.unique`` sorts all
    n² differences (a few n²-sized temporaries).
    """
    n = pos.shape[0]
    span = float(pos.max() - pos.min())
    if np.all(pos == np.round(pos)) and 2 * span + 1 <= 8 * n * n:
        s = int(span)
        present = np.zeros(2 * s + 1, dtype=bool)  # (2s+1,): offsets -s..s
        rows = _rows_per_block(n)
        for a in range(0, n, rows):
            diff = pos[None, :] - pos[a : a + rows, None]  # (rows, n), whole numbers in -s..s
            present[diff.astype(np.int64) + s] = True
        return np.flatnonzero(present).astype(np.float64) - s  # (m,)
    return np.unique(pos[None, :] - pos[:, None])  # (m,)


def offset_profile(
    offsets: npt.ArrayLike,
    d_model: int,
    base: float = 10000.0,
    frequencies: str = "paper",
) -> F64:
    """Cosine similarity of two sinusoidal encodings k positions apart, same shape as ``offsets``.

    f(k) = (1/(d/2)) Σ_i cos(k·ω_i) = PE(p)·PE(p+k) / (d/2), independent of p and of the layout.
    """
    omega = pair_frequencies(d_model, base, frequencies)  # (d/2,)
    k = np.asarray(offsets, dtype=np.float64)
    if not np.all(np.isfinite(k)):
        raise ValueError("offsets must be finite numbers")
    return _profile(k.reshape(-1), omega).reshape(k.shape)


def pe_similarity(
    positions: int | npt.ArrayLike,
    d_model: int,
    base: float = 10000.0,
    frequencies: str = "paper",
) -> F64:
    """Cosine-similarity matrix S[a, b] = PE(p_a)·PE(p_b) / (d/2) = f(p_b - p_a), shape (n, n).

    Computed from the offset structure: f is evaluated once per distinct offset (2n-1 offsets for
    evenly spaced positions, the unique differences otherwise), and S is filled by indexing. Memory
    is O(n²) for the output (plus, for uneven fractional positions, the n² differences sorted once
    by ``np.unique``) and at most 8M float64 for the cosines of one chunk of offsets.
    """
    omega = pair_frequencies(d_model, base, frequencies)  # (d/2,)
    pos = as_positions(positions)  # (n,)
    n = pos.shape[0]
    gaps = np.diff(pos)  # (n-1,)
    if n == 1 or np.all(gaps == gaps[0]):
        # Evenly spaced: offset between a and b is (b - a)·step, one of 2n-1 values.
        step = gaps[0] if n > 1 else 0.0
        ks = np.arange(-(n - 1), n, dtype=np.float64) * step  # (2n-1,): offsets -(n-1)..(n-1)
        f = _profile(ks, omega)  # (2n-1,)
        # S[a, b] = f[b - a + n - 1]: row a is the window f[n-1-a : 2n-1-a] (a Toeplitz matrix).
        windows = np.lib.stride_tricks.sliding_window_view(f, n)  # (n, n) view, row s = f[s:s+n]
        return np.ascontiguousarray(windows[::-1])  # (n, n)
    ks = _distinct_offsets(pos)  # (m,): the distinct offsets q - p, sorted
    f = _profile(ks, omega)  # (m,)
    out = np.empty((n, n), dtype=np.float64)  # (n, n)
    rows = _rows_per_block(n)
    for a in range(0, n, rows):
        # The same subtraction as above, so every offset is found exactly in ks.
        diff = pos[None, :] - pos[a : a + rows, None]  # (rows, n)
        out[a : a + rows] = f[np.searchsorted(ks, diff)]  # (rows, n)
    return out
