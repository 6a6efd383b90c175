"""Card 3 figures: RoPE as rotation. Draw only; every number comes from posecards.content.card3."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.patches import Arc, FancyBboxPatch

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap, plain_log_ticks
from posecards.figures.style import Theme

if TYPE_CHECKING:  # the data each figure draws, as content/card3.py computes it
    from posecards.content.card3 import Base, Decay, Layouts, Rotation, Scores


def _cycle(i: int) -> str:
    """Colour i of the default (Okabe-Ito) cycle."""
    import matplotlib as mpl

    colors = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    return str(colors[i % len(colors)])


# --- c3-rotation ---------------------------------------------------------------------------------


def _arrow(ax: Axes, tip: np.ndarray, color: str, lw: float = 2.4, ls: str = "-") -> None:
    ax.annotate(
        "",
        xy=(float(tip[0]), float(tip[1])),
        xytext=(0.0, 0.0),
        arrowprops={
            "arrowstyle": "-|>",
            "color": color,
            "lw": lw,
            "linestyle": ls,
            "shrinkA": 0,
            "shrinkB": 0,
            "mutation_scale": 16,
        },
    )


def _arc(
    ax: Axes,
    radius: float,
    start: float,
    angle: float,
    color: str,
    label: str,
    label_r: float,
    label_angle: float | None = None,
) -> None:
    """An arc from angle ``start`` over ``angle`` (radians), labelled at ``label_angle``
    (default: the middle of the arc) and radius ``label_r``."""
    ax.add_patch(
        Arc(
            (0.0, 0.0),
            2 * radius,
            2 * radius,
            theta1=float(np.degrees(start)),
            theta2=float(np.degrees(start + angle)),
            color=color,
            lw=1.8,
        )
    )
    mid = start + angle / 2 if label_angle is None else label_angle
    ax.text(
        label_r * np.cos(mid),
        label_r * np.sin(mid),
        label,
        color=color,
        ha="center",
        va="center",
    )


def _diagram_axes(ax: Axes) -> None:
    """Arrows only: no circle or axis lines for labels to collide with."""
    ax.set_xlim(-1.32, 1.32)
    ax.set_ylim(-0.42, 1.32)
    ax.set_aspect("equal")
    ax.set_axis_off()


def _tip_label(
    ax: Axes, tip: np.ndarray, text: str, color: str, scale: float = 1.22, dy: float = 0.0
) -> None:
    """Label an arrow just beyond its tip (``scale`` times the tip, moved up by ``dy``)."""
    ax.text(scale * tip[0], scale * tip[1] + dy, text, color=color, ha="center", va="center")


def draw_rotation(fig: FigureBase, data: Rotation, t: Labels, theme: Theme) -> None:
    axes = fig.subplots(1, 2)
    q, k = np.asarray(data.q), np.asarray(data.k)
    q_rot, k_rot = np.asarray(data.q_rot), np.asarray(data.k_rot)
    k_rel = np.asarray(data.k_rel)  # R((n - m) theta) k
    angle_q, angle_k = float(data.angle_q), float(data.angle_k)
    rel = float(data.angle_rel)  # (n - m) theta
    q_angle = float(np.arctan2(q[1], q[0]))
    k_angle = float(np.arctan2(k[1], k[0]))

    # left: rotate q by m theta and k by n theta
    ax = axes[0]
    _diagram_axes(ax)
    _arrow(ax, q, theme.accent, lw=1.6, ls="--")
    _arrow(ax, k, theme.warn, lw=1.6, ls="--")
    _arrow(ax, q_rot, theme.accent)
    _arrow(ax, k_rot, theme.warn)
    _arc(ax, 0.38, q_angle, angle_q, theme.accent, t("rot_arc_m"), 0.6)
    _arc(ax, 0.3, k_angle, angle_k, theme.warn, t("rot_arc_n"), 0.55)
    _tip_label(ax, q, t("rot_q"), theme.accent, 1.18)
    _tip_label(ax, k, t("rot_k"), theme.warn, 1.15)
    _tip_label(ax, q_rot, t("rot_qm"), theme.accent, 1.25)
    _tip_label(ax, k_rot, t("rot_kn"), theme.warn, 1.0, dy=0.22)
    ax.set_title(t("rot_abs_title"))
    ax.text(0.0, -0.3, t("rot_val_score", v=data.score_rope), ha="center", va="center")

    # right: rotate k alone by (n - m) theta
    ax = axes[1]
    _diagram_axes(ax)
    _arrow(ax, k, theme.warn, lw=1.6, ls="--")
    _arrow(ax, q, theme.accent)
    _arrow(ax, k_rel, theme.ok)
    _arc(ax, 0.4, k_angle, rel, theme.ok, t("rot_arc_rel"), 0.72, k_angle + rel + 0.7)
    _tip_label(ax, q, t("rot_q"), theme.accent, 1.18)
    _tip_label(ax, k, t("rot_k"), theme.warn, 1.15)
    ax.text(  # left of the tip: clear of the k label above the y axis
        1.12 * k_rel[0], 1.12 * k_rel[1], t("rot_krel"), color=theme.ok, ha="right", va="bottom"
    )
    ax.set_title(t("rot_rel_title"))
    ax.text(0.0, -0.3, t("rot_val_rel", v=data.score_relative), ha="center", va="center")
    fig.supxlabel(
        t("rot_params", theta=data.theta, m=data.m, n=data.n, q=q, k=k),
        fontsize=roles.fontsize("axis_label"),
    )


# --- c3-scores -----------------------------------------------------------------------------------


def draw_scores(fig: FigureBase, data: Scores, t: Labels, theme: Theme) -> None:
    axes = fig.subplots(1, 2, sharey=True)
    pos = np.asarray(data.positions)
    step = float(data.step)
    extent = (pos[0] - step / 2, pos[-1] + step / 2, pos[-1] + step / 2, pos[0] - step / 2)
    panels = [
        (data.scores_rope, "sc_rope_title", data.deviation_rope, "sc_spread_rope"),
        (data.scores_additive, "sc_add_title", data.deviation_additive, "sc_spread_add"),
    ]
    for i, (ax, (scores, title, dev, spread)) in enumerate(zip(axes, panels, strict=True)):
        heatmap(ax, scores, theme, signed=True, extent=extent, cbar_label=t("sc_cbar"))
        ax.set_title(t(title))
        ax.set_xlabel(t("sc_xlabel") + "\n" + t(spread, v=dev))
        if i == 0:
            ax.set_ylabel(t("sc_ylabel"))
    fig.supxlabel(
        t("sc_params", d=data.head_dim, b=data.base),
        fontsize=roles.fontsize("axis_label"),
    )


# --- c3-decay ------------------------------------------------------------------------------------

_BASE_STYLE = ("-", "--", ":")  # bases differ by line style as well as colour


def draw_decay(fig: FigureBase, data: Decay, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    r = np.asarray(data.distances)
    bounds = np.asarray(data.bounds)  # (n_bases, r)
    for i, (b, bound) in enumerate(zip(data.bases, bounds, strict=True)):
        color = _cycle(i)
        ax.plot(
            r, bound, color=color, lw=1.6, label=t("dc_base", b=b), linestyle=_BASE_STYLE[i % 3]
        )
        ax.plot([data.probe], [data.probe_values[i]], "o", color=color, ms=8, mec=theme.text)
    top = float(bounds.max()) * 1.3  # headroom above the curves for the line labels
    ax.axvline(data.probe, color=theme.muted, lw=1.0, ls="--")
    ax.axvline(data.context, color=theme.muted, lw=1.0, ls=":")
    # the vertical lines labelled in the headroom: the context on the left of its line, the
    # probe on the right of its own (they are close on the log axis)
    for x, label, side in (
        (data.context, t("dc_context", n=data.context), -1),
        (data.probe, t("dc_probe", n=data.probe), 1),
    ):
        ax.annotate(
            label,
            (float(x), top),
            xytext=(5 * side, -3),
            textcoords="offset points",
            color=theme.muted,
            ha="left" if side > 0 else "right",
            va="top",
        )
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlim(1, data.max_distance)
    ax.set_ylim(0, top)
    ax.set_xlabel(t("dc_xlabel"))
    ax.set_ylabel(t("dc_ylabel"))
    # above the axes: inside, the curves and the two vertical lines leave no free corner
    ax.legend(
        title=t("dc_title", d=data.head_dim),
        loc="lower left",
        bbox_to_anchor=(0.0, 1.02),
        ncols=2,
        borderaxespad=0.0,
        frameon=False,
        columnspacing=1.2,
        alignment="left",
    )


# --- c3-base -------------------------------------------------------------------------------------


def draw_base(fig: FigureBase, data: Base, t: Labels, theme: Theme) -> None:
    """Wavelength of each pair per base; a dot where a base's line crosses a context length:
    the pairs left of it (their count printed) turn fully within that context."""
    from matplotlib.ticker import NullLocator

    ax = fig.subplots()
    lam = np.asarray(data.wavelengths)  # (n_bases, d/2)
    contexts = np.asarray(data.contexts)
    turns = np.asarray(data.turns)  # (n_bases, n_ctx)
    k = np.arange(lam.shape[1])
    for ctx in contexts:
        ax.axhline(float(ctx), color=theme.muted, lw=1.0, ls="--", zorder=0)
    for i, b in enumerate(data.bases):
        color = _cycle(i)
        ax.plot(
            k, lam[i], color=color, lw=2.2, label=t("bs_base", b=b), linestyle=_BASE_STYLE[i % 3]
        )
        for j, ctx in enumerate(contexts):
            count = int(turns[i, j])
            if 0 < count < lam.shape[1]:  # the line crosses this context inside the plot
                ax.plot([count - 0.5], [float(ctx)], "o", color=color, ms=8, mec=theme.text)
                # the lowest line's count below and right of its dot, the others' above and
                # left: rising lines leave those corners free
                low = i == 0
                ax.annotate(
                    str(count),
                    (count - 0.5, float(ctx)),
                    xytext=(6, -6) if low else (-6, 6),
                    textcoords="offset points",
                    ha="left" if low else "right",
                    va="top" if low else "bottom",
                    color=color,
                )
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlim(0, max(1, lam.shape[1] - 1))
    ax.set_ylim(1.0, float(max(lam.max(), contexts.max())) * 8)
    right = ax.secondary_yaxis("right")
    right.set_yticks(
        [float(c) for c in contexts], [t("bs_ctx", k=int(c) // 1024) for c in contexts]
    )
    right.yaxis.set_minor_locator(NullLocator())
    right.tick_params(length=0, colors=theme.muted)
    ax.set_xlabel(t("bs_xlabel", n=lam.shape[1], d=data.head_dim) + "\n" + t("bs_dot"))
    ax.set_ylabel(t("bs_ylabel"))
    # above the axes: inside, every corner holds a line, a context line or a count
    ax.legend(
        loc="lower left",
        bbox_to_anchor=(0.0, 1.04),
        ncols=2,
        borderaxespad=0.0,
        frameon=False,
        columnspacing=1.2,
    )


# --- c3-layouts ----------------------------------------------------------------------------------

_PAIR_HATCH = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")  # pairs differ by more than colour


def _box(ax: Axes, x: float, y: float, text: str, pair: int, theme: Theme) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x - 0.4, y - 0.4),
            0.8,
            0.8,
            boxstyle="round,pad=0.02",
            facecolor=_cycle(pair),
            edgecolor=theme.text,
            hatch=_PAIR_HATCH[pair % len(_PAIR_HATCH)],
            lw=0.8,
            alpha=0.85,
        )
    )
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        color="black",
        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none"},
    )


def draw_layouts(fig: FigureBase, data: Layouts, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    d = int(data.layout_dim)
    perm = np.asarray(data.permutation)
    pair_i, pair_h = np.asarray(data.pair_interleaved), np.asarray(data.pair_half)
    y_top, y_bot = 3.0, 0.0
    for j in range(d):
        # slot j of the half layout holds coordinate perm[j] of the interleaved vector
        ax.plot([perm[j], j], [y_top - 0.42, y_bot + 0.42], color=theme.muted, lw=1.2, zorder=0)
    for j in range(d):
        _box(ax, j, y_top, str(j), int(pair_i[j]), theme)
        _box(ax, j, y_bot, str(perm[j]), int(pair_h[j]), theme)
    left = -0.5
    ax.text(left, y_top + 0.6, t("ly_interleaved"), ha="left", va="bottom")
    ax.text(left, y_bot - 0.6, t("ly_half"), ha="left", va="top")
    p_text = t("ly_perm", p=" ".join(str(int(p)) for p in perm))
    lines = [
        (p_text, theme.text),
        (t("ly_ok", v=data.perm_diff, d=data.head_dim), theme.ok),
        (t("ly_wrong", v=data.wrong_max), theme.warn),
    ]
    for i, (text, color) in enumerate(lines):
        ax.text(left, y_bot - 2.5 - 0.95 * i, text, ha="left", va="top", color=color)
    ax.set_xlim(-0.6, d - 0.4)
    ax.set_ylim(y_bot - 5.3, y_top + 2.0)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(t("ly_title", d=d))


DRAW: dict[str, DrawFn] = {
    "c3-rotation": draw_rotation,
    "c3-scores": draw_scores,
    "c3-decay": draw_decay,
    "c3-base": draw_base,
    "c3-layouts": draw_layouts,
}
