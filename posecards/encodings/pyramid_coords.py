"""Coordinates of feature-pyramid cells: integer indices disagree across levels, normalised ones agree.

A feature map of stride ``s`` over an image of ``L`` pixels has ``N = ceil(L / s)`` cells (a
stride-2 convolution with padding rounds up); cell ``j`` covers pixels ``[s j, s (j + 1))``.
The same pixel ``x`` lies in cell ``floor(x / s)``: a different integer on every level. Divided
by the level's size the coordinates agree up to a cell; where in the cell they point differs:

    cell end     u = (j + 1) / N        DETR's sine embedding (cumsum of the mask / its last value)
    cell centre  u = (j + 1/2) / N      Deformable DETR's sine embedding ((cumsum - 0.5) / last)
                                        and its reference points (linspace(0.5, N - 0.5) / N)

DETR multiplies ``u`` by ``2 pi`` before its sine; the offset between the two is half a cell,
``L / (2N)`` pixels (``s / 2`` when ``s`` divides ``L``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_positive_int

Anchor = Literal["end", "centre"]
ANCHORS: tuple[Anchor, ...] = ("end", "centre")
ANCHOR_OFFSET: dict[str, float] = {"end": 1.0, "centre": 0.5}  # where in its cell u points


def level_cells(length: int, stride: int) -> int:
    """Cells of a level of ``stride`` over ``length`` pixels: ``ceil(length / stride)``."""
    n = check_positive_int("length", length)
    s = check_positive_int("stride", stride)
    return -(-n // s)


def cell_index(pixels: npt.ArrayLike, stride: int) -> I64:
    """The integer cell ``floor(x / s)`` each pixel coordinate lies in."""
    s = check_positive_int("stride", stride)
    out: I64 = np.floor(np.asarray(pixels, dtype=np.float64) / s).astype(np.int64)
    return out


def normalised_cell_coordinate(index: npt.ArrayLike, cells: int, anchor: str) -> F64:
    """``u = (j + o) / N``: ``o = 1`` at the cell's end (DETR), ``1/2`` at its centre
    (Deformable DETR)."""
    if anchor not in ANCHOR_OFFSET:
        raise ValueError(f"unknown anchor {anchor!r}; choose one of: {', '.join(ANCHORS)}")
    n = check_positive_int("cells", cells)
    return (np.asarray(index, dtype=np.float64) + ANCHOR_OFFSET[anchor]) / n
