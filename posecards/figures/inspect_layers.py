"""Inspection card figures (a real model's RoPE layer by layer): ``cards/inspect-layers.toml``.

Draw functions only draw the arrays of ``posecards.content.inspect``; all text comes from the
[labels] of ``cards/inspect-layers.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import FigureBase
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon
from matplotlib.ticker import MaxNLocator, NullLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import plain_log_ticks
from posecards.figures.style import Theme, visible_cmap

if TYPE_CHECKING:
    from posecards.content.figdata.inspect_layers import HeadSlots, LayerStrip, Scales, Spectrum

_ATTENTION = (
    "full",
    "sliding",
    "chunked",
    "linear",
    "none",
)  # codes of i-layer-strip's attention row


def _kind_name(t: Labels, key: str, theta: float, rope_type: str = "default", f: float = 1) -> str:
    """'full layers, θ = 1,000,000' (+ ', linear ×8' when the frequencies are scaled)."""
    name = t(f"kind_{key}", theta=theta)
    if rope_type not in ("default", "proportional"):
        name += t("scaled_by_whole" if float(f).is_integer() else "scaled_by", type=rope_type, f=f)
    if rope_type == "proportional":
        name += t("proportional")
    return name


def _legend_above(ax: Axes, handles: list[Any], notes: list[str] | None = None) -> None:
    """Two columns of square keys just above the axes (constrained layout makes room), with
    ``notes`` as the legend's title."""
    ax.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0.0, 1.02),
        ncols=2,
        frameon=False,
        borderaxespad=0.0,
        columnspacing=1.0,
        handlelength=1.2,
        title="\n".join(notes) if notes else None,
        title_fontsize=roles.fontsize("legend"),
        alignment="left",
        fontsize=roles.fontsize("legend"),
    )


def _kind_colours(theme: Theme, n: int) -> list[str]:
    return [theme.accent, theme.warn, theme.ok, *theme.categorical][:n]


def draw_layer_strip(fig: FigureBase, data: LayerStrip, t: Labels, theme: Theme) -> None:
    att = np.asarray(data.attention, dtype=np.float64)  # (n,) index into _ATTENTION
    rope = np.asarray(data.rope, dtype=np.float64)  # (n,) RoPE kind, -1 none
    n = att.size
    kinds = list(data.kinds)
    ax = fig.subplots()
    att_colours = [
        theme.muted,
        theme.categorical[3],
        theme.categorical[1],
        theme.neutral,
        theme.background,  # "none": no self-attention, drawn with cross-hatching below
    ]
    none_code = _ATTENTION.index("none")
    ax.imshow(
        att[None, :],
        cmap=ListedColormap(att_colours),
        vmin=-0.5,
        vmax=len(att_colours) - 0.5,
        aspect="auto",
        interpolation="nearest",
        extent=(-0.5, n - 0.5, 0.5, -0.5),
    )
    kcol = _kind_colours(theme, len(kinds))
    shown = np.where(rope >= 0, rope, np.nan)
    ax.imshow(
        shown[None, :],
        cmap=ListedColormap(kcol),
        vmin=-0.5,
        vmax=len(kinds) - 0.5,
        aspect="auto",
        interpolation="nearest",
        extent=(-0.5, n - 0.5, 1.5, 0.5),
    )
    # layers without self-attention: cross-hatched; layers without RoPE: hatched, no colour
    _hatch_cells(ax, np.flatnonzero(att == none_code), 0, "xx", theme.muted, theme)
    _hatch_cells(ax, np.flatnonzero(rope < 0), 1, "///", theme.neutral, theme)
    if n <= 80:  # cell borders: each layer is one cell
        ax.vlines(np.arange(n + 1) - 0.5, -0.5, 1.5, color=theme.background, linewidth=0.8)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(1.5, -0.5)
    ax.set_yticks([0, 1], [t("row_attention"), t("row_rope")])
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("layer"))
    _legend_above(ax, _strip_handles(data, att_colours, kcol, t, theme))
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _hatch_cells(ax: Axes, cells: Any, row: int, hatch: str, edge: str, theme: Theme) -> None:
    """Hatch the given layers' cells of one row of the strip."""
    for i in cells:
        ax.add_patch(
            Polygon(
                [
                    (i - 0.5, row - 0.5),
                    (i + 0.5, row - 0.5),
                    (i + 0.5, row + 0.5),
                    (i - 0.5, row + 0.5),
                ],
                facecolor=theme.background,
                hatch=hatch,
                edgecolor=edge,
                linewidth=0.0,
            )
        )


