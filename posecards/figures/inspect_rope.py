"""Inspection card figures (a real model's RoPE settings): ``cards/inspect-rope.toml``.

Draw functions only draw the arrays of ``posecards.content.inspect``; all text comes from the
[labels] of ``cards/inspect-rope.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import FigureBase
from matplotlib.patches import Polygon
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import plain_log_ticks
from posecards.figures.style import Theme

if TYPE_CHECKING:
    from posecards.content.figdata.inspect_rope import Layout, Ratios, Turns, Wavelengths


def draw_wavelengths(fig: FigureBase, data: Wavelengths, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data.pair)
    before = "orig_short" if data.baseline == "short" else "orig"
    ax.plot(k, np.asarray(data.original), color=theme.muted, linestyle="--", label=t(before))
    ax.plot(k, np.asarray(data.scaled), color=theme.accent, linewidth=2.2, label=t("scaled"))
    # the context lines are named in the legend and valued on the right axis: inside the plot
    # a label would cross the wavelength curves
    scaled = data.scaled_context != data.original_context
    lines = [(float(data.original_context), "orig_ctx_line" if scaled else "context_line")]
    colours = [theme.ok, theme.warn]
    if scaled:
        lines.append((float(data.scaled_context), "extended_line"))
    for (y, key), colour in zip(lines, colours, strict=False):
        ax.axhline(y, color=colour, linewidth=1.4, linestyle=(0, (4, 3)), label=t(key))
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    right = ax.secondary_yaxis("right")
    right.set_yticks([y for y, _ in lines], [f"{int(y):,}" for y, _ in lines])
    right.yaxis.set_minor_locator(NullLocator())
    right.tick_params(length=0, colors=theme.muted)
    ax.set_xlim(0, max(float(k[-1]), 1.0))
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("wavelength"))
    ax.legend(  # above the axes: inside, the curves cross both context lines
        loc="lower left",
        bbox_to_anchor=(0.0, 1.02),
        ncols=2,
        borderaxespad=0.0,
        frameon=False,
        columnspacing=1.2,
        fontsize=roles.fontsize("legend"),
    )


def draw_ratios(fig: FigureBase, data: Ratios, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data.pair)
    r = np.asarray(data.ratio)
    ax.axhline(1.0, color=theme.neutral, linewidth=0.8)
    ax.plot(k, r, "o-", color=theme.accent, markersize=3.5, linewidth=1.6)
    ax.set_yscale("log", base=2)
    lo, hi = float(r.min()), float(r.max())
    ax.set_ylim(min(lo, 1.0) / 1.6, max(hi, 1.0) * 1.6)
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _p: f"{v:g}" if v >= 1 else f"1/{1 / v:g}")
    )
    ax.text(
        0.98,
        0.96,
        t("attention", a=float(data.attention_factor)),
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize=roles.fontsize("annotation"),
        color=theme.text,
    )
    ax.set_xlim(0, max(float(k[-1]), 1.0))
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("ratio"))


def draw_turns(fig: FigureBase, data: Turns, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data.pair)
    ax.axhline(1.0, color=theme.warn, linewidth=1.2, linestyle=(0, (4, 3)))
    ax.text(
        0.01,
        1.0,
        t("one_turn"),
        transform=ax.get_yaxis_transform(),
        ha="left",
        va="bottom",
        color=theme.warn,
        fontsize=roles.fontsize("annotation"),
    )
    ax.plot(
        k,
        np.asarray(data.original),
        color=theme.ok,
        linewidth=2.0,
        label=t("in_orig_short" if data.baseline == "short" else "in_orig"),
    )
    ax.plot(
        k,
        np.asarray(data.scaled),
        color=theme.accent,
        linestyle="--",
        linewidth=2.0,
        label=t("in_extended"),
    )
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlim(0, max(float(k[-1]), 1.0))
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("turns"))
    ax.legend(loc="upper right", fontsize=roles.fontsize("legend"))


def _pair_arcs(ax: Axes, rows: np.ndarray, pairs: int, t: Labels, theme: Theme) -> bool:
    """Arcs joining the two slots of pair 0 and of the last pair where they lie apart, in each
    row of the layout strip; whether any is drawn below it."""
    n = rows.shape[1]
    arcs_below = False
    for r, row in enumerate(rows):
        arcs = []
        for p, colour in ((0, theme.text), (pairs - 1, theme.muted)):
            a, b = (float(x) for x in np.flatnonzero(row == p)[:2])
            if b - a >= n / 8:
                arcs.append((p, colour, a, b))
        # partial rotary: the two arcs' labels would meet, so they go above the axes instead
        apart = len(arcs) < 2 or abs(arcs[0][2] + arcs[0][3] - arcs[1][2] - arcs[1][3]) >= 0.8 * n
        for k, (p, colour, a, b) in enumerate(arcs):
            y, sign = (r - 0.5, -1) if r == 0 else (r + 0.5, 1)
            arcs_below = arcs_below or r == 1
            xs = np.linspace(a, b, 60)
            ys = y + sign * 0.8 * np.sin(np.pi * (xs - a) / (b - a))
            ax.plot(xs, ys, color=colour, linewidth=1.6, clip_on=False)
            label = t("pair_of", k=p, a=int(a), b=int(b))
            if not apart:
                ax.set_title(
                    label,
                    loc="left" if k == 0 else "right",
                    color=colour,
                    fontsize=roles.fontsize("annotation"),
                )
                continue
            ax.text(
                (a + b) / 2,
                y + sign * 0.85,
                label,
                ha="center",
                va="bottom" if r == 0 else "top",
                fontsize=roles.fontsize("annotation"),
                color=colour,
            )
    return arcs_below


def draw_layout(fig: FigureBase, data: Layout, t: Labels, theme: Theme) -> None:
    this = np.asarray(data.this, dtype=np.float64)  # (head_dim,) pair index or -1
    other = np.asarray(data.other, dtype=np.float64)
    n = this.size
    pairs = int(max(this.max(), 0)) + 1
    rows = np.vstack([this, other])  # (2, head_dim)
    colours = theme.categorical
    # colour = pair index modulo the palette: neighbouring pairs differ, and the two slots of
    # a pair share a colour (adjacent in "interleaved", half a head apart in "half")
    shown = np.where(rows >= 0, np.mod(rows, len(colours)), np.nan)
    ax = fig.subplots()
    ax.imshow(
        shown,
        cmap=ListedColormap(list(colours)),
        vmin=-0.5,
        vmax=len(colours) - 0.5,
        aspect="auto",
        interpolation="nearest",
    )
    if np.any(rows < 0):  # the slots RoPE leaves alone (partial rotary)
        first = int(np.argmax(this < 0))
        ax.add_patch(
            Polygon(
                [(first - 0.5, -0.5), (n - 0.5, -0.5), (n - 0.5, 1.5), (first - 0.5, 1.5)],
                facecolor=theme.background,
                hatch="///",
                edgecolor=theme.neutral,
                linewidth=0.0,
            )
        )
        ax.text(
            (first + n) / 2 - 0.5,
            0.5,
            t("not_rotated"),
            ha="center",
            va="center",
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
        )
    arcs_below = _pair_arcs(ax, rows, pairs, t, theme)
    layout = str(data.layout)
    other_name = "interleaved" if layout == "half" else "half"
    ax.set_yticks(
        [0, 1],
        [t("row_this", name=t(f"row_{layout}")), t("row_other", name=t(f"row_{other_name}"))],
    )
    ax.set_ylim(2.6 if arcs_below else 1.6, -1.7)
    ax.set_xlabel(t("slot"))
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


DRAW: dict[str, DrawFn] = {
    "i-wavelengths": draw_wavelengths,
    "i-ratios": draw_ratios,
    "i-turns": draw_turns,
    "i-layout": draw_layout,
}
