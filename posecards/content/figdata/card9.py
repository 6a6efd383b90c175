"""The data of each card-9 figure, as content/card9.py computes it and figures/card9.py draws it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card9.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class VitResize:
    """c9-vit-resize: a 14 x 14 table resized to 24 x 24, error per frequency of the table."""

    wavelength: F64  # (d/4,) patches per turn of each frequency
    blur: F64  # (d/4,) rms error of the resized table against the exact encoding, per frequency
    corners: F64  # (d/4,) rms difference align_corners=False vs True, per frequency
    n_in: int
    n_out: int
    d_model: int


@dataclass(frozen=True, eq=False)
class SourceCoords:
    """c9-align-corners: where each of the 24 new patches reads the 14-patch table."""

    patch: F64  # (24,)
    off: F64  # (24,) align_corners=False (transformers' ViT)
    on: F64  # (24,) align_corners=True
    n_in: int
    n_out: int


@dataclass(frozen=True, eq=False)
class Swin:
    """c9-swin: the index of a 7 x 7 window and Swin v2's coordinates at two windows."""

    index: I64  # (49, 49) bias-table row of each (query, key) pair
    window: int
    entries: int
    offsets_small: F64  # (2M - 1,) offsets of the pre-training window
    offsets_large: F64  # (2M' - 1,) offsets of the larger window
    linear_small: F64
    linear_large: F64
    log_small: F64
    log_large: F64
    window_small: int
    window_large: int


@dataclass(frozen=True, eq=False)
class Rope2d:
    """c9-rope-2d: per convention, the axis and wavelength (patches per turn) of every pair."""

    conventions: list[str]
    pair: F64  # (d/2,)
    axis_axial: I64  # (d/2,) 0 = h, 1 = w
    axis_even_odd: I64
    axis_half_per_axis: I64
    axis_normalised: I64
    wavelength_axial: F64  # (d/2,) patches per turn for a step along the pair's axis
    wavelength_even_odd: F64
    wavelength_half_per_axis: F64
    wavelength_normalised: F64
    first_axial: I64  # (d/2,) the slot of the pair's first part
    first_even_odd: I64
    first_half_per_axis: I64
    first_normalised: I64
    head_dim: int
    grid: int


@dataclass(frozen=True, eq=False)
class Pyramid:
    """c9-fpn: one pixel on four pyramid levels: integer and normalised coordinates."""

    strides: F64  # (4,)
    cells: F64  # (4,)
    index: F64  # (4,) integer cell of the pixel
    centre: F64  # (4,) (j + 1/2) / N  Deformable DETR
    end: F64  # (4,) (j + 1) / N  DETR
    pixel: float
    image: int


@dataclass(frozen=True, eq=False)
class VideoTime:
    """c9-video: time ids of a clip at three frame rates, Qwen2.5-VL and Qwen2-VL; which pairs
    time drives in Qwen2.5-VL, Qwen3-VL and ERNIE 4.5 VL."""

    fps: F64  # (3,)
    seconds_1: F64  # start time (s) of each temporal grid step at fps[0]
    seconds_2: F64
    seconds_3: F64
    ids_qwen25_1: F64  # the time id of each step (Qwen2.5-VL)
    ids_qwen25_2: F64
    ids_qwen25_3: F64
    ids_qwen2_1: F64  # Qwen2-VL: one id per step
    ids_qwen2_2: F64
    ids_qwen2_3: F64
    axes_q25: I64  # (64,) the axis (0 t, 1 h, 2 w) of each frequency: Qwen2.5-VL
    wavelength_q25: F64  # (64,) position ids per turn of each frequency
    axes_q3: I64  # Qwen3-VL
    wavelength_q3: F64
    axes_ernie: I64  # ERNIE 4.5 VL
    wavelength_ernie: F64
    tokens_per_second: float
    clip_seconds: float
    models: list[str]  # q25, q3, ernie: the rows of the right plot, top down


@dataclass(frozen=True, eq=False)
class Channel:
    """c9-channel: gates before and after a pixel shuffle; a constant image through padding."""

    se_before: F64  # (C,)
    se_after: F64  # (C,)
    cbam_before: F64  # (H*W,) the gate of each pixel, moved with the shuffle
    cbam_after: F64  # (H*W,)
    band: F64  # (S, S) a constant image after the zero-padded convolutions
    layers: int
