"""A WRONG sinusoidal encoding: the exponent uses the dimension index j, not the pair index i.

Shown to explain why a (sin, cos) pair must share one frequency.

    correct (pair i = columns 2i, 2i+1):  PE(p, 2i) = sin(p·ω_i),  PE(p, 2i+1) = cos(p·ω_i),
                                          ω_i = base^(-2i/d)
    bug (every column j its own rate):    PE(p, j) = sin(p·ν_j) for even j,  cos(p·ν_j) for odd j,
                                          ν_j = base^(-j/d)

Even columns are unchanged (ν_{2i} = ω_i); each cosine column turns a factor base^(-1/d) slower
than its sine partner. The pair no longer lies on the unit circle,
sin²(p·ν_{2i}) + cos²(p·ν_{2i+1}) ≠ 1, and PE(p)·PE(p+k) depends on p, not on k alone.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, as_positions, check_base, check_even_dim


def dimension_index_bug_pe(
    positions: int | npt.ArrayLike, d_model: int, base: float = 10000.0
) -> F64:
    """The buggy encoding PE_bug(p, j) (interleaved columns), float64 of shape (n, d_model).

    PE_bug(p, j) = sin(p·base^(-j/d)) for even j, cos(p·base^(-j/d)) for odd j.
    ``positions`` is an int n (meaning 0..n-1) or an array of positions.
    """
    d = check_even_dim("d_model", d_model)
    b = check_base(base)
    pos = as_positions(positions)  # (n,)
    nu = np.power(b, -np.arange(d, dtype=np.float64) / d)  # (d,): ν_j = base^(-j/d)
    angle = pos[:, None] * nu[None, :]  # (n, d)
    out = np.empty_like(angle)  # (n, d)
    out[:, 0::2] = np.sin(angle[:, 0::2])  # even columns: sin(p·ν_j)
    out[:, 1::2] = np.cos(angle[:, 1::2])  # odd columns: cos(p·ν_j)
    return out
