"""Position encodings for a 2-D grid of image patches (ViT / MAE / Swin).

A patch at row y (0..H-1) and column x (0..W-1) is token number y·W + x (row-major order, the
order in which ``flatten(2)`` lays out a conv patch embedding).
"""

from __future__ import annotations

import numpy as np

from posecards.encodings._checks import F64, I64, check_base, check_even_dim, check_positive_int
from posecards.encodings.sinusoidal import sinusoidal_pe


def _grid_coordinates(grid_h: int, grid_w: int) -> tuple[F64, F64]:
    h = check_positive_int("grid_h", grid_h)
    w = check_positive_int("grid_w", grid_w)
    index = np.arange(h * w)  # (H*W,) token index = row·W + col
    rows, cols = np.divmod(index, w)  # (H*W,), (H*W,)
    return rows.astype(np.float64), cols.astype(np.float64)


def sincos_2d_pe(grid_h: int, grid_w: int, d_model: int, base: float = 10000.0) -> F64:
    """MAE's fixed 2-D sin-cos encoding (``get_2d_sincos_pos_embed``), shape (H·W, d_model).

    Half the dimensions per axis, each half a 1-D [sin | cos] encoding:

        PE(y, x) = [sin(x·ω) | cos(x·ω) | sin(y·ω) | cos(y·ω)],   ω_i = 1/base^(2i/(d/2)),
                                                                   i = 0..d/4-1

    The first half encodes the column (x, the w coordinate), the second half the row (y, the h
    coordinate); patches are in row-major order, token = row·W + col. d_model must be divisible
    by 4. (transformers 5.x builds [h | w] in ``build_2d_sinusoidal_position_embedding`` and then
    swaps the halves in ViTMAE to match these pretrained MAE weights.)
    """
    d = check_even_dim("d_model", d_model)
    if d % 4:
        raise ValueError(f"d_model must be divisible by 4 (two axes × (sin, cos)), got {d}")
    check_base(base)
    rows, cols = _grid_coordinates(grid_h, grid_w)  # (H*W,), (H*W,)
    # Each half is the 1-D encoding with d/2 dims in "half" layout: ω_i = base^(-2i/(d/2)).
    emb_x = sinusoidal_pe(cols, d // 2, base, layout="half")  # (H*W, d/2)
    emb_y = sinusoidal_pe(rows, d // 2, base, layout="half")  # (H*W, d/2)
    return np.concatenate([emb_x, emb_y], axis=1)  # (H*W, d_model)


def sum_angle_2d_pe(grid_h: int, grid_w: int, d_model: int, base: float = 10000.0) -> F64:
    """A WRONG 2-D encoding, shown to explain why axes need their own dimensions; (H·W, d_model).

        PE(y, x) = [sin((x + y)·ω) | cos((x + y)·ω)],   ω_i = base^(-2i/d), i = 0..d/2-1

    The angle depends on x + y only, so (x, y) and (y, x) -- and every patch on the same
    anti-diagonal -- get the same vector.
    """
    rows, cols = _grid_coordinates(grid_h, grid_w)  # (H*W,), (H*W,)
    d = check_even_dim("d_model", d_model)
    return sinusoidal_pe(cols + rows, d, base, layout="half")  # (H*W, d_model)


def swin_relative_position_index(window_h: int, window_w: int) -> I64:
    """Swin's relative_position_index, shape (Wh·Ww, Wh·Ww) int64: which bias-table row a pair uses.

    For tokens a = (y_a, x_a) and b = (y_b, x_b) of one window (row-major, a = y·Ww + x):

        index[a, b] = (y_a - y_b + Wh - 1)·(2·Ww - 1) + (x_a - x_b + Ww - 1)

    in 0..(2Wh-1)(2Ww-1)-1: one learned bias per distinct 2-D offset.
    """
    wh = check_positive_int("window_h", window_h)
    ww = check_positive_int("window_w", window_w)
    rows, cols = np.divmod(np.arange(wh * ww, dtype=np.int64), ww)  # (N,), (N,)
    dy = rows[:, None] - rows[None, :] + (wh - 1)  # (N, N) in 0..2Wh-2
    dx = cols[:, None] - cols[None, :] + (ww - 1)  # (N, N) in 0..2Ww-2
    index: I64 = dy * (2 * ww - 1) + dx  # (N, N)
    return index
