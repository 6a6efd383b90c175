"""Channel attention carries no position; a spatial gate and a zero-padded convolution do.

Shapes ``(C, H, W)``, float64. Squeeze-and-excitation (Hu et al. 2018) gates each channel by

    g = sigmoid(W2 relu(W1 mean_hw(x)))           (C,)   W1: (C/r, C), W2: (C, C/r)

a function of the channel means only: shuffling the pixels (the same permutation in every
channel) leaves ``g`` unchanged. CBAM's spatial gate (Woo et al. 2018) is a map over the pixels,

    a = sigmoid(conv_kxk([mean_c(x); max_c(x)]))  (H, W), zero padding k // 2

which moves with the pixels and, through its padding, differs at the border of a constant image.
A zero-padded ``3 x 3`` convolution alone does that too (Islam et al. 2020): on a constant image
the output is the same everywhere except within one pixel of the border, and ``L`` stacked
convolutions mark a band of ``L`` pixels.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, check_positive_int


def _sigmoid(x: F64) -> F64:
    out: F64 = 1.0 / (1.0 + np.exp(-x))
    return out


def conv2d_zero_pad(x: npt.ArrayLike, kernel: npt.ArrayLike) -> F64:
    """``(C_out, H, W)``: cross-correlation of ``x (C_in, H, W)`` with ``kernel (C_out, C_in, k, k)``
    (odd ``k``), zero padding ``k // 2`` (``torch.nn.functional.conv2d(padding=k // 2)``)."""
    a = np.asarray(x, dtype=np.float64)  # (C_in, H, W)
    w = np.asarray(kernel, dtype=np.float64)  # (C_out, C_in, k, k)
    if a.ndim != 3 or w.ndim != 4 or w.shape[1] != a.shape[0] or w.shape[2] % 2 == 0:
        raise ValueError(
            f"x must be (C, H, W) and kernel (C_out, C, k, k), odd k; got {a.shape}, {w.shape}"
        )
    k = w.shape[2]
    p = k // 2
    padded = np.pad(a, ((0, 0), (p, p), (p, p)))  # (C_in, H + 2p, W + 2p)
    h, wd = a.shape[1:]
    out = np.zeros((w.shape[0], h, wd))  # (C_out, H, W)
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("oc,chw->ohw", w[:, :, dy, dx], padded[:, dy : dy + h, dx : dx + wd])
    return out


def se_gates(x: npt.ArrayLike, w1: npt.ArrayLike, w2: npt.ArrayLike) -> F64:
    """``(C,)``: squeeze-and-excitation gates ``sigmoid(W2 relu(W1 mean_hw(x)))``."""
    a = np.asarray(x, dtype=np.float64)  # (C, H, W)
    z = a.mean(axis=(1, 2))  # (C,) squeeze: one number per channel, no position left
    hidden = np.maximum(np.asarray(w1, dtype=np.float64) @ z, 0.0)  # (C/r,)
    return _sigmoid(np.asarray(w2, dtype=np.float64) @ hidden)  # (C,)


def cbam_spatial_gate(x: npt.ArrayLike, kernel: npt.ArrayLike) -> F64:
    """``(H, W)``: CBAM's spatial gate ``sigmoid(conv([mean_c(x); max_c(x)]))``, ``kernel``
    ``(1, 2, k, k)``."""
    a = np.asarray(x, dtype=np.float64)  # (C, H, W)
    pooled = np.stack([a.mean(axis=0), a.max(axis=0)])  # (2, H, W)
    return _sigmoid(conv2d_zero_pad(pooled, kernel)[0])  # (H, W)


def padding_band(height: int, width: int, layers: int) -> F64:
    """``(H, W)``: a constant image of ones through ``layers`` zero-padded ``3 x 3`` box filters
    (all weights 1/9): 1 in the interior, less within ``layers`` pixels of the border."""
    h = check_positive_int("height", height)
    w = check_positive_int("width", width)
    x = np.ones((1, h, w))  # (1, H, W)
    box = np.full((1, 1, 3, 3), 1.0 / 9.0)  # (1, 1, 3, 3)
    for _ in range(check_positive_int("layers", layers)):
        x = conv2d_zero_pad(x, box)
    out: F64 = x[0]
    return out
