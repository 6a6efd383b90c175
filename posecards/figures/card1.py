"""Card 1 figures: attention cannot see order; what the sinusoidal PE looks like."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import Colormap
from matplotlib.figure import FigureBase

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap
from posecards.figures.style import Theme


def _cell_text_color(cmap: Colormap, norm: Any, value: float) -> str:
    """Black on light cells, white on dark cells (relative luminance of the cell colour)."""
    r, g, b, _ = cmap(norm(value))
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


def _annotate(ax: Axes, values: np.ndarray, fmt: str) -> None:
    """Write each cell's value on an imshow heatmap drawn on ``ax``."""
    im = ax.images[-1]
    cmap, norm = im.get_cmap(), im.norm
    for (r, c), v in np.ndenumerate(values):
        text = format(v, fmt)
        if float(text) == 0:
            text = text.lstrip("-")  # no "-0.00"
        ax.text(
            c,
            r,
            text.replace("-", "\u2212"),
            ha="center",
            va="center",
            fontsize=roles.fontsize("cell_number"),
            color=_cell_text_color(cmap, norm, float(v)),
        )


def draw_permutation(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    lang = t.lang if f"tokens_{t.lang}" in data else "en"
    tokens = list(data[f"tokens_{lang}"])
    reordered = list(data[f"tokens_reordered_{lang}"])
    rows = [
        (
            "row_plain",
            data[f"weights_plain_{lang}"],
            data[f"weights_plain_reordered_{lang}"],
            data[f"deviation_without_pe_{lang}"],
            theme.ok,
        ),
        (
            "row_pe",
            data[f"weights_pe_{lang}"],
            data[f"weights_pe_reordered_{lang}"],
            data[f"deviation_with_pe_{lang}"],
            theme.warn,
        ),
    ]
    all_w = np.concatenate([np.ravel(w) for _, a, b, _, _ in rows for w in (a, b)])
    vmin, vmax = float(all_w.min()), float(all_w.max())
    subs = cast("np.ndarray", fig.subfigures(2, 1, hspace=0.04))
    for r, (sub, (key, w_orig, w_reord, dev, colour)) in enumerate(zip(subs, rows, strict=True)):
        sub.suptitle(
            t(key, dev=dev),
            fontsize=roles.fontsize("subplot_title"),
            color=colour,
            fontweight="bold",
        )
        axes = sub.subplots(1, 2)
        for c, (ax, w, toks) in enumerate(
            zip(axes, (w_orig, w_reord), (tokens, reordered), strict=True)
        ):
            heatmap(ax, w, theme, vmin=vmin, vmax=vmax, colorbar=False)
            _annotate(ax, np.asarray(w), ".2f")
            n = len(toks)
            ax.set_xticks(range(n), toks)
            ax.set_yticks(range(n), toks)
            ax.tick_params(length=0)
            if r == 0:
                ax.set_title(" ".join(toks), fontsize=roles.fontsize("subplot_title"))
            if c == 0:
                ax.set_ylabel(t("query"))
            if r == 1:
                ax.set_xlabel(t("key"))


def draw_pe_table(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    pe = np.asarray(data["pe"])  # (positions, 8)
    dims = [int(d) for d in data["dims"]]
    positions = [int(p) for p in data["positions"]]
    ax = fig.subplots()
    heatmap(ax, pe, theme, signed=True, vmax=1.0, cbar_label=t("pe_value"))
    _annotate(ax, pe, ".2f")
    ax.set_xticks(
        range(len(dims)),
        [f"{d}\n{t('sin') if d % 2 == 0 else t('cos')}" for d in dims],
    )
    ax.set_yticks(range(len(positions)), [str(p) for p in positions])
    ax.tick_params(length=0, labeltop=True, labelbottom=False)
    ax.xaxis.set_label_position("top")
    ax.set_xlabel(t("dimension"))
    ax.set_ylabel(t("position"))
    # pairs: a thin line between the (sin, cos) pairs of one frequency, wavelength underneath
    for x in range(1, len(dims) // 2):
        ax.axvline(2 * x - 0.5, color=theme.background, lw=2.5)
    for i, lam in enumerate(data["wavelengths"]):
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
    """Label the first and last position next to their dots, on the side facing the centre."""
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    mid = (lo + hi) / 2
    for i in (0, len(pos) - 1):
        right = xy[i, 0] > mid[0]
        top = xy[i, 1] > mid[1]
        ax.annotate(
            t("p_eq", p=int(pos[i])),
            xy=(xy[i, 0], xy[i, 1]),
            xytext=(-7 if right else 7, -5 if top else 5),
            textcoords="offset points",
            ha="right" if right else "left",
            va="top" if top else "bottom",
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
            fontweight="bold",
            bbox={"boxstyle": "round,pad=0.15", "fc": theme.background, "ec": "none", "alpha": 0.8},
            zorder=5,
        )


def _trajectory_axes(ax: Axes, xy: np.ndarray, pos: np.ndarray, t: Labels, theme: Theme) -> Any:
    ax.plot(xy[:, 0], xy[:, 1], color=theme.neutral, lw=0.8, zorder=1)
    sc = ax.scatter(xy[:, 0], xy[:, 1], c=pos, cmap=theme.sequential, s=14, zorder=2, lw=0)
    _label_ends(ax, xy, pos, t, theme)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.margins(0.08)
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    return sc


def draw_trajectory(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    pos = np.asarray(data["positions"])
    left, right = cast("np.ndarray", fig.subfigures(1, 2, width_ratios=[2.3, 1.0], wspace=0.02))
    ax_u, ax_p = left.subplots(1, 2)
    sc = _trajectory_axes(ax_u, np.asarray(data["umap"]), pos, t, theme)
    ax_u.set_title(t("umap"))
    _trajectory_axes(ax_p, np.asarray(data["pca"]), pos, t, theme)
    ax_p.set_title(t("pca"))
    cb = left.colorbar(sc, ax=[ax_u, ax_p], orientation="horizontal", fraction=0.06, pad=0.02)
    cb.set_label(t("position"))

    ax_f, ax_s = right.subplots(2, 1)
    slow_dims = [int(d) for d in data["slow_dims"]]
    pairs = (
        (ax_f, "fast", 0, (0, 1)),
        (ax_s, "slow", int(data["slow_pair"]), slow_dims),
    )
    for ax, which, pair, dd in pairs:
        xy = np.asarray(data[which])
        lam = data[f"{which}_wavelength"]
        # consecutive positions of the fast pair are a radian apart: dots only, no chords
        ax.scatter(xy[:, 0], xy[:, 1], c=pos, cmap=theme.sequential, s=10, lw=0, zorder=2)
        ax.text(
            0,
            0,
            t("turns", n=data[f"{which}_turns"]),
            ha="center",
            va="center",
            fontsize=roles.fontsize("annotation"),
        )
        ax.set_title(t("pair_title", i=pair, lam=lam), fontsize=roles.fontsize("subplot_title"))
        ax.set_xlabel(t("dim_n", d=dd[0]), fontsize=roles.fontsize("axis_label"), labelpad=1)
        ax.set_ylabel(t("dim_n", d=dd[1]), fontsize=roles.fontsize("axis_label"), labelpad=1)
        ax.set_xlim(-1.2, 1.2)
        ax.set_ylim(-1.2, 1.2)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        for side in ("top", "right"):
            ax.spines[side].set_visible(True)


def draw_wavelengths(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    pair = np.asarray(data["pair"])
    lam = np.asarray(data["wavelengths"])
    ctx = np.asarray(data["context_lengths"])
    turning = np.asarray(data["pairs_turning"])
    ax = fig.subplots()
    ax.set_yscale("log")
    for c, k in zip(ctx, turning, strict=True):
        ax.axhline(c, color=theme.muted, lw=1.0, ls="--", zorder=1)
        ax.text(
            pair[0],
            c * 1.15,
            t("ctx_line", n=c, k=int(k)),
            color=theme.muted,
            fontsize=roles.fontsize("annotation"),
            va="bottom",
            ha="left",
        )
        if 0 < k < len(pair):
            # where the ladder crosses this context: the k pairs to the left turn fully
            ax.plot([pair[k] - 0.5], [c], "o", ms=6, color=theme.muted, zorder=4)
    ax.plot(pair, lam, color=theme.accent, lw=2.4, zorder=3, label=t("wavelength_curve"))
    ax.plot([], [], color=theme.muted, lw=1.0, ls="--", label=t("context_length"))
    ends = ((0, data["shortest"], 1), (len(pair) - 1, data["longest"], -1))
    for i, value, side in ends:
        ax.plot([pair[i]], [value], "o", color=theme.warn, ms=7, zorder=5)
        ax.annotate(
            t("lam_end", lam=value),
            xy=(pair[i], value),
            xytext=(9 * side, 0),
            textcoords="offset points",
            ha="left" if side > 0 else "right",
            va="center",
            fontsize=roles.fontsize("annotation"),
            color=theme.warn,
            fontweight="bold",
        )
    ax.set_xlim(pair[0] - 0.02 * len(pair), pair[-1] + 0.02 * len(pair))
    ax.set_ylim(float(data["shortest"]) / 2.5, float(ctx.max()) * 4.0)
    ax.set_xlabel(t("pair_index"))
    ax.set_ylabel(t("wavelength_axis"))
    ax.legend(loc="lower right")


DRAW: dict[str, DrawFn] = {
    "c1-permutation": draw_permutation,
    "c1-pe-table": draw_pe_table,
    "c1-trajectory": draw_trajectory,
    "c1-wavelengths": draw_wavelengths,
}
