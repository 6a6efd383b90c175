"""Card 8 figures: where inside attention each relative scheme puts position.

Index maps (Shaw's clipped distances, the relative shift) are grids with the number each cell
reads written in it; score terms are diverging heat maps centred on 0, one colour bar per panel
shared by its maps, so their sizes compare. Draw only; every number comes from
posecards.content.card8, all text from the [labels] of cards/card8.toml.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.figure import FigureBase

from posecards.figures import DrawFn, Labels, roles
from posecards.figures.style import Theme

# the data each figure draws (content/figdata/card8.py), as content/card8.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card8 import (
        Deberta,
        Linear,
        Shaw,
        Shift,
        ShiftXl,
        Terms,
        XlTerms,
    )


def _minus(v: float) -> str:
    return f"{int(v)}".replace("-", "\u2212")


def _grid_cells(ax: Any, marked: Any, values: Any, theme: Theme) -> None:
    """A grid of cells: ``marked`` cells (1) in the pitfall box colour, others (0) in the box
    colour, each with its integer ``values`` written in the text colour; white-space gaps."""
    rows, cols = np.shape(values)
    ax.imshow(
        np.asarray(marked, dtype=np.float64),
        cmap=ListedColormap([theme.box, theme.pitfall_box]),
        vmin=0.0,
        vmax=1.0,
        aspect="auto",
        interpolation="nearest",
    )
    for (r, c), v in np.ndenumerate(np.asarray(values)):
        ax.text(
            c,
            r,
            _minus(v),
            ha="center",
            va="center",
            color=theme.text,
            fontsize=roles.fontsize("cell_number"),
        )
    ax.hlines(np.arange(rows - 1) + 0.5, -0.5, cols - 0.5, colors=theme.background, linewidth=2)
    ax.vlines(np.arange(cols - 1) + 0.5, -0.5, rows - 0.5, colors=theme.background, linewidth=2)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)


def _signed_maps(
    fig: FigureBase, axes: Any, maps: list[Any], titles: list[str], t: Labels, theme: Theme
) -> None:
    """Diverging heat maps sharing one norm centred on 0 and one colour bar."""
    top = max(float(np.max(np.abs(m))) for m in maps)
    norm = Normalize(-top, top)
    im = None
    for ax, m, title in zip(np.ravel(axes), maps, titles, strict=True):
        im = ax.imshow(
            np.asarray(m), cmap=theme.diverging, norm=norm, aspect="auto", interpolation="nearest"
        )
        ax.set_title(title, loc="left")
        ax.set_xticks([])
        ax.set_yticks([])
    assert im is not None
    cb = fig.colorbar(im, ax=list(np.ravel(axes)), fraction=0.05, pad=0.03)
    cb.set_label(t("score"))


def draw_terms(fig: FigureBase, data: Terms, t: Labels, theme: Theme) -> None:
    """A table: one row per scheme, one column per term of (x + p)ᵀW_qW_kᵀ(x + p), each cell a
    short code of what the scheme puts there (the key below the table); a last row gives each
    term's measured rms."""
    ax = fig.subplots()
    kinds = [list(row) for row in data.kinds]
    n_rows, n_cols = len(kinds) + 1, 4
    dropped = np.array([[k == "kind_none" for k in row] for row in kinds] + [[True] * 4])
    ax.imshow(
        1.0 - dropped.astype(np.float64),
        cmap=ListedColormap([theme.background, theme.box]),
        vmin=0.0,
        vmax=1.0,
        aspect="auto",
        interpolation="nearest",
    )
    cells = [[t(kind) for kind in row] for row in kinds] + [[f"{v:.1f}" for v in data.rms]]
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            faint = r < len(kinds) and kinds[r][c] == "kind_none"
            ax.text(
                c,
                r,
                text,
                ha="center",
                va="center",
                color=theme.muted if faint else theme.text,
                fontsize=roles.fontsize("table_cell"),
            )
    ax.hlines(np.arange(n_rows - 1) + 0.5, -0.5, n_cols - 0.5, colors=theme.box_edge, linewidth=0.8)
    ax.vlines(np.arange(n_cols - 1) + 0.5, -0.5, n_rows - 0.5, colors=theme.box_edge, linewidth=0.8)
    ax.xaxis.tick_top()
    ax.set_xticks(range(n_cols), labels=["cc", "cp", "pc", "pp"])
    ax.set_yticks(range(n_rows), labels=[t(f"scheme_{s}") for s in data.schemes] + [t("rms")])
    ax.set_xlabel(t("kinds_key"), color=theme.muted, fontsize=roles.fontsize("legend"))
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)


def draw_shaw(fig: FigureBase, data: Shaw, t: Labels, theme: Theme) -> None:
    """clip(j − i) for every (query i, key j): the two edge values, shared by every farther key,
    marked."""
    ax = fig.subplots()
    clipped = np.asarray(data.clipped)
    _grid_cells(ax, np.abs(clipped) == int(data.clip), clipped, theme)
    n = clipped.shape[0]
    ax.set_xticks(range(n), labels=[str(i) for i in range(n)])
    ax.set_yticks(range(n), labels=[str(i) for i in range(n)])
    ax.set_xlabel(t("key_j"))
    ax.set_ylabel(t("query_i"))
    ax.set_title(t("shaw_title", k=int(data.clip), rows=int(data.rows)), loc="left")


