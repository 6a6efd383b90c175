"""Swin v2's continuous relative position bias: the inputs of its small MLP.

Swin v1 learns one bias per 2-D offset inside a window of ``M x M`` patches: a table of
``(2M - 1)^2`` rows indexed by ``grid2d.swin_relative_position_index``; a larger window has
offsets the table never held. Swin v2 instead feeds each offset ``(dy, dx)``, each in
``-(M-1) .. M-1``, to an MLP, after

    linear:       u = 8 * d / (M_pre - 1)                  (M_pre: the pre-training window;
                                                           the window itself when there is none)
    log-spaced:   u_log = sign(u) * log2(1 + |u|) / log2(8)

so the offsets seen in pre-training span ``+-log2(9)/3 = +-1.057`` in the log-spaced coordinates
and a window twice as large reaches 1.32 times that, where the linear ones reach 2.14 times
(``Swinv2SelfAttention.create_coords_table_and_index``).
"""

from __future__ import annotations

import numpy as np

from posecards.encodings._checks import F64, check_positive_int

SWINV2_SPAN = 8.0  # the linear coordinates are scaled to [-8, 8] over the pre-training window


def swinv2_linear_offsets(window: int, pretrained_window: int = 0) -> F64:
    """``(2M - 1,)``: the offsets ``-(M-1) .. M-1`` of a window of ``M``, scaled to
    ``8 * d / (M_pre - 1)`` (``M_pre = M`` when ``pretrained_window`` is 0)."""
    m = check_positive_int("window", window)
    ref = (
        m if pretrained_window == 0 else check_positive_int("pretrained_window", pretrained_window)
    )
    d = np.arange(-(m - 1), m, dtype=np.float64)  # (2M - 1,)
    return d / (ref - 1) * SWINV2_SPAN if ref > 1 else d * SWINV2_SPAN


def swinv2_log_offsets(window: int, pretrained_window: int = 0) -> F64:
    """``(2M - 1,)``: Swin v2's log-spaced coordinates, ``sign(u) log2(1 + |u|) / log2(8)``."""
    u = swinv2_linear_offsets(window, pretrained_window)  # (2M - 1,)
    out: F64 = np.sign(u) * np.log2(np.abs(u) + 1.0) / np.log2(SWINV2_SPAN)
    return out


def swinv2_coords_table(window: int, pretrained_window: int = 0) -> F64:
    """``(2M - 1, 2M - 1, 2)``: the (dy, dx) log-spaced inputs of the bias MLP, as
    ``Swinv2SelfAttention.relative_coords_table[0]`` (square windows)."""
    c = swinv2_log_offsets(window, pretrained_window)  # (2M - 1,)
    dy, dx = np.meshgrid(c, c, indexing="ij")  # (2M - 1, 2M - 1) each
    return np.stack([dy, dx], axis=-1)
