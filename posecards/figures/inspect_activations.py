"""The figures of the "weights against text" card (``cards/inspect-activations.toml``).

They draw the arrays of ``posecards.content.activations`` only; all text comes from the card's
[labels].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import FigureBase
from matplotlib.ticker import MaxNLocator

from posecards.figures import DrawFn, Labels
from posecards.figures._common import heatmap
from posecards.figures.inspect_weights import layer_map
from posecards.figures.style import Theme

if TYPE_CHECKING:
    from posecards.content.figdata.inspect_activations import Agree, Distance, UseMap


def _use_map(fig: FigureBase, data: UseMap, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    use = 100 * np.asarray(data.use, dtype=np.float64)  # (layers, pairs) %
    # the same colour scale on both maps (weights and text)
    layer_map(ax, use, data.layers, theme, t("use_pct"), t, vmax=float(data.vmax))


def draw_agree(fig: FigureBase, data: Agree, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    layers = np.asarray(data.layers, dtype=np.float64)  # (layers,)
    r = np.asarray(data.r, dtype=np.float64)  # (layers,)
    ax.axhline(0.0, color=theme.neutral, linewidth=0.8)
    ax.plot(layers, r, "o-", color=theme.accent, markersize=5, linewidth=1.6)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel(t("layer"))
    ax.set_ylabel(t("r"))
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))


def draw_distance(fig: FigureBase, data: Distance, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    mass = 100 * np.asarray(data.mass, dtype=np.float64)  # (layers, bins) %
    layers = np.asarray(data.layers, dtype=np.float64)  # (layers,)
    edges = [int(e) for e in data.edges]  # (bins + 1,)
    bins = mass.shape[1]
    heatmap(
        ax,
        mass,
        theme,
        vmin=0.0,
        extent=(-0.5, bins - 0.5, float(layers[-1]) + 0.5, float(layers[0]) - 0.5),
        cbar_label=t("mass_pct"),
    )
    # a bin's label: its first distance (0, 1, 2, 4, ... ), every other bin where they are many
    step = 1 if bins <= 7 else 2
    ticks = list(range(0, bins, step))
    ax.set_xticks(ticks, [f"{edges[b]:,}" for b in ticks])
    ax.set_xlabel(t("distance_bin"))
    ax.set_ylabel(t("layer"))
    ax.yaxis.set_major_locator(MaxNLocator(6, integer=True))


DRAW: dict[str, DrawFn] = {
    "a-weights": _use_map,
    "a-text": _use_map,
    "a-agree": draw_agree,
    "a-distance": draw_distance,
}
