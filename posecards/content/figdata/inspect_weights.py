"""The data of each figure of the "how this model uses its frequencies" card
(``cards/inspect-weights.toml``), as content/weights.py computes it and figures/inspect_weights.py
draws it. Typed: a renamed field fails mypy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Use:
    """w-use: each layer's mean share of use per pair, against the trained context."""

    use: F64  # (layers, pairs) mean share over heads
    layers: F64  # (layers,) indices of the layers read
    wavelength: F64  # (pairs,) in positions
    context: float
    beyond: int  # pairs whose wavelength is longer than the context


@dataclass(frozen=True, eq=False)
class Cosine:
    """w-cosine: each layer's mean |cos| of the query pairs' two rows."""

    cos: F64  # (layers, pairs) mean |cos| over heads
    layers: F64  # (layers,)


@dataclass(frozen=True, eq=False)
class Heads:
    """w-heads: every head's use-weighted mean pair, the fastest and the slowest head marked."""

    layer: F64  # (layers·heads,) the layer of each head
    centre: F64  # (layers·heads,) use-weighted mean pair index
    pairs: int
    fast: list[float]  # [layer, centre] of the head with most use on the fastest quarter
    slow: list[float]  # [layer, centre] of the head with most use on the slowest quarter


@dataclass(frozen=True, eq=False)
class CosSum:
    """w-cos-sum: the lowest mean cos_sum so far against distance, at this base and at the
    minimum base for the context (Men et al.)."""

    distance: F64  # (M,) distances shown
    model: F64  # (M,) at the model's base
    minimum: F64  # (M,) at the minimum base (zeros where there is none)
    base: float
    min_base: float  # NaN where there is none
