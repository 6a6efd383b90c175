"""Card 4 figures: ALiBi biases, RoPE frequency scaling, relative buckets, 2-D grid encodings.

Draw functions only draw the arrays of ``posecards.content.card4``; all text comes from the
[labels] of ``cards/card4.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.figure import FigureBase
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import causal_bias_maps, heatmap
from posecards.figures.style import Theme


def _pow2_formatter(v: float, _pos: int) -> str:
    """Tick label 1/2^k for powers of two below 1 (1 prints as 1)."""
    if v >= 1:
        return f"{v:g}"
    return f"1/{1 / v:g}"


def draw_alibi(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    top, bottom = fig.subfigures(2, 1, squeeze=False, height_ratios=[0.9, 1.1])[:, 0]
    bias = np.asarray(data["bias"], dtype=np.float64)  # (3, L, L), -inf above the diagonal
    n = bias.shape[-1]
    axes = top.subplots(1, 3, sharey=True)
    im = causal_bias_maps(axes, bias, theme)
    for k, ax in enumerate(axes):
        ax.set_title(
            t(
                "alibi_head",
                h=int(data["shown_heads"][k]),
                inv=float(data["shown_inv_slopes"][k]),
            ),
            fontsize=roles.fontsize("subplot_title"),
        )
        ax.text(  # the value in the bottom-left corner (farthest key of the last query)
            -0.3,
            n - 0.7,
            t("alibi_corner", v=float(bias[k, n - 1, 0])),
            ha="left",
            va="bottom",
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
            bbox={"facecolor": theme.background, "edgecolor": "none", "pad": 1.0, "alpha": 0.85},
        )
        ax.set_xticks([0, n - 1])
        ax.set_yticks([0, n - 1])
        ax.set_xlabel(t("key_j"))
    axes[0].set_ylabel(t("query_i"))
    cb = top.colorbar(im, ax=list(axes), fraction=0.05, pad=0.02)
    cb.set_label(t("bias"))

    ax_s, ax_d = bottom.subplots(1, 2, width_ratios=[1.0, 1.25])
    # slopes: 8-head set, 12-head set, and (dotted) the 16-head set the extra slopes come from
    s16 = np.asarray(data["slopes16"])
    for v in s16:
        ax_s.axhline(float(v), color=theme.neutral, linewidth=0.8, linestyle=":", zorder=0)
    s8 = np.asarray(data["slopes8"])
    s12 = np.asarray(data["slopes12"])
    ax_s.plot(np.arange(1, s8.size + 1), s8, "o", color=theme.accent)
    ax_s.plot(np.arange(1, s12.size + 1), s12, "x", color=theme.warn, markersize=9, mew=2)
    # direct labels instead of a legend (the panel is small)
    ax_s.text(
        s8.size * 0.55 + 1,
        float(s8[1]),
        t("heads_n", n=s8.size),
        color=theme.accent,
        ha="left",
        va="center",
        fontsize=roles.fontsize("annotation"),
    )
    ax_s.text(
        (s8.size + s12.size + 1) / 2,
        float(s12[-1]) / 2.5,
        t("heads_n", n=s12.size),
        color=theme.warn,
        ha="center",
        va="top",
        fontsize=roles.fontsize("annotation"),
    )
    ax_s.text(  # bottom right, below the last head's point
        s12.size + 0.6,
        float(s8[-1]) / 2.2,
        t("dotted_n", n=s16.size),
        color=theme.muted,
        ha="right",
        va="center",
        fontsize=roles.fontsize("annotation"),
    )
    ax_s.set_yscale("log", base=2)
    ax_s.yaxis.set_major_locator(FixedLocator([1.0, 1 / 16, 1 / 256]))
    ax_s.yaxis.set_minor_locator(NullLocator())
    ax_s.yaxis.set_major_formatter(FuncFormatter(_pow2_formatter))
    ax_s.set_ylim(float(np.min(s12)) / 4.5, 1.4)
    ax_s.set_xlim(0.3, s12.size + 0.7)
    ax_s.set_xticks([1, 4, 8, 12])
    ax_s.set_xlabel(t("head"))
    ax_s.set_ylabel(t("slope"))

    d = np.asarray(data["distance"])
    w = np.asarray(data["weights"])  # (3, L)
    lines = [
        ax_d.plot(d, w[k], label=t("head_short", h=int(data["shown_heads"][k])))[0]
        for k in range(w.shape[0])
    ]
    ax_d.plot(
        d,
        np.asarray(data["weights_wrong_first"]),
        linestyle=(0, (3, 2)),
        color=lines[0].get_color(),
        label=t("wrong_sign", h=int(data["shown_heads"][0])),
    )
    ax_d.set_yscale("log")
    ax_d.set_ylim(1e-8, 3.0)
    ax_d.set_xlim(0, max(float(d[-1]), 1.0))
    ax_d.set_xlabel(t("distance_back"))
    ax_d.set_ylabel(t("attn_weight"))
    bottom.legend(
        handles=ax_d.get_legend_handles_labels()[0],
        loc="outside lower center",
        ncols=4,
        fontsize=roles.fontsize("legend"),
        handlelength=1.4,
        columnspacing=1.0,
    )


_SCHEME_STYLE: dict[str, dict[str, Any]] = {
    "linear": {"linestyle": "-", "linewidth": 2.4},
    "ntk": {"linestyle": "-"},
    "dynamic2": {"linestyle": "--"},
    "dynamic4": {"linestyle": ":", "linewidth": 2.4},
    "yarn": {"linestyle": "-", "linewidth": 2.4},
    "llama3": {"linestyle": "-."},
}


def draw_rope_scaling(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    lam = np.asarray(data["wavelength"])
    ratio = np.asarray(data["ratio"])  # (6, 64)
    handles = []
    for k, key in enumerate(data["keys"]):
        (line,) = ax.plot(
            lam,
            ratio[k],
            label=t(
                f"leg_{key}",
                s=float(data["factor"][k]),
                n=float(data["seq_len"][k]),
                a=float(data["attention_factor"][k]),
            ),
            **_SCHEME_STYLE.get(key, {}),
        )
        handles.append(line)
    orig = float(data["orig_len"])
    ax.axvline(orig, color=theme.muted, linewidth=1.2, linestyle=(0, (4, 3)))
    ax.text(
        orig,
        1.0,
        " " + t("orig_ctx", L=orig),
        transform=ax.get_xaxis_transform(),
        ha="left",
        va="bottom",
        color=theme.muted,
        fontsize=roles.fontsize("annotation"),
    )
    ax.set_xscale("log")
    ax.set_yscale("log", base=2)
    lo = float(np.min(ratio))
    ticks = [2.0**-k for k in range(0, 8) if 2.0**-k >= lo / 1.5]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_pow2_formatter))
    ax.set_ylim(lo / 1.4, 1.35)
    ax.set_xlabel(t("orig_wavelength"))
    ax.set_ylabel(t("freq_ratio"))
    fig.legend(
        handles=handles,
        title=t("leg_title"),
        loc="outside lower center",
        ncols=2,
        fontsize=roles.fontsize("legend"),
        handlelength=1.8,
        columnspacing=0.8,
    )


def draw_buckets(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax_t, ax_d = fig.subplots(2, 1)
    box = {"facecolor": theme.background, "edgecolor": "none", "pad": 1.0}  # hides lines behind

    r = np.asarray(data["t5_distance"])
    b = np.asarray(data["t5_bucket"])
    exact = float(data["t5_first_shared"])
    last = float(data["t5_last_start"])
    ax_t.axvspan(-exact + 0.5, exact - 0.5, color=theme.ok, alpha=0.25, linewidth=0)
    ax_t.step(r, b, where="mid", color=theme.accent)
    for sgn in (-1, 1):
        ax_t.axvline(sgn * last, color=theme.warn, linestyle="--", linewidth=1.2)
    ax_t.text(
        last,
        0.5 * float(data["t5_num_buckets"]) - 3,
        " " + t("t5_last", n=last),
        color=theme.warn,
        ha="left",
        va="top",
        fontsize=roles.fontsize("annotation"),
        bbox=box,
        zorder=5,
    )
    ax_t.text(
        -exact,
        float(data["t5_num_buckets"]) - 1,
        t("t5_exact", n=exact - 1) + " ",
        color=theme.ok,
        ha="right",
        va="top",
        fontsize=roles.fontsize("annotation"),
        bbox=box,
        zorder=5,
    )
    ax_t.set_ylim(-1, float(data["t5_num_buckets"]) + 1)
    ax_t.set_yticks([0, 8, 16, 24, 31])
    ax_t.set_xlim(float(r[0]), float(r[-1]))
    ax_t.set_title(
        t("t5_title", nb=data["t5_num_buckets"], md=data["t5_max_distance"]),
        fontsize=roles.fontsize("subplot_title"),
    )
    ax_t.set_xlabel(t("t5_x"))
    ax_t.set_ylabel(t("bucket"))

    r2 = np.asarray(data["deb_distance"])
    b2 = np.asarray(data["deb_bucket"])
    mid = float(data["deb_bucket_size"]) / 2
    edge = float(data["deb_edge"])
    ax_d.axvspan(-mid, mid, color=theme.ok, alpha=0.25, linewidth=0)
    ax_d.plot(r2, b2, color=theme.accent, drawstyle="steps-mid")
    for sgn in (-1, 1):
        ax_d.axvline(sgn * edge, color=theme.warn, linestyle="--", linewidth=1.2)
    ax_d.text(
        edge,
        -float(data["deb_bucket_size"]),
        " " + t("deb_edge", n=edge, b=float(data["deb_edge_bucket"])),
        color=theme.warn,
        ha="left",
        va="bottom",
        fontsize=roles.fontsize("annotation"),
        bbox=box,
        zorder=5,
    )
    ax_d.text(
        -mid,
        float(data["deb_bucket_size"]),
        t("deb_exact", n=mid) + " ",
        color=theme.ok,
        ha="right",
        va="top",
        fontsize=roles.fontsize("annotation"),
        bbox=box,
        zorder=5,
    )
    ax_d.set_xlim(float(r2[0]), float(r2[-1]))
    ax_d.set_title(
        t("deb_title", bs=data["deb_bucket_size"], mp=data["deb_max_position"]),
        fontsize=roles.fontsize("subplot_title"),
    )
    ax_d.set_xlabel(t("deb_x"))
    ax_d.set_ylabel(t("bucket"))


def draw_grid2d(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    sims = [np.asarray(data["sim_mae"]), np.asarray(data["sim_sum"])]  # each (3, G, G)
    patches = np.asarray(data["patches"])  # (3, 2): (row y, column x)
    g = int(data["grid"])
    lo = float(min(s.min() for s in sims))
    signed = lo < 0
    axes = fig.subplots(2, patches.shape[0], sharex=True, sharey=True)
    im = None
    for row, sim in enumerate(sims):
        for col in range(patches.shape[0]):
            ax = axes[row, col]
            im = heatmap(
                ax,
                sim[col],
                theme,
                signed=signed,
                vmin=None if signed else lo,
                vmax=1.0,
                colorbar=False,
            )
            y, x = float(patches[col, 0]), float(patches[col, 1])
            ax.add_patch(
                Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor=theme.warn, linewidth=2.2)
            )
            ax.set_aspect("equal")
            ax.set_xticks([0, g - 1])
            ax.set_yticks([0, g - 1])
            if row == 0:
                ax.set_title(
                    t("patch", x=int(x), y=int(y)), fontsize=roles.fontsize("subplot_title")
                )
            if row == 1:
                ax.set_xlabel(t("x_col"))
        axes[row, 0].set_ylabel(t("row_mae" if row == 0 else "row_sum") + "\n" + t("y_row"))
    assert im is not None
    cb = fig.colorbar(im, ax=axes.ravel().tolist(), fraction=0.04, pad=0.02)
    cb.set_label(t("cosine"))


DRAW: dict[str, DrawFn] = {
    "c4-alibi": draw_alibi,
    "c4-rope-scaling": draw_rope_scaling,
    "c4-buckets": draw_buckets,
    "c4-grid2d": draw_grid2d,
}
