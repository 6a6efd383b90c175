"""How far the usual float32 computation of rotation/sinusoid angles is from the exact angle.

Most code computes the angles in float32, as in::

    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2).float() / d))   # float32
    angle = position_ids.float()[:, None] * inv_freq[None, :]         # float32

A float32 number has a 24-bit significand, so the angle carries an absolute error of about
|angle|·2^-24 per rounding. For the fast pairs (ω ≈ 1) at large positions the angle is large,
the error reaches a sizeable fraction of a radian, and sin/cos of it are off accordingly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, as_positions, check_base, check_even_dim


@dataclass(frozen=True, eq=False)
class Float32AngleError:
    """Errors of the float32 angle computation against float64, per position and pair."""

    positions: F64  # (n,)
    frequency_index: I64  # (d/2,): pair i
    angle: F64  # (n, d/2): exact angle θ = p·base^(-2i/d) in float64
    angle_error: F64  # (n, d/2): |θ32 - θ|
    relative_angle_error: F64  # (n, d/2): |θ32 - θ| / |θ| (0 where θ = 0)
    sin_error: F64  # (n, d/2): |sin32(θ32) - sin(θ)|
    cos_error: F64  # (n, d/2): |cos32(θ32) - cos(θ)|


def float32_angle_error(
    d_model: int, positions: int | npt.ArrayLike, base: float = 10000.0
) -> Float32AngleError:
    """Compare float32 angles and their sin/cos, computed the common way, with float64.

    float32 way (mirrors ``torch.arange(0, d, 2).float()`` code, done here in numpy float32):
        inv_freq32 = 1 / (base ** (arange(0, d, 2) / d))      every step in float32
        θ32        = float32(p) · inv_freq32                   in float32
        sin32, cos32 = sin(θ32), cos(θ32)                      in float32
    reference: θ = p · base^(-2i/d) in float64, sin(θ), cos(θ) in float64.

    ``positions`` is an int n (meaning 0..n-1) or an array of positions.
    """
    d = check_even_dim("d_model", d_model)
    b = check_base(base)
    if b > float(np.finfo(np.float32).max):
        raise ValueError(f"base must fit in float32 (at most 3.4e38) for the float32 path, got {b}")
    pos = as_positions(positions)  # (n,)
    i = np.arange(d // 2, dtype=np.int64)  # (d/2,)

    # float32 path: inv_freq = 1 / base^(2i/d), angle = p · inv_freq, sin/cos -- all float32
    exponent32 = np.arange(0, d, 2, dtype=np.float32) / np.float32(d)  # (d/2,)
    inv_freq32 = np.float32(1.0) / np.power(np.float32(b), exponent32)  # (d/2,)
    angle32 = pos.astype(np.float32)[:, None] * inv_freq32[None, :]  # (n, d/2) float32
    sin32 = np.sin(angle32).astype(np.float64)  # (n, d/2)
    cos32 = np.cos(angle32).astype(np.float64)  # (n, d/2)

    # float64 reference: θ = p · base^(-2i/d)
    angle = pos[:, None] * np.power(b, -2.0 * i / d)[None, :]  # (n, d/2)
    angle_error = np.abs(angle32.astype(np.float64) - angle)  # (n, d/2)
    magnitude = np.abs(angle)  # (n, d/2)
    relative = np.divide(
        angle_error, magnitude, out=np.zeros_like(angle_error), where=magnitude > 0
    )  # (n, d/2)
    return Float32AngleError(
        positions=pos,
        frequency_index=i,
        angle=angle,
        angle_error=angle_error,
        relative_angle_error=relative,
        sin_error=np.abs(sin32 - np.sin(angle)),
        cos_error=np.abs(cos32 - np.cos(angle)),
    )
