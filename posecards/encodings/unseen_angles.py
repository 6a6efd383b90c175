"""Why RoPE fails past its training length: the angles a pair reaches at test length that it
never reached in training, in float64.

A pair with frequency ``theta`` turns the relative distances ``r = 0 .. L - 1`` of a training
context of ``L`` tokens into angles ``theta r``: the arc ``[0, theta (L - 1)]`` of the circle,
all of it once ``theta (L - 1) >= 2 pi`` (the pair has turned fully: wavelength ``<= L - 1``).
Tested on ``T`` tokens with frequency ``theta'`` (``theta`` itself, or what a scaling method
makes of it), the pair reaches the arc ``[0, theta' (T - 1)]``. Both arcs start at angle 0, so
the angles never seen in training are one arc of length::

    unseen = max(0, min(2 pi, theta' (T - 1)) - min(2 pi, theta (L - 1)))     (radians)

Fast pairs (wavelength within L) see nothing new; a slow pair sees new angles unless its
test-time frequency is slowed to cover no more than it did in training (position
interpolation divides every frequency by s = T / L; NTK-aware, YaRN and Llama 3 slow mainly the
slow pairs; a larger base makes the slow pairs slower for training and test alike).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, check_positive_int

TWO_PI = 2.0 * np.pi


def angle_reach(inv_freq: npt.ArrayLike, length: int) -> F64:
    """``min(2 pi, theta_k (length - 1))``: the arc of angles pair k reaches over the relative
    distances of a context of ``length`` tokens, shape ``(pairs,)``."""
    theta = np.asarray(inv_freq, dtype=np.float64)  # (pairs,)
    if theta.ndim != 1 or np.any(~np.isfinite(theta)) or np.any(theta < 0):
        raise ValueError("inv_freq must be a 1-D array of finite frequencies >= 0")
    n = check_positive_int("length", length)
    out: F64 = np.minimum(TWO_PI, theta * (n - 1))  # (pairs,)
    return out


def unseen_angles(
    inv_freq_train: npt.ArrayLike,
    inv_freq_test: npt.ArrayLike,
    train_length: int,
    test_length: int,
) -> F64:
    """The arc of angles (radians, 0 .. 2 pi) each pair reaches on ``test_length`` tokens with
    ``inv_freq_test`` that it never reached on ``train_length`` tokens with ``inv_freq_train``,
    shape ``(pairs,)``: ``max(0, reach_test - reach_train)``."""
    train = angle_reach(inv_freq_train, train_length)  # (pairs,)
    test = angle_reach(inv_freq_test, test_length)  # (pairs,)
    if train.shape != test.shape:
        raise ValueError(
            f"inv_freq_train and inv_freq_test must have one entry per pair: "
            f"{train.shape[0]} vs {test.shape[0]}"
        )
    out: F64 = np.maximum(0.0, test - train)  # (pairs,)
    return out
