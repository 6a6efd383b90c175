"""Card 6 figures: partial vs proportional RoPE, Gemma 3's two RoPEs, layers without RoPE, MLA's
decoupled slice, MRoPE's axes and position ids (drawn in ``card6_mrope.py``), and the table of
nine configs.

Draw functions only draw the arrays of ``posecards.content.card6``; all text comes from the
[labels] of ``cards/card6.toml``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import FigureBase
from matplotlib.ticker import FixedLocator, NullLocator
from matplotlib.transforms import Bbox

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import plain_log_ticks
from posecards.figures.card6_mrope import draw_mrope_axes, draw_mrope_ids
from posecards.figures.style import Theme

# the data each figure draws (content/figdata/card6.py), as content/card6.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card6 import (
        Mla,
        Models,
        Nope,
        Partial,
        TwoRopes,
    )

# line style and marker per model of panel 1: lines never differ by colour alone
_PARTIAL_STYLE: dict[str, dict[str, Any]] = {
    "phi": {"linestyle": "--", "marker": "s", "markersize": 5},
    "qn": {"linestyle": "-", "marker": "o", "markersize": 4},
    "g4": {"linestyle": "-.", "marker": "^", "markersize": 4},
}


def _legend(
    fig: FigureBase, handles: Sequence[Any], ncols: int, brk: bool = True, side: bool = True
) -> None:
    """Below the panel (every corner of these axes holds data), in one column; on a wide, low
    panel (the 4x3 card's) at its right when ``side``, else below in ``ncols`` columns."""
    wide = _wide(fig)
    right = side and wide
    labels = [str(h.get_label()) for h in handles]
    if right and brk:  # at the right: each entry breaks after its first colon or comma
        labels = [_break(x) for x in labels]
    fig.legend(
        handles=list(handles),
        labels=labels,
        loc="outside right center" if right else "outside lower center",
        ncols=ncols if wide and not right else 1,
        frameon=False,
        handlelength=2.0,
        columnspacing=1.0,
    )


def _break(text: str) -> str:
    """``text`` on two lines, broken after its first colon (or, without one, its first comma)."""
    for sep in (": ", "：", ", ", "，"):
        if sep in text:
            return text.replace(sep, sep.rstrip() + "\n", 1)
    return text


def _strip_title(fig: FigureBase, text: str) -> str:
    """Strips side by side on a wide panel: the title breaks after its first colon."""
    return _break(text) if _wide(fig) else text


def _wide(fig: FigureBase) -> bool:
    """A panel much wider than tall (the 4x3 card's): stack less, put things side by side.
    (Judged from the panel's share of the page before the card's layout places it.)"""
    box = fig.get_window_extent()
    return bool(box.width >= 1.7 * box.height)


def _strip(ax: Axes, flags: np.ndarray, colours: tuple[str, str], theme: Theme) -> None:
    """One row of cells, one per layer (or slot): colour 1 where ``flags`` is true."""
    values = np.asarray(flags, dtype=np.float64)[None, :]  # (1, n)
    n = values.shape[1]
    ax.imshow(
        values,
        cmap=ListedColormap(list(colours)),
        vmin=0.0,
        vmax=1.0,
        aspect="auto",
        interpolation="nearest",
        extent=(-0.5, n - 0.5, 0.5, -0.5),
    )
    # thin separators in the background colour, so neighbouring cells stay countable
    ax.vlines(np.arange(n - 1) + 0.5, -0.5, 0.5, colors=theme.background, linewidth=0.8)
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def _log_positions(axis: Any) -> None:
    plain_log_ticks(axis)


# ---------------------------------------------------------------- panel 1


def _right_ticks(
    ax: Axes, values: Sequence[float], labels: Sequence[str], colours: Sequence[str]
) -> None:
    """Values marked on a secondary axis at the right, outside the data, coloured per series."""
    right = ax.secondary_yaxis("right")
    right.set_yticks(list(values), labels=list(labels))
    right.tick_params(length=0, pad=2)
    right.yaxis.set_minor_locator(NullLocator())
    for tick, colour in zip(right.get_yticklabels(), colours, strict=True):
        tick.set_color(colour)


def draw_partial(fig: FigureBase, data: Partial, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    cat = theme.categorical
    for i, key in enumerate(data.models):
        head = data.model(key)
        wl = np.asarray(head.wavelength, dtype=np.float64)  # (head_dim/2,)
        x = np.asarray(head.fraction, dtype=np.float64)
        turning = np.isfinite(wl)
        ax.plot(
            x[turning],
            wl[turning],
            color=cat[i],
            linewidth=2.0,
            label=key,
            **_PARTIAL_STYLE[key],
        )
    # the part of the head that does not turn in Qwen3-Next and Gemma 4 (Phi-2's line goes on)
    ax.axvspan(float(data.still_from), 1.0, color=theme.box, zorder=0, lw=0)
    context = float(data.context)
    ax.axhline(context, color=theme.neutral, linewidth=1.2, linestyle=":", zorder=1)
    ax.text(
        0.98,
        context * 1.5,
        t("ctx_short", n=context),
        transform=ax.get_yaxis_transform(),
        ha="right",
        va="bottom",
        color=theme.muted,
    )
    ax.text(
        0.98, 0.03, t("still"), transform=ax.transAxes, ha="right", va="bottom", color=theme.muted
    )
    # each line named at its slowest pair, in the band to its right where no line runs
    for key in data.models:
        head = data.model(key)
        wl = np.asarray(head.wavelength, dtype=np.float64)
        x = np.asarray(head.fraction, dtype=np.float64)
        last = int(np.flatnonzero(np.isfinite(wl))[-1])
        ax.text(
            float(x[last]) + 0.04,
            float(wl[last]),
            t(
                f"partial_{key}" + ("_short" if _wide(fig) else ""),
                p=float(head.p),
                s=float(wl[last]),
            ),
            ha="left",
            va="center",
            color=theme.text,
        )
    ax.set_yscale("log")
    _log_positions(ax.yaxis)
    ax.yaxis.set_major_locator(FixedLocator([10.0, 1e3, 1e5, 1e7]))
    ax.set_ylim(2.0, 1e9)
    ax.set_xlim(0.0, 1.0)
    ax.set_xticks([0.0, 0.25, 0.4, 1.0], labels=["0", "0.25", "0.4", "1"])
    ax.set_xlabel(t("head_fraction"))
    keys = "partial_keys_wide" if _wide(fig) else "partial_keys"  # wide: one-line labels
    ax.set_title(t(keys), fontsize=roles.fontsize("subplot_title"), loc="left")
    ax.set_ylabel(t("wavelength"))
    for text in ax.texts:  # labels inside the axes: they must not shrink it (constrained layout)
        text.set_in_layout(False)


# ---------------------------------------------------------------- panel 2


def draw_two_ropes(fig: FigureBase, data: TwoRopes, t: Labels, theme: Theme) -> None:
    ax_leg = None
    if _wide(fig):  # a low panel: the legend in its own column beside the spectra
        grid = fig.add_gridspec(2, 2, height_ratios=[0.14, 1.0], width_ratios=[0.75, 1.25])
        ax_l, ax = fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, 0])
        ax_leg = fig.add_subplot(grid[1, 1])
        ax_leg.set_axis_off()
    else:
        ax_l, ax = fig.subplots(2, 1, height_ratios=[0.14, 1.0])
    cat = theme.categorical
    full = np.asarray(data.full, dtype=bool)  # (layers,)
    _strip(ax_l, full, (cat[0], cat[1]), theme)
    idx = np.flatnonzero(full)
    ax_l.set_xticks([int(idx[0]), int(idx[1]), full.size - 1])
    ax_l.set_title(
        t("g3_strip", n=int(full.size), f=int(idx.size)),
        fontsize=roles.fontsize("subplot_title"),
        loc="left",
    )

    k = np.asarray(data.pair, dtype=np.float64)
    window, context = int(data.window), int(data.context)
    (l1,) = ax.plot(
        k,
        data.local_wavelength,
        color=cat[0],
        linewidth=2.2,
        marker="o",
        markersize=4,
        markevery=(0, 8),
        label=t("g3_local", b=float(data.local_theta), w=window),
    )
    (l2,) = ax.plot(
        k,
        data.full_wavelength,
        color=cat[1],
        linewidth=2.2,
        linestyle="--",
        marker="s",
        markersize=4,
        markevery=(4, 8),
        label=t("g3_global", b=float(data.full_theta), s=float(data.factor), c=context),
    )
    for c in (window, context):
        ax.axhline(c, color=theme.neutral, linewidth=1.2, linestyle=":", zorder=1)
    ax.set_yscale("log")
    # the window and the context are the y ticks, so their dotted lines need no label
    ticks = [10.0, float(window), float(context), 1e7]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticks(ticks, labels=["10", t("wl_cell", v=window), t("wl_cell", v=context), "10M"])
    ax.set_ylim(3.0, 1e8)
    ax.set_xlim(0, k[-1])
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("wavelength"))
    if ax_leg is not None:
        leg = ax_leg.legend(
            handles=[l1, l2],
            labels=[
                _break(str(h.get_label())).replace(", ", ",\n").replace("，", "，\n")
                for h in (l1, l2)
            ],
            loc="center left",
            frameon=False,
            borderaxespad=0,
        )
        leg.set_in_layout(False)  # it fills its own column; the spectra keep theirs
    else:
        _legend(fig, [l1, l2], 1)


