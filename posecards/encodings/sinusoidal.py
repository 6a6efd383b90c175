"""Fixed sinusoidal position encodings (Vaswani et al., 2017, section 3.5).

Each pair of dimensions i = 0..d/2-1 holds one rotation at angular frequency ω_i:

    PE(p, pair i) = (sin(p·ω_i), cos(p·ω_i))

Two frequency rules are in use:

* ``"paper"``:         ω_i = base^(-2i/d)                 (paper, Annotated Transformer, DistilBERT,
                                                            Marian, Transformer-XL)
* ``"tensor2tensor"``: ω_i = exp(-i·ln(base) / (d/2 - 1))  (tensor2tensor, fairseq, M2M100)

and two layouts of the pairs in the vector:

* ``"interleaved"``: sin at column 2i, cos at column 2i+1  (paper, Annotated Transformer, DistilBERT)
* ``"half"``:        [sin_0..sin_{d/2-1} | cos_0..cos_{d/2-1}]  (Marian, Transformer-XL, fairseq)
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import (
    F64,
    as_positions,
    check_base,
    check_even_dim,
    check_layout,
)

Frequencies = Literal["paper", "tensor2tensor"]
FREQUENCIES: tuple[str, ...] = ("paper", "tensor2tensor")


def check_frequencies(frequencies: str) -> str:
    """Raise ValueError naming the valid frequency rules if ``frequencies`` is not one of them."""
    if frequencies not in FREQUENCIES:
        raise ValueError(
            f"unknown frequencies {frequencies!r}; choose one of: {', '.join(FREQUENCIES)}"
        )
    return frequencies


def pair_frequencies(d_model: int, base: float = 10000.0, frequencies: str = "paper") -> F64:
    """Angular frequency ω_i of each (sin, cos) pair, i = 0..d/2-1, as float64 of shape (d/2,).

    "paper":         ω_i = base^(-2i/d)                 (ω_0 = 1, ω_{d/2-1} = base^(-(d-2)/d))
    "tensor2tensor": ω_i = exp(-i·ln(base) / (d/2-1))   (ω_0 = 1, ω_{d/2-1} = 1/base exactly)

    The tensor2tensor rule divides by d/2 - 1, so it needs d_model >= 4.
    """
    d = check_even_dim("d_model", d_model)
    b = check_base(base)
    check_frequencies(frequencies)
    half = d // 2
    i = np.arange(half, dtype=np.float64)  # (d/2,)
    if frequencies == "paper":
        # ω_i = base^(-2i/d)
        return np.power(b, -2.0 * i / d)  # (d/2,)
    if half < 2:
        raise ValueError(
            f"d_model must be >= 4 for frequencies='tensor2tensor' "
            f"(ω_i = exp(-i·ln(base)/(d/2-1)) divides by d/2-1 = 0), got {d}"
        )
    # ω_i = exp(-i·ln(base) / (d/2 - 1))
    omega: F64 = np.exp(-i * np.log(b) / (half - 1))  # (d/2,)
    return omega


def wavelengths(d_model: int, base: float = 10000.0, frequencies: str = "paper") -> F64:
    """Wavelength in positions of each pair, λ_i = 2π/ω_i, shape (d/2,).

    With the paper rule the wavelengths form a geometric progression from 2π to base·2π
    (exclusive): that is why positions up to ~base stay distinguishable.
    """
    return 2.0 * np.pi / pair_frequencies(d_model, base, frequencies)  # (d/2,)


def sinusoidal_pe(
    positions: int | npt.ArrayLike,
    d_model: int,
    base: float = 10000.0,
    layout: str = "interleaved",
    frequencies: str = "paper",
) -> F64:
    """The fixed sinusoidal encoding of ``positions``, float64 of shape (n, d_model).

    PE(p, pair i) = (sin(p·ω_i), cos(p·ω_i)), with ω_i from :func:`pair_frequencies`, placed
    by ``layout``: "interleaved" puts sin at column 2i and cos at 2i+1; "half" puts all sines
    first, then all cosines. ``positions`` is an int n (meaning 0..n-1) or an array.
    """
    check_layout(layout)
    omega = pair_frequencies(d_model, base, frequencies)  # (d/2,)
    pos = as_positions(positions)  # (n,)
    angle = pos[:, None] * omega[None, :]  # (n, d/2): θ_{p,i} = p·ω_i
    half = omega.shape[0]
    out = np.empty((pos.shape[0], 2 * half), dtype=np.float64)  # (n, d_model)
    if layout == "interleaved":
        out[:, 0::2] = np.sin(angle)  # columns 2i
        out[:, 1::2] = np.cos(angle)  # columns 2i+1
    else:
        out[:, :half] = np.sin(angle)  # columns i
        out[:, half:] = np.cos(angle)  # columns i + d/2
    return out


def offset_rotation(
    k: float,
    d_model: int,
    base: float = 10000.0,
    layout: str = "interleaved",
    frequencies: str = "paper",
) -> F64:
    """The matrix R(k) with PE(p + k) = R(k) · PE(p) for every p, float64 of shape (d, d).

    Inside pair i, with θ = p·ω_i and φ = k·ω_i (angle addition):

        sin(θ + φ) =  cos φ · sin θ + sin φ · cos θ
        cos(θ + φ) = −sin φ · sin θ + cos φ · cos θ

    so R(k) is block diagonal: one 2 × 2 rotation [[cos φ, sin φ], [−sin φ, cos φ]] per pair,
    at columns (2i, 2i+1) ("interleaved") or (i, i + d/2) ("half"). It does not depend on p:
    a shift of position is a rotation of the encoding, which is the step from the sinusoidal
    encoding to RoPE.
    """
    check_layout(layout)
    omega = pair_frequencies(d_model, base, frequencies)  # (d/2,)
    phi = float(k) * omega  # (d/2,)
    c, s = np.cos(phi), np.sin(phi)
    half = omega.shape[0]
    i = np.arange(half)
    sin_col, cos_col = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half)
    r = np.zeros((2 * half, 2 * half), dtype=np.float64)  # (d_model, d_model)
    r[sin_col, sin_col] = c
    r[sin_col, cos_col] = s
    r[cos_col, sin_col] = -s
    r[cos_col, cos_col] = c
    return r


def rotate_by_offset(
    pe: npt.ArrayLike,
    k: float,
    base: float = 10000.0,
    layout: str = "interleaved",
    frequencies: str = "paper",
) -> F64:
    """R(k) · PE for every row of ``pe`` (n, d), pair by pair, without forming the (d, d) matrix.

    Equal to ``pe @ offset_rotation(k, d, ...).T``; costs O(n·d) instead of O(n·d²).
    """
    check_layout(layout)
    x = np.asarray(pe, dtype=np.float64)  # (n, d)
    d = x.shape[1]
    phi = float(k) * pair_frequencies(d, base, frequencies)  # (d/2,)
    c, s = np.cos(phi), np.sin(phi)
    half = d // 2
    if layout == "interleaved":
        sin_part, cos_part = x[:, 0::2], x[:, 1::2]  # (n, d/2) each
    else:
        sin_part, cos_part = x[:, :half], x[:, half:]
    out = np.empty_like(x)  # (n, d)
    new_sin = c * sin_part + s * cos_part  # sin(θ + φ)
    new_cos = -s * sin_part + c * cos_part  # cos(θ + φ)
    if layout == "interleaved":
        out[:, 0::2], out[:, 1::2] = new_sin, new_cos
    else:
        out[:, :half], out[:, half:] = new_sin, new_cos
    return out
