"""Which positions a figure shows: at most a fixed number, so cost follows pixels, not positions.

Two rules, both exact and deterministic:
- ``even_positions(n, most)``: 0, s, 2s, ... < n with the smallest integer step s = ceil(n / most)
  (a regular grid: offsets between shown rows stay whole multiples of s);
- ``spread_positions(n, most)``: at most ``most`` integer positions spread over 0..n-1, the first
  and the last included (for samples that must reach the end of the range).
"""

from __future__ import annotations

import numpy as np

from posecards.encodings._checks import F64, check_positive_int


def position_step(n: int, most: int) -> int:
    """Smallest integer step that shows at most ``most`` of n evenly spaced positions."""
    n, most = check_positive_int("n", n), check_positive_int("most", most)
    return max(1, -(-n // most))  # ceil(n / most)


def even_positions(n: int, most: int) -> F64:
    """Positions 0, s, 2s, ... < n with s = position_step(n, most)."""
    return np.arange(0, n, position_step(n, most), dtype=np.float64)  # (m,), m <= most


def spread_positions(n: int, most: int) -> F64:
    """At most ``most`` distinct integer positions from 0 to n - 1, both ends included."""
    n, most = check_positive_int("n", n), check_positive_int("most", most)
    return np.unique(np.round(np.linspace(0, n - 1, min(n, most))))  # (m,)