# ---------------------------------------------------------------- panel 3


def draw_nope(fig: FigureBase, data: Nope, t: Labels, theme: Theme) -> None:
    if _wide(fig):  # the two strips side by side, the temperature below
        grid = fig.add_gridspec(2, 2, height_ratios=[0.13, 1.0])
        ax_a, ax_b = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        ax = fig.add_subplot(grid[1, :])
    else:
        ax_a, ax_b, ax = fig.subplots(3, 1, height_ratios=[0.13, 0.13, 1.0])
    cat = theme.categorical
    for a, layers, title in (
        (ax_a, data.l4_rope, "l4_strip"),
        (ax_b, data.smol_rope, "smol_strip"),
    ):
        rope = np.asarray(layers, dtype=bool)
        _strip(a, ~rope, (cat[0], cat[1]), theme)
        nope = np.flatnonzero(~rope)
        a.set_xticks([0, int(nope[0]), rope.size - 1])
        a.set_title(
            _strip_title(fig, t(title, n=int(rope.size), k=int(nope.size))),
            fontsize=roles.fontsize("subplot_title"),
            loc="left",
        )
    pos = np.asarray(data.position, dtype=np.float64)
    tau = np.asarray(data.tau, dtype=np.float64)
    context = float(data.context)
    # a step function: tau(p) holds from one step position to the next (positions >= 1 on log x)
    x = np.concatenate([[1.0], pos[1:], [context]])
    y = np.concatenate([tau, tau[-1:]])
    ax.step(x, y, where="post", color=cat[1], linewidth=2.2)
    chunk = float(data.chunk)
    ax.axvline(chunk, color=theme.neutral, linewidth=1.2, linestyle=":")
    ax.set_title(t("l4_tau"), fontsize=roles.fontsize("subplot_title"), loc="left", color=cat[1])
    ax.set_xscale("log")
    _log_positions(ax.xaxis)
    ax.xaxis.set_major_locator(FixedLocator([1.0, 1e2, 1e4, 1e6]))
    ax.set_xlim(1.0, context)
    ax.set_ylim(0.9, float(data.tau_end) + 0.1)
    ax.set_xlabel(t("position", f=float(data.floor)))
    ax.set_ylabel(t("tau"))
    top = ax.secondary_xaxis("top")
    top.set_xticks([chunk], labels=[t("chunk_short", n=int(chunk))])
    top.xaxis.set_minor_locator(NullLocator())
    top.tick_params(length=0, pad=1)


