"""Relative-position buckets: many distances share one learned bias / embedding.

T5 and DeBERTa-v2 learn one value per *bucket* of relative distance: exact buckets for small
distances, logarithmically wider buckets for large ones, so a fixed number of parameters
covers any distance.

Both references evaluate the logarithm in float32 (``torch.log`` of a float32 tensor; Mesh
TensorFlow for T5 does the same), and bucket edges fall exactly on integers (e.g. T5 with 32
buckets: log(16/8)/log(128/8)·8 = 2). The result is truncated (T5) or rounded up (DeBERTa), so
float64 would move a few edges by one position. These functions therefore keep the float32
arithmetic of the references (float32 quotients, products, truncation), to give the buckets the
models were trained with.

One rule for the float32 logarithm, the same on every CPU: ``log_float32`` is the *correctly
rounded* float32 logarithm (the float32 number nearest to the exact ln x). A library's float32
log is not: numpy's AVX2/AVX-512 kernel, its baseline kernel and torch's (SLEEF on AVX2/AVX-512,
libm's ``logf`` on ATEN_CPU_CAPABILITY=default) are each within about an ulp of ln x, and at rare
inputs they land on different neighbours, so a bucket computed with them can depend on the CPU.
The references are such CPU-dependent functions: where their float32 log is not correctly
rounded, a reference bucket can differ from ours by one, on some CPUs (docs/portability.md;
tests/test_buckets.py measures where).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import I64, check_positive_int

F32 = npt.NDArray[np.float32]

# |np.log(x) - ln x| < LOG_BAND·|ln x| for every float64 log numpy may dispatch to (libm or
# SIMD kernels are accurate to a few ulp = 2^-52 each); where float32 rounding is not settled
# within the band, ln x is computed exactly (``_log_float32_exact``).
LOG_BAND = 2.0**-44


def _log_float32_exact(x: float) -> np.float32:
    """The float32 number nearest to ln x (x > 0 a float64), decided with as many bits as it
    takes (ln x of a float other than 1 is never exactly halfway between two float32s)."""
    import mpmath  # pure Python; only for the rare values close to a float32 midpoint

    guess = np.float32(math.log(x))
    candidates = (
        np.nextafter(guess, np.float32(-np.inf)),
        guess,
        np.nextafter(guess, np.float32(np.inf)),
    )
    prec = 128
    while True:
        with mpmath.workprec(prec):
            exact = mpmath.log(mpmath.mpf(x))
            dist = sorted((abs(exact - mpmath.mpf(float(c))), i) for i, c in enumerate(candidates))
            if dist[1][0] - dist[0][0] > abs(exact) * mpmath.mpf(2) ** (4 - prec):
                return candidates[dist[0][1]]
        prec *= 2


def log_float32(x: npt.ArrayLike) -> F32:
    """ln x correctly rounded to float32, for x > 0 (float32 or float64 values, taken exactly).

    float64 log (any CPU's: error < LOG_BAND relative) rounded to float32 is the correctly
    rounded result unless ln x lies within LOG_BAND of a point halfway between two float32s;
    those values (about 2^-20 of all) are recomputed exactly. Same float32 on every CPU.
    """
    x64 = np.asarray(x, dtype=np.float64)  # (...) exact for float32 input
    if np.any(~(x64 > 0)) or np.any(~np.isfinite(x64)):
        raise ValueError("log_float32 takes finite positive numbers")
    approx = np.log(x64)  # (...) float64, CPU-dependent in the last bits
    lo = (approx * (1 - LOG_BAND)).astype(np.float32)
    hi = (approx * (1 + LOG_BAND)).astype(np.float32)
    out = approx.astype(np.float32)  # (...)
    for idx in map(tuple, np.argwhere(lo != hi)):
        out[idx] = _log_float32_exact(float(x64[idx]))
    return out


def _as_int_positions(name: str, relative_position: npt.ArrayLike) -> I64:
    raw = np.asarray(relative_position)
    if raw.dtype.kind not in "iu":
        as_float = raw.astype(np.float64)
        if not np.all(np.isfinite(as_float)) or np.any(as_float != np.round(as_float)):
            raise ValueError(f"{name} must be whole numbers")
    return raw.astype(np.int64)


def t5_relative_bucket(
    relative_position: npt.ArrayLike,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> I64:
    """T5's ``_relative_position_bucket``; relative_position = key (memory) - query, same shape.

    bidirectional: half the buckets for keys after the query (r > 0), offset by B = num_buckets/2,
    and n = |r|. Unidirectional: n = max(-r, 0) (keys after the query all share bucket 0).
    With B buckets left and max_exact = B/2:

        bucket(n) = n                                                          if n < max_exact
        bucket(n) = min(B-1, max_exact + ⌊ln(n/max_exact) / ln(max_distance/max_exact)
                                          · (B - max_exact)⌋)                   otherwise

    so every distance >= max_distance lands in the last bucket.
    """
    r = _as_int_positions("relative_position", relative_position)
    nb = check_positive_int("num_buckets", num_buckets)
    md = check_positive_int("max_distance", max_distance)
    out = np.zeros_like(r)  # (...)
    if bidirectional:
        nb //= 2
        out += np.where(r > 0, nb, 0)  # keys after the query use the upper half
        n = np.abs(r)
    else:
        n = -np.minimum(r, 0)
    max_exact = nb // 2
    if max_exact < 1:
        raise ValueError(f"num_buckets must be >= {4 if bidirectional else 2}, got {num_buckets}")
    if md <= max_exact:
        raise ValueError(
            f"max_distance must be > the {max_exact} exact buckets, got {max_distance}"
        )
    # Safe argument: n < max_exact takes the exact branch, so log(0) is never evaluated.
    safe = np.maximum(n, max_exact).astype(np.float32)  # (...)
    # T5: torch.log(float32 n / max_exact) / math.log(max_distance / max_exact) (float64,
    # rounded to float32 when it divides the float32 tensor) * (num_buckets - max_exact)
    scaled = (
        log_float32(safe / np.float32(max_exact))
        / log_float32(md / max_exact)
        * np.float32(nb - max_exact)
    )  # (...) float32, >= 0, truncated towards zero like torch's .to(long)
    large = np.minimum(max_exact + scaled.astype(np.int64), nb - 1)  # (...)
    return out + np.where(n < max_exact, n, large)


def deberta_log_bucket(
    relative_position: npt.ArrayLike, bucket_size: int, max_position: int
) -> I64:
    """DeBERTa-v2's ``make_log_bucket_position``; relative_position = query - key, same shape.

    With mid = bucket_size/2 and sign s = sign(r):

        bucket(r) = r                                                          if |r| <= mid
        bucket(r) = s·(mid + ⌈ln(|r|/mid) / ln((max_position-1)/mid) · (mid-1)⌉)  otherwise

    The result is not clamped: distances beyond max_position keep growing slowly.
    """
    r = _as_int_positions("relative_position", relative_position)
    bs = check_positive_int("bucket_size", bucket_size)
    mp = check_positive_int("max_position", max_position)
    mid = bs // 2
    if mid < 1:
        raise ValueError(f"bucket_size must be >= 2, got {bucket_size}")
    if mp - 1 <= mid:
        raise ValueError(
            f"max_position must be > bucket_size/2 + 1 = {mid + 1}, got {max_position}"
        )
    sign = np.sign(r)  # (...)
    abs_pos = np.abs(r)  # (...)
    # Safe argument: |r| <= mid takes the exact branch, so log(0) is never evaluated.
    safe = np.maximum(abs_pos, mid).astype(np.float32)  # (...)
    log_pos = (
        np.ceil(
            log_float32(safe / np.float32(mid))
            / log_float32(np.float32((mp - 1) / mid))
            * np.float32(mid - 1)
        ).astype(np.int64)
        + mid
    )  # (...)
    return np.where(abs_pos <= mid, r, log_pos * sign)