def _strip_handles(
    data: LayerStrip, att_colours: list[str], kcol: list[str], t: Labels, theme: Theme
) -> list[Any]:
    """The strip's legend: the attention kinds present, the RoPE kinds, and "no RoPE"."""
    att = np.asarray(data.attention, dtype=np.float64)  # (n,)
    rope = np.asarray(data.rope, dtype=np.float64)  # (n,)
    windows = data.windows
    handles = []
    for code, name in enumerate(_ATTENTION):
        if np.any(att == code):
            label = t(f"att_{name}", w=windows.get(name, 0.0))
            if name == "none":  # cross-hatched like its cells
                handles.append(
                    Patch(
                        facecolor=att_colours[code], label=label, hatch="xx", edgecolor=theme.muted
                    )
                )
            else:
                handles.append(Patch(facecolor=att_colours[code], label=label))
    for k, key in enumerate(data.kinds):
        label = t("rope_theta", name=t(f"short_{key}"), theta=data.thetas[k])
        handles.append(Patch(facecolor=kcol[k], label=label))
    if np.any(rope < 0):
        handles.append(
            Patch(
                facecolor=theme.background, edgecolor=theme.neutral, hatch="///", label=t("no_rope")
            )
        )
    return handles


def _spectrum_legend(
    leg_ax: Any, handles: list[Any], notes: list[str], axis_colours: list[str] | None, t: Labels
) -> None:
    """The spectrum's legend in its strip above: a line per RoPE kind (the notes as its title),
    and the MRoPE axes' dots where there are any."""
    legend = leg_ax.legend(
        handles=handles,
        loc="upper left",
        frameon=False,
        borderaxespad=0.0,
        handlelength=1.6,
        title="\n".join(notes) if notes else None,
        title_fontsize=roles.fontsize("legend"),
        alignment="left",
        fontsize=roles.fontsize("legend"),
    )
    if axis_colours is not None:  # MRoPE: the axis of each pair's dots
        leg_ax.add_artist(legend)
        dots = [
            Line2D([], [], marker="o", linestyle="", color=axis_colours[a], label=t(f"axis_{c}"))
            for a, c in enumerate("thw")
        ]
        leg_ax.legend(
            handles=dots,
            loc="lower left",
            ncols=3,
            frameon=False,
            borderaxespad=0.0,
            handletextpad=0.3,
            columnspacing=0.9,
            fontsize=roles.fontsize("legend"),
        )


