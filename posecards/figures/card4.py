"""Card 4 figures: ALiBi biases, RoPE frequency scaling, relative buckets, 2-D grid encodings.

Draw functions only draw the arrays of ``posecards.content.card4``; all text comes from the
[labels] of ``cards/card4.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import FigureBase
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from posecards.figures import DrawFn, Labels
from posecards.figures._common import (
    causal_bias_maps,
    heatmap,
    plain_log_ticks,
)
from posecards.figures.style import Theme, visible_cmap

# the data each figure draws (content/figdata/card4.py), as content/card4.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card4 import (
        Alibi,
        AlibiSlopes,
        Buckets,
        Deberta,
        Grid2d,
        RopeScaling,
        UnseenAngles,
    )


def _pow2_formatter(v: float, _pos: int) -> str:
    """Tick label 1/2^k for powers of two below 1 (1 prints as 1)."""
    if v >= 1:
        return f"{v:g}"
    return f"1/{1 / v:g}"


def _one_sided_bias(ax: Any, bias: np.ndarray, theme: Theme) -> Any:
    """One causal bias matrix on a one-sided scale (the bias is never positive)."""
    return causal_bias_maps([ax], bias[None], theme)


NARROW_PANEL_IN = 5.0  # panels narrower than this (inches) break the ALiBi head title in two


def draw_alibi(fig: FigureBase, data: Alibi, t: Labels, theme: Theme) -> None:
    ax_b, ax_w = fig.subplots(1, 2, width_ratios=[1.0, 1.5])
    # left: the bias the steepest head adds, over a few tokens
    bias = np.asarray(data.bias, dtype=np.float64)  # (L, L), -inf above the diagonal
    n = bias.shape[-1]
    im = _one_sided_bias(ax_b, bias, theme)
    head_title = t(
        "alibi_head_of",
        h=int(data.bias_head),
        n=int(data.heads),
        inv=float(data.bias_inv_slope),
    )
    # on a narrow panel (A4) the one-line title would run into the next plot's axis label
    narrow = fig.get_window_extent().width / fig.get_figure(root=True).dpi < NARROW_PANEL_IN
    ax_b.set_title(
        head_title.replace(": ", ":\n", 1).replace("：", "：\n", 1) if narrow else head_title
    )
    ax_b.set_xticks([0, n - 1])
    ax_b.set_yticks([0, n - 1])
    ax_b.set_xlabel(t("key_j"))
    ax_b.set_ylabel(t("query_i"))
    lo = float(np.min(bias[np.isfinite(bias)]))
    cb = fig.colorbar(im, ax=ax_b, location="bottom", fraction=0.08, pad=0.02, aspect=12)
    cb.set_ticks([lo, 0.0])
    cb.set_ticklabels([t("num1", v=lo), "0"])
    cb.set_label(t("bias"))

    # right: the weight the last query gives each earlier token, equal content
    d = np.asarray(data.distance)
    w = np.asarray(data.weights)  # (3, L)
    styles = ["-", "--", "-."]
    for k in range(w.shape[0]):
        ax_w.plot(
            d,
            w[k],
            linestyle=styles[k % len(styles)],
            linewidth=2.4,
            label=t(
                "alibi_head",
                h=int(data.shown_heads[k]),
                inv=float(data.shown_inv_slopes[k]),
            ),
        )
    ax_w.set_yscale("log")
    plain_log_ticks(ax_w.yaxis)
    ax_w.set_ylim(1e-4, 2.0)
    ax_w.set_xlim(0, max(float(d[-1]), 1.0))
    ax_w.set_title(t("alibi_weights_title", n=int(d.size)))
    ax_w.set_xlabel(t("distance_back"))
    ax_w.set_ylabel(t("attn_weight"))
    fig.legend(  # below the panel: inside the axes every corner holds a line
        handles=ax_w.get_legend_handles_labels()[0],
        loc="outside lower center",
        ncols=2,
        handlelength=2.0,
        columnspacing=1.0,
    )


def draw_alibi_slopes(fig: FigureBase, data: AlibiSlopes, t: Labels, theme: Theme) -> None:
    """Slopes of 8 and 12 heads; the 12-head set takes every other slope of the 16-head one."""
    ax = fig.subplots()
    s16 = np.asarray(data.slopes16)
    for v in s16:
        ax.axhline(float(v), color=theme.neutral, linewidth=0.9, linestyle=":", zorder=0)
    s8 = np.asarray(data.slopes8)
    s12 = np.asarray(data.slopes12)
    # open circles around crosses: where the two sets agree, both marks stay visible
    ax.plot(
        np.arange(1, s8.size + 1),
        s8,
        "o",
        markersize=14,
        markerfacecolor="none",
        markeredgewidth=2.0,
        color=theme.accent,
        label=t("heads_n", n=s8.size),
    )
    ax.plot(
        np.arange(1, s12.size + 1),
        s12,
        "x",
        color=theme.warn,
        markersize=8,
        mew=2.2,
        label=t("heads_n", n=s12.size),
    )
    ax.plot(
        [], [], color=theme.neutral, linewidth=0.9, linestyle=":", label=t("dotted_n", n=s16.size)
    )
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_locator(FixedLocator([1.0, 1 / 16, 1 / 256]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_pow2_formatter))
    ax.set_ylim(float(np.min(s12)) / 1.6, 1.6)
    ax.set_xlim(0.3, s12.size + 0.7)
    ax.set_xticks([1, 4, 8, 12])
    ax.set_xlabel(t("head"))
    ax.set_ylabel(t("slope"))
    fig.legend(loc="outside lower center", ncols=3, handlelength=1.6, columnspacing=1.2)


# line style and marker per scaling method: the lines differ by more than colour
_SCHEME_STYLE: dict[str, dict[str, Any]] = {
    "linear": {"linestyle": "-", "linewidth": 2.8},
    "ntk": {"linestyle": (0, (5, 2)), "marker": "o", "markevery": (0, 9)},
    "dynamic2": {"linestyle": "--"},
    "dynamic4": {"linestyle": ":", "linewidth": 2.4},
    "yarn": {"linestyle": "-", "marker": "s", "markevery": (4, 9)},
    "llama3": {"linestyle": (0, (6, 2, 1.5, 2)), "marker": "^", "markevery": (2, 9)},
}


def draw_rope_scaling(fig: FigureBase, data: RopeScaling, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    lam = np.asarray(data.wavelength)
    ratio = np.asarray(data.ratio)  # (6, 64)
    keys = list(data.keys)
    handles = []
    for key in data.shown:
        k = keys.index(key)
        (line,) = ax.plot(
            lam,
            ratio[k],
            label=t(
                f"leg_{key}",
                s=float(data.factor[k]),
                a=float(data.attention_factor[k]),
                a2=float(data.score_factor[k]),
            ),
            **{"linewidth": 2.0, "markersize": 7, **_SCHEME_STYLE.get(key, {})},
        )
        handles.append(line)
    orig = float(data.orig_len)
    ax.axvline(orig, color=theme.muted, linewidth=1.2, linestyle=(0, (4, 3)))
    ax.text(
        orig,
        1.0,
        t("orig_ctx_short"),
        transform=ax.get_xaxis_transform(),
        ha="center",
        va="bottom",
        color=theme.muted,
    )
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_yscale("log", base=2)
    shown = [keys.index(k) for k in data.shown]
    lo = float(np.min(ratio[shown]))
    ticks = [2.0**-k for k in range(0, 8) if 2.0**-k >= lo / 1.5]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_pow2_formatter))
    ax.set_ylim(lo / 1.4, 1.35)
    ax.set_xlabel(t("orig_wavelength"))
    ax.set_ylabel(t("freq_ratio"))
    fig.legend(
        handles=handles,
        title=t("rope_params", d=int(data.head_dim), b=float(data.base), L=orig),
        loc="outside lower center",
        ncols=2,
        handlelength=2.6,
        columnspacing=1.0,
    )


def draw_buckets(fig: FigureBase, data: Buckets, t: Labels, theme: Theme) -> None:
    """T5: encoder (bidirectional) and decoder (unidirectional) buckets of keys before the query."""
    ax = fig.subplots()
    n = np.asarray(data.distance)
    enc = np.asarray(data.encoder)
    dec = np.asarray(data.decoder)
    md = float(data.max_distance)
    ax.axvline(md, color=theme.muted, linewidth=1.2, linestyle=":")
    # a gap in data units, not a leading space: a space's width is the font's, not a margin
    ax.text(
        md + 0.01 * float(n[-1]), 0.5, t("t5_md", n=md), ha="left", va="bottom", color=theme.muted
    )
    (l_dec,) = ax.step(n, dec, where="post", color=theme.accent, linewidth=2.2)
    (l_enc,) = ax.step(n, enc, where="post", color=theme.warn, linewidth=2.2, linestyle=(0, (5, 2)))
    for line, start, top, key, label_y in (
        (l_dec, float(data.dec_last_start), float(dec.max()), "t5_dec", float(dec.max()) + 1.0),
        (l_enc, float(data.enc_last_start), float(enc.max()), "t5_enc", float(enc.max()) + 1.0),
    ):
        ax.plot([start], [top], "o", color=line.get_color(), markersize=8)
        ax.text(  # right of the max_distance line, just above the flat last bucket
            md + 0.02 * float(n[-1]),
            label_y,
            t(key, n=start),
            color=line.get_color(),
            ha="left",
            va="bottom",
        )
    ax.set_ylim(-1, float(dec.max()) + 9)
    ax.set_yticks([0, 8, 16, 24, 31])
    ax.set_xlim(0, float(n[-1]))
    ax.set_title(t("t5_title", nb=data.num_buckets), loc="left")
    ax.set_xlabel(t("t5_x"))
    ax.set_ylabel(t("bucket"))


def draw_deberta(fig: FigureBase, data: Deberta, t: Labels, theme: Theme) -> None:
    """DeBERTa's log buckets: which relative-position embedding a distance uses."""
    ax = fig.subplots()
    r = np.asarray(data.distance)
    b = np.asarray(data.bucket)
    mid = float(data.exact)
    edge = float(data.edge)
    ax.axvspan(-mid, mid, color=theme.ok, alpha=0.2, linewidth=0)
    ax.plot(r, b, color=theme.accent, drawstyle="steps-mid", linewidth=2.0)
    for sgn in (-1, 1):
        ax.axvline(sgn * edge, color=theme.warn, linestyle="--", linewidth=1.2)
    ax.annotate(  # right of the dashed line at +edge, a fixed gap away whatever the font
        t("deb_edge", n=edge, b=float(data.edge_bucket)),
        (edge, -float(data.bucket_size) * 0.95),
        xytext=(8, 0),
        textcoords="offset points",
        color=theme.warn,
        ha="left",
        va="bottom",
    )
    ax.text(  # over the band, above the curve (which stays within ±mid there)
        0.0,
        float(data.bucket_size) * 1.3,
        t("deb_exact", n=mid),
        color=theme.ok,
        ha="center",
        va="top",
    )
    ax.set_ylim(-float(data.bucket_size) * 1.35, float(data.bucket_size) * 1.35)
    ax.set_xlim(float(r[0]), float(r[-1]))
    ax.set_title(t("deb_title", bs=data.bucket_size, mp=data.max_position), loc="left")
    ax.set_xlabel(t("deb_x"))
    ax.set_ylabel(t("deb_index"))


