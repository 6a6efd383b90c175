"""Card 7 figures: six pitfalls, each the mistaken call drawn next to the correct one.

Every panel has the same frame: the plot; a legend whose "✓" entry names the correct rule and the
reference code it follows and whose "✗" entries are the mistakes; below it the threads where the
mistake bit (``owner/repo#number``). Mistakes are drawn in the theme's ``warn`` colour with dashed
lines or crosses, the correct result in ``accent`` with solid lines or circles, so colour is never
the only difference. Draw only; every number comes from posecards.content.card7, all text from the
[labels] of cards/card7.toml.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import FigureBase, SubFigure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import plain_number
from posecards.figures.style import Theme

# the data each figure draws (content/figdata/card7.py), as content/card7.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card7 import (
        Alibi,
        ChannelSpeeds,
        Cited,
        Dynamic,
        Layout,
        PositionIds,
        Precision,
        Yarn,
    )

DASHED = (0, (4, 2))


def _wrong(theme: Theme, **style: Any) -> dict[str, Any]:
    """Line style of a mistake (✗): warn colour, dashed, open squares."""
    return {
        "color": theme.warn,
        "linestyle": DASHED,
        "linewidth": 1.8,
        "marker": "s",
        "markersize": 6,
        "markerfacecolor": "none",
        "mew": 1.5,
        **style,
    }


def _right(theme: Theme, **style: Any) -> dict[str, Any]:
    """Line style of the correct call (✓): accent colour, solid, filled circles."""
    return {"color": theme.accent, "linewidth": 2.2, "marker": "o", "markersize": 6, **style}


WIDE_PANEL = 1.4  # width / height above which the legend goes right of the plot, not below


def _wide(fig: FigureBase) -> bool:
    """A wide panel (4:3 and A4 cards, lecture slides) has its legend at the right of the plot,
    a tall one (16:9 and square cards, figure pages) below it.

    The panel's size is read before the layout is done: the root figure's size, the rectangle
    its constrained layout fills (the card's panel area) and the panel's share of its grid
    (a subfigure's ``bbox_relative`` before the layout)."""
    root = fig.get_figure(root=True)
    assert root is not None
    width, height = (float(v) for v in root.get_size_inches())
    engine = root.get_layout_engine()
    rect = engine.get().get("rect", (0, 0, 1, 1)) if engine is not None else (0, 0, 1, 1)
    width, height = width * rect[2], height * rect[3]
    share = getattr(fig, "bbox_relative", None)  # a SubFigure: its cell, as fractions
    if share is not None:
        width, height = width * float(share.width), height * float(share.height)
    return width > WIDE_PANEL * height


def _axes(
    fig: FigureBase, data: Cited, t: Labels, theme: Theme, rule: str, **kw: Any
) -> tuple[FigureBase, Any]:
    """``(inner, axes)``: a subfigure filling the panel, headed by the correct rule and the
    reference code it follows (label ``rule``) and where the mistake bit (``owner/repo#number``,
    one per line) right under the panel's title, and its axes ``inner.subplots(1, n, **kw)``.

    The header is the inner subfigure's title: constrained layout gives it its height without
    narrowing the plot to its width (an axes title as wide as the panel would)."""
    inner: SubFigure = fig.subfigures(1, 1)  # type: ignore[assignment]
    shown = list(data.threads)[: int(data.threads_on_card)]
    inner.suptitle(
        t(rule) + "\n" + t("seen_in", threads="\n".join(shown)),
        x=0.03,
        ha="left",
        fontsize=roles.fontsize("tick"),
        fontweight="normal",
        color=theme.muted,
        linespacing=1.15,
    )
    return inner, inner.subplots(1, len(kw.get("width_ratios", [1])), **kw)


def _one_line(label: str, lang: str) -> str:
    """A label written in short lines, as one line: English joins with spaces; Chinese joins
    directly, with a space only where a Latin letter or digit meets the break."""
    lines = label.split("\n")
    out = lines[0]
    for nxt in lines[1:]:
        latin = out[-1:].isascii() and out[-1:].isalnum() or nxt[:1].isascii() and nxt[:1].isalnum()
        out += (" " if lang != "zh" or latin else "") + nxt
    return out


def _legend(
    fig: FigureBase,
    inner: FigureBase,
    handles: list[Any],
    lang: str,
    labels: list[str] | None = None,
) -> None:
    """The legend of mistakes (✗) and the correct call (✓): right of the plot (at its foot, clear
    of the header) on a wide panel, below it on a tall one. Labels are written in short lines for
    the narrow column at the right; below the plot each label is one line. A handle may be a
    tuple of artists drawn side by side (its label in ``labels``)."""
    wide = _wide(fig)
    texts = labels or [str(h.get_label()) for h in handles]
    if not wide:
        texts = [_one_line(x, lang) for x in texts]
    inner.legend(
        handles=handles,
        labels=texts,
        handler_map={tuple: HandlerTuple(ndivide=None, pad=0.3)},
        loc="outside right lower" if wide else "outside lower center",
        ncols=1,
        handlelength=2.0,
        handletextpad=0.5,
        borderaxespad=0.2,
    )


def _log2_formatter(v: float, _pos: int) -> str:
    return "1" if v == 1 else (f"1/{1 / v:g}" if v < 1 else f"{v:g}")


# --- 1 pair layout --------------------------------------------------------------------------------


def draw_layout(fig: FigureBase, data: Layout, t: Labels, theme: Theme) -> None:
    """Score the port computes against Meta's score, for every (query, key) pair: the permuted
    weights sit on the diagonal, the unpermuted ones scatter."""
    inner, ax = _axes(fig, data, t, theme, "rule_layout")
    ref = np.asarray(data.reference)
    lim = float(np.max(np.abs(np.concatenate([ref, data.not_permuted])))) * 1.05
    ax.plot([-lim, lim], [-lim, lim], color=theme.neutral, linewidth=1.0, linestyle=":")
    (wrong,) = ax.plot(
        ref,
        np.asarray(data.not_permuted),
        "x",
        color=theme.warn,
        markersize=5,
        mew=1.4,
        label=t("leg_not_permuted", e=float(data.err_wrong)),
    )
    (right,) = ax.plot(
        ref,
        np.asarray(data.permuted),
        "o",
        color=theme.accent,
        markersize=5,
        markerfacecolor="none",
        mew=1.3,
        label=t("leg_permuted"),
    )
    ax.set_aspect("equal", adjustable="datalim")  # the dotted diagonal spans -lim..lim
    ax.xaxis.set_major_locator(MaxNLocator(3, symmetric=True))
    ax.yaxis.set_major_locator(MaxNLocator(3, symmetric=True))
    ax.set_xlabel(t("score_meta"))
    ax.set_ylabel(t("score_port"))
    _legend(fig, inner, [wrong, right], t.lang)


def draw_channel_speeds(fig: FigureBase, data: ChannelSpeeds, t: Labels, theme: Theme) -> None:
    """The angle per position each channel turns at: trained (Meta's pairs (2k, 2k+1)) against
    rotate_half's pairs (k, k + d/2) on the same, unpermuted channels."""
    ax = fig.subplots()
    c = np.asarray(data.channel)
    ax.step(c, data.trained, where="mid", color=theme.accent, linewidth=2.4, label=t("leg_trained"))
    ax.step(
        c,
        data.not_permuted,
        where="mid",
        color=theme.warn,
        linewidth=1.8,
        linestyle=DASHED,
        label=t("leg_not_permuted_speed"),
    )
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: plain_number(v)))
    ax.set_xlim(-0.5, float(c[-1]) + 0.5)
    ax.set_xticks([0, len(c) // 2, len(c) - 1])
    ax.set_xlabel(t("channel"))
    ax.set_ylabel(t("speed"))
    ax.set_title(t("speeds_title", n=int(data.right_channels), d=int(data.head_dim)), loc="left")
    fig.legend(loc="outside lower center", ncols=1)


# --- 2 precision ----------------------------------------------------------------------------------


def draw_precision(fig: FigureBase, data: Precision, t: Labels, theme: Theme) -> None:
    """Worst angle error of the fastest pair among positions 0..p, positions stored in bfloat16
    and float16, and float32 (exact here); a dotted line at pi (half a turn)."""
    inner, ax = _axes(fig, data, t, theme, "rule_precision")
    styles = {
        "bfloat16": {"color": theme.warn, "linewidth": 2.6},
        "float16": {"color": theme.warn, "linewidth": 2.0, "linestyle": DASHED},
        "float32": {"color": theme.accent, "linewidth": 3.0, "linestyle": "-."},
    }
    handles = []
    for dt in data.dtypes:
        (line,) = ax.step(
            data.steps(dt).x,
            data.steps(dt).y,
            where="post",
            label=t(f"leg_{dt}", n=int(data.steps(dt).first) - 1),
            clip_on=False,
            **styles[dt],
        )
        handles.append(line)
    half = float(data.half_turn)
    ax.axhline(half, color=theme.neutral, linewidth=1.2, linestyle=":")
    top = float(max(np.max(data.steps(dt).y) for dt in data.dtypes))
    ax.set_ylim(0, top * 1.1)
    ax.set_xlim(0, float(data.positions))
    ax.xaxis.set_major_locator(FixedLocator([0, 4096, 8192]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    ticks = [0.0, half, top]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _p: "π" if abs(v - half) < 1e-9 else f"{v:g}")
    )
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("angle_error"))
    _legend(fig, inner, handles, t.lang)


# --- 3 ALiBi --------------------------------------------------------------------------------------


def draw_alibi(fig: FigureBase, data: Alibi, t: Labels, theme: Theme) -> None:
    """Slope per head for 12 and 40 heads: Press et al.'s rule (the trained slopes, circles)
    against 2^(-8h/H) (dashed line with crosses), on one log scale."""
    heads = [int(n) for n in data.heads]
    inner, axes = _axes(fig, data, t, theme, "rule_alibi", sharey=True, width_ratios=[1.0, 2.0])
    lo = min(float(np.min(data.slopes(n).naive)) for n in heads)
    handles: list[Any] = []
    for ax, n in zip(axes, heads, strict=True):
        h = np.arange(1, n + 1)
        (wrong,) = ax.plot(
            h,
            data.slopes(n).naive,
            color=theme.warn,
            linestyle=DASHED,
            linewidth=1.8,
            marker="x",
            markersize=4,
            label=t("leg_naive"),
        )
        (right,) = ax.plot(
            h,
            data.slopes(n).trained,
            "o",
            color=theme.accent,
            markersize=4.5,
            markerfacecolor="none",
            mew=1.3,
            label=t("leg_press"),
        )
        handles = [wrong, right]
        ax.set_yscale("log", base=2)
        ax.set_xlim(0, n + 1)
        ax.set_xticks([1, n])
        ax.set_xlabel(t("heads_n", n=n))
    axes[0].set_ylim(lo / 1.8, 1.6)
    axes[0].yaxis.set_major_locator(FixedLocator([1.0, 1 / 16, 1 / 256]))
    axes[0].yaxis.set_minor_locator(NullLocator())
    axes[0].yaxis.set_major_formatter(FuncFormatter(_log2_formatter))
    axes[0].set_ylabel(t("slope"))
    _legend(fig, inner, handles, t.lang)


# --- 4 YaRN magnitude -----------------------------------------------------------------------------


def draw_yarn(fig: FigureBase, data: Yarn, t: Labels, theme: Theme) -> None:
    """The factor the logits of the rotated (RoPE) dims are multiplied by (bars) and that of the
    other dims (diamonds), in three placements of YaRN's magnitude, one per row."""
    inner, ax = _axes(fig, data, t, theme, "rule_yarn")
    keys = list(data.placements)
    y = np.arange(len(keys), dtype=np.float64)[::-1]  # the reference on top
    rope = np.asarray(data.rope_part)
    other = np.asarray(data.content_part)
    colors = [theme.accent if k == "reference" else theme.warn for k in keys]
    bars = ax.barh(y, rope, 0.6, color=colors, edgecolor=theme.text, linewidth=0.8)
    for bar, k in zip(bars, keys, strict=True):
        bar.set_hatch("" if k == "reference" else "//")
    (dots,) = ax.plot(
        other,
        y,
        "D",
        color=theme.text,
        markersize=7,
        markerfacecolor=theme.background,
        mew=1.6,
        linestyle="none",
        label=t("leg_other_part"),
    )
    for yy, v in zip(y, rope, strict=True):
        ax.annotate(
            t("times", v=float(v)),
            (float(v), float(yy)),
            xytext=(9, 0),
            textcoords="offset points",
            ha="left",
            va="center",
        )
    ax.axvline(1.0, color=theme.neutral, linewidth=1.0, linestyle=":")
    ax.set_xlim(0, float(rope.max()) * 1.6)
    ax.set_ylim(-0.6, len(keys) - 0.4)
    ax.set_yticks(y)
    ax.set_yticklabels([t(f"place_{k}") for k in keys])
    ax.set_xlabel(t("logit_factor"))
    # the bars' own two looks, side by side: the reference's and a mistake's (hatched)
    swatches = tuple(
        Patch(facecolor=c, edgecolor=theme.text, linewidth=0.8, hatch=h)
        for c, h in ((theme.accent, ""), (theme.warn, "//"))
    )
    _legend(fig, inner, [swatches, dots], t.lang, [t("leg_rope_part"), t("leg_other_part")])


# --- 5 dynamic NTK --------------------------------------------------------------------------------


def draw_dynamic(fig: FigureBase, data: Dynamic, t: Labels, theme: Theme) -> None:
    """The base each call is rotated with: transformers 5.23's (a grown base kept for every call
    of at least max_position_embeddings tokens), and that of each sequence's own length."""
    inner, ax = _axes(fig, data, t, theme, "rule_dynamic")
    calls = np.asarray(data.calls)
    x = np.arange(1, calls.size + 1, dtype=np.float64)
    wrong_style = _wrong(theme, linewidth=2.2, markersize=10, mew=1.8)
    (wrong,) = ax.plot(
        x,
        data.base_kept,
        label=t("leg_kept", m=int(data.max_position_embeddings)),
        **wrong_style,
    )
    (right,) = ax.plot(x, data.base_per_call, label=t("leg_per_call"), **_right(theme))
    ax.set_yscale("log")
    lo = float(np.min(data.base_per_call))
    hi = float(np.max(data.base_kept))
    ax.set_ylim(lo / 2.5, hi * 2.5)
    ax.yaxis.set_major_locator(FixedLocator([float(v) for v in data.base_ticks]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    ax.set_xlim(0.8, calls.size + 0.2)
    ax.set_xticks(x)
    ax.set_xticklabels([t("call_tokens", k=float(n) / 1000) for n in calls])
    ax.set_xlabel(t("calls"))
    ax.set_ylabel(t("base_used"))
    _legend(fig, inner, [wrong, right], t.lang)


# --- 6 position ids -------------------------------------------------------------------------------


def draw_position_ids(fig: FigureBase, data: PositionIds, t: Labels, theme: Theme) -> None:
    """Score of the next token's query against every key of the prompt, for three ways of
    numbering the tokens: from the mask, counted from the pads (a shift), with a gap."""
    inner, ax = _axes(fig, data, t, theme, "rule_position_ids")
    key = np.asarray(data.key)
    ax.axhline(0.0, color=theme.neutral, linewidth=0.8, linestyle=":")
    gap_label = t("leg_gap", a=int(data.ids_gap[-2]), b=int(data.ids_gap[-1]))
    (gap,) = ax.plot(key, data.score_gap, label=gap_label, **_wrong(theme))
    mask_label = t("leg_mask", a=int(data.ids_mask[-2]), b=int(data.ids_mask[-1]))
    (mask,) = ax.plot(key, data.score_mask, label=mask_label, **_right(theme))
    (shift,) = ax.plot(
        key,
        data.score_shift,
        "x",
        color=theme.text,
        markersize=8,
        mew=1.6,
        label=t(
            "leg_shift",
            s=int(data.ids_shift[0]),
            a=int(data.ids_shift[-2]),
            b=int(data.ids_shift[-1]),
        ),
    )
    ax.set_xlim(-0.5, float(key[-1]) + 0.5)
    ax.set_xticks([0, int(key[-1])])
    lim = float(np.max(np.abs(np.concatenate([data.score_gap, data.score_mask])))) * 1.15
    ax.set_ylim(-lim, lim)
    ax.set_xlabel(t("key_index"))
    ax.set_ylabel(t("score_next"))
    _legend(fig, inner, [gap, mask, shift], t.lang)


DRAW: dict[str, DrawFn] = {
    "c7-layout": draw_layout,
    "c7-precision": draw_precision,
    "c7-alibi": draw_alibi,
    "c7-yarn": draw_yarn,
    "c7-dynamic": draw_dynamic,
    "c7-position-ids": draw_position_ids,
    "c7-channel-speeds": draw_channel_speeds,
}
