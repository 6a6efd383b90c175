"""Argument checks shared by the math layer: one place, one wording of each error."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Layout = Literal["interleaved", "half"]
LAYOUTS: tuple[str, ...] = ("interleaved", "half")

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def check_positive_int(name: str, value: int) -> int:
    """Return ``value`` as int if it is a positive integer, else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def check_even_dim(name: str, value: int) -> int:
    """A dimension that is split into (sin, cos) or rotation pairs must be even and positive."""
    value = check_positive_int(name, value)
    if value % 2:
        raise ValueError(f"{name} must be even (dimensions come in pairs), got {value}")
    return value


def check_base(base: float) -> float:
    """The frequency base must be a finite number greater than 1."""
    b = float(base)
    if not math.isfinite(b) or b <= 1.0:
        raise ValueError(f"base must be a finite number > 1, got {base!r}")
    return b


def check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; choose one of: {', '.join(LAYOUTS)}")
    return layout


def as_positions(positions: int | npt.ArrayLike) -> F64:
    """An int n means positions 0..n-1; an array is taken as the positions themselves.

    Returns a 1-D float64 array (positions may be fractional, e.g. for interpolation).
    """
    if isinstance(positions, (int, np.integer)) and not isinstance(positions, bool):
        n = check_positive_int("positions", int(positions))
        return np.arange(n, dtype=np.float64)  # (n,)
    arr = np.asarray(positions, dtype=np.float64).reshape(-1)  # (n,)
    if arr.size == 0:
        raise ValueError("positions must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError("positions must be finite numbers")
    return arr


def check_positive(name: str, value: Any) -> float:
    """A finite number > 0 (factors, lengths), else ValueError naming it."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}") from None
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v
