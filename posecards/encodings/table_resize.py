"""Resizing a learned 2-D position table for another image size (ViT's ``interpolate_pos_encoding``).

A ViT trained on ``n x n`` patches keeps a learned table ``(1 + n*n, D)``: the class token's row,
then one row per patch in row-major order. For an image of ``H x W`` patches, transformers' ViT
keeps the class row and resamples the patch rows as an image of ``D`` channels:

    table[1:] -> (1, D, n, n) -> bicubic to (H, W), align_corners=False -> (H*W, D)

Bicubic resampling (torch's ``upsample_bicubic2d``, Keys' kernel with ``a = -0.75``), separable
along rows and columns. Output index ``i`` reads the input at the source coordinate

    align_corners=False:  s = (i + 1/2) * n_in / n_out - 1/2     (cell centres line up)
    align_corners=True:   s = i * (n_in - 1) / (n_out - 1)        (the corner cells line up)

and mixes the four inputs ``floor(s) - 1 .. floor(s) + 2`` (indices clamped to the table).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, check_positive_int

CUBIC_A = -0.75  # torch's bicubic kernel parameter (Keys' a)


def resize_source_coordinates(n_in: int, n_out: int, align_corners: bool) -> F64:
    """``(n_out,)``: the input coordinate (in cells, 0 = the first cell's centre) each output cell
    reads, as torch's ``area_pixel_compute_source_index`` for a cubic kernel (not clamped)."""
    a = check_positive_int("n_in", n_in)
    b = check_positive_int("n_out", n_out)
    i = np.arange(b, dtype=np.float64)  # (n_out,)
    if align_corners:
        return i * ((a - 1) / (b - 1)) if b > 1 else np.zeros(1)
    return (i + 0.5) * (a / b) - 0.5


def _cubic_weights(t: F64) -> F64:
    """``(n, 4)`` weights of the inputs at floor(s) - 1 .. floor(s) + 2, ``t = s - floor(s)``."""
    a = CUBIC_A

    def near(x: F64) -> F64:  # |x| <= 1: ((a + 2)|x| - (a + 3)) x^2 + 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: F64) -> F64:  # 1 < |x| < 2: ((a|x| - 5a)|x| + 8a)|x| - 4a
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)  # (n, 4)


def bicubic_matrix(n_in: int, n_out: int, align_corners: bool) -> F64:
    """``(n_out, n_in)``: the linear map of one axis of torch's bicubic resize (rows sum to 1)."""
    s = resize_source_coordinates(n_in, n_out, align_corners)  # (n_out,)
    base = np.floor(s)  # (n_out,)
    w = _cubic_weights(s - base)  # (n_out, 4)
    m = np.zeros((s.size, n_in))  # (n_out, n_in)
    for k in range(4):
        idx = np.clip(base.astype(np.int64) - 1 + k, 0, n_in - 1)  # (n_out,) clamped
        np.add.at(m, (np.arange(s.size), idx), w[:, k])
    return m


def resize_grid(grid: npt.ArrayLike, out_h: int, out_w: int, align_corners: bool = False) -> F64:
    """``(out_h, out_w, D)``: a ``(h, w, D)`` grid resized bicubically, as
    ``torch.nn.functional.interpolate(mode="bicubic")`` does on ``(1, D, h, w)``."""
    g = np.asarray(grid, dtype=np.float64)  # (h, w, D)
    if g.ndim != 3:
        raise ValueError(f"grid must be (h, w, D), got shape {g.shape}")
    rows = bicubic_matrix(g.shape[0], out_h, align_corners)  # (out_h, h)
    cols = bicubic_matrix(g.shape[1], out_w, align_corners)  # (out_w, w)
    out: F64 = np.einsum("ah,bw,hwd->abd", rows, cols, g)  # (out_h, out_w, D)
    return out


def interpolate_pos_encoding(
    table: npt.ArrayLike, out_h: int, out_w: int, align_corners: bool = False
) -> F64:
    """``(1 + out_h*out_w, D)``: a ViT table ``(1 + n*n, D)`` (class token first) at another grid,
    as transformers' ``ViTEmbeddings.interpolate_pos_encoding`` (bicubic, ``align_corners=False``):
    the class row kept, the ``n x n`` patch rows resized. ``align_corners=True`` is the other
    convention (e.g. Qwen3-VL's vision table, bilinear there)."""
    t = np.asarray(table, dtype=np.float64)  # (1 + n*n, D)
    n = int(round(np.sqrt(t.shape[0] - 1))) if t.ndim == 2 and t.shape[0] > 1 else 0
    if n * n + 1 != (t.shape[0] if t.ndim == 2 else -1):
        raise ValueError(f"table must be (1 + n*n, D) with a class row, got shape {t.shape}")
    patches = t[1:].reshape(n, n, t.shape[1])  # (n, n, D)
    resized = resize_grid(patches, out_h, out_w, align_corners)  # (out_h, out_w, D)
    return np.concatenate([t[:1], resized.reshape(-1, t.shape[1])], axis=0)
