"""2-D RoPE in vision encoders: which pair of a head follows which axis, at which frequency.

A patch at row ``h`` and column ``w`` turns each pair of a head's ``d`` slots by an angle driven
by one axis. The encoders agree on that and on little else. With ``n = d/4`` frequencies
``f_j = b^(-4j/d)`` (``j < d/4``; Pixtral: every other one of ``b^(-2k/d)``, ``k < d/2``):

    convention     slots of pair p (p < d/2)               axis      angle per step of the axis
    axial          (p, p + d/2)  rotate_half over [h|w|h|w]  h if p < d/4, else w     f_(p mod d/4)
                   (Qwen2-VL/Qwen2.5-VL vision)
    even_odd       (p, p + d/2)  as axial, but h takes the even frequencies b^(-2(2j)/d) and w the
                   odd ones b^(-2(2j+1)/d) (Pixtral)
    half_per_axis  the head split in two halves [h | w], each rotated by its own rotate_half:
                   pair p < d/4 is (p, p + d/4) on h, pair p >= d/4 is (d/2 + q, 3d/4 + q) on w,
                   q = p - d/4 (Gemma 4 vision, ``apply_multidimensional_rope``)
    normalised     slots as axial; the coordinate is the patch centre in [-1, 1]
                   (c = 2 (i + 1/2)/N - 1 over N patches of the axis) and the angle 2 pi c f_j
                   (DINOv3, base 100): one step of the axis turns pair p by 2 pi (2/N) f_j

``vision_rope_pairs`` returns the table; ``vision_rope_angles`` the ``(positions, d)`` angle of
every slot, the argument of the ``cos``/``sin`` a transformers module returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_base, check_positive_int

Convention = Literal["axial", "even_odd", "half_per_axis", "normalised"]
CONVENTIONS: tuple[Convention, ...] = ("axial", "even_odd", "half_per_axis", "normalised")
AXES: tuple[str, ...] = ("h", "w")  # axis 0 = row, 1 = column


@dataclass(frozen=True, eq=False)
class VisionRopePairs:
    """One convention's pairs: ``(d/2,)`` arrays, pair ``p`` rotates slots ``first[p]`` and
    ``second[p]`` by ``coordinate[axis[p]] * freq[p]``."""

    first: I64  # (d/2,) slot of the pair's first (real) part
    second: I64  # (d/2,) slot of its second (imaginary) part
    axis: I64  # (d/2,) 0 = h (row), 1 = w (column)
    freq: F64  # (d/2,) radians per unit of the coordinate
    normalised: bool  # the coordinate is the patch centre in [-1, 1] (else the patch index)


def _check(convention: str, head_dim: int) -> int:
    if convention not in CONVENTIONS:
        raise ValueError(
            f"unknown convention {convention!r}; choose one of: {', '.join(CONVENTIONS)}"
        )
    d = check_positive_int("head_dim", head_dim)
    if d % 4:
        raise ValueError(f"head_dim must be divisible by 4 (two axes x pairs), got {d}")
    return d


def vision_rope_pairs(convention: str, head_dim: int, base: float) -> VisionRopePairs:
    """The pair -> (slots, axis, frequency) map of one 2-D RoPE convention (see the module)."""
    d = _check(convention, head_dim)
    b = check_base(base)
    q = d // 4
    f = b ** (-np.arange(0, d // 2, 2, dtype=np.float64) / (d // 2))  # (d/4,) b^(-4j/d)
    axis = np.repeat(np.arange(2, dtype=np.int64), q)  # (d/2,) h for p < d/4, then w
    p = np.arange(d // 2, dtype=np.int64)  # (d/2,)
    first, second = p, p + d // 2  # rotate_half over the whole head
    if convention == "even_odd":
        full = b ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,) b^(-2k/d)
        freq = np.concatenate([full[0::2], full[1::2]])  # (d/2,) h: even k, w: odd k
    else:
        freq = np.tile(f, 2)  # (d/2,) h and w both take f_0 .. f_(d/4 - 1)
    if convention == "half_per_axis":
        j = p % q  # (d/2,) the pair's index inside its axis's half
        first = axis * (d // 2) + j  # (d/2,) [h half | w half], each rotate_half on its own
        second = first + q
    if convention == "normalised":
        freq = 2 * np.pi * freq  # angle = 2 pi c f_j for a coordinate c in [-1, 1]
    return VisionRopePairs(first, second, axis, freq, convention == "normalised")


def patch_centre_coordinates(n: int) -> F64:
    """``(n,)``: patch centres of an axis of ``n`` patches in [-1, 1], ``2 (i + 1/2)/n - 1``
    (DINOv3's ``get_patches_center_coordinates``)."""
    m = check_positive_int("n", n)
    return 2.0 * (np.arange(m, dtype=np.float64) + 0.5) / m - 1.0


def vision_rope_angles(
    convention: str, head_dim: int, base: float, rows: npt.ArrayLike, cols: npt.ArrayLike
) -> F64:
    """``(positions, head_dim)``: the angle of every slot for patches at ``(rows[i], cols[i])``:
    the patch indices, or for ``"normalised"`` the coordinates in [-1, 1] themselves."""
    pairs = vision_rope_pairs(convention, head_dim, base)
    pos = np.stack([np.asarray(rows, dtype=np.float64), np.asarray(cols, dtype=np.float64)])
    ang = pos[pairs.axis].T * pairs.freq[None, :]  # (positions, d/2)
    out = np.zeros((ang.shape[0], head_dim))  # (positions, d)
    out[:, pairs.first] = ang
    out[:, pairs.second] = ang
    return out


def step_angles(convention: str, head_dim: int, base: float, axis: int, grid: int) -> F64:
    """``(d/2,)``: how far each pair turns when a patch moves one step along ``axis`` (0 = down,
    1 = right) on a grid of ``grid`` patches per axis (used only by ``"normalised"``, whose
    step is ``2/grid`` of its coordinate)."""
    pairs = vision_rope_pairs(convention, head_dim, base)
    step = 2.0 / check_positive_int("grid", grid) if pairs.normalised else 1.0
    return np.where(pairs.axis == axis, pairs.freq * step, 0.0)
