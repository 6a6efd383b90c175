"""Card 5 figures: measured loss beyond the training length, RoPE scaling at inference, the
measured table and the quoted published table.

Draw functions only draw the arrays of ``posecards.content.card5``; all text comes from the
[labels] of ``cards/card5.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import FigureBase
from matplotlib.transforms import Bbox

from posecards.figures import DrawFn, Labels, roles
from posecards.figures.style import Theme

# the data each figure draws (content/figdata/card5.py), as content/card5.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card5 import Beyond, Quoted, RopeScaling, Table

# line style and marker per series: lines never differ by colour alone
STYLE: dict[str, tuple[Any, str]] = {
    "nope": (":", "x"),
    "learned": ("--", "s"),
    "sinusoidal": ("-.", "^"),
    "rope": ("-", "o"),
    "alibi": ("-", "D"),
    "t5": ((0, (5, 1, 1, 1)), "v"),
    "none": ("-", "o"),
    "linear": ("--", "s"),
    "ntk": ("-.", "^"),
    "yarn": ((0, (5, 1, 1, 1)), "D"),
}


def _colours(theme: Theme) -> dict[str, str]:
    """Line colours from the theme's categorical palette (3:1 on its background)."""
    cat = theme.categorical
    return {
        "alibi": cat[0],
        "learned": cat[1],
        "rope": cat[2],
        "sinusoidal": cat[3],
        "t5": cat[4],
        "nope": cat[5],
        "yarn": cat[0],
        "linear": cat[1],
        "none": cat[2],
        "ntk": cat[3],
    }


def _loss_axes(ax: Axes, data: Beyond | RopeScaling, t: Labels, theme: Theme) -> None:
    """Shared frame: beyond-training shading, training length, entropy and guessing lines,
    named on secondary axes (outside the data, so no label sits on a curve)."""
    L, n = int(data.train_length), int(data.eval_length)
    H, U = float(data.entropy), float(data.uniform)
    ax.axvspan(L, n, color=theme.box, zorder=0, lw=0)
    ax.axvline(L, color=theme.text, lw=1.2, ls="--", zorder=1)
    ax.axhline(U, color=theme.neutral, lw=1.2, ls=":", zorder=1)
    ax.axhline(H, color=theme.neutral, lw=1.2, ls=(0, (1, 3)), zorder=1)
    ax.set_xlim(0, n)
    top_loss = max(float(np.max(band.hi)) for band in data.bands())
    ax.set_ylim(0.8, max(3.6, top_loss + 0.15))
    ticks = [0, L, *[L * 2**k for k in range(1, 8) if L * 2**k <= n]]
    ax.set_xticks(ticks)
    ax.set_xlabel(t("position", w=int(data.window)))
    ax.set_ylabel(t("loss"))
    top = ax.secondary_xaxis("top")
    top.set_xticks([L], labels=[t("train_line", L=L)])
    top.tick_params(length=0)
    right = ax.secondary_yaxis("right")
    right.set_yticks([H, U], labels=[t("entropy_line", v=H), t("uniform_line", v=U)])
    right.tick_params(length=0)


def _series(
    ax: Axes, x: np.ndarray, data: Beyond | RopeScaling, key: str, label: str, theme: Theme
) -> None:
    colour = _colours(theme)[key]
    ls, marker = STYLE[key]
    band = data.band(key)
    ax.fill_between(x, band.lo, band.hi, color=colour, alpha=0.18, lw=0, zorder=2)
    ax.plot(
        x,
        band.mean,
        color=colour,
        ls=ls,
        lw=2.0,
        marker=marker,
        markevery=(key_offset(key), 8),
        markersize=6,
        label=label,
        zorder=3,
    )


def key_offset(key: str) -> int:
    """Markers of different series at different points, so they do not sit on each other."""
    return list(STYLE).index(key) % 8


def _legend(fig: FigureBase, ax: Axes, ncols: int, title: str | None = None) -> None:
    """Below the plot; fewer columns when the panel is narrow (4x3, A4), so entries never touch."""
    handles, labels = ax.get_legend_handles_labels()
    width_in = fig.get_window_extent().width / fig.get_figure(root=True).dpi
    ncols = ncols if width_in >= 6.0 else 2
    fig.legend(
        handles,
        labels,
        title=title,
        title_fontsize=roles.fontsize("legend"),
        loc="outside lower center",
        ncols=ncols,
        frameon=False,
        fontsize=roles.fontsize("legend"),
        handlelength=2.2,
        columnspacing=1.0,
    )


