"""The figures of the "how this model uses its frequencies" card (``cards/inspect-weights.toml``).

They draw the arrays of ``posecards.content.weights`` only; all text comes from the card's
[labels].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.ticker import MaxNLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap
from posecards.figures.style import Theme

if TYPE_CHECKING:
    from posecards.content.figdata.inspect_weights import Cosine, CosSum, Heads, Use


def layer_map(
    ax: Axes,
    values: Any,
    layers: Any,
    theme: Theme,
    label: str,
    t: Labels,
    vmax: float | None = None,
) -> None:
    """A (layers, pairs) heatmap: layers down, pairs (fast to slow) across, from 0 to ``vmax``."""
    v = np.asarray(values, dtype=np.float64)  # (layers, pairs)
    n_layers, pairs = v.shape
    first, last = float(layers[0]), float(layers[-1])
    heatmap(
        ax,
        v,
        theme,
        vmin=0.0,
        vmax=vmax,
        extent=(-0.5, pairs - 0.5, last + 0.5, first - 0.5),
        cbar_label=label,
    )
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("layer"))
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(6, integer=True))


def draw_use(fig: FigureBase, data: Use, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    use = np.asarray(data.use, dtype=np.float64)  # (layers, pairs) share of each head's use
    layer_map(ax, 100 * use, data.layers, theme, t("use_pct"), t)
    beyond = int(data.beyond)
    pairs = use.shape[1]
    if 0 < beyond <= pairs:
        x = pairs - beyond - 0.5  # pairs right of it: wavelength longer than the context
        ax.axvline(x, color=theme.warn, linewidth=2.0, linestyle=(0, (4, 3)))
        ax.set_title(
            t("beyond_line", L=int(data.context)),
            loc="right",
            color=theme.warn,
            fontsize=roles.fontsize("annotation"),
        )


def draw_cosine(fig: FigureBase, data: Cosine, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    layer_map(ax, data.cos, data.layers, theme, t("abs_cos"), t)


def draw_heads(fig: FigureBase, data: Heads, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    layer = np.asarray(data.layer, dtype=np.float64)  # (layers·heads,)
    centre = np.asarray(data.centre, dtype=np.float64)  # (layers·heads,)
    pairs = int(data.pairs)
    ax.plot(layer, centre, "o", color=theme.muted, markersize=5, alpha=0.8)
    fx, fy = data.fast
    sx, sy = data.slow
    ax.plot([fx], [fy], "D", color=theme.accent, markersize=10, label=t("fastest_head"))
    ax.plot([sx], [sy], "s", color=theme.warn, markersize=10, label=t("slowest_head"))
    ax.set_ylim(-0.5, pairs - 0.5)
    ax.set_xlabel(t("layer"))
    ax.set_ylabel(t("centre"))
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    ax.legend(loc="lower right", fontsize=roles.fontsize("legend"))  # below the heads' dots


def draw_cos_sum(fig: FigureBase, data: CosSum, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    m = np.asarray(data.distance, dtype=np.float64)
    ax.axhline(0.0, color=theme.neutral, linewidth=0.8)
    ax.plot(
        m,
        np.asarray(data.minimum),
        color=theme.muted,
        linewidth=1.6,
        linestyle=(0, (5, 2)),
        label=t("min_base", b=float(data.min_base)),
    )
    ax.plot(
        m,
        np.asarray(data.model),
        color=theme.accent,
        linewidth=2.0,
        label=t("this_base", b=float(data.base)),
    )
    ax.set_xlim(0, float(m[-1]))
    ax.set_ylim(min(-0.1, float(np.min(data.model)) - 0.05), 1.05)
    ax.set_xlabel(t("distance"))
    ax.set_ylabel(t("mean_cos"))
    ax.legend(loc="upper right", fontsize=roles.fontsize("legend"))


DRAW: dict[str, DrawFn] = {
    "w-use": draw_use,
    "w-cosine": draw_cosine,
    "w-heads": draw_heads,
    "w-cos-sum": draw_cos_sum,
}
