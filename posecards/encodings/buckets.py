"""Relative-position buckets: many distances share one learned bias / embedding.

T5 and DeBERTa-v2 learn one value per *bucket* of relative distance: exact buckets for small
distances, logarithmically wider buckets for large ones, so a fixed number of parameters
covers any distance.

Both references evaluate the logarithm in float32 (``torch.log`` of a float32 tensor; Mesh
TensorFlow for T5 does the same), and bucket edges fall exactly on integers (e.g. T5 with 32
buckets: log(16/8)/log(128/8)·8 = 2). The result is truncated (T5) or rounded up (DeBERTa), so
float64 would move a few edges by one position. These functions therefore do the logarithm in
float32 on purpose, to give the buckets the models were trained with.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import I64, check_positive_int


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
    scaled = (
        np.log(safe / np.float32(max_exact))
        / np.float32(math.log(md / max_exact))
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
            np.log(safe / np.float32(mid))
            / np.log(np.float32((mp - 1) / mid))
            * np.float32(mid - 1)
        ).astype(np.int64)
        + mid
    )  # (...)
    return np.where(abs_pos <= mid, r, log_pos * sign)