def draw_unseen(fig: FigureBase, data: UnseenAngles, t: Labels, theme: Theme) -> None:
    """Why RoPE fails past its training length: one row per method, one cell per pair, coloured
    by the arc of angles the pair reaches at test length that training never reached."""
    unseen = np.asarray(data.unseen)  # (methods, pairs) rad
    methods = list(data.methods)
    counts = [int(c) for c in data.pairs_new]
    ax = fig.subplots()
    heatmap(
        ax,
        unseen,
        theme,
        vmin=0.0,
        vmax=2 * np.pi,
        cbar_label=t("unseen_cbar"),
        cmap=visible_cmap(theme, "sequential"),
    )
    n = unseen.shape[1]
    ax.set_xticks([0, n // 4, n // 2, 3 * n // 4, n - 1])
    ax.set_yticks(
        range(len(methods)),
        [
            t(f"unseen_row_{m}", c=c, b=float(data.big_base))
            for m, c in zip(methods, counts, strict=True)
        ],
    )
    ax.tick_params(length=0)
    ax.set_xlabel(t("unseen_x"))
    ax.set_title(t("unseen_title", L=int(data.train_length), T=int(data.test_length)), loc="left")


def draw_grid2d(fig: FigureBase, data: Grid2d, t: Labels, theme: Theme) -> None:
    sims = [np.asarray(data.sim_mae)[0], np.asarray(data.sim_sum)[0]]  # each (G, G)
    y, x = (float(v) for v in np.asarray(data.patches)[0])  # (row y, column x)
    g = int(data.grid)
    lo = float(min(s.min() for s in sims))
    signed = lo < 0
    axes = fig.subplots(1, 2, sharey=True)
    im = None
    for ax, sim, title in zip(axes, sims, ("row_mae", "row_sum"), strict=True):
        im = heatmap(
            ax,
            sim,
            theme,
            signed=signed,
            vmin=None if signed else lo,
            vmax=1.0,
            colorbar=False,
            cmap=None if signed else visible_cmap(theme, "sequential"),
        )
        ax.add_patch(
            Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor=theme.warn, linewidth=2.6)
        )
        ax.set_aspect("equal")
        ax.set_xticks([0, g - 1])
        ax.set_yticks([0, g - 1])
        ax.set_title(t(title))
        ax.set_xlabel(t("x_col"))
    axes[0].set_ylabel(t("y_row"))
    assert im is not None
    cb = fig.colorbar(im, ax=list(axes), location="bottom", fraction=0.06, pad=0.04, aspect=30)
    cb.set_label(
        t("cosine_to", x=int(x), y=int(y))
        + "\n"
        + t("grid_params", g=g, d=int(data.d_used), b=float(data.base))
    )


DRAW: dict[str, DrawFn] = {
    "c4-alibi": draw_alibi,
    "c4-rope-scaling": draw_rope_scaling,
    "c4-buckets": draw_buckets,
    "c4-grid2d": draw_grid2d,
    "c4-alibi-slopes": draw_alibi_slopes,
    "c4-deberta": draw_deberta,
    "c4-unseen-angles": draw_unseen,
}
