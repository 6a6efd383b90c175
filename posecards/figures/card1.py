"""Card 1 figures: attention cannot see order; what the sinusoidal PE looks like."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import Colormap
from matplotlib.figure import FigureBase

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap, plain_log_ticks, text_colour_on
from posecards.figures.style import Theme, visible_cmap

# the data each figure draws (content/figdata/card1.py), as content/card1.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card1 import (
        Counting,
        Permutation,
        PeTable,
        Trajectory,
        Wavelengths,
        Where,
    )


def _cell_text_color(cmap: Colormap, norm: Any, value: float) -> str:
    """Black or white, whichever contrasts more with the cell colour (WCAG)."""
    return text_colour_on(cmap(norm(value)))


def _annotate(ax: Axes, values: np.ndarray, fmt: str, x0: float = 0.0) -> None:
    """Write each cell's value on an imshow heatmap drawn on ``ax`` (column c at x0 + c)."""
    im = ax.images[-1]
    cmap, norm = im.get_cmap(), im.norm
    for (r, c), v in np.ndenumerate(values):
        text = format(v, fmt)
        if float(text) == 0:
            text = text.lstrip("-")  # no "-0.00"
        ax.text(
            x0 + c,
            r,
            text.replace("-", "\u2212"),
            ha="center",
            va="center",
            fontsize=roles.fontsize("cell_number"),
            color=_cell_text_color(cmap, norm, float(v)),
        )


def draw_permutation(fig: FigureBase, data: Permutation, t: Labels, theme: Theme) -> None:
    s = data.sentence(t.lang)
    tokens = list(s.tokens)
    reordered = list(s.tokens_reordered)
    rows = [
        (
            "row_plain",
            s.weights_plain,
            s.weights_plain_reordered,
            s.weight_deviation_without_pe,  # the weights shown, not the outputs
            theme.ok,
        ),
        (
            "row_pe",
            s.weights_pe,
            s.weights_pe_reordered,
            s.weight_deviation_with_pe,
            theme.warn,
        ),
    ]
    all_w = np.concatenate([np.ravel(w) for _, a, b, _, _ in rows for w in (a, b)])
    vmin, vmax = float(all_w.min()), float(all_w.max())
    # columns: without / with PE; rows: the sentence and its reversal (tokens on the ticks)
    axes = fig.subplots(2, 2)
    for c, (key, w_orig, w_reord, dev, colour) in enumerate(rows):
        axes[0, c].set_title(t(key, dev=dev), color=colour, fontweight="bold")
        for r, (w, toks) in enumerate(zip((w_orig, w_reord), (tokens, reordered), strict=True)):
            ax = axes[r, c]
            heatmap(ax, w, theme, vmin=vmin, vmax=vmax, colorbar=False)
            _annotate(ax, np.asarray(w), ".2f")
            n = len(toks)
            ax.set_xticks(range(n), toks)
            ax.set_yticks(range(n), toks)
            ax.tick_params(length=0)
            if c == 0:  # the lower row is the reversed sentence: say so where the eye starts
                ax.set_ylabel(t("query" if r == 0 else "query_reversed"))
            if r == 1:
                ax.set_xlabel(t("key"))


def draw_pe_table(fig: FigureBase, data: PeTable, t: Labels, theme: Theme) -> None:
    pe = np.asarray(data.pe)  # (positions, 8)
    dims = [int(d) for d in data.dims]
    positions = [int(p) for p in data.positions]
    ax = fig.subplots()
    # every value is written in its cell (three decimals, so the slow columns visibly move);
    # the colour only groups them, so no colour bar
    heatmap(ax, pe, theme, signed=True, vmax=1.0, colorbar=False)
    _annotate(ax, pe, ".3f")
    ax.set_xticks(
        range(len(dims)),
        [f"{d}\n{t('sin') if d % 2 == 0 else t('cos')}" for d in dims],
    )
    ax.set_yticks(range(len(positions)), [str(p) for p in positions])
    ax.tick_params(length=0, labeltop=True, labelbottom=False)
    ax.xaxis.set_label_position("top")
    ax.set_xlabel(t("dimension"))
    ax.set_ylabel(t("position"))
    # pairs: the wavelength of each (sin, cos) pair underneath it
    for i, lam in enumerate(data.wavelengths):
        ax.annotate(
            t("lam_end", lam=lam),
            xy=(2 * i + 0.5, 0.0),
            xycoords=("data", "axes fraction"),
            xytext=(0, -4),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=roles.fontsize("annotation"),
            color=theme.muted,
            annotation_clip=False,
        )


