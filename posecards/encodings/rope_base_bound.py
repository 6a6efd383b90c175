"""The smallest RoPE base for a context length (Men et al. 2024, "Base of RoPE Bounds Context
Length", arXiv 2405.14591): the long-term decay of RoPE's ability to tell similar tokens apart.

With q = k (a token and a similar one) and random vectors, Men et al. show that the expected
advantage of the similar token over a random one at relative distance m is proportional to

    B(m) = sum_{i=0}^{d/2-1} cos(m theta_i),    theta_i = b^(-2i/d),

and ask that it stay non-negative for every distance a context of L tokens holds, 0 <= m <= L - 1.
That gives a lower bound on the base b for a context L: the smallest b for which
min_{0 <= m < L} B(m) >= 0.

``cos_sum`` is B(m); ``base_holds`` asks whether B stays >= 0 over a context; ``smallest_base``
finds the bound (a geometric scan of bases, then bisection inside the step where it first
holds); ``minimum_base`` is the first base of a 1 % grid that holds (the weights card's). The frequencies come from ``rope_inv_freq``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import check_base, check_even_dim, check_positive_int
from posecards.encodings.rope_scaling import rope_inv_freq

F64 = npt.NDArray[np.float64]

CHUNK = 1 << 16  # most distances per pass (bounds memory: CHUNK x d/2 float64)
GRID_RATIO = 1.001  # the scan's step between bases (0.1 %)
MIN_BASE_STEP = 1.01  # the grid of minimum_base: bases 2 · 1.01^j (1 %)


def cos_sum(distances: npt.ArrayLike, head_dim: int, base: float) -> F64:
    """B(m) = sum_i cos(m theta_i) at each distance m, float64, same shape as ``distances``."""
    d = check_even_dim("head_dim", head_dim)
    inv_freq, _ = rope_inv_freq(d, check_base(base))  # (d/2,)
    m = np.asarray(distances, dtype=np.float64)
    out: F64 = np.cos(m[..., None] * inv_freq).sum(axis=-1)  # (..., d/2) -> (...)
    return out


def first_negative(context: int, head_dim: int, base: float) -> int | None:
    """The smallest distance 0 <= m < context with B(m) < 0, or None (the base holds).
    Passes of growing length (256, 512, ... up to CHUNK distances): a small base fails early."""
    n = check_positive_int("context", context)
    start, size = 0, 256
    while start < n:
        m = np.arange(start, min(n, start + size), dtype=np.float64)  # (chunk,)
        neg = np.flatnonzero(cos_sum(m, head_dim, base) < 0.0)
        if neg.size:
            return start + int(neg[0])
        start, size = start + size, min(CHUNK, 2 * size)
    return None


def lowest_mean_cos(head_dim: int, base: float, context: int) -> F64:
    """``(context,)``: for m = 0 .. context − 1, the lowest B(m′) / (d/2) over m′ <= m (the mean
    over pairs of cos(m′ θ_i), lowest so far): the curve the weights card draws against the
    line 0 that ``base_holds`` asks about. In passes of CHUNK distances."""
    n = check_positive_int("context", context)
    out = np.empty(n, dtype=np.float64)  # (context,)
    low = np.inf
    for start in range(0, n, CHUNK):
        m = np.arange(start, min(n, start + CHUNK), dtype=np.float64)  # (chunk,)
        mean = cos_sum(m, head_dim, base) / (head_dim // 2)  # (chunk,)
        out[start : start + m.size] = np.minimum(np.minimum.accumulate(mean), low)
        low = float(out[start + m.size - 1])
    return out


def base_holds(context: int, head_dim: int, base: float) -> bool:
    """B(m) >= 0 for every distance 0 <= m < context."""
    return first_negative(context, head_dim, base) is None


def _first_holding(context: int, head_dim: int, bases: F64) -> int | None:
    """Index of the first base of ``bases`` (ascending) that holds over ``context`` tokens, or
    None. All bases at once: each pass of distances drops the bases that went negative in it."""
    d = check_even_dim("head_dim", head_dim)
    k = np.arange(d // 2, dtype=np.float64)  # (d/2,)
    alive = np.arange(bases.size)  # indices still holding
    start, size = 0, 256
    while start < context and alive.size:
        m = np.arange(start, min(context, start + size), dtype=np.float64)  # (chunk,)
        theta = bases[alive, None] ** (-2.0 * k / d)  # (alive, d/2), as rope_inv_freq
        b_m = np.cos(m[None, :, None] * theta[:, None, :]).sum(axis=-1)  # (alive, chunk)
        alive = alive[(b_m >= 0.0).all(axis=1)]
        start, size = start + size, min(CHUNK // max(1, alive.size), 2 * size)
        size = max(size, 256)
    return int(alive[0]) if alive.size else None


def smallest_base(
    context: int, head_dim: int, low: float = 2.0, high: float = 1e15, rel_tol: float = 1e-6
) -> float:
    """The smallest base for which B(m) >= 0 over ``context`` tokens: the first base of a
    geometric scan from ``low`` (step GRID_RATIO) that holds, refined by bisection on ln b
    between it and the scan's previous base (within ``rel_tol``).

    B is not monotone in the base: over 1,024 tokens at head_dim 128 a narrow band of bases near
    4,300 holds while bases near 5,000 fail again, so a bisection over the whole range could
    return a later crossing; the scan finds the first. A band narrower than the step can be
    missed (tests compare the result with a finer brute-force scan).
    """
    n = check_positive_int("context", context)
    check_even_dim("head_dim", head_dim)
    if base_holds(n, head_dim, low):
        return float(low)
    steps = int(math.ceil(math.log(high / low) / math.log(GRID_RATIO)))
    grid = low * GRID_RATIO ** np.arange(steps + 1, dtype=np.float64)  # (steps + 1,)
    found = None
    for start in range(0, grid.size, 256):  # 256 bases at a time, lowest first
        i = _first_holding(n, head_dim, grid[start : start + 256])
        if i is not None:
            found = start + i
            break
    if found is None or found == 0:
        raise ValueError(f"no base up to {high:g} keeps B(m) >= 0 over {context} tokens")
    lo, hi = math.log(grid[found - 1]), math.log(grid[found])
    while hi - lo > rel_tol:
        mid = 0.5 * (lo + hi)
        if base_holds(n, head_dim, math.exp(mid)):
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def minimum_base(head_dim: int, context: int, hi: float = 1e12) -> float:
    """The first base of the grid 2 · 1.01^j for which B(m) >= 0 over ``context`` tokens (to
    1 %: what the weights card and its JSON give; ``smallest_base`` refines it). The grid is
    scanned upwards, since B is not monotone in the base."""
    d = check_even_dim("head_dim", head_dim)
    if isinstance(context, bool) or not isinstance(context, int | np.integer) or context < 2:
        raise ValueError(f"context must be an integer >= 2, got {context!r}")
    steps = int(math.ceil(math.log(hi / 2.0) / math.log(MIN_BASE_STEP)))
    grid = 2.0 * MIN_BASE_STEP ** np.arange(steps + 1, dtype=np.float64)  # (steps + 1,)
    for start in range(0, grid.size, 256):  # 256 bases at a time, lowest first
        i = _first_holding(int(context), d, grid[start : start + 256])
        if i is not None:
            return float(grid[start + i])
    raise ValueError(f"no base up to {hi:g} keeps the sum non-negative over {context}")
