"""The scaling factor a target context needs under each RoPE scaling method, in float64.

A model trained on L tokens has seen, in pair k, the arc of angles [0, theta_k (L - 1)]
(``unseen_angles.angle_reach``). Tested on T > L tokens with the frequencies a scaling method
makes of theta_k at factor s (``rope_inv_freq``, Hugging Face's formulas), no pair reaches an
angle it never saw when

    unseen_k(s) = max(0, min(2 pi, theta'_k(s) (T - 1)) - min(2 pi, theta_k (L - 1))) = 0  for all k.

``factor_needed(method, ...)`` is the smallest such s (bisection: each method slows every pair
monotonically as s grows). For ``linear`` (position interpolation) it is (T - 1) / (L - 1) in
closed form; NTK-aware, YaRN, Llama 3 and dynamic NTK leave fast pairs (nearly) alone and slow
the slow ones, so they can need a different s: that difference is the number this computes.
The methods' own parameters (YaRN's beta_fast/slow, Llama 3's low/high_freq_factor) are
Hugging Face's defaults; ``original_max_position_embeddings`` is L.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from posecards.encodings._checks import check_base, check_even_dim, check_positive_int
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.unseen_angles import unseen_angles

# the methods and the rope_parameters each is computed with (factor added)
METHODS: dict[str, dict[str, Any]] = {
    "linear": {"rope_type": "linear"},
    "ntk": {"rope_type": "ntk"},
    "dynamic": {"rope_type": "dynamic"},
    "yarn": {"rope_type": "yarn"},
    "llama3": {"rope_type": "llama3", "low_freq_factor": 1.0, "high_freq_factor": 4.0},
}
TOLERANCE = 1e-12  # radians of unseen arc counted as none (rounding)


def scaled_inv_freq(
    method: str, head_dim: int, base: float, factor: float, train_length: int, test_length: int
) -> np.ndarray:
    """(head_dim/2,) frequencies the method uses at ``factor`` on ``test_length`` tokens."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    params = {**METHODS[method], "factor": float(factor)}
    if method in ("yarn", "llama3"):
        params["original_max_position_embeddings"] = int(train_length)
    inv_freq, _ = rope_inv_freq(
        head_dim, base, params, seq_len=test_length, max_position_embeddings=train_length
    )
    return inv_freq


def unseen_at(
    method: str, head_dim: int, base: float, factor: float, train_length: int, test_length: int
) -> float:
    """The largest unseen arc (radians) over the pairs at ``factor``."""
    train, _ = rope_inv_freq(head_dim, base)  # (d/2,)
    test = scaled_inv_freq(method, head_dim, base, factor, train_length, test_length)
    return float(unseen_angles(train, test, train_length, test_length).max())


def factor_needed(
    method: str,
    head_dim: int,
    base: float,
    train_length: int,
    test_length: int,
    high: float = 1e6,
    rel_tol: float = 1e-9,
) -> float:
    """The smallest factor s >= 1 (within ``rel_tol``) at which no pair reaches an unseen angle
    on ``test_length`` tokens; 1.0 if none does without scaling."""
    d = check_even_dim("head_dim", head_dim)
    b = check_base(base)
    L = check_positive_int("train_length", train_length)
    T = check_positive_int("test_length", test_length)

    def ok(s: float) -> bool:
        return unseen_at(method, d, b, s, L, T) <= TOLERANCE

    if ok(1.0):
        return 1.0
    if not ok(high):
        raise ValueError(f"{method}: no factor up to {high:g} covers {T} tokens")
    lo, hi = 0.0, math.log(high)
    while hi - lo > rel_tol:
        mid = 0.5 * (lo + hi)
        if ok(math.exp(mid)):
            hi = mid
        else:
            lo = mid
    return math.exp(hi)
