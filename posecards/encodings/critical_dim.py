"""The critical dimension of RoPE (Liu et al. 2024, "Scaling Laws of RoPE-based Extrapolation",
ICLR 2024, arXiv 2310.05209).

Pair i turns at theta_i = b^(-2i/d) radians per token: one full turn takes 2 pi / theta_i
= 2 pi b^(2i/d) tokens. Over a training context of T tokens, the pairs with 2 pi b^(2i/d) <= T
see every angle of their circle; the others see only an arc, and an angle past it at inference
is new to the model. Liu et al. count the dimensions that do complete a turn:

    d_extra = 2 ceil( (d/2) log_b(T / (2 pi)) )        (clipped to 0..d)

and, for a model trained (or tuned) at T with base b, the context its critical dimension's
period reaches:

    T_extra = 2 pi b^(d_extra / d).

``turning_pairs`` counts the pairs by their periods (the direct computation); ``critical_dimension``
is Liu et al.'s closed form; ``extrapolation_bound`` is T_extra.
"""

from __future__ import annotations

import math

import numpy as np

from posecards.encodings._checks import check_base, check_even_dim, check_positive_int
from posecards.encodings.rope_scaling import rope_inv_freq


def turning_pairs(head_dim: int, base: float, context: int) -> int:
    """How many pairs complete at least one full turn within ``context`` positions
    (period 2 pi / theta_i <= context)."""
    inv_freq, _ = rope_inv_freq(check_even_dim("head_dim", head_dim), check_base(base))
    periods = 2.0 * np.pi / inv_freq  # (d/2,) tokens per turn
    return int((periods <= check_positive_int("context", context)).sum())


def critical_dimension(head_dim: int, base: float, context: int) -> int:
    """d_extra = 2 ceil((d/2) log_b(T / 2 pi)), clipped to [0, d] (Liu et al. 2024)."""
    d = check_even_dim("head_dim", head_dim)
    x = (d / 2) * math.log(check_positive_int("context", context) / (2 * math.pi))
    x /= math.log(check_base(base))
    return int(min(d, max(0, 2 * math.ceil(x))))


def extrapolation_bound(head_dim: int, base: float, context: int) -> float:
    """T_extra = 2 pi b^(d_extra / d): the period of the first pair past the critical dimension."""
    d = check_even_dim("head_dim", head_dim)
    bound: float = 2 * math.pi * check_base(base) ** (critical_dimension(d, base, context) / d)
    return bound
