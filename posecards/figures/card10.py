"""Card 10 figures: how to choose a position scheme, one branch of the guide per panel.

Horizontal bars and dots, a number written at the end of each bar; the measured panels use card
5's scheme names, the census panels the categories of content/census.py. Draw only; every
number comes from posecards.content.card10, all text from the [labels] of cards/card10.toml.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import FigureBase

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import plain_log_ticks
from posecards.figures.style import Theme

# the data each figure draws (content/figdata/card10.py), as content/card10.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card10 import Base, Beyond, Census, Extend, Far, Within


def _bars(
    ax: Any,
    names: list[str],
    values: Any,
    theme: Theme,
    fmt: str,
    colour: str | None = None,
    xmax: float | None = None,
    log: bool = False,
) -> None:
    """Horizontal bars, first row on top, each value written past its bar's end (``log``: bars
    from 1 on a logarithmic axis)."""
    v = np.asarray(values, dtype=np.float64)
    y = np.arange(len(names))
    start = 1.0 if log else 0.0
    ax.barh(y, v - start, left=start, color=colour or theme.accent, height=0.62, zorder=2)
    top = xmax if xmax is not None else float(v.max()) * (8.0 if log else 1.35)
    for yi, vi in zip(y, v, strict=True):
        _write_right(ax, fmt.format(vi), (float(vi), float(yi)), theme)
    ax.set_yticks(y, labels=names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    if log:
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
    ax.set_xlim(start, top)
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _write_right(ax: Any, text: str, xy: tuple[float, float], theme: Theme) -> None:
    """``text`` just right of the data point ``xy``, centred on it vertically."""
    ax.annotate(
        text,
        xy,
        xytext=(6, 0),
        textcoords="offset points",
        va="center",
        ha="left",
        color=theme.text,
        fontsize=roles.fontsize("annotation"),
    )


def _guess_line(ax: Any, chance: float, label: str, theme: Theme) -> None:
    """The dotted line at guessing's % right, named in a row of its own above the first bar."""
    ax.axvline(chance, color=theme.neutral, ls=":", lw=1.4)
    bottom, top = ax.get_ylim()  # inverted: the first bar's row is at the top
    ax.set_ylim(bottom, top - 0.7)
    _write_right(ax, label, (chance, top - 0.35), theme)


def draw_within(fig: FigureBase, data: Within, t: Labels, theme: Theme) -> None:
    """Left: the two-back loss at 1x per scheme (uniform guess dotted); right: recall % right."""
    left, right = fig.subplots(1, 2, sharey=True)
    names = [t(f"scheme_{s}") for s in data.schemes]
    _bars(left, names, data.local_loss, theme, "{:.2f}", xmax=float(np.max(data.local_loss)) * 1.6)
    left.set_title(t("loss_1x"), loc="left")
    left.set_xlabel(t("nats"))
    _bars(right, names, data.recall, theme, "{:.0f}", theme.categorical[1], xmax=135.0)
    _guess_line(right, float(data.chance), t("guessing"), theme)
    right.set_title(t("recall_1x"), loc="left")
    right.set_xlabel(t("percent_right"))
    right.set_xticks([0, 100])


def draw_beyond(fig: FigureBase, data: Beyond, t: Labels, theme: Theme) -> None:
    """Dumbbells: each scheme's two-back loss at 1x (open) and past the training length at the
    longest length (filled)."""
    ax = fig.subplots()
    names = [t(f"scheme_{s}") for s in data.schemes]
    y = np.arange(len(names))
    one, far = np.asarray(data.loss_1x), np.asarray(data.loss_max)
    ax.hlines(y, np.minimum(one, far), np.maximum(one, far), color=theme.neutral, lw=2, zorder=1)
    ax.plot(one, y, "o", mfc=theme.background, mec=theme.text, ms=11, mew=2, label=t("at_1x"))
    ax.plot(far, y, "D", color=theme.accent, ms=11, label=t("at_max", k=int(data.max_multiple)))
    for yi, v, right_end in zip(y, far, np.maximum(one, far), strict=True):
        ax.annotate(
            f"{v:.2f}",
            (right_end, yi),
            xytext=(14, 0),
            textcoords="offset points",
            va="center",
            color=theme.text,
            fontsize=roles.fontsize("annotation"),
        )
    ax.set_yticks(y, labels=names)
    ax.set_ylim(len(names) - 0.5, -0.9)
    ax.set_xlim(1.0, float(np.maximum(one, far).max()) + 0.7)
    ax.set_xlabel(t("loss_nats"))
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(
        loc="upper right",
        frameon=False,
        fontsize=roles.fontsize("legend"),
        ncols=2,
        bbox_to_anchor=(1.0, 1.12),
    )


