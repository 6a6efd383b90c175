"""Card 3 figures: RoPE as rotation. Draw only; every number comes from posecards.content.card3."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.patches import Arc, Circle, FancyBboxPatch

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap, value_table
from posecards.figures.style import Theme


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
        fontsize=roles.fontsize("annotation"),
    )


def _circle_axes(ax: Axes, theme: Theme) -> None:
    ax.add_patch(Circle((0, 0), 1.0, fill=False, color=theme.muted, lw=1.0, ls=":"))
    ax.axhline(0, color=theme.muted, lw=0.6)
    ax.axvline(0, color=theme.muted, lw=0.6)
    ax.set_xlim(-1.4, 1.4)
    ax.set_ylim(-0.2, 1.3)
    ax.set_aspect("equal")
    ax.set_axis_off()


def _tip_label(
    ax: Axes, tip: np.ndarray, text: str, color: str, scale: float = 1.22, dy: float = 0.0
) -> None:
    """Label an arrow just beyond its tip (``scale`` times the tip, moved up by ``dy``)."""
    ax.text(scale * tip[0], scale * tip[1] + dy, text, color=color, ha="center", va="center")


def _value_lines(ax: Axes, lines: list[tuple[str, str]]) -> None:
    ax.set_axis_off()
    for i, (text, color) in enumerate(lines):
        ax.text(
            0.02,
            1.0 - i * 0.25,
            text,
            color=color,
            ha="left",
            va="top",
            fontsize=roles.fontsize("annotation"),
        )


def draw_rotation(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    axes = fig.subplots(2, 2, height_ratios=[2.3, 1.0])
    q, k = np.asarray(data["q"]), np.asarray(data["k"])
    q_rot, k_rot = np.asarray(data["q_rot"]), np.asarray(data["k_rot"])
    k_rel = np.asarray(data["k_rel"])  # R((n - m) theta) k
    angle_q, angle_k = float(data["angle_q"]), float(data["angle_k"])
    rel = float(data["angle_rel"])  # (n - m) theta
    q_angle = float(np.arctan2(q[1], q[0]))
    k_angle = float(np.arctan2(k[1], k[0]))

    # left: rotate q by m theta and k by n theta
    ax = axes[0, 0]
    _circle_axes(ax, theme)
    _arrow(ax, q, theme.accent, lw=1.4, ls="--")
    _arrow(ax, k, theme.warn, lw=1.4, ls="--")
    _arrow(ax, q_rot, theme.accent)
    _arrow(ax, k_rot, theme.warn)
    _arc(ax, 0.38, q_angle, angle_q, theme.accent, t("rot_arc_m"), 0.56)
    _arc(ax, 0.3, k_angle, angle_k, theme.warn, t("rot_arc_n"), 0.5)
    _tip_label(ax, q, t("rot_q"), theme.accent, 1.15)
    _tip_label(ax, k, t("rot_k"), theme.warn, 1.15)
    _tip_label(ax, q_rot, t("rot_qm"), theme.accent)
    _tip_label(ax, k_rot, t("rot_kn"), theme.warn, 0.9, dy=0.24)
    ax.set_title(
        t("rot_abs_title", m=data["m"], n=data["n"]), fontsize=roles.fontsize("subplot_title")
    )

    # right: rotate k alone by (n - m) theta
    ax = axes[0, 1]
    _circle_axes(ax, theme)
    _arrow(ax, k, theme.warn, lw=1.4, ls="--")
    _arrow(ax, q, theme.accent)
    _arrow(ax, k_rel, theme.ok)
    _arc(ax, 0.4, k_angle, rel, theme.ok, t("rot_arc_rel"), 0.6, k_angle + rel + 0.65)
    _tip_label(ax, q, t("rot_q"), theme.accent, 1.15)
    _tip_label(ax, k, t("rot_k"), theme.warn, 1.15)
    _tip_label(ax, k_rel, t("rot_krel"), theme.ok)
    ax.set_title(t("rot_rel_title"), fontsize=roles.fontsize("subplot_title"))

    _value_lines(
        axes[1, 0],
        [
            (t("rot_val_angles", theta=data["theta"], a=angle_q, b=angle_k), theme.text),
            (t("rot_val_q", a=q_rot[0], b=q_rot[1]), theme.accent),
            (t("rot_val_k", a=k_rot[0], b=k_rot[1]), theme.warn),
            (t("rot_val_score", v=data["score_rope"]), theme.text),
        ],
    )
    _value_lines(
        axes[1, 1],
        [
            (t("rot_val_angle_rel", v=rel), theme.text),
            (t("rot_val_krel", a=k_rel[0], b=k_rel[1]), theme.ok),
            (t("rot_val_rel", v=data["score_relative"]), theme.text),
            (t("rot_val_diff", v=data["difference"]), theme.muted),
        ],
    )


# --- c3-scores -----------------------------------------------------------------------------------


def draw_scores(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    axes = fig.subplots(1, 2, sharey=True)
    pos = np.asarray(data["positions"])
    step = float(data["step"])
    extent = (pos[0] - step / 2, pos[-1] + step / 2, pos[-1] + step / 2, pos[0] - step / 2)
    panels = [
        (data["scores_rope"], "sc_rope_title", data["deviation_rope"], "sc_spread_rope"),
        (data["scores_additive"], "sc_add_title", data["deviation_additive"], "sc_spread_add"),
    ]
    for i, (ax, (scores, title, dev, spread)) in enumerate(zip(axes, panels, strict=True)):
        heatmap(ax, scores, theme, signed=True, extent=extent, cbar_label=t("sc_cbar"))
        ax.set_title(t(title), fontsize=roles.fontsize("subplot_title"))
        ax.set_xlabel(t("sc_xlabel") + "\n" + t(spread, v=dev))
        if i == 0:
            ax.set_ylabel(t("sc_ylabel"))


# --- c3-decay ------------------------------------------------------------------------------------


def draw_decay(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    r = np.asarray(data["distances"])
    for i, (b, bound) in enumerate(zip(data["bases"], data["bounds"], strict=True)):
        color = _cycle(i)
        ax.plot(r, bound, color=color, lw=1.4, label=t("dc_base", b=b))
        ax.plot([data["probe"]], [data["probe_values"][i]], "o", color=color, ms=7, mec=theme.text)
    ax.axvline(data["probe"], color=theme.muted, lw=1.0, ls="--")
    ax.axvline(data["context"], color=theme.muted, lw=1.0, ls=":")
    # label on the side of the dotted line that has more room (log axis: compare to the middle)
    left_half = float(data["context"]) ** 2 < float(data["max_distance"])
    ax.text(
        data["context"],
        0.98,
        f" {t('dc_context', n=data['context'])} ",
        transform=ax.get_xaxis_transform(),
        color=theme.muted,
        ha="left" if left_half else "right",
        va="top",
        fontsize=roles.fontsize("annotation"),
    )
    ax.set_xscale("log")
    ax.set_xlim(1, data["max_distance"])
    ax.set_ylim(bottom=0)
    ax.set_xlabel(t("dc_xlabel"))
    ax.set_ylabel(t("dc_ylabel"))
    ax.set_title(t("dc_title", d=data["head_dim"]), fontsize=roles.fontsize("subplot_title"))
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.9), frameon=True)


# --- c3-layouts-base -----------------------------------------------------------------------------


def _box(ax: Axes, x: float, y: float, text: str, color: str, theme: Theme) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x - 0.4, y - 0.4),
            0.8,
            0.8,
            boxstyle="round,pad=0.02",
            facecolor=color,
            edgecolor=theme.text,
            lw=0.8,
            alpha=0.85,
        )
    )
    ax.text(
        x, y, text, ha="center", va="center", fontsize=roles.fontsize("annotation"), color="black"
    )


def _draw_layouts(ax: Axes, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    d = int(data["layout_dim"])
    perm = np.asarray(data["permutation"])
    pair_i, pair_h = np.asarray(data["pair_interleaved"]), np.asarray(data["pair_half"])
    y_top, y_bot = 3.0, 0.0
    for j in range(d):
        # slot j of the half layout holds coordinate perm[j] of the interleaved vector
        ax.plot([perm[j], j], [y_top - 0.42, y_bot + 0.42], color=theme.muted, lw=1.2, zorder=0)
    for j in range(d):
        _box(ax, j, y_top, str(j), _cycle(int(pair_i[j])), theme)
        _box(ax, j, y_bot, str(perm[j]), _cycle(int(pair_h[j])), theme)
    left = -0.5
    ax.text(
        left,
        y_top + 0.6,
        t("ly_interleaved"),
        ha="left",
        va="bottom",
        fontsize=roles.fontsize("annotation"),
    )
    ax.text(
        left, y_bot - 0.6, t("ly_half"), ha="left", va="top", fontsize=roles.fontsize("annotation")
    )
    p_text = t("ly_perm", p=" ".join(str(int(p)) for p in perm))
    lines = [
        (p_text, theme.text),
        (t("ly_ok", v=data["perm_diff"], d=data["head_dim"]), theme.ok),
        (t("ly_wrong", v=data["wrong_max"]), theme.warn),
    ]
    for i, (text, color) in enumerate(lines):
        ax.text(
            left,
            y_bot - 2.5 - 0.95 * i,
            text,
            ha="left",
            va="top",
            fontsize=roles.fontsize("annotation"),
            color=color,
        )
    ax.set_xlim(-0.6, d - 0.4)
    ax.set_ylim(y_bot - 5.3, y_top + 2.0)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(t("ly_title", d=d), fontsize=roles.fontsize("subplot_title"))


def _draw_base(ax: Axes, table_ax: Axes, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    lam = np.asarray(data["wavelengths"])
    k = np.arange(lam.shape[1])
    for i, b in enumerate(data["bases"]):
        ax.plot(k, lam[i], color=_cycle(i), lw=2.0, label=t("bs_base", b=b))
    for ctx in data["contexts"]:
        ax.axhline(ctx, color=theme.muted, lw=1.0, ls="--")
        ax.text(
            0.01,
            ctx,
            t("bs_ctx", k=int(ctx) // 1024),
            transform=ax.get_yaxis_transform(),
            ha="left",
            va="bottom",
            fontsize=roles.fontsize("annotation"),
            color=theme.muted,
        )
    ax.set_yscale("log")
    ax.set_xlim(0, max(1, lam.shape[1] - 1))
    ax.set_xlabel(t("bs_xlabel"))
    ax.set_ylabel(t("bs_ylabel"))
    ax.set_title(t("bs_title", d=data["d_model"]), fontsize=roles.fontsize("subplot_title"))
    ax.legend(loc="lower right", fontsize=roles.fontsize("legend"))
    turns = np.asarray(data["turns"])  # (n_bases, n_contexts)
    value_table(
        table_ax,
        [[str(int(v)) for v in row] for row in turns.T],
        [t("bs_base_short", b=b) for b in data["bases"]],
        [t("bs_ctx", k=int(c) // 1024) for c in data["contexts"]],
        theme,
        fontsize=roles.fontsize("table_cell"),
    )
    table_ax.set_title(
        t("bs_table_title", n=data["pairs"]),
        fontsize=roles.fontsize("subplot_title"),
        fontweight="normal",
    )


def draw_layouts_base(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    subs = fig.subfigures(1, 2, width_ratios=[1.0, 1.05], squeeze=False)
    left, right = subs[0, 0], subs[0, 1]
    _draw_layouts(left.subplots(), data, t, theme)
    ax, table_ax = right.subplots(2, 1, height_ratios=[2.0, 1.0])
    _draw_base(ax, table_ax, data, t, theme)


DRAW: dict[str, DrawFn] = {
    "c3-rotation": draw_rotation,
    "c3-scores": draw_scores,
    "c3-decay": draw_decay,
    "c3-layouts-base": draw_layouts_base,
}
