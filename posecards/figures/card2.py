"""Card 2 figures: the geometry of the sinusoidal encoding (heatmap, curves, similarity, pitfalls)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.patches import Rectangle

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap
from posecards.figures.style import Theme
from posecards.formatting import below

# the data each figure draws (content/figdata/card2.py), as content/card2.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card2 import Curves, Heatmap, Pitfalls, Rotation, Similarity


def _extent(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    """imshow extent (origin upper) whose cell centres sit on the sampled x and y values."""
    dx = float(x[1] - x[0]) if x.shape[0] > 1 else 1.0
    dy = float(y[1] - y[0]) if y.shape[0] > 1 else 1.0
    return (
        float(x[0]) - dx / 2,
        float(x[-1]) + dx / 2,
        float(y[-1]) + dy / 2,
        float(y[0]) - dy / 2,
    )


def _sci(value: float | str) -> str:
    """A number for a table cell, in mathtext: 0, 2.00, 2.3×10⁻³ (a string is shown as is)."""
    if isinstance(value, str):
        return value
    v = float(value)
    if v == 0.0:
        return "0"
    if 0.01 <= abs(v) < 1000:
        return f"{v:.2f}"
    exp = int(np.floor(np.log10(abs(v))))
    mant = round(v / 10.0**exp, 1)
    if abs(mant) >= 10:
        mant, exp = mant / 10, exp + 1
    return rf"${mant:.1f}\times10^{{{exp}}}$"


def draw_heatmap(fig: FigureBase, data: Heatmap, t: Labels, theme: Theme) -> None:
    values = np.asarray(data.values)  # (positions shown, dims shown)
    pos = np.asarray(data.positions)
    dims = np.asarray(data.dims)
    ax = fig.subplots()
    heatmap(
        ax,
        values,
        theme,
        signed=True,
        vmax=1.0,
        extent=_extent(dims.astype(float), pos),
        cbar_label=t("pe_value"),
    )
    ax.set_xlabel(t("dimension"))
    ax.set_ylabel(t("position"))
    # where the fast and the slow pairs are: wavelengths of the first and the last shown pair
    lam = np.asarray(data.wavelength_ticks)
    tick_dims = np.asarray(data.wavelength_tick_dims)
    top = ax.secondary_xaxis("top")
    top.set_xticks(tick_dims, [t("wl_tick", lam=float(v)) for v in lam])
    top.set_xlabel(t("wavelength_axis"))
    if int(data.position_step) > 1 or int(data.pair_step) > 1:
        ax.set_title(
            t(
                "shown_part",
                rows=pos.shape[0],
                n=int(data.n_positions),
                cols=dims.shape[0],
                d=int(data.d_model),
            ),
            fontsize=roles.fontsize("subplot_title"),
            fontweight="normal",
            color=theme.muted,
            loc="left",
        )


def _curve_axes(
    ax: Axes,
    pos: np.ndarray,
    dims: np.ndarray,
    values: np.ndarray,
    lam: np.ndarray,
    t: Labels,
    theme: Theme,
    styles: list[str],
) -> None:
    marker = "o" if pos.shape[0] <= 160 else None
    for k, j in enumerate(int(v) for v in dims):
        ax.plot(
            pos,
            values[k],
            ls=styles[k % len(styles)],
            marker=marker,
            ms=3.5,
            lw=1.6,
            label=t("curve_label", j=j, fn=t("sin") if j % 2 == 0 else t("cos"), lam=lam[k]),
        )
    ax.set_ylim(-1.15, 1.15)
    ax.set_yticks([-1, 0, 1])
    ax.axhline(0, color=theme.muted, lw=0.6, zorder=0)
    if pos.shape[0] > 1:
        ax.set_xlim(float(pos[0]), float(pos[-1]))
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("pe_value"))
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)


def draw_curves(fig: FigureBase, data: Curves, t: Labels, theme: Theme) -> None:
    slow_dims = np.asarray(data.slow_dims)
    n_axes = 2 if slow_dims.shape[0] else 1
    axes = fig.subplots(n_axes, 1, squeeze=False)[:, 0]
    fast_pos = np.asarray(data.fast_positions)
    _curve_axes(
        axes[0],
        fast_pos,
        np.asarray(data.fast_dims),
        np.asarray(data.fast_values),
        np.asarray(data.fast_wavelengths),
        t,
        theme,
        ["-", "--", "-", "--"],
    )
    axes[0].set_title(
        t("fast_dims", last=int(fast_pos.shape[0]) - 1),
        loc="left",
        fontsize=roles.fontsize("subplot_title"),
    )
    if n_axes == 2:
        _curve_axes(
            axes[1],
            np.asarray(data.slow_positions),
            slow_dims,
            np.asarray(data.slow_values),
            np.asarray(data.slow_wavelengths),
            t,
            theme,
            ["-", "-"],
        )
        axes[1].set_title(
            t("slow_dims", n=int(data.n_positions)),
            loc="left",
            fontsize=roles.fontsize("subplot_title"),
        )


def draw_rotation(fig: FigureBase, data: Rotation, t: Labels, theme: Theme) -> None:
    """PE(p+k) = R(k)·PE(p): the block-diagonal R(k) and one pair turning on its circle."""
    r = np.asarray(data.r)  # (8, 8)
    d_show, k, p = int(data.d_show), int(data.k), int(data.p)
    ax_r, ax_c = fig.subplots(1, 2, width_ratios=[1.0, 1.0])
    shown = np.where(r == 0.0, np.nan, r)  # zeros blank: only the 2 x 2 blocks are coloured
    heatmap(ax_r, shown, theme, signed=True, vmax=1.0, colorbar=False)
    cb = fig.colorbar(
        ax_r.images[-1],
        ax=ax_r,
        orientation="horizontal",
        fraction=0.06,
        pad=0.04,
        ticks=[-1, 0, 1],
    )
    cb.set_label(t("rot_cbar"))
    for i in range(d_show // 2):  # outline each 2 x 2 block
        ax_r.add_patch(
            Rectangle(
                (2 * i - 0.5, 2 * i - 0.5), 2, 2, fill=False, edgecolor=theme.text, linewidth=1.2
            )
        )
    ax_r.set_xticks(range(0, d_show, 2))
    ax_r.set_yticks(range(0, d_show, 2))
    ax_r.tick_params(length=0)
    ax_r.set_aspect("equal")
    ax_r.set_title(t("rot_matrix_title", k=k, d=d_show))
    # one unit circle, two pairs: (cos θ, sin θ) with θ = p·ω_i, turned by k·ω_i
    pe_p, pe_pk = np.asarray(data.pe_p), np.asarray(data.pe_pk)
    omega = np.asarray(data.omega)
    circle = np.linspace(0, 2 * np.pi, 361)
    ax_c.plot(np.cos(circle), np.sin(circle), color=theme.neutral, lw=1.0)
    styles = [("-", "o", theme.accent, 0.62), ("--", "s", theme.warn, 0.86)]
    for i, (ls, marker, colour, radius) in enumerate(styles):
        th0, th1 = p * omega[i], (p + k) * omega[i]
        arc = np.linspace(th0, th1, 60)
        ax_c.plot(radius * np.cos(arc), radius * np.sin(arc), ls=ls, color=colour, lw=2.0)
        for s_, c_ in (pe_p[2 * i : 2 * i + 2], pe_pk[2 * i : 2 * i + 2]):
            ax_c.plot([0, c_], [0, s_], ls=ls, color=colour, lw=1.2)
        ax_c.plot(
            [pe_p[2 * i + 1], pe_pk[2 * i + 1]],
            [pe_p[2 * i], pe_pk[2 * i]],
            ls="none",
            marker=marker,
            ms=8,
            mfc=theme.background,
            mec=colour,
            mew=2,
            label=t("rot_pair", i=i, angle=float(k * omega[i])),
        )
    ax_c.set_xlim(-1.15, 1.15)
    ax_c.set_ylim(-1.15, 1.15)
    ax_c.set_aspect("equal")
    ax_c.set_xticks([-1, 0, 1])
    ax_c.set_yticks([-1, 0, 1])
    ax_c.set_xlabel(t("rot_x"))
    ax_c.set_ylabel(t("rot_y"))
    ax_c.set_title(t("rot_circle_title", p=p, pk=p + k))
    fig.legend(
        *ax_c.get_legend_handles_labels(),
        loc="outside lower center",
        ncol=2,
        frameon=False,
        handletextpad=0.3,
        title=t("rot_check", d=int(data.d_model), err=float(data.err)),
    )


def draw_similarity(fig: FigureBase, data: Similarity, t: Labels, theme: Theme) -> None:
    sim = np.asarray(data.similarity)
    pos = np.asarray(data.positions)
    ax_s, ax_f = fig.subplots(1, 2, width_ratios=[1.0, 1.25])
    # similarity of two sinusoidal encodings is one-sided here: a sequential scale up to 1
    heatmap(
        ax_s,
        sim,
        theme,
        vmin=float(sim.min()),
        vmax=1.0,
        extent=_extent(pos, pos),
        colorbar=False,
    )
    cb = fig.colorbar(ax_s.images[-1], ax=ax_s, orientation="horizontal", fraction=0.06, pad=0.04)
    cb.set_label(t("cos_sim"))
    ax_s.set_aspect("equal")
    ax_s.xaxis.set_label_position("top")
    ax_s.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False)
    ax_s.set_xlabel(t("position_q"))
    ax_s.set_ylabel(t("position_p"))

    k = np.asarray(data.offsets)
    measured = np.asarray(data.measured)  # (starts, offsets)
    starts = [int(s) for s in data.starts]
    markers = ["o", "s", "^", "D"]
    every = max(1, k.shape[0] // 24)  # a marker every few offsets: the curve stays visible
    ax_f.plot(k, np.asarray(data.formula), color=theme.text, lw=1.4, label=t("formula_f"))
    for r, p0 in enumerate(starts):
        ax_f.plot(
            k,
            measured[r],
            ls="none",
            marker=markers[r % len(markers)],
            ms=7 - 1.5 * r,
            mfc="none",
            mew=1.5,
            markevery=(r * every // max(1, len(starts)), every),
            label=t("from_start", p=p0),
        )
    for kk, fk in ((data.offset_a, data.f_a), (data.offset_b, data.f_b)):
        ax_f.plot([float(kk)], [float(fk)], "o", color=theme.warn, ms=8, zorder=5)
    ax_f.set_ylim(0.0, 1.08)
    ax_f.set_yticks([0.0, 0.5, 1.0])
    ax_f.set_xlabel(t("offset_k"))
    ax_f.set_ylabel(t("cos_sim"))
    ax_f.set_title(t("profile_title", fa=float(data.f_a), fb=float(data.f_b)), color=theme.warn)
    fig.legend(
        *ax_f.get_legend_handles_labels(),
        loc="outside lower center",
        ncol=4,
        frameon=False,
        handletextpad=0.3,
        columnspacing=1.0,
    )


def _draw_bug(ax: Axes, data: Pitfalls, t: Labels, theme: Theme) -> None:
    starts = np.asarray(data.bug_starts)
    ax.plot(starts, np.asarray(data.bug_cos_bug), color=theme.warn, lw=1.6, label=t("bug_line"))
    ax.plot(
        starts,
        np.asarray(data.bug_cos_correct),
        color=theme.ok,
        lw=2.2,
        ls="--",
        label=t("correct_line"),
    )
    ax.set_xlabel(t("start_p"))
    ax.set_ylabel(t("sim_at", k=int(data.bug_offset)))
    ax.set_title(
        t("bug_title", d=int(data.bug_d_model), base=float(data.bug_base)),
        loc="left",
        fontsize=roles.fontsize("subplot_title"),
    )
    sub = ax.get_figure(root=False)
    assert sub is not None
    sub.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=1, frameon=False)
    ax.margins(x=0.02)


def _draw_float32(ax: Axes, data: Pitfalls, t: Labels, theme: Theme) -> None:
    err = np.asarray(data.f32_angle_error)  # (positions, pairs shown)
    pos = np.asarray(data.f32_positions)
    pairs = np.asarray(data.f32_pairs)
    positive = err[err > 0]
    vmin = float(positive.min()) if positive.size else 1e-12
    vmax = float(err.max()) if positive.size else 1e-11
    im = heatmap(
        ax,
        np.where(err > 0, err, np.nan),
        theme,
        log=True,
        vmin=vmin,
        vmax=vmax,
        extent=_extent(pairs.astype(float), pos),
        cbar_label=t("f32_cbar"),
    )
    # the colour bar says the exponent (-12 ... -6): tick-sized 10^-12 would put its
    # superscripts under the size floor
    from matplotlib.ticker import FuncFormatter, NullFormatter

    assert im.colorbar is not None
    im.colorbar.ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _pos: f"{np.log10(v):.0f}".replace("-", "\u2212"))
    )
    im.colorbar.ax.yaxis.set_minor_formatter(NullFormatter())
    x_max, y_max = float(data.f32_max_pair), float(data.f32_max_position)
    ax.plot([x_max], [y_max], marker="*", ms=14, color=theme.warn, mec=theme.background, ls="none")
    ax.annotate(
        t("f32_max", e=float(data.f32_max_error)),
        xy=(x_max, y_max),
        xytext=(10, 8),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=roles.fontsize("annotation"),
        color=theme.text,
        bbox={"boxstyle": "round,pad=0.2", "fc": theme.background, "ec": theme.warn, "lw": 1.0},
    )
    ax.set_xlabel(t("pair_i"))
    ax.set_ylabel(t("position"))
    ax.set_title(
        t("f32_title", d=int(data.bug_d_model), base=float(data.bug_base)),
        loc="left",
        fontsize=roles.fontsize("subplot_title"),
    )


def _draw_layouts(ax: Axes, data: Pitfalls, t: Labels, theme: Theme) -> None:
    rows: list[tuple[str, float | str]] = [
        ("tab_perm", data.layout_perm_diff),
        ("tab_raw", data.layout_raw_diff),
        ("tab_sim", below(data.layout_sim_diff, -14)),  # rounding level: a bound
        ("tab_t2t", data.layout_t2t_sim_diff),
    ]
    ax.set_axis_off()
    ax.set_title(
        t("layout_title", d=int(data.bug_d_model), base=float(data.bug_base)),
        loc="left",
        fontsize=roles.fontsize("subplot_title"),
    )
    step = 1.0 / (len(rows) + 1)
    ax.text(
        1.0,
        1.0 - step / 2,
        t("max_abs_diff"),
        ha="right",
        va="center",
        color=theme.muted,
        fontsize=roles.fontsize("annotation"),
        transform=ax.transAxes,
    )
    for r, (key, value) in enumerate(rows):
        y = 1.0 - (r + 1.5) * step
        ax.axhline(y + step / 2, color=theme.box_edge, lw=0.8)
        ax.text(
            0.0,
            y,
            t(key),
            ha="left",
            va="center",
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
            transform=ax.transAxes,
        )
        ax.text(
            1.0,
            y,
            _sci(value),
            ha="right",
            va="center",
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
            transform=ax.transAxes,
            fontweight="bold",
        )


def draw_pitfalls(fig: FigureBase, data: Pitfalls, t: Labels, theme: Theme) -> None:
    """The dimension-index bug, measured (the card's other pitfalls are c2-float32, c2-layouts)."""
    _draw_bug(fig.subplots(), data, t, theme)


def draw_float32(fig: FigureBase, data: Pitfalls, t: Labels, theme: Theme) -> None:
    _draw_float32(fig.subplots(), data, t, theme)


def draw_layouts(fig: FigureBase, data: Pitfalls, t: Labels, theme: Theme) -> None:
    """The layout and frequency-rule comparison as a table (figure page; the card says it in text)."""
    _draw_layouts(fig.subplots(), data, t, theme)


DRAW: dict[str, DrawFn] = {
    "c2-heatmap": draw_heatmap,
    "c2-curves": draw_curves,
    "c2-rotation": draw_rotation,
    "c2-similarity": draw_similarity,
    "c2-pitfalls": draw_pitfalls,
    "c2-float32": draw_float32,
    "c2-layouts": draw_layouts,
}
