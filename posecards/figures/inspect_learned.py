"""Inspection card figures (a real model's learned position table): ``cards/inspect-learned.toml``.

Draw functions only draw the arrays of ``posecards.content.inspect``; all text comes from the
[labels] of ``cards/inspect-learned.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.ticker import MaxNLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap
from posecards.figures.style import Theme

if TYPE_CHECKING:
    from posecards.content.figdata.inspect_learned import Norms, Offset, Similarity, Sinusoidal


def _similarity(ax: Axes, data: Similarity, t: Labels, theme: Theme) -> None:
    pos = np.asarray(data.positions, dtype=np.float64)  # (m,)
    step = float(pos[1] - pos[0]) if pos.size > 1 else 1.0
    lo, hi = float(pos[0]) - step / 2, float(pos[-1]) + step / 2
    heatmap(
        ax,
        data.similarity,
        theme,
        signed=True,
        vmax=1.0,
        extent=(lo, hi, hi, lo),
        cbar_label=t("cosine"),
    )
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("position"))
    ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(5, integer=True))


def draw_similarity(fig: FigureBase, data: Similarity, t: Labels, theme: Theme) -> None:
    _similarity(fig.subplots(), data, t, theme)


def draw_sinusoidal(fig: FigureBase, data: Sinusoidal, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    _similarity(ax, data, t, theme)
    ax.set_title(t("sin_params", d=int(data.d_model), b=float(data.base)))


def draw_norms(fig: FigureBase, data: Norms, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    pos = np.asarray(data.positions)
    norm = np.asarray(data.norm)
    ax.plot(pos, norm, color=theme.accent, linewidth=1.6)
    zero = norm == 0
    if np.any(zero):
        ax.plot(pos[zero], norm[zero], "x", color=theme.warn, markersize=8, mew=2)
    ax.set_ylim(0, float(norm.max()) * 1.1 if norm.max() > 0 else 1.0)
    ax.set_xlim(float(pos[0]), float(pos[-1]))
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("norm"))


def draw_offset(fig: FigureBase, data: Offset, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data.offset)
    ax.axhline(0.0, color=theme.neutral, linewidth=0.8)
    ax.axhline(float(data.level), color=theme.muted, linewidth=1.0, linestyle=(0, (4, 3)), zorder=0)
    ax.plot(
        k,
        np.asarray(data.sinusoidal),
        color=theme.muted,
        linewidth=1.6,
        linestyle=(0, (5, 2)),
        label=t("sin", d=int(data.d_model)),
    )
    ax.plot(k, np.asarray(data.model), color=theme.accent, linewidth=2.2, label=t("model"))
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlim(0, float(k[-1]))
    ax.set_xlabel(t("offset_k"))
    ax.set_ylabel(t("mean_cos"))
    ax.legend(loc="lower left", fontsize=roles.fontsize("legend"))


DRAW: dict[str, DrawFn] = {
    "i-similarity": draw_similarity,
    "i-norms": draw_norms,
    "i-offset": draw_offset,
    "i-sinusoidal": draw_sinusoidal,
}
