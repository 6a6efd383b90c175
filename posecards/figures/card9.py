"""Card 9 figures: position in images, across scales and in time.

Draw only; every number comes from posecards.content.card9, all text from the [labels] of
cards/card9.toml. Two things told apart are told apart by line style or marker as well as by
colour (accent / warn / the categorical colours).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import FigureBase
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import heatmap, plain_log_ticks
from posecards.figures.style import Theme

# the data each figure draws (content/figdata/card9.py), as content/card9.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card9 import (
        Channel,
        Pyramid,
        Rope2d,
        SourceCoords,
        Swin,
        VideoTime,
        VitResize,
    )

DASHED = (0, (4, 2))


def draw_vit_resize(fig: FigureBase, data: VitResize, t: Labels, theme: Theme) -> None:
    """Per frequency of the table (by its wavelength): the rms error bicubic resizing leaves,
    and how far the other align_corners convention moves the resized table."""
    ax = fig.subplots()
    wl = np.asarray(data.wavelength)
    ax.plot(wl, data.blur, color=theme.accent, linewidth=2.2, label=t("leg_blur"))
    ax.plot(
        wl, data.corners, color=theme.warn, linewidth=1.8, linestyle=DASHED, label=t("leg_corners")
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax.xaxis)
    plain_log_ticks(ax.yaxis)  # plain numbers: superscripts fall under the size floor
    ax.yaxis.set_major_locator(FixedLocator([1e-5, 1e-3, 1e-1]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(t("wavelength_patches"))
    ax.set_ylabel(t("rms_diff"))
    fig.legend(loc="outside lower center", ncols=1)


def draw_align_corners(fig: FigureBase, data: SourceCoords, t: Labels, theme: Theme) -> None:
    """Where each new patch reads the old table under the two conventions."""
    ax = fig.subplots()
    ax.plot(data.patch, data.off, "o-", color=theme.accent, linewidth=2.0, label=t("leg_off"))
    ax.plot(
        data.patch,
        data.on,
        "s",
        color=theme.warn,
        linestyle=DASHED,
        markerfacecolor="none",
        label=t("leg_on"),
    )
    ax.axhspan(-0.5, data.n_in - 0.5, color=theme.box, zorder=0)
    ax.set_xlabel(t("new_patch"))
    ax.set_ylabel(t("old_coordinate"))
    ax.legend(loc="upper left")


def draw_swin(fig: FigureBase, data: Swin, t: Labels, theme: Theme) -> None:
    """Left: the bias-table row of every (query, key) pair of a 7 x 7 window. Right: Swin v2's
    linear and log-spaced coordinates of the offsets of two windows."""
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.25])
    n = data.window * data.window
    im = heatmap(left, data.index, theme, extent=(-0.5, n - 0.5, n - 0.5, -0.5), colorbar=False)
    # the colour's value: the bias-table row; the middle one is offset (0, 0), the diagonal
    bar = fig.colorbar(im, ax=left, location="top", fraction=0.08, pad=0.04)
    bar.set_ticks([0, (data.entries - 1) // 2, data.entries - 1])
    bar.ax.tick_params(labelsize=roles.fontsize("tick"))
    bar.set_label(t("swin_rows", n=data.entries), fontsize=roles.fontsize("subplot_title"))
    left.set_xticks([0, n - 1])
    left.set_yticks([0, n - 1])
    left.set_xlabel(t("key_patch"))
    left.set_ylabel(t("query_patch"))
    right.plot(
        data.offsets_large,
        data.linear_large,
        color=theme.warn,
        linestyle=DASHED,
        linewidth=1.8,
        label=t("leg_linear"),
    )
    right.plot(
        data.offsets_large, data.log_large, color=theme.accent, linewidth=2.2, label=t("leg_log")
    )
    top = float(np.max(data.log_small))
    right.axhspan(-top, top, color=theme.box, zorder=0)
    right.set_xlabel(t("offset_patches"))
    right.set_ylabel(t("mlp_input"))
    right.set_title(t("swinv2_title", a=data.window_small, b=data.window_large))
    fig.legend(loc="outside lower center", ncols=2)


_AXIS_MARKER = ("o", "^")  # h, w


def draw_rope_2d(fig: FigureBase, data: Rope2d, t: Labels, theme: Theme) -> None:
    """One plot per convention: the wavelength (patches per turn) of each pair, marked by the axis
    it follows; pairs in the order of their first slot in the head."""
    grid = fig.subplots(2, 2, sharex=True, sharey=True)
    axes = list(grid.flat)
    colours = (theme.accent, theme.warn)
    for ax, conv in zip(axes, data.conventions, strict=True):
        axis = np.asarray(getattr(data, f"axis_{conv}"))
        wl = np.asarray(getattr(data, f"wavelength_{conv}"))
        slot = np.asarray(getattr(data, f"first_{conv}"))
        for a in (0, 1):
            sel = axis == a
            ax.plot(
                slot[sel],
                wl[sel],
                _AXIS_MARKER[a],
                color=colours[a],
                markersize=5,
                markerfacecolor=colours[a] if a == 0 else "none",
                label=t(f"axis_{'hw'[a]}"),
            )
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)
        ax.yaxis.set_major_locator(FixedLocator([10.0, 10000.0]))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_ylim(3.0, 2e5)
        ax.set_title(t(f"conv_{conv}"))
    fig.supylabel(t("patches_per_turn"), fontsize=roles.fontsize("axis_label"))
    for ax in grid[1]:
        ax.set_xlabel(t("slot_of_pair"))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)


def draw_fpn(fig: FigureBase, data: Pyramid, t: Labels, theme: Theme) -> None:
    """Left: the integer cell of one pixel on each level. Right: its normalised coordinate at the
    cell's centre (Deformable DETR) and end (DETR), against the pixel's own."""
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.5])
    x = np.arange(data.strides.size)
    labels = [f"{int(s)}" for s in data.strides]
    left.plot(x, data.index, "o-", color=theme.text, linewidth=1.8)
    left.set_xticks(x, labels=labels)
    left.set_xlabel(t("stride"))
    left.set_ylabel(t("cell_index"))
    right.axhline(data.pixel / data.image, color=theme.neutral, linestyle=":", linewidth=1.2)
    right.plot(x, data.centre, "o-", color=theme.accent, linewidth=2.2, label=t("leg_centre"))
    right.plot(
        x,
        data.end,
        "s",
        color=theme.warn,
        linestyle=DASHED,
        markerfacecolor="none",
        linewidth=1.8,
        label=t("leg_end"),
    )
    right.set_xticks(x, labels=labels)
    right.set_xlabel(t("stride"))
    right.set_ylabel(t("normalised"))
    fig.legend(loc="outside lower center", ncols=1)


def draw_video(fig: FigureBase, data: VideoTime, t: Labels, theme: Theme) -> None:
    """Left: time id of each temporal grid step against its time in seconds, at three frame
    rates (one marker each, in the legend's order): Qwen2.5-VL's ids lie on one line, Qwen2-VL's
    fan out. Right: per model, the wavelength of every pair of its head, those time turns marked."""
    ax, pairs = fig.subplots(1, 2, width_ratios=[1.1, 1])
    markers = ("o", "s", "^")
    clock: list[Line2D] = []
    count: list[Line2D] = []
    for k, m in enumerate(markers, start=1):
        sec = np.asarray(getattr(data, f"seconds_{k}"))
        (q25,) = ax.plot(sec, getattr(data, f"ids_qwen25_{k}"), m, color=theme.accent, markersize=6)
        (q2,) = ax.plot(
            sec,
            getattr(data, f"ids_qwen2_{k}"),
            m,
            color=theme.warn,
            markersize=6,
            markerfacecolor="none",
            linestyle=DASHED,
        )
        clock.append(q25)
        count.append(q2)
    ax.set_xlabel(t("seconds"))
    ax.set_ylabel(t("time_id"))
    # right: one row per model, top down; every pair of the head on its wavelength
    n = len(data.models)
    for row, key in enumerate(data.models):
        y = n - 1 - row
        wl = np.asarray(getattr(data, f"wavelength_{key}"))
        on_t = np.asarray(getattr(data, f"axes_{key}")) == 0
        (by_t,) = pairs.plot(
            wl[on_t],
            np.full(int(np.sum(on_t)), float(y)),
            "D",
            color=theme.accent,
            markersize=4.5,
        )
        (by_hw,) = pairs.plot(
            wl[~on_t],
            np.full(int(np.sum(~on_t)), float(y)),
            "|",
            color=theme.neutral,
            markersize=9,
        )
    pairs.set_xscale("log")
    plain_log_ticks(pairs.xaxis)
    pairs.xaxis.set_major_locator(FixedLocator([10.0, 1e6]))
    pairs.xaxis.set_minor_locator(NullLocator())
    pairs.set_ylim(-0.5, n - 0.5)
    pairs.set_yticks(np.arange(n)[::-1], labels=[t(f"model_{key}") for key in data.models])
    pairs.tick_params(axis="y", length=0)
    pairs.spines["left"].set_visible(False)
    pairs.set_xlabel(t("wavelength_ids"))
    # one entry per model for the left plot (its three markers, in the order of the frame
    # rates), one for the pairs of the right (turned by t, by h or w)
    fps = [float(f) for f in data.fps]
    entries: list[Any] = [tuple(clock), tuple(count), (by_t, by_hw)]  # HandlerTuple draws each
    fig.legend(
        entries,
        [t("leg_qwen25", a=fps[0], b=fps[1], c=fps[2]), t("leg_qwen2"), t("leg_pairs")],
        handler_map={tuple: HandlerTuple(ndivide=None, pad=0.3)},
        loc="outside lower center",
        ncols=1,
    )


def draw_channel(fig: FigureBase, data: Channel, t: Labels, theme: Theme) -> None:
    """Left: each gate before a pixel shuffle (moved along with its pixel) against after it; SE
    on the diagonal, CBAM off it. Right: a constant image after zero-padded convolutions."""
    left, right = fig.subplots(1, 2, width_ratios=[1.2, 1])
    left.plot([0, 1], [0, 1], color=theme.neutral, linestyle=":", linewidth=1.0)
    left.plot(
        data.cbam_before,
        data.cbam_after,
        "x",
        color=theme.warn,
        markersize=5,
        label=t("leg_cbam"),
    )
    left.plot(
        data.se_before,
        data.se_after,
        "o",
        color=theme.accent,
        markersize=6,
        markerfacecolor="none",
        label=t("leg_se"),
    )
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    left.set_xticks([0, 0.5, 1])
    left.set_yticks([0, 0.5, 1])
    left.set_xlabel(t("gate_before"))
    left.set_ylabel(t("gate_after"))
    fig.legend(loc="outside lower center", ncols=1)
    heatmap(right, data.band, theme, vmin=0.0, vmax=1.0)
    right.set_aspect("equal")
    right.set_xticks([])
    right.set_yticks([])
    right.set_xlabel(t("band_title", n=data.layers))


DRAW: dict[str, DrawFn] = {
    "c9-vit-resize": draw_vit_resize,
    "c9-swin": draw_swin,
    "c9-rope-2d": draw_rope_2d,
    "c9-fpn": draw_fpn,
    "c9-video": draw_video,
    "c9-channel": draw_channel,
    "c9-align-corners": draw_align_corners,
}