def _label_ends(ax: Axes, xy: np.ndarray, pos: np.ndarray, t: Labels, theme: Theme) -> None:
    """Label the first and last position in the two corners of the axes farthest from the path,
    each with a thin leader line to its dot (a label never sits on the path)."""
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    unit = (xy - lo) / span  # (n, 2) in [0, 1]
    corners = {(0.0, 0.0): ("left", "bottom"), (1.0, 0.0): ("right", "bottom")}
    corners.update({(0.0, 1.0): ("left", "top"), (1.0, 1.0): ("right", "top")})
    room = {c: float(np.min(np.hypot(*(unit - np.asarray(c)).T))) for c in corners}
    free = sorted(corners, key=lambda c: -room[c])[:2]  # the two emptiest corners
    ends = (0, len(pos) - 1)
    # give each end the nearer of the two corners (or swap, whichever is shorter overall)
    d = [[float(np.hypot(*(unit[i] - np.asarray(c)))) for c in free] for i in ends]
    order = free if d[0][0] + d[1][1] <= d[0][1] + d[1][0] else free[::-1]
    for i, corner in zip(ends, order, strict=True):
        ha, va = corners[corner]
        ax.annotate(
            t("p_eq", p=int(pos[i])),
            xy=(xy[i, 0], xy[i, 1]),
            xytext=(0.03 + 0.94 * corner[0], 0.03 + 0.94 * corner[1]),
            textcoords="axes fraction",
            ha=ha,
            va=va,
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
            fontweight="bold",
            arrowprops={"arrowstyle": "-", "color": theme.text, "lw": 0.8, "shrinkB": 5},
            zorder=5,
        )


def _trajectory_axes(ax: Axes, xy: np.ndarray, pos: np.ndarray, t: Labels, theme: Theme) -> Any:
    ax.plot(xy[:, 0], xy[:, 1], color=theme.neutral, lw=0.8, zorder=1)
    sc = ax.scatter(
        xy[:, 0], xy[:, 1], c=pos, cmap=visible_cmap(theme, "marks"), s=16, zorder=2, lw=0
    )
    _label_ends(ax, xy, pos, t, theme)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.margins(0.3)  # room in the corners for the labels
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    return sc


def draw_trajectory(fig: FigureBase, data: Trajectory, t: Labels, theme: Theme) -> None:
    pos = np.asarray(data.positions)
    ax_u, ax_p = fig.subplots(1, 2)
    sc = _trajectory_axes(ax_u, np.asarray(data.umap), pos, t, theme)
    ax_u.set_title(t("umap"))
    _trajectory_axes(ax_p, np.asarray(data.pca), pos, t, theme)
    ax_p.set_title(t("pca"))
    cb = fig.colorbar(sc, ax=[ax_u, ax_p], orientation="horizontal", fraction=0.06, pad=0.04)
    cb.set_label(t("traj_cbar", last=len(pos) - 1, d=int(data.d_model)))


def draw_pairs(fig: FigureBase, data: Trajectory, t: Labels, theme: Theme) -> None:
    """Two pairs of the same encoding on their unit circles: the fast one and a slow one."""
    pos = np.asarray(data.positions)
    ax_f, ax_s = fig.subplots(1, 2)
    slow_dims = [int(d) for d in data.slow_dims]
    pairs = (
        (ax_f, data.fast, data.fast_wavelength, data.fast_turns, 0, (0, 1)),
        (ax_s, data.slow, data.slow_wavelength, data.slow_turns, int(data.slow_pair), slow_dims),
    )
    for ax, xy_, lam, turns, pair, dd in pairs:
        xy = np.asarray(xy_)
        # consecutive positions of the fast pair are a radian apart: dots only, no chords
        sc = ax.scatter(
            xy[:, 0], xy[:, 1], c=pos, cmap=visible_cmap(theme, "marks"), s=12, lw=0, zorder=2
        )
        ax.set_title(t("pair_title", i=pair, lam=lam, n=turns))
        ax.set_xlabel(t("dim_n", d=dd[0]))
        ax.set_ylabel(t("dim_n", d=dd[1]))
        ax.set_xlim(-1.2, 1.2)
        ax.set_ylim(-1.2, 1.2)
        ax.set_aspect("equal")
        ax.set_xticks([-1, 0, 1])
        ax.set_yticks([-1, 0, 1])
    # what the colour means: the position of each dot
    cb = fig.colorbar(sc, ax=[ax_f, ax_s], orientation="horizontal", fraction=0.06, pad=0.12)
    cb.set_label(t("traj_cbar", last=len(pos) - 1, d=int(data.d_model)))


