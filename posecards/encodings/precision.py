"""How far the usual float32 computation of rotation/sinusoid angles is from the exact angle.

The float32 recipe is the one Hugging Face's Llama rotary embedding performs
(``LlamaRotaryEmbedding``: ``inv_freq`` at init, then ``forward``), one float32 operation at a
time::

    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs    = inv_freq.float() @ position_ids.float()          # one product per element
    cos, sin = freqs.cos(), freqs.sin()

Each step is emulated exactly, every operation correctly rounded to float32 (IEEE 754 round to
nearest even), so the numbers are the same on every CPU:

    e        = fl32(2i / d)                    division: exact in float64, then rounded
    pow32    = fl32(fl32(base) ^ e)            pow evaluated with 113 bits (exact.pow_rounded)
    inv32    = fl32(1 / pow32)                 division in float64, then rounded
    θ32      = fl32(fl32(p) · inv32)           the product of two float32 is exact in float64
    sin32, cos32 = fl32(sin θ32), fl32(cos θ32)   exact.sin_cos_float32

Rounding a float64 quotient or product of float32 numbers to float32 is exactly the float32
operation (53 ≥ 2·24 + 2). A real library's float32 pow/sin/cos may differ from the correctly
rounded value by an ulp; the errors shown are those of the recipe, not of one machine's libm.

A float32 number has a 24-bit significand, so the angle carries an absolute error of about
|angle|·2^-24 per rounding. For the fast pairs (ω ≈ 1) at large positions the angle is large,
the error reaches a sizeable fraction of a radian, and sin/cos of it are off accordingly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, as_positions, check_base, check_even_dim
from posecards.encodings.exact import pow_exact_ratio, pow_rounded, sin_cos_float32


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
    """Compare float32 angles and their sin/cos, computed by the float32 recipe above (every
    operation correctly rounded), with the exact angle.

    reference: θ = p · base^(-2i/d), with base^(-2i/d) correctly rounded to float64 and one
    float64 product (relative error ≤ 2^-52, far below float32's 2^-24); sin(θ), cos(θ) in
    float64.

    ``positions`` is an int n (meaning 0..n-1) or an array of positions.
    """
    d = check_even_dim("d_model", d_model)
    b = check_base(base)
    if b > float(np.finfo(np.float32).max):
        raise ValueError(f"base must fit in float32 (at most 3.4e38) for the float32 path, got {b}")
    pos = as_positions(positions)  # (n,)
    i = np.arange(d // 2, dtype=np.int64)  # (d/2,)

    # float32 recipe, each step correctly rounded to float32 (kept in float64 arrays)
    exponent32 = as32(np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,): fl32(2i/d)
    pow32 = pow_rounded(as32(np.array([b]))[0], exponent32, np.float32)  # (d/2,)
    inv_freq32 = as32(1.0 / pow32)  # (d/2,)
    angle32 = as32(as32(pos)[:, None] * inv_freq32[None, :])  # (n, d/2)
    sin32, cos32 = sin_cos_float32(angle32)  # (n, d/2) each

    # reference: θ = p · base^(-2i/d)
    angle = pos[:, None] * pow_exact_ratio(b, -2 * i, d)[None, :]  # (n, d/2)
    angle_error = np.abs(angle32 - angle)  # (n, d/2)
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


def as32(x: npt.ArrayLike) -> F64:
    """Round to float32 (IEEE round to nearest even), kept as float64: fl32(x)."""
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


# --- low-precision formats: what a position or an inverse frequency becomes when it is cast ---

# significand bits (the implicit leading 1 included) of the floating-point formats torch uses
SIGNIFICAND_BITS: dict[str, int] = {"bfloat16": 8, "float16": 11, "float32": 24}
FLOAT_DTYPES: tuple[str, ...] = tuple(SIGNIFICAND_BITS)


def _check_dtype(dtype: str) -> str:
    if dtype not in SIGNIFICAND_BITS:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of: {', '.join(FLOAT_DTYPES)}")
    return dtype


def round_to_dtype(x: npt.ArrayLike, dtype: str) -> F64:
    """Round to ``dtype`` ("bfloat16", "float16" or "float32"), kept as float64: fl_dtype(x).

    IEEE round to nearest, ties to even, through float32 first as torch does (its bfloat16 and
    float16 are converted from float32): a value that is exact in float32 (every position below
    2^24, every float32 ``inv_freq``) is rounded once.

        float32   numpy's float64 -> float32 cast
        float16   then numpy's float32 -> float16 cast (11-bit significand, subnormals below 2^-14,
                  inf from 65520 on)
        bfloat16  the top 16 bits of the float32 pattern, rounded like c10's round_to_nearest_even:
                  u + 0x7FFF + ((u >> 16) & 1), then the low 16 bits cleared (8-bit significand,
                  float32's exponent range)
    """
    _check_dtype(dtype)
    arr = np.asarray(x, dtype=np.float64)  # (...)
    with np.errstate(over="ignore"):  # beyond the format's range: inf, as IEEE (and torch) round
        f32 = arr.astype(np.float32)  # (...)
        if dtype == "float32":
            return f32.astype(np.float64)
        if dtype == "float16":
            return f32.astype(np.float16).astype(np.float64)
    u = f32.view(np.uint32).astype(np.uint64)  # (...) the float32 bit pattern, room for a carry
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)  # (...)
    out = rounded.view(np.float32).astype(np.float64)  # (...)
    return np.where(np.isnan(arr), np.nan, out)  # NaN stays NaN (its payload is not kept)


def first_inexact_integer(dtype: str) -> int:
    """The smallest positive integer ``dtype`` cannot hold: 2^p + 1 for a p-bit significand.

    Every integer up to 2^p is exact; 2^p + 1 lies halfway between 2^p and 2^p + 2 and rounds to
    the even one, 2^p. bfloat16: 257, float16: 2049, float32: 16,777,217.
    """
    return int(2 ** SIGNIFICAND_BITS[_check_dtype(dtype)] + 1)
