"""The data of each figure of the "weights against text" card (``cards/inspect-activations.toml``),
as content/activations.py computes it and figures/inspect_activations.py draws it. Typed: a renamed
field fails mypy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class UseMap:
    """a-weights, a-text: each layer's mean share of use per pair, from the weights or measured
    on text, on one colour scale."""

    use: F64  # (layers, pairs) mean share over heads
    layers: F64  # (layers,)
    vmax: float  # the top of the colour scale, in %, shared by both maps


@dataclass(frozen=True, eq=False)
class Agree:
    """a-agree: per layer, Pearson r of the weights' use and the measured use."""

    r: F64  # (layers,)
    layers: F64  # (layers,)


@dataclass(frozen=True, eq=False)
class Distance:
    """a-distance: each layer's attention mass by distance bin (mean over heads)."""

    mass: F64  # (layers, bins)
    layers: F64  # (layers,)
    edges: I64  # (bins + 1,) the bins' first distances