def draw_spectrum(fig: FigureBase, data: Spectrum, t: Labels, theme: Theme) -> None:
    """Wavelength of every turning pair per RoPE kind; the pairs that never turn as a shaded
    band (named inside it, where no curve runs); the legend in a strip of its own above."""
    from matplotlib.lines import Line2D

    kinds = list(data.kinds)
    mrope = any(sp.axes is not None for sp in kinds)
    notes = [
        t(
            "note_llama3_step_whole" if float(n.factor).is_integer() else "note_llama3_step",
            at=n.at,
            f=n.factor,
        )
        for n in data.notes
    ]
    n_lines = len(kinds) + (1 if mrope else 0) + 2 * len(notes)
    leg_ax, ax = fig.subplots(2, 1, height_ratios=[0.16 * n_lines + 0.05, 1.0])
    leg_ax.axis("off")
    kcol = _kind_colours(theme, len(kinds))
    axis_colours = [theme.accent, theme.warn, theme.ok]  # t, h, w
    styles: list[Any] = ["-", "--", "-."]
    handles: list[Any] = []
    top = 1.0
    ctx = float(data.context)
    bands: list[tuple[float, float, str]] = []
    for k, sp in enumerate(kinds):
        j = np.asarray(sp.pair, dtype=np.float64)
        w = np.asarray(sp.wavelength, dtype=np.float64)
        top = max(top, float(w.max()))
        name = _kind_name(t, sp.key, sp.theta, sp.rope_type, sp.factor)
        ax.plot(j, w, color=kcol[k], linewidth=2.0, linestyle=styles[k % 3], zorder=2)
        handles.append(
            Line2D([], [], color=kcol[k], linewidth=2.0, linestyle=styles[k % 3], label=name)
        )
        if sp.axes is not None:
            axes = np.asarray(sp.axes, dtype=np.float64)
            for a in range(3):
                sel = axes == a
                ax.plot(j[sel], w[sel], "o", color=axis_colours[a], markersize=4.5, zorder=3)
        lo, hi = float(sp.still_from), float(sp.pairs)
        if hi > lo:  # pairs that never turn: not rotated, or frequency 0 (proportional)
            ax.axvspan(lo - 0.5, hi - 0.5, color=kcol[k], alpha=0.13, linewidth=0, zorder=0)
            bands.append((lo, hi, "never_zero" if sp.zero else "never_turns"))
    ax.axhline(ctx, color=theme.muted, linewidth=1.2, linestyle=(0, (4, 3)), zorder=1)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    top_y = max(top, ctx) * 8.0
    ax.set_ylim(1.0, top_y)
    right = ax.secondary_yaxis("right")  # the context's value beside its line
    right.set_yticks([ctx], [f"{int(ctx):,}"])
    right.yaxis.set_minor_locator(NullLocator())
    right.tick_params(length=0, colors=theme.muted)
    x_max = max(float(sp.pairs) for sp in kinds) - 0.5
    ax.set_xlim(-0.5, x_max)
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    ax.set_xlabel(t("pair_j"))
    ax.set_ylabel(t("wavelength"))
    # the band's name, inside the widest band, away from the context line
    ctx_frac = np.log(ctx) / np.log(top_y)
    for lo, hi, key in sorted(bands, key=lambda b: b[0] - b[1])[:1]:
        ax.text(
            (lo + hi) / 2 - 0.5,
            np.exp(np.log(top_y) * (0.25 if ctx_frac > 0.5 else 0.72)),
            t(key),
            ha="center",
            va="center",
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
            wrap=True,
        )
    _spectrum_legend(leg_ax, handles, notes, axis_colours if mrope else None, t)


