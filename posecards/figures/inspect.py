"""Inspection card figures: a real model's position table, RoPE settings or ALiBi slopes.

Draw functions only draw the arrays of ``posecards.content.inspect``; all text comes from the
[labels] of ``cards/inspect-<kind>.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.patches import Polygon
from matplotlib.ticker import FuncFormatter, MaxNLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import causal_bias_maps, heatmap, plain_log_ticks
from posecards.figures.style import Theme


def _similarity(ax: Axes, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    pos = np.asarray(data["positions"], dtype=np.float64)  # (m,)
    step = float(pos[1] - pos[0]) if pos.size > 1 else 1.0
    lo, hi = float(pos[0]) - step / 2, float(pos[-1]) + step / 2
    heatmap(
        ax,
        data["similarity"],
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


def draw_similarity(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    _similarity(fig.subplots(), data, t, theme)


def draw_sinusoidal(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    _similarity(ax, data, t, theme)
    ax.set_title(t("sin_params", d=int(data["d_model"]), b=float(data["base"])))


def draw_norms(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    pos = np.asarray(data["positions"])
    norm = np.asarray(data["norm"])
    ax.plot(pos, norm, color=theme.accent, linewidth=1.6)
    zero = norm == 0
    if np.any(zero):
        ax.plot(pos[zero], norm[zero], "x", color=theme.warn, markersize=8, mew=2)
    ax.set_ylim(0, float(norm.max()) * 1.1 if norm.max() > 0 else 1.0)
    ax.set_xlim(float(pos[0]), float(pos[-1]))
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("norm"))


def draw_offset(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data["offset"])
    ax.axhline(0.0, color=theme.neutral, linewidth=0.8)
    ax.axhline(
        float(data["level"]), color=theme.muted, linewidth=1.0, linestyle=(0, (4, 3)), zorder=0
    )
    ax.plot(
        k,
        np.asarray(data["sinusoidal"]),
        color=theme.muted,
        linewidth=1.6,
        linestyle=(0, (5, 2)),
        label=t("sin", d=int(data["d_model"])),
    )
    ax.plot(k, np.asarray(data["model"]), color=theme.accent, linewidth=2.2, label=t("model"))
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlim(0, float(k[-1]))
    ax.set_xlabel(t("offset_k"))
    ax.set_ylabel(t("mean_cos"))
    ax.legend(loc="lower left", fontsize=roles.fontsize("legend"))


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


def draw_wavelengths(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    from matplotlib.ticker import NullLocator

    ax = fig.subplots()
    k = np.asarray(data["pair"])
    before = "orig_short" if data["baseline"] == "short" else "orig"
    ax.plot(k, np.asarray(data["original"]), color=theme.muted, linestyle="--", label=t(before))
    ax.plot(k, np.asarray(data["scaled"]), color=theme.accent, linewidth=2.2, label=t("scaled"))
    # the context lines are named in the legend and valued on the right axis: inside the plot
    # a label would cross the wavelength curves
    scaled = data["scaled_context"] != data["original_context"]
    lines = [(float(data["original_context"]), "orig_ctx_line" if scaled else "context_line")]
    colours = [theme.ok, theme.warn]
    if scaled:
        lines.append((float(data["scaled_context"]), "extended_line"))
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


def draw_ratios(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data["pair"])
    r = np.asarray(data["ratio"])
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
        t("attention", a=float(data["attention_factor"])),
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize=roles.fontsize("annotation"),
        color=theme.text,
    )
    ax.set_xlim(0, max(float(k[-1]), 1.0))
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("ratio"))


def draw_turns(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data["pair"])
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
        np.asarray(data["original"]),
        color=theme.ok,
        linewidth=2.0,
        label=t("in_orig_short" if data["baseline"] == "short" else "in_orig"),
    )
    ax.plot(
        k,
        np.asarray(data["scaled"]),
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


def draw_layout(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    from matplotlib.colors import ListedColormap

    this = np.asarray(data["this"], dtype=np.float64)  # (head_dim,) pair index or -1
    other = np.asarray(data["other"], dtype=np.float64)
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
    # arcs join the two slots of pair 0 and of the last pair where they lie apart
    arcs_below = False
    for r, row in enumerate(rows):
        for p, colour in ((0, theme.text), (pairs - 1, theme.muted)):
            a, b = (float(x) for x in np.flatnonzero(row == p)[:2])
            if b - a < n / 8:
                continue
            y, sign = (r - 0.5, -1) if r == 0 else (r + 0.5, 1)
            arcs_below = arcs_below or r == 1
            xs = np.linspace(a, b, 60)
            ys = y + sign * 0.8 * np.sin(np.pi * (xs - a) / (b - a))
            ax.plot(xs, ys, color=colour, linewidth=1.6, clip_on=False)
            ax.text(
                (a + b) / 2,
                y + sign * 0.85,
                t("pair_of", k=p, a=int(a), b=int(b)),
                ha="center",
                va="bottom" if r == 0 else "top",
                fontsize=roles.fontsize("annotation"),
                color=colour,
            )
    layout = str(data["layout"])
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


def _pow2(v: float, _pos: int) -> str:
    return f"{v:g}" if v >= 1 else f"1/{1 / v:g}"


def draw_slopes(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    h = np.asarray(data["head"])
    m = np.asarray(data["slope"])
    ax.plot(h, m, "o", color=theme.accent, markersize=6)
    ax.vlines(h, float(m.min()) / 2, m, color=theme.accent, linewidth=1.0, alpha=0.6)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(FuncFormatter(_pow2))
    ax.set_ylim(float(m.min()) / 2, float(m.max()) * 2)
    ax.set_xlim(0.3, h.size + 0.7)
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("head"))
    ax.set_ylabel(t("slope"))


def draw_bias(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    bias = np.asarray(data["bias"], dtype=np.float64)  # (s, L, L), -inf above the diagonal
    n = bias.shape[-1]
    axes = fig.subplots(1, bias.shape[0], sharey=True, squeeze=False)[0]
    im = causal_bias_maps(axes, bias, theme)
    for k, ax in enumerate(axes):
        ax.set_title(t("head_n", h=int(data["heads"][k])), fontsize=roles.fontsize("subplot_title"))
        ax.set_xticks([0, n - 1])
        ax.set_yticks([0, n - 1])
        ax.set_xlabel(t("key_j"))
    axes[0].set_ylabel(t("query_i"))
    fig.colorbar(im, ax=list(axes), fraction=0.05, pad=0.02, location="bottom").set_label(t("bias"))


def draw_weights(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    d = np.asarray(data["distance"])
    w = np.asarray(data["weights"])  # (s, L)
    styles = ["-", (0, (5, 2)), (0, (6, 2, 1.5, 2))]  # heads differ by more than colour
    for k in range(w.shape[0]):
        ax.plot(
            d,
            w[k],
            label=t("head_n", h=int(data["heads"][k])),
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


def draw_reach(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    h = np.asarray(data["head"])
    d = np.asarray(data["half_distance"])
    ax.plot(h, d, "o", color=theme.accent, markersize=6)  # no line: heads are not ordered
    ctx = float(data["context"])
    if ctx > 0:
        _context_line(ax, ctx, t("context", L=ctx), theme.warn)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlim(0.3, h.size + 0.7)
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("head"))
    ax.set_ylabel(t("half_distance"))


DRAW: dict[str, DrawFn] = {
    "i-similarity": draw_similarity,
    "i-norms": draw_norms,
    "i-offset": draw_offset,
    "i-sinusoidal": draw_sinusoidal,
    "i-wavelengths": draw_wavelengths,
    "i-ratios": draw_ratios,
    "i-turns": draw_turns,
    "i-layout": draw_layout,
    "i-slopes": draw_slopes,
    "i-bias": draw_bias,
    "i-weights": draw_weights,
    "i-reach": draw_reach,
}