# ---------------------------------------------------------------- panel 4


def draw_mla(fig: FigureBase, data: Mla, t: Labels, theme: Theme) -> None:
    if _wide(fig):  # the query and the key side by side, the scales below
        grid = fig.add_gridspec(2, 2, height_ratios=[0.13, 1.0])
        ax_q, ax_k = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        ax = fig.add_subplot(grid[1, :])
    else:
        ax_q, ax_k, ax = fig.subplots(3, 1, height_ratios=[0.13, 0.13, 1.0])
    cat = theme.categorical
    slots = np.asarray(data.slots)  # (qk_head_dim,) pair index, -1 content
    nope, rope, heads = int(data.nope), int(data.rope), int(data.heads)
    for a, key in ((ax_q, "mla_query"), (ax_k, "mla_key")):
        _strip(a, slots >= 0, (theme.neutral, cat[2]), theme)
        a.set_title(
            _strip_title(fig, t(key, n=nope, r=rope, h=heads)),
            fontsize=roles.fontsize("subplot_title"),
            loc="left",
        )
    # the two parts named by their config keys, one under each strip, from the head's two ends
    ax_q.set_xticks([-0.5], labels=[t("mla_nope_key", n=nope)])
    ax_q.get_xticklabels()[0].set_horizontalalignment("left")
    ax_k.set_xticks([nope + rope - 0.5], labels=[t("mla_rope_key", r=rope)])
    ax_k.get_xticklabels()[0].set_horizontalalignment("right")
    for a in (ax_q, ax_k):
        a.tick_params(length=0)

    plain, scale = float(data.plain_scale), float(data.softmax_scale)
    bars = ax.barh([1, 0], [plain, scale], color=[theme.neutral, cat[2]], height=0.6)
    bars[1].set_hatch("//")
    ax.set_yticks([])
    texts = (
        t("mla_plain", v=plain, d=nope + rope),
        t("mla_yarn", v=scale, m=float(data.mscale)),
    )
    for b, v, s in zip(bars, (plain, scale), texts, strict=True):
        ax.text(
            v, b.get_y() + b.get_height() / 2, " " + s, va="center", ha="left", color=theme.text
        )
    ax.set_xlim(0, scale * 2.9)
    ax.set_xticks([])
    ax.set_ylim(-0.55, 1.55)
    ax.set_title(
        t("mla_cos_sin", c=float(data.cos_sin)),
        fontsize=roles.fontsize("subplot_title"),
        loc="left",
    )
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)


