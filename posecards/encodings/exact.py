"""Correctly rounded pow, sin and cos: the same float32/float64 results on every CPU.

numpy's float64 and float32 pow/sin/cos come from the CPU's libm or from SIMD kernels chosen at
run time (AVX-512, AVX2, NEON): they are accurate to an ulp or a few, but which neighbour they
land on depends on the machine. A number printed on a card must not, so the demonstrations that
show float32 rounding use correctly rounded results:

    pow_rounded:     base^e evaluated with 113 bits (mpmath), rounded to float64 or float32
    sin_cos_float32: sin and cos of float32 arguments, correctly rounded to float32

Rounding a correctly rounded float64 (or a 113-bit value) to float32 ("double rounding") gives
the correctly rounded float32 except when the exact value lies within 2^-53 (relative) of a
point halfway between two float32 numbers: a case of probability about 2^-29 per value, which
no input used here hits (``sin_cos_float32`` even checks each value and falls back to 113 bits
near such a point).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64

PRECISION_BITS = 113  # binary128's significand: far beyond float64's 53
# |libm result - exact| < BAND·|exact| holds for every float64 sin/cos/pow in use (they are
# accurate to a few ulp, 2^-52 each); a value whose float32 rounding could change within the
# band is recomputed with PRECISION_BITS.
BAND = 2.0**-44


def pow_rounded(base: float, exponents: npt.ArrayLike, dtype: type[np.floating]) -> F64:
    """base ** e for each exponent (taken exactly as given), correctly rounded to ``dtype``
    (np.float64 or np.float32), returned as float64. base > 0."""
    import mpmath  # pure Python; imported here only

    e = np.asarray(exponents, dtype=np.float64)  # (n,)
    out = np.empty(e.shape, dtype=np.float64)
    with mpmath.workprec(PRECISION_BITS):
        b = mpmath.mpf(float(base))
        for idx, x in np.ndenumerate(e):
            out[idx] = float(mpmath.power(b, mpmath.mpf(float(x))))
    return out if dtype is np.float64 else out.astype(np.float32).astype(np.float64)


def pow_exact_ratio(base: float, numerators: npt.ArrayLike, denominator: int) -> F64:
    """base ** (k / n) for integers k and n, the exponent exact (not a rounded float64), the
    result correctly rounded to float64."""
    import mpmath

    k = np.asarray(numerators, dtype=np.int64)
    out = np.empty(k.shape, dtype=np.float64)
    with mpmath.workprec(PRECISION_BITS):
        b = mpmath.mpf(float(base))
        for idx, x in np.ndenumerate(k):
            out[idx] = float(mpmath.power(b, mpmath.mpf(int(x)) / int(denominator)))
    return out


def _round32_checked(approx: F64, exact: Callable[[tuple[int, ...]], float]) -> F64:
    """float32 rounding of float64 approximations (relative error < BAND); values whose rounding
    is not settled by that bound are recomputed by ``exact`` (index -> 113-bit value)."""
    lo = (approx * (1 - BAND)).astype(np.float32)
    hi = (approx * (1 + BAND)).astype(np.float32)
    out = approx.astype(np.float32).astype(np.float64)
    unsure = np.argwhere(lo != hi)
    for idx in map(tuple, unsure):
        out[idx] = float(np.float32(exact(idx)))
    return out


def sin_cos_float32(x32: npt.ArrayLike) -> tuple[F64, F64]:
    """sin(x) and cos(x) of float32 numbers x, correctly rounded to float32 (as float64)."""
    import mpmath

    x = np.asarray(x32, dtype=np.float32).astype(np.float64)  # exact: float32 ⊂ float64

    def exact(fn: Callable[[object], object]) -> Callable[[tuple[int, ...]], float]:
        def at(idx: tuple[int, ...]) -> float:
            with mpmath.workprec(PRECISION_BITS):
                return float(fn(mpmath.mpf(float(x[idx]))))  # type: ignore[arg-type]

        return at

    return (
        _round32_checked(np.sin(x), exact(mpmath.sin)),
        _round32_checked(np.cos(x), exact(mpmath.cos)),
    )