def draw_beyond(fig: FigureBase, data: Beyond, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    x = np.asarray(data.position, dtype=np.float64)
    for s in data.schemes:
        _series(ax, x, data, s, t(f"scheme_{s}"), theme)
    _loss_axes(ax, data, t, theme)
    _legend(fig, ax, 3)


def draw_rope_scaling(fig: FigureBase, data: RopeScaling, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    x = np.asarray(data.position, dtype=np.float64)
    for m in data.methods:
        label = t(f"scaling_{m}", s=float(data.factor), a2=float(data.yarn_score_factor))
        _series(ax, x, data, m, label, theme)
    _loss_axes(ax, data, t, theme)
    params = t(
        "scaling_params",
        s=float(data.factor),
        d=int(data.head_dim),
        b=float(data.rope_base),
    )
    _legend(fig, ax, 2, params)


HELD_TINT = 0.28  # share of the theme's "ok" colour in the cells the table shades


def _table(
    ax: Axes,
    cells: list[list[str]],
    header: list[str],
    theme: Theme,
    tint: list[list[bool]] | None = None,
    first: float = 0.3,
) -> None:
    """A text table filling the axes; the first column holds the row names. Tinted cells get a
    HELD_TINT share of the theme's "ok" colour over the background (visible, text contrast kept)."""
    ax.set_axis_off()
    held = to_hex(
        tuple(
            (1 - HELD_TINT) * b + HELD_TINT * o
            for b, o in zip(to_rgb(theme.background), to_rgb(theme.ok), strict=True)
        )  # type: ignore[arg-type]
    )
    colours = [
        [theme.background]
        + [held if (tint and tint[i][j]) else theme.background for j in range(len(row) - 1)]
        for i, row in enumerate(cells)
    ]
    table = ax.table(
        cellText=cells,
        colLabels=header,
        cellColours=colours,
        colWidths=[first] + [(1.0 - first) / (len(header) - 1)] * (len(header) - 1),
        bbox=Bbox.from_bounds(0.0, 0.0, 1.0, 1.0),
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(roles.fontsize("table_cell"))
    for (r, c), cell in table.get_celld().items():
        cell.set_edgecolor(theme.box_edge)
        cell.get_text().set_color(theme.text)
        if c == 0:
            cell.get_text().set_horizontalalignment("left")
            cell.PAD = 0.04
        if r == 0:
            cell.set_facecolor(theme.background)
            cell.get_text().set_fontweight("bold")


def draw_table(fig: FigureBase, data: Table, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    mean = np.asarray(data.mean, dtype=np.float64)  # (rows, lengths)
    lengths = np.asarray(data.eval_lengths, dtype=np.float64)
    multiples = np.asarray(data.multiples, dtype=np.float64)
    recall = np.asarray(data.recall_accuracy, dtype=np.float64)  # (rows, 2), percent
    cells = [
        [t(f"row_{key}"), *(f"{v:.2f}" for v in row), *(f"{v:.0f}" for v in far)]
        for key, row, far in zip(data.rows, mean, recall, strict=True)
    ]
    header = [
        "",
        *(t("length_col", n=int(n), m=int(m)) for n, m in zip(lengths, multiples, strict=True)),
        *(t("recall_col", m=int(m)) for m in np.asarray(data.recall_multiples)),
    ]
    # cells whose loss held (within data.held nats of the row's 1x value) are tinted
    tint = [[bool(v) for v in row] + [False, False] for row in np.asarray(data.held_cells)]
    _table(ax, cells, header, theme, tint, first=0.25)
    ax.set_title(
        t(
            "table_title",
            L=int(data.train_length),
            m_lo=int(multiples[1]),
            m_hi=int(multiples[-1]),
            h=float(data.held),
            c=float(data.recall_chance),
        ),
        fontsize=roles.fontsize("subplot_title"),
    )


def draw_quoted(fig: FigureBase, data: Quoted, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    ppl = np.asarray(data.perplexity, dtype=np.float64)  # (methods, lengths)
    cells = [
        [t(f"quoted_{m}"), *(f"{v:.2f}" if np.isfinite(v) else t("oom") for v in row)]
        for m, row in zip(data.methods, ppl, strict=True)
    ]
    header = ["", *(f"{int(n):,}" for n in np.asarray(data.eval_lengths))]
    _table(ax, cells, header, theme)
    ax.set_title(
        t(
            "quoted_title",
            source=str(data.source_zh if t.lang == "zh" else data.source),
            L=int(data.train_length),
        ),
        fontsize=roles.fontsize("subplot_title"),
    )


DRAW: dict[str, DrawFn] = {
    "c5-beyond": draw_beyond,
    "c5-rope-scaling": draw_rope_scaling,
    "c5-table": draw_table,
    "c5-quoted": draw_quoted,
}