# where position enters: the columns of the diagram, left to right, and the colour of each
WHERE_PLACES = ("added", "rotated", "bias", "none")


def draw_where(fig: FigureBase, data: Where, t: Labels, theme: Theme) -> None:
    """One head's pipeline x -> q, k -> q·k -> softmax, the three places a position scheme can
    act on it (and NoPE, which acts nowhere), and the change of the scores under a shift."""
    colours = dict(zip(WHERE_PLACES, theme.categorical, strict=False))
    colours["none"] = theme.muted
    ax = fig.subplots()
    ax.set_axis_off()
    ann = roles.fontsize("annotation")
    y_pipe, y_how, y_who, y_card, y_shift, y_value = 6.0, 5.2, 4.05, 3.0, 2.2, 1.55
    box = {"boxstyle": "round,pad=0.3", "fc": theme.box, "ec": theme.box_edge}
    # (label, centre, half width of its box): the arrows run from box to box
    stages = [
        ("where_x", 0.0, 0.35),
        ("where_qk", 2.5, 0.6),
        ("where_score", 5.0, 0.6),
        ("where_softmax", 8.1, 0.95),
    ]
    for key, x, _ in stages:
        ax.text(x, y_pipe, t(key), ha="center", va="center", fontsize=ann, bbox=box)
    for (_, x0, w0), (_, x1, w1) in zip(stages, stages[1:], strict=False):
        ax.annotate(
            "",
            xy=(x1 - w1 - 0.1, y_pipe),
            xytext=(x0 + w0 + 0.1, y_pipe),
            arrowprops={"arrowstyle": "-|>", "color": theme.muted, "lw": 1.4},
        )
    for i, place in enumerate(WHERE_PLACES):
        x, c = 1.25 + 2.5 * i, colours[place]  # the column under the place it marks
        ring = {"boxstyle": "circle,pad=0.25", "fc": theme.background, "ec": c, "lw": 2.0}
        mark, how = t(f"where_mark_{place}"), t(f"where_how_{place}")
        if place == "none":  # NoPE acts nowhere on the pipeline: its mark heads its column
            how = f"{mark} {how}"
        else:
            ax.text(x, y_pipe, mark, ha="center", va="center", fontsize=ann, color=c, bbox=ring)
        texts = [
            (y_how, how, c, "bold"),
            (y_who, t(f"where_who_{place}"), theme.text, "normal"),
            (y_card, t(f"where_card_{place}"), theme.muted, "normal"),
        ]
        for y, text, colour, weight in texts:
            ax.text(x, y, text, ha="center", va="top", fontsize=ann, color=colour, weight=weight)
        value = t(f"where_change_{place}", v=float(data.change[i]))
        ax.text(x, y_value, value, ha="center", va="top", fontsize=ann, color=c, weight="bold")
    shift = t("where_shift", s=int(data.shift))
    ax.text(4.5, y_shift, shift, ha="center", va="top", fontsize=ann, color=theme.muted)
    ax.set_xlim(-0.75, 10.0)
    ax.set_ylim(0.75, 6.6)