def draw_xl(fig: FigureBase, data: XlTerms, t: Labels, theme: Theme) -> None:
    """Transformer-XL's four terms as four heat maps: (c) is constant down each column (the key
    only), (d) along each diagonal (i − j only)."""
    axes = fig.subplots(2, 2)
    _signed_maps(
        fig,
        axes,
        [data.a, data.b, data.c, data.d],
        [t("xl_a"), t("xl_b"), t("xl_c"), t("xl_d")],
        t,
        theme,
    )
    for ax in np.ravel(axes)[2:]:
        ax.set_xlabel(t("key_j"))
    for ax in np.ravel(axes)[::2]:
        ax.set_ylabel(t("query_i"))


def draw_shift(fig: FigureBase, data: Shift, t: Labels, theme: Theme) -> None:
    """Left: the distance each column of bd holds (the same in every row), the cells the shift
    keeps marked. Right: after the shift, the distance every (query, key) reads: M + i − j."""
    columns = np.asarray(data.columns)
    picked = np.asarray(data.picked)
    q_len, r_len = columns.shape
    k_len = picked.shape[1]
    left, right = fig.subplots(1, 2, width_ratios=[r_len, k_len])
    kept = np.zeros_like(columns)
    for i in range(q_len):
        kept[i, picked[i]] = 1.0
    _grid_cells(left, kept, columns, theme)
    _grid_cells(right, np.ones_like(np.asarray(data.shifted)), data.shifted, theme)
    left.set_title(t("shift_before"), loc="left")
    right.set_title(t("shift_after", m=int(data.memory)), loc="left")
    left.set_xticks(range(r_len), labels=[str(c) for c in range(r_len)])
    right.set_xticks(range(k_len), labels=[str(j) for j in range(k_len)])
    left.set_xlabel(t("column_c"))
    right.set_xlabel(t("key_j"))
    left.set_yticks(range(q_len), labels=[str(i) for i in range(q_len)])
    right.set_yticks([])
    left.set_ylabel(t("query_i"))


def draw_shift_xl(fig: FigureBase, data: ShiftXl, t: Labels, theme: Theme) -> None:
    """Transformer-XL's zero-pad shift: left, the distances of bd's columns; right, what lands
    at (i, j), the cells a causal query does not see marked (their numbers are leftovers)."""
    columns = np.asarray(data.columns)
    visible = np.asarray(data.visible)
    q_len, r_len = columns.shape
    left, right = fig.subplots(1, 2)
    _grid_cells(left, np.zeros_like(columns), columns, theme)
    _grid_cells(right, 1 - visible, data.shifted, theme)
    left.set_title(t("shift_before"), loc="left")
    right.set_title(t("shift_xl_after", m=int(data.memory)), loc="left")
    for ax, label in ((left, "column_c"), (right, "key_j")):
        ax.set_xticks(range(r_len), labels=[str(c) for c in range(r_len)])
        ax.set_xlabel(t(label))
    left.set_yticks(range(q_len), labels=[str(i) for i in range(q_len)])
    right.set_yticks([])
    left.set_ylabel(t("query_i"))


def draw_deberta(fig: FigureBase, data: Deberta, t: Labels, theme: Theme) -> None:
    """DeBERTa's three terms over √(3d), on one colour scale."""
    axes = fig.subplots(1, 3)
    _signed_maps(
        fig, axes, [data.c2c, data.c2p, data.p2c], [t("c2c"), t("c2p"), t("p2c")], t, theme
    )
    axes[0].set_ylabel(t("query_i"))
    for ax in axes:
        ax.set_xlabel(t("key_j"))


def draw_linear(fig: FigureBase, data: Linear, t: Labels, theme: Theme) -> None:
    """The weights of linear attention with RoPE in the numerator: negative ones crossed."""
    ax = fig.subplots()
    w = np.asarray(data.numerator)
    top = float(np.max(np.abs(w)))
    im = ax.imshow(
        w, cmap=theme.diverging, norm=Normalize(-top, top), aspect="auto", interpolation="nearest"
    )
    r, c = np.nonzero(w < 0)
    ax.plot(c, r, "x", color=theme.text, markersize=10, mew=2.2)
    n = w.shape[0]
    ax.set_xticks([0, n - 1])
    ax.set_yticks([0, n - 1])
    ax.set_xlabel(t("key_j"))
    ax.set_ylabel(t("query_i"))
    ax.set_title(t("negative", n=int(data.negative), total=int(w.size)), loc="left")
    cb = fig.colorbar(im, ax=ax, fraction=0.05, pad=0.03)
    cb.set_label(t("weight"))


DRAW: dict[str, DrawFn] = {
    "c8-terms": draw_terms,
    "c8-shaw": draw_shaw,
    "c8-xl": draw_xl,
    "c8-shift": draw_shift,
    "c8-deberta": draw_deberta,
    "c8-linear": draw_linear,
    "c8-shift-xl": draw_shift_xl,
}