# ---------------------------------------------------------------- panel 5


def draw_models(fig: FigureBase, data: Models, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    ax.set_axis_off()
    header = [t(f"col_{c}") for c in ("model", "layers", "pairs", "theta", "slowest", "context")]
    cells = []
    for i, name in enumerate(data.name):
        cells.append(
            [
                t("row_name", name=str(name), kind=t(f"kind_{data.kind[i]}")),
                t("of", a=int(data.layers[i]), b=int(data.total[i])),
                t("of", a=int(data.turning[i]), b=int(data.pairs[i])),
                t("theta_cell", v=float(data.theta[i])),
                t("wl_cell", v=float(data.slowest[i])),
                t("ctx_cell", v=float(data.context[i])),
            ]
        )
    table = ax.table(
        cellText=cells,
        colLabels=header,
        colWidths=[0.38, 0.09, 0.11, 0.14, 0.14, 0.14],
        bbox=Bbox.from_bounds(0.0, 0.0, 1.0, 1.0),
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(roles.fontsize("table_cell"))
    for (r, c), cell in table.get_celld().items():
        cell.set_edgecolor(theme.box_edge)
        cell.set_facecolor(theme.background)
        cell.get_text().set_color(theme.text)
        if c == 0:
            cell.get_text().set_horizontalalignment("left")
            cell.PAD = 0.03
        if r == 0:
            cell.get_text().set_fontweight("bold")


DRAW: dict[str, DrawFn] = {
    "c6-partial": draw_partial,
    "c6-two-ropes": draw_two_ropes,
    "c6-nope": draw_nope,
    "c6-mla": draw_mla,
    "c6-mrope-axes": draw_mrope_axes,
    "c6-mrope-ids": draw_mrope_ids,
    "c6-models": draw_models,
}
