"""Inspection card figures (a real model's ALiBi slopes): ``cards/inspect-alibi.toml``.

Draw functions only draw the arrays of ``posecards.content.inspect``; all text comes from the
[labels] of ``cards/inspect-alibi.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.ticker import FuncFormatter, MaxNLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import causal_bias_maps, plain_log_ticks
from posecards.figures.style import Theme

if TYPE_CHECKING:
    from posecards.content.figdata.inspect_alibi import Bias, Reach, Slopes, Weights


def _context_line(ax: Axes, y: float, text: str, color: str) -> None:
    ax.axhline(y, color=color, linewidth=1.2, linestyle=(0, (4, 3)))
    ax.text(
        0.01,
        y,
        text,
        transform=ax.get_yaxis_transform(),
        ha="left",
        va="bottom",
        color=color,
        fontsize=roles.fontsize("annotation"),
    )


def _pow2(v: float, _pos: int) -> str:
    return f"{v:g}" if v >= 1 else f"1/{1 / v:g}"


def draw_slopes(fig: FigureBase, data: Slopes, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    h = np.asarray(data.head)
    m = np.asarray(data.slope)
    ax.plot(h, m, "o", color=theme.accent, markersize=6)
    ax.vlines(h, float(m.min()) / 2, m, color=theme.accent, linewidth=1.0, alpha=0.6)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(FuncFormatter(_pow2))
    ax.set_ylim(float(m.min()) / 2, float(m.max()) * 2)
    ax.set_xlim(0.3, h.size + 0.7)
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("head"))
    ax.set_ylabel(t("slope"))


def draw_bias(fig: FigureBase, data: Bias, t: Labels, theme: Theme) -> None:
    bias = np.asarray(data.bias, dtype=np.float64)  # (s, L, L), -inf above the diagonal
    n = bias.shape[-1]
    axes = fig.subplots(1, bias.shape[0], sharey=True, squeeze=False)[0]
    im = causal_bias_maps(axes, bias, theme)
    for k, ax in enumerate(axes):
        ax.set_title(t("head_n", h=int(data.heads[k])), fontsize=roles.fontsize("subplot_title"))
        ax.set_xticks([0, n - 1])
        ax.set_yticks([0, n - 1])
        ax.set_xlabel(t("key_j"))
    axes[0].set_ylabel(t("query_i"))
    fig.colorbar(im, ax=list(axes), fraction=0.05, pad=0.02, location="bottom").set_label(t("bias"))


def draw_weights(fig: FigureBase, data: Weights, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    d = np.asarray(data.distance)
    w = np.asarray(data.weights)  # (s, L)
    styles = ["-", "--", "-."]  # heads differ by more than colour
    for k in range(w.shape[0]):
        ax.plot(
            d,
            w[k],
            label=t("head_n", h=int(data.heads[k])),
            linewidth=2.2,
            linestyle=styles[k % len(styles)],
        )
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_ylim(max(float(w.min()) / 2, 1e-4), 2.0)  # plain tick labels down to 0.0001
    ax.set_xlim(0, float(d[-1]))
    ax.set_xlabel(t("distance_back"))
    ax.set_ylabel(t("weight"))
    ax.legend(loc="upper right", fontsize=roles.fontsize("legend"))


def draw_reach(fig: FigureBase, data: Reach, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    h = np.asarray(data.head)
    d = np.asarray(data.half_distance)
    ax.plot(h, d, "o", color=theme.accent, markersize=6)  # no line: heads are not ordered
    ctx = float(data.context)
    if ctx > 0:
        _context_line(ax, ctx, t("context", L=ctx), theme.warn)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlim(0.3, h.size + 0.7)
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("head"))
    ax.set_ylabel(t("half_distance"))


# ---------------------------------------------------------------- the layer-by-layer card


DRAW: dict[str, DrawFn] = {
    "i-slopes": draw_slopes,
    "i-bias": draw_bias,
    "i-weights": draw_weights,
    "i-reach": draw_reach,
}
