"""The data of each figure of a plain RoPE model's inspection card, as content/inspect.py computes
it and figures/inspect_rope.py draws it (``cards/inspect-rope.toml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
# what the frequencies before scaling are: the original ones, or longrope's short factors
Baseline = Literal["original", "short"]


# Typed: a renamed field fails mypy; field by field, in this order, what an export shows.
@dataclass(frozen=True, eq=False)
class Wavelengths:
    """i-wavelengths: each pair's wavelength before and after the checkpoint's scaling."""

    pair: F64  # (pairs,)
    original: F64  # (pairs,)
    scaled: F64  # (pairs,)
    original_context: float
    scaled_context: float
    baseline: Baseline


@dataclass(frozen=True, eq=False)
class Ratios:
    """i-ratios: each pair's frequency after scaling over before, and the factor on cos/sin."""

    pair: F64  # (pairs,)
    ratio: F64  # (pairs,)
    theta: F64  # (pairs,)
    theta_scaled: F64  # (pairs,)
    attention_factor: float


@dataclass(frozen=True, eq=False)
class Turns:
    """i-turns: full turns of each pair inside the original and the scaled context."""

    pair: F64  # (pairs,)
    original: F64  # (pairs,)
    scaled: F64  # (pairs,)
    baseline: Baseline


@dataclass(frozen=True, eq=False)
class Layout:
    """i-layout: the pair of each slot of a head in the model's layout and in the other one."""

    this: F64  # (head_dim,) pair index, -1: not rotated
    other: F64  # (head_dim,)
    layout: str  # "half" or "interleaved"