def draw_far(fig: FigureBase, data: Far, t: Labels, theme: Theme) -> None:
    """Recall of far facts at the longest length, the schemes in the two-back order (rank
    written before each name)."""
    ax = fig.subplots()
    names = [t("ranked", r=i + 1, name=t(f"scheme_{s}")) for i, s in enumerate(data.schemes)]
    _bars(ax, names, data.recall_max, theme, "{:.0f} %", theme.categorical[1], xmax=130.0)
    _guess_line(ax, float(data.chance), t("guessing"), theme)
    ax.set_xticks([0, 50, 100])
    ax.set_xlabel(t("recall_max", k=int(data.max_multiple)))
    ax.set_ylabel(t("local_order"))


def draw_extend(fig: FigureBase, data: Extend, t: Labels, theme: Theme) -> None:
    """Left: the factor each method needs (calculator); right: RoPE's measured recall at the
    longest length, without scaling and with each measured method."""
    left, right = fig.subplots(1, 2)
    _bars(left, [t(f"method_{m}") for m in data.methods], data.factor, theme, "{:.1f}", log=True)
    left.axvline(float(data.linear_ratio), color=theme.neutral, ls=":", lw=1.4)
    left.set_xticks([1, 100])
    left.set_title(t("factor_needed"), loc="left")
    left.set_xlabel(t("factor_s"))
    _bars(
        right,
        [t(f"method_{m}") for m in data.measured],
        data.recall_max,
        theme,
        "{:.0f} %",
        theme.categorical[1],
        xmax=135.0,
    )
    right.set_xticks([0, 100])
    right.set_title(t("recall_measured", k=int(data.max_multiple)), loc="left")
    right.set_xlabel(t("percent_right"))


def draw_base(fig: FigureBase, data: Base, t: Labels, theme: Theme) -> None:
    """Base against trained context, log-log: filled where Men et al.'s bound holds, crossed where
    it fails; published configs as large diamonds."""
    ax = fig.subplots()
    x, b = np.asarray(data.context), np.asarray(data.base)
    ok, pub = np.asarray(data.holds) == 1, np.asarray(data.published) == 1
    for holds, marker, colour, key in (
        (True, "o", theme.ok, "holds"),
        (False, "x", theme.warn, "fails"),
    ):
        sel = (ok == holds) & ~pub
        ax.plot(
            x[sel], b[sel], marker, color=colour, ms=9, mew=2, ls="none", label=t(key), alpha=0.8
        )
        sel = (ok == holds) & pub
        ax.plot(
            x[sel],
            b[sel],
            "D",
            mfc=colour if holds else theme.background,
            mec=theme.text,
            ms=12,
            mew=1.8,
            ls="none",
            label=t(f"published_{key}"),
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax.xaxis)
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel(t("context"))
    ax.set_ylabel(t("base"))
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=2,
        frameon=False,
        fontsize=roles.fontsize("legend"),
        columnspacing=1.0,
    )


def draw_census(fig: FigureBase, data: Census, t: Labels, theme: Theme) -> None:
    """Counts of text models per category: bars for the default configs, the published configs'
    count in a column at the right."""
    ax = fig.subplots()
    names = [t(f"cat_{c.replace(':', '_')}") for c in data.categories]
    _bars(ax, names, data.defaults, theme, "{:.0f}", xmax=float(np.max(data.defaults)) * 1.45)
    for yi, vi in enumerate(np.asarray(data.published, dtype=np.float64)):
        ax.text(
            1.03,
            yi,
            f"{vi:.0f}",
            transform=ax.get_yaxis_transform(),
            va="center",
            ha="left",
            color=theme.text,
            fontsize=roles.fontsize("annotation"),
        )
    ax.set_xlabel(t("census_heading", n=int(data.n_defaults), p=int(data.n_published)))


DRAW: dict[str, DrawFn] = {
    "c10-within": draw_within,
    "c10-beyond": draw_beyond,
    "c10-far": draw_far,
    "c10-extend": draw_extend,
    "c10-base": draw_base,
    "c10-census": draw_census,
}