def draw_head_slots(fig: FigureBase, data: HeadSlots, t: Labels, theme: Theme) -> None:
    kinds = list(data.kinds)
    rows = len(kinds)
    width = max(int(np.asarray(h.code).size) for h in kinds)
    ax = fig.subplots()
    axis_colours = [theme.accent, theme.warn, theme.ok]
    handles: list[Any] = []
    labels = []
    for r, h in enumerate(kinds):
        code = np.asarray(h.code, dtype=np.float64)  # pair index / axis, -1 still, -2 zero
        cmap: Any
        if h.mrope:
            shown = np.where(code >= 0, code, np.nan)
            cmap = ListedColormap(axis_colours)
            vmax = 2.5
        else:  # colour by pair index: fast pairs dark, slow pairs light (same colour = one pair)
            shown = np.where(code >= 0, code, np.nan)
            cmap = visible_cmap(theme, "sequential")
            vmax = max(float(np.nanmax(shown)) if np.any(code >= 0) else 1.0, 1.0) + 0.5
        ax.imshow(
            shown[None, :],
            cmap=cmap,
            vmin=-0.5,
            vmax=vmax,
            aspect="auto",
            interpolation="nearest",
            extent=(-0.5, code.size - 0.5, r + 0.4, r - 0.4),
        )
        for value, hatch in ((-1.0, "///"), (-2.0, "...")):
            idx = np.flatnonzero(code == value)
            if idx.size == 0:
                continue
            # contiguous runs of the same kind of still slot
            cuts = np.flatnonzero(np.diff(idx) > 1)
            starts = np.concatenate([[idx[0]], idx[cuts + 1]])
            ends = np.concatenate([idx[cuts], [idx[-1]]])
            for a, b in zip(starts, ends, strict=True):
                ax.add_patch(
                    Polygon(
                        [
                            (a - 0.5, r - 0.4),
                            (b + 0.5, r - 0.4),
                            (b + 0.5, r + 0.4),
                            (a - 0.5, r + 0.4),
                        ],
                        facecolor=theme.background,
                        hatch=hatch,
                        edgecolor=theme.neutral,
                        linewidth=0.0,
                    )
                )
        labels.append(t("row_kind", name=t(f"short_{h.key}"), layout=t(f"row_{h.layout}")))
    if any(h.mrope for h in kinds):
        for a, letter in enumerate("thw"):
            handles.append(Patch(facecolor=axis_colours[a], label=t(f"axis_{letter}")))
    if any(not h.mrope for h in kinds):
        seq = visible_cmap(theme, "sequential")
        handles.append(Patch(facecolor=seq(0.0), label=t("slot_fast")))
        handles.append(Patch(facecolor=seq(1.0), label=t("slot_slow")))
    for value, hatch, key in ((-1, "///", "not_rotated"), (-2, "...", "zero_frequency")):
        if any(np.any(np.asarray(h.code) == value) for h in kinds):
            hatched = Patch(facecolor=theme.background, edgecolor=theme.neutral, hatch=hatch)
            hatched.set_label(t(key))
            handles.append(hatched)
    notes = [t("note_mrope_unread", layout=t(f"mrope_{n.layout}")) for n in data.notes]
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_yticks(list(range(rows)), labels)
    ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    ax.set_xlabel(t("slot"))
    _legend_above(ax, handles, notes)  # notes: mrope_interleaved is not read
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def draw_scales(fig: FigureBase, data: Scales, t: Labels, theme: Theme) -> None:
    """The query temperature against position, under a strip that states the softmax scale and
    the factor on cos and sin: separate numbers."""
    lines = [t("softmax_box", s=float(data.softmax))]
    for key, a in zip(data.kinds, data.factors, strict=True):
        lines.append(t("factor_box", a=float(a), name=t(f"short_{key}")))
    for note in data.notes:
        lines.append(t("note_tuning", v=note.value))
    n_lines = sum(line.count("\n") + 1 for line in lines)
    box, ax = fig.subplots(2, 1, height_ratios=[0.19 * n_lines + 0.05, 1.0])
    box.axis("off")
    box.text(
        0.0,
        1.0,
        "\n".join(lines),
        transform=box.transAxes,
        ha="left",
        va="top",
        fontsize=roles.fontsize("annotation"),
        color=theme.text,
    )
    p = np.asarray(data.position, dtype=np.float64)
    tau = np.asarray(data.tau, dtype=np.float64)
    kind = str(data.temperature)
    if kind != "none":
        ax.step(p, tau, where="post", color=theme.warn, linewidth=2.2, label=t(f"tau_{kind}"))
        if kind == "llama4":  # the RoPE layers keep tau = 1
            ax.axhline(
                1.0, color=theme.accent, linewidth=1.8, linestyle="--", label=t("tau_rope_layers")
            )
    else:
        ax.plot(p, tau, color=theme.accent, linewidth=2.2, label=t("tau_none"))
    # max_position_embeddings (named in the caption)
    ax.axvline(float(data.context), color=theme.muted, linewidth=1.2, linestyle=(0, (4, 3)))
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    lo, hi = 1.0, float(tau.max())
    span = max(hi - lo, 0.5)
    ax.set_ylim(lo - 0.1 * span, hi + 1.1 * span)
    ax.set_xlim(1.0, float(p[-1]))
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("temperature"))
    # upper left: the temperature only rises at the right, past floor_len positions
    ax.legend(loc="upper left", frameon=False, handlelength=1.6, fontsize=roles.fontsize("legend"))


DRAW: dict[str, DrawFn] = {
    "i-layer-strip": draw_layer_strip,
    "i-spectrum": draw_spectrum,
    "i-head-slots": draw_head_slots,
    "i-scales": draw_scales,
}
