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
    return np.exp(-i * np.log(b) / (half - 1))  # (d/2,)


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
