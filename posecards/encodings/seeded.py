"""A seeded generator that JavaScript repeats bit for bit (posecards/explore_js/math.js has the
same two functions): numpy's ``default_rng`` cannot be rerun in a browser, this can.

mulberry32, a 32-bit counter hash, in the JavaScript form of stackoverflow.com/a/47593316 that
projects copy (e.g. modrinth/knossos, src/lib/random.ts): the k-th output (k = 1, 2, ...) of
seed s hashes the counter a_k = s + k·0x6D2B79F5, all arithmetic mod 2³²:

    t   = (a ^ (a >> 15)) · (a | 1)
    t   = t ^ (t + (t ^ (t >> 7)) · (t | 61))
    out = t ^ (t >> 14)

Normals by Box–Muller, two per two outputs (u, v): u₁ = 1 − u/2³² ∈ (0, 1], u₂ = v/2³²,

    z₀ = √(−2 ln u₁)·cos(2π u₂),   z₁ = √(−2 ln u₁)·sin(2π u₂).

The integers are the same in both languages exactly; the normals up to the last bits of log,
cos and sin (tests/test_explore_math.py holds them to 1e-12). For teaching draws only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, check_positive_int

STEP = 0x6D2B79F5  # the counter's step (odd: every state once per 2³² outputs)
SEEDS = 2**32  # seeds are 0 .. 2³² − 1


def check_seed(seed: int) -> int:
    """A seed is an integer in [0, 2³²)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < SEEDS:
        raise ValueError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    return int(seed)


def mulberry32(seed: int, count: int) -> npt.NDArray[np.uint32]:
    """The first ``count`` outputs of mulberry32 from ``seed``, (count,) uint32."""
    s = check_seed(seed)
    n = check_positive_int("count", count)
    k = np.arange(1, n + 1, dtype=np.uint64)  # (count,)
    a = ((s + k * STEP) % SEEDS).astype(np.uint32)  # (count,) the counter a_k
    t = (a ^ (a >> 15)) * (a | 1)  # uint32 products wrap mod 2³²
    t = t ^ (t + (t ^ (t >> 7)) * (t | 61))
    return np.asarray(t ^ (t >> 14), dtype=np.uint32)


def seeded_normals(seed: int, count: int) -> F64:
    """``count`` standard normal draws from ``seed`` (Box–Muller on mulberry32), (count,)."""
    n = check_positive_int("count", count)
    u = mulberry32(seed, 2 * ((n + 1) // 2)).astype(np.float64) / SEEDS  # (2m,) in [0, 1)
    u1, u2 = 1.0 - u[0::2], u[1::2]  # (m,) u₁ in (0, 1], u₂ in [0, 1)
    r = np.sqrt(-2.0 * np.log(u1))  # (m,)
    a = 2.0 * np.pi * u2  # (m,)
    z = np.empty(u.shape[0], dtype=np.float64)  # (2m,)
    z[0::2] = r * np.cos(a)
    z[1::2] = r * np.sin(a)
    return z[:n]