def draw_counting(fig: FigureBase, data: Counting, t: Labels, theme: Theme) -> None:
    """The road from counting to the sinusoid: p / (N - 1) for two lengths, the binary digits of
    p, and their smooth twins (the same periods, no jumps)."""
    pos = np.asarray(data.positions)
    short = np.asarray(data.short_positions)
    p = int(data.p)
    axes = fig.subplots(3, 1, sharex=True, height_ratios=[1.2, 1.0, 1.0])
    ax = axes[0]
    n, n_short = int(data.length), int(data.short_length)
    long_v, short_v = np.asarray(data.normalised), np.asarray(data.normalised_short)
    ann = roles.fontsize("annotation")
    ax.plot(pos, long_v, "o-", color=theme.accent, ms=4, lw=1.8)
    ax.plot(short, short_v, "s--", color=theme.warn, ms=4, lw=1.8)
    # each line labelled at its end, where the other line is far below
    end = (short[-1] + 0.4, short_v[-1])
    ax.text(*end, t("count_len", n=n_short), color=theme.warn, va="center", fontsize=ann)
    end = (pos[-1] - 0.3, long_v[-1] + 0.12)
    ax.text(*end, t("count_len", n=n), color=theme.accent, ha="right", va="bottom", fontsize=ann)
    ax.plot([p, p], [long_v[p], short_v[p]], color=theme.muted, lw=1.2, ls=":")
    ax.set_ylim(-0.08, 1.5)  # room above the lines for their labels
    ax.set_yticks([0, 1])
    ax.set_ylabel(t("count_norm_axis"))
    ax.set_title(t("count_norm_title", p=p, a=float(long_v[p]), b=float(short_v[p])), loc="left")
    for a, key, values, digits in (
        (axes[1], "count_bits_title", data.digits, True),
        (axes[2], "count_smooth_title", data.smooth, False),
    ):
        v = np.asarray(values)  # (bits, n)
        heatmap(
            a,
            v,
            theme,
            vmin=0.0,
            vmax=1.0,
            colorbar=False,
            extent=(pos[0] - 0.5, pos[-1] + 0.5, v.shape[0] - 0.5, -0.5),
        )
        if digits:
            _annotate(a, v, ".0f", x0=float(pos[0]))
        a.set_yticks(range(v.shape[0]), [str(j) for j in range(v.shape[0])])
        a.set_title(t(key, r=int(data.repeat)), loc="left")
        a.tick_params(length=0)
    axes[2].set_xticks(pos[::3])
    axes[2].set_xlabel(t("position_p"))


def draw_wavelengths(fig: FigureBase, data: Wavelengths, t: Labels, theme: Theme) -> None:
    pair = np.asarray(data.pair)
    lam = np.asarray(data.wavelengths)
    ctx = np.asarray(data.context_lengths)
    turning = np.asarray(data.pairs_turning)
    ax = fig.subplots()
    ax.set_yscale("log")
    top = int(np.argmax(ctx))
    for j, (c, k) in enumerate(zip(ctx, turning, strict=True)):
        ax.axhline(c, color=theme.muted, lw=1.0, ls="--", zorder=1)
        # labelled at the left end, above its line: the ladder is still far below there; the
        # top line (above the whole ladder) says in full what the numbers mean
        ax.text(
            pair[0],
            c * 1.18,
            t("ctx_line_full" if j == top else "ctx_line", n=c, k=int(k)),
            color=theme.muted,
            fontsize=roles.fontsize("annotation"),
            va="bottom",
            ha="left",
        )
        if 0 < k < len(pair):
            # where the ladder crosses this context: the k pairs to the left turn fully
            ax.plot([pair[k] - 0.5], [c], "o", ms=6, color=theme.muted, zorder=4)
    ax.plot(pair, lam, color=theme.accent, lw=2.6, zorder=3)
    for i in (0, len(pair) - 1):
        ax.plot([pair[i]], [lam[i]], "o", color=theme.accent, ms=7, zorder=5)
    ax.set_xlim(pair[0] - 0.02 * len(pair), pair[-1] + 0.02 * len(pair))
    ax.set_ylim(1.0, float(ctx.max()) * 6.0)
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel(t("pair_index"))
    ax.set_ylabel(t("wavelength_axis"))
    ax.set_title(
        t(
            "ladder_title",
            d=int(data.d_model),
            b=float(data.base),
            lo=float(data.shortest),
            hi=float(data.longest),
        ),
        color=theme.accent,
    )


DRAW: dict[str, DrawFn] = {
    "c1-permutation": draw_permutation,
    "c1-where": draw_where,
    "c1-counting": draw_counting,
    "c1-wavelengths": draw_wavelengths,
    "c1-pe-table": draw_pe_table,
    "c1-trajectory": draw_trajectory,
    "c1-pairs": draw_pairs,
}
