"""From counting to a sinusoid: the encodings one could try before the sinusoidal one, in float64.

The road card 1 draws, one rung per function:

1. the position itself, ``p``: grows without bound, far beyond the scale of an embedding;
2. normalised, ``p / (N - 1)``: bounded, but the same position gets another value in a sequence
   of another length ``N`` (``normalised_positions``);
3. binary digits, ``bit_j(p) = floor(p / 2^j) mod 2``: bounded and the same in every sequence,
   but every digit jumps (``binary_digits``);
4. the smooth binary counter, ``(1 - cos(pi p / 2^j)) / 2``: the same period ``2^(j+1)`` as digit
   ``j``, without the jumps (``smooth_digits``). It is the cosine of the angle ``p * pi / 2^j``,
   so with its sine it is a point turning on a circle: a shift by ``k`` is a rotation
   (``posecards.encodings.sinusoidal.offset_rotation``), the step to the sinusoidal encoding
   (periods ``2 pi b^(2i/d)`` instead of ``2^(j+1)``) and to RoPE.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, as_positions, check_positive_int


def normalised_positions(positions: int | npt.ArrayLike, length: int) -> F64:
    """``p / (length - 1)``: positions 0..length-1 mapped onto [0, 1], shape ``(n,)``.

    ``length`` is the sequence's own length, so the value of a position depends on it.
    """
    n = check_positive_int("length", length)
    if n < 2:
        raise ValueError(f"length must be at least 2 to normalise by length - 1, got {n}")
    return as_positions(positions) / float(n - 1)  # (n,)


def _integer_positions(positions: int | npt.ArrayLike) -> F64:
    pos = as_positions(positions)  # (n,)
    if np.any(pos < 0) or np.any(pos != np.round(pos)):
        raise ValueError("positions must be non-negative integers for binary digits")
    return pos


def binary_digits(positions: int | npt.ArrayLike, n_bits: int) -> F64:
    """``bit[p, j] = floor(p / 2^j) mod 2``, 0.0 or 1.0, shape ``(n, n_bits)``; digit 0 first.

    Digit ``j`` has period ``2^(j+1)``: it flips every ``2^j`` positions.
    """
    bits = check_positive_int("n_bits", n_bits)
    pos = _integer_positions(positions)  # (n,)
    j = np.arange(bits, dtype=np.float64)  # (n_bits,)
    return np.mod(np.floor(pos[:, None] / 2.0**j), 2.0)  # (n, n_bits)


def smooth_digits(positions: int | npt.ArrayLike, n_bits: int) -> F64:
    """The smooth binary counter ``(1 - cos(pi p / 2^j)) / 2``, in [0, 1], shape ``(n, n_bits)``.

    Same period ``2^(j+1)`` as ``binary_digits`` digit ``j``; equal to it at the positions
    ``p = 0`` and ``p = 2^j`` (mod ``2^(j+1)``), smooth in between. Fractional positions allowed.
    """
    bits = check_positive_int("n_bits", n_bits)
    pos = as_positions(positions)  # (n,)
    omega = np.pi / 2.0 ** np.arange(bits, dtype=np.float64)  # (n_bits,): 2 pi / 2^(j+1)
    return 0.5 * (1.0 - np.cos(pos[:, None] * omega[None, :]))  # (n, n_bits)
