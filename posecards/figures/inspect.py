"""Inspection card figures: a real model's position table, RoPE settings or ALiBi slopes.

Draw functions only draw the arrays of ``posecards.content.inspect``; all text comes from the
[labels] of ``cards/inspect-<kind>.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.patches import Polygon
from matplotlib.ticker import FuncFormatter, MaxNLocator

from posecards.figures import DrawFn, Labels, roles
from posecards.figures._common import causal_bias_maps, heatmap, plain_log_ticks
from posecards.figures.style import Theme, visible_cmap


def _similarity(ax: Axes, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    pos = np.asarray(data["positions"], dtype=np.float64)  # (m,)
    step = float(pos[1] - pos[0]) if pos.size > 1 else 1.0
    lo, hi = float(pos[0]) - step / 2, float(pos[-1]) + step / 2
    heatmap(
        ax,
        data["similarity"],
        theme,
        signed=True,
        vmax=1.0,
        extent=(lo, hi, hi, lo),
        cbar_label=t("cosine"),
    )
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("position"))
    ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(5, integer=True))


def draw_similarity(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    _similarity(fig.subplots(), data, t, theme)


def draw_sinusoidal(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    _similarity(ax, data, t, theme)
    ax.set_title(t("sin_params", d=int(data["d_model"]), b=float(data["base"])))


def draw_norms(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    pos = np.asarray(data["positions"])
    norm = np.asarray(data["norm"])
    ax.plot(pos, norm, color=theme.accent, linewidth=1.6)
    zero = norm == 0
    if np.any(zero):
        ax.plot(pos[zero], norm[zero], "x", color=theme.warn, markersize=8, mew=2)
    ax.set_ylim(0, float(norm.max()) * 1.1 if norm.max() > 0 else 1.0)
    ax.set_xlim(float(pos[0]), float(pos[-1]))
    ax.set_xlabel(t("position"))
    ax.set_ylabel(t("norm"))


def draw_offset(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data["offset"])
    ax.axhline(0.0, color=theme.neutral, linewidth=0.8)
    ax.axhline(
        float(data["level"]), color=theme.muted, linewidth=1.0, linestyle=(0, (4, 3)), zorder=0
    )
    ax.plot(
        k,
        np.asarray(data["sinusoidal"]),
        color=theme.muted,
        linewidth=1.6,
        linestyle=(0, (5, 2)),
        label=t("sin", d=int(data["d_model"])),
    )
    ax.plot(k, np.asarray(data["model"]), color=theme.accent, linewidth=2.2, label=t("model"))
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlim(0, float(k[-1]))
    ax.set_xlabel(t("offset_k"))
    ax.set_ylabel(t("mean_cos"))
    ax.legend(loc="lower left", fontsize=roles.fontsize("legend"))


def _context_line(ax: Axes, y: float, text: str, color: str) -> None:
    ax.axhline(y, color=color, linewidth=1.2, linestyle=(0, (4, 3)))
    ax.text(
        0.01,
        y,
        text,
        transform=ax.get_yaxis_transform(),
        ha="left",
        va="bottom",
        color=color,
        fontsize=roles.fontsize("annotation"),
    )


def draw_wavelengths(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    from matplotlib.ticker import NullLocator

    ax = fig.subplots()
    k = np.asarray(data["pair"])
    before = "orig_short" if data["baseline"] == "short" else "orig"
    ax.plot(k, np.asarray(data["original"]), color=theme.muted, linestyle="--", label=t(before))
    ax.plot(k, np.asarray(data["scaled"]), color=theme.accent, linewidth=2.2, label=t("scaled"))
    # the context lines are named in the legend and valued on the right axis: inside the plot
    # a label would cross the wavelength curves
    scaled = data["scaled_context"] != data["original_context"]
    lines = [(float(data["original_context"]), "orig_ctx_line" if scaled else "context_line")]
    colours = [theme.ok, theme.warn]
    if scaled:
        lines.append((float(data["scaled_context"]), "extended_line"))
    for (y, key), colour in zip(lines, colours, strict=False):
        ax.axhline(y, color=colour, linewidth=1.4, linestyle=(0, (4, 3)), label=t(key))
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    right = ax.secondary_yaxis("right")
    right.set_yticks([y for y, _ in lines], [f"{int(y):,}" for y, _ in lines])
    right.yaxis.set_minor_locator(NullLocator())
    right.tick_params(length=0, colors=theme.muted)
    ax.set_xlim(0, max(float(k[-1]), 1.0))
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("wavelength"))
    ax.legend(  # above the axes: inside, the curves cross both context lines
        loc="lower left",
        bbox_to_anchor=(0.0, 1.02),
        ncols=2,
        borderaxespad=0.0,
        frameon=False,
        columnspacing=1.2,
        fontsize=roles.fontsize("legend"),
    )


def draw_ratios(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data["pair"])
    r = np.asarray(data["ratio"])
    ax.axhline(1.0, color=theme.neutral, linewidth=0.8)
    ax.plot(k, r, "o-", color=theme.accent, markersize=3.5, linewidth=1.6)
    ax.set_yscale("log", base=2)
    lo, hi = float(r.min()), float(r.max())
    ax.set_ylim(min(lo, 1.0) / 1.6, max(hi, 1.0) * 1.6)
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _p: f"{v:g}" if v >= 1 else f"1/{1 / v:g}")
    )
    ax.text(
        0.98,
        0.96,
        t("attention", a=float(data["attention_factor"])),
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize=roles.fontsize("annotation"),
        color=theme.text,
    )
    ax.set_xlim(0, max(float(k[-1]), 1.0))
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("ratio"))


def draw_turns(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    k = np.asarray(data["pair"])
    ax.axhline(1.0, color=theme.warn, linewidth=1.2, linestyle=(0, (4, 3)))
    ax.text(
        0.01,
        1.0,
        t("one_turn"),
        transform=ax.get_yaxis_transform(),
        ha="left",
        va="bottom",
        color=theme.warn,
        fontsize=roles.fontsize("annotation"),
    )
    ax.plot(
        k,
        np.asarray(data["original"]),
        color=theme.ok,
        linewidth=2.0,
        label=t("in_orig_short" if data["baseline"] == "short" else "in_orig"),
    )
    ax.plot(
        k,
        np.asarray(data["scaled"]),
        color=theme.accent,
        linestyle="--",
        linewidth=2.0,
        label=t("in_extended"),
    )
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlim(0, max(float(k[-1]), 1.0))
    ax.set_xlabel(t("pair_k"))
    ax.set_ylabel(t("turns"))
    ax.legend(loc="upper right", fontsize=roles.fontsize("legend"))


def draw_layout(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    from matplotlib.colors import ListedColormap

    this = np.asarray(data["this"], dtype=np.float64)  # (head_dim,) pair index or -1
    other = np.asarray(data["other"], dtype=np.float64)
    n = this.size
    pairs = int(max(this.max(), 0)) + 1
    rows = np.vstack([this, other])  # (2, head_dim)
    colours = theme.categorical
    # colour = pair index modulo the palette: neighbouring pairs differ, and the two slots of
    # a pair share a colour (adjacent in "interleaved", half a head apart in "half")
    shown = np.where(rows >= 0, np.mod(rows, len(colours)), np.nan)
    ax = fig.subplots()
    ax.imshow(
        shown,
        cmap=ListedColormap(list(colours)),
        vmin=-0.5,
        vmax=len(colours) - 0.5,
        aspect="auto",
        interpolation="nearest",
    )
    if np.any(rows < 0):  # the slots RoPE leaves alone (partial rotary)
        first = int(np.argmax(this < 0))
        ax.add_patch(
            Polygon(
                [(first - 0.5, -0.5), (n - 0.5, -0.5), (n - 0.5, 1.5), (first - 0.5, 1.5)],
                facecolor=theme.background,
                hatch="///",
                edgecolor=theme.neutral,
                linewidth=0.0,
            )
        )
        ax.text(
            (first + n) / 2 - 0.5,
            0.5,
            t("not_rotated"),
            ha="center",
            va="center",
            fontsize=roles.fontsize("annotation"),
            color=theme.text,
        )
    # arcs join the two slots of pair 0 and of the last pair where they lie apart
    arcs_below = False
    for r, row in enumerate(rows):
        arcs = []
        for p, colour in ((0, theme.text), (pairs - 1, theme.muted)):
            a, b = (float(x) for x in np.flatnonzero(row == p)[:2])
            if b - a >= n / 8:
                arcs.append((p, colour, a, b))
        # partial rotary: the two arcs' labels would meet, so they go above the axes instead
        apart = len(arcs) < 2 or abs(arcs[0][2] + arcs[0][3] - arcs[1][2] - arcs[1][3]) >= 0.8 * n
        for k, (p, colour, a, b) in enumerate(arcs):
            y, sign = (r - 0.5, -1) if r == 0 else (r + 0.5, 1)
            arcs_below = arcs_below or r == 1
            xs = np.linspace(a, b, 60)
            ys = y + sign * 0.8 * np.sin(np.pi * (xs - a) / (b - a))
            ax.plot(xs, ys, color=colour, linewidth=1.6, clip_on=False)
            label = t("pair_of", k=p, a=int(a), b=int(b))
            if not apart:
                ax.set_title(
                    label,
                    loc="left" if k == 0 else "right",
                    color=colour,
                    fontsize=roles.fontsize("annotation"),
                )
                continue
            ax.text(
                (a + b) / 2,
                y + sign * 0.85,
                label,
                ha="center",
                va="bottom" if r == 0 else "top",
                fontsize=roles.fontsize("annotation"),
                color=colour,
            )
    layout = str(data["layout"])
    other_name = "interleaved" if layout == "half" else "half"
    ax.set_yticks(
        [0, 1],
        [t("row_this", name=t(f"row_{layout}")), t("row_other", name=t(f"row_{other_name}"))],
    )
    ax.set_ylim(2.6 if arcs_below else 1.6, -1.7)
    ax.set_xlabel(t("slot"))
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def _pow2(v: float, _pos: int) -> str:
    return f"{v:g}" if v >= 1 else f"1/{1 / v:g}"


def draw_slopes(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    h = np.asarray(data["head"])
    m = np.asarray(data["slope"])
    ax.plot(h, m, "o", color=theme.accent, markersize=6)
    ax.vlines(h, float(m.min()) / 2, m, color=theme.accent, linewidth=1.0, alpha=0.6)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(FuncFormatter(_pow2))
    ax.set_ylim(float(m.min()) / 2, float(m.max()) * 2)
    ax.set_xlim(0.3, h.size + 0.7)
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("head"))
    ax.set_ylabel(t("slope"))


def draw_bias(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    bias = np.asarray(data["bias"], dtype=np.float64)  # (s, L, L), -inf above the diagonal
    n = bias.shape[-1]
    axes = fig.subplots(1, bias.shape[0], sharey=True, squeeze=False)[0]
    im = causal_bias_maps(axes, bias, theme)
    for k, ax in enumerate(axes):
        ax.set_title(t("head_n", h=int(data["heads"][k])), fontsize=roles.fontsize("subplot_title"))
        ax.set_xticks([0, n - 1])
        ax.set_yticks([0, n - 1])
        ax.set_xlabel(t("key_j"))
    axes[0].set_ylabel(t("query_i"))
    fig.colorbar(im, ax=list(axes), fraction=0.05, pad=0.02, location="bottom").set_label(t("bias"))


def draw_weights(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    d = np.asarray(data["distance"])
    w = np.asarray(data["weights"])  # (s, L)
    styles = ["-", "--", "-."]  # heads differ by more than colour
    for k in range(w.shape[0]):
        ax.plot(
            d,
            w[k],
            label=t("head_n", h=int(data["heads"][k])),
            linewidth=2.2,
            linestyle=styles[k % len(styles)],
        )
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_ylim(max(float(w.min()) / 2, 1e-4), 2.0)  # plain tick labels down to 0.0001
    ax.set_xlim(0, float(d[-1]))
    ax.set_xlabel(t("distance_back"))
    ax.set_ylabel(t("weight"))
    ax.legend(loc="upper right", fontsize=roles.fontsize("legend"))


def draw_reach(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    h = np.asarray(data["head"])
    d = np.asarray(data["half_distance"])
    ax.plot(h, d, "o", color=theme.accent, markersize=6)  # no line: heads are not ordered
    ctx = float(data["context"])
    if ctx > 0:
        _context_line(ax, ctx, t("context", L=ctx), theme.warn)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlim(0.3, h.size + 0.7)
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("head"))
    ax.set_ylabel(t("half_distance"))


# ---------------------------------------------------------------- the layer-by-layer card

_ATTENTION = ("full", "sliding", "chunked", "linear")  # codes of i-layer-strip's attention row


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


def draw_layer_strip(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    att = np.asarray(data["attention"], dtype=np.float64)  # (n,) index into _ATTENTION
    rope = np.asarray(data["rope"], dtype=np.float64)  # (n,) RoPE kind, -1 none
    n = att.size
    kinds = list(data["kinds"])
    ax = fig.subplots()
    att_colours = [theme.muted, theme.categorical[3], theme.categorical[1], theme.neutral]
    ax.imshow(
        att[None, :],
        cmap=ListedColormap(att_colours),
        vmin=-0.5,
        vmax=3.5,
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
    for i in np.flatnonzero(rope < 0):  # layers without RoPE: hatched, no colour
        ax.add_patch(
            Polygon(
                [(i - 0.5, 0.5), (i + 0.5, 0.5), (i + 0.5, 1.5), (i - 0.5, 1.5)],
                facecolor=theme.background,
                hatch="///",
                edgecolor=theme.neutral,
                linewidth=0.0,
            )
        )
    if n <= 80:  # cell borders: each layer is one cell
        ax.vlines(np.arange(n + 1) - 0.5, -0.5, 1.5, color=theme.background, linewidth=0.8)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(1.5, -0.5)
    ax.set_yticks([0, 1], [t("row_attention"), t("row_rope")])
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.set_xlabel(t("layer"))
    windows = data["windows"]
    handles = []
    for code, name in enumerate(_ATTENTION):
        if np.any(att == code):
            label = t(f"att_{name}", w=windows.get(name, 0.0))
            handles.append(Patch(facecolor=att_colours[code], label=label))
    for k, key in enumerate(kinds):
        label = t("rope_theta", name=t(f"short_{key}"), theta=data["thetas"][k])
        handles.append(Patch(facecolor=kcol[k], label=label))
    if np.any(rope < 0):
        handles.append(
            Patch(
                facecolor=theme.background, edgecolor=theme.neutral, hatch="///", label=t("no_rope")
            )
        )
    _legend_above(ax, handles)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def draw_spectrum(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    """Wavelength of every turning pair per RoPE kind; the pairs that never turn as a shaded
    band (named inside it, where no curve runs); the legend in a strip of its own above."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullLocator

    kinds = list(data["kinds"])
    mrope = any(sp["axes"] is not None for sp in kinds)
    notes = [
        t(
            "note_llama3_step_whole" if float(n["factor"]).is_integer() else "note_llama3_step",
            at=n["at"],
            f=n["factor"],
        )
        for n in data["notes"]
    ]
    n_lines = len(kinds) + (1 if mrope else 0) + 2 * len(notes)
    leg_ax, ax = fig.subplots(2, 1, height_ratios=[0.16 * n_lines + 0.05, 1.0])
    leg_ax.axis("off")
    kcol = _kind_colours(theme, len(kinds))
    axis_colours = [theme.accent, theme.warn, theme.ok]  # t, h, w
    styles: list[Any] = ["-", "--", "-."]
    handles: list[Any] = []
    top = 1.0
    ctx = float(data["context"])
    bands: list[tuple[float, float, str]] = []
    for k, sp in enumerate(kinds):
        j = np.asarray(sp["pair"], dtype=np.float64)
        w = np.asarray(sp["wavelength"], dtype=np.float64)
        top = max(top, float(w.max()))
        name = _kind_name(t, sp["key"], sp["theta"], sp["rope_type"], sp["factor"])
        ax.plot(j, w, color=kcol[k], linewidth=2.0, linestyle=styles[k % 3], zorder=2)
        handles.append(
            Line2D([], [], color=kcol[k], linewidth=2.0, linestyle=styles[k % 3], label=name)
        )
        if sp["axes"] is not None:
            axes = np.asarray(sp["axes"], dtype=np.float64)
            for a in range(3):
                sel = axes == a
                ax.plot(j[sel], w[sel], "o", color=axis_colours[a], markersize=4.5, zorder=3)
        lo, hi = float(sp["still_from"]), float(sp["pairs"])
        if hi > lo:  # pairs that never turn: not rotated, or frequency 0 (proportional)
            ax.axvspan(lo - 0.5, hi - 0.5, color=kcol[k], alpha=0.13, linewidth=0, zorder=0)
            bands.append((lo, hi, "never_zero" if sp["zero"] else "never_turns"))
    ax.axhline(ctx, color=theme.muted, linewidth=1.2, linestyle=(0, (4, 3)), zorder=1)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    top_y = max(top, ctx) * 8.0
    ax.set_ylim(1.0, top_y)
    right = ax.secondary_yaxis("right")  # the context's value beside its line
    right.set_yticks([ctx], [f"{int(ctx):,}"])
    right.yaxis.set_minor_locator(NullLocator())
    right.tick_params(length=0, colors=theme.muted)
    x_max = max(float(sp["pairs"]) for sp in kinds) - 0.5
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
    if mrope:
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


def draw_head_slots(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    kinds = list(data["kinds"])
    rows = len(kinds)
    width = max(int(np.asarray(h["code"]).size) for h in kinds)
    ax = fig.subplots()
    axis_colours = [theme.accent, theme.warn, theme.ok]
    handles: list[Any] = []
    labels = []
    for r, h in enumerate(kinds):
        code = np.asarray(h["code"], dtype=np.float64)  # pair index / axis, -1 still, -2 zero
        cmap: Any
        if h["mrope"]:
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
        labels.append(t("row_kind", name=t(f"short_{h['key']}"), layout=t(f"row_{h['layout']}")))
    if any(h["mrope"] for h in kinds):
        for a, letter in enumerate("thw"):
            handles.append(Patch(facecolor=axis_colours[a], label=t(f"axis_{letter}")))
    if any(not h["mrope"] for h in kinds):
        seq = visible_cmap(theme, "sequential")
        handles.append(Patch(facecolor=seq(0.0), label=t("slot_fast")))
        handles.append(Patch(facecolor=seq(1.0), label=t("slot_slow")))
    for value, hatch, key in ((-1, "///", "not_rotated"), (-2, "...", "zero_frequency")):
        if any(np.any(np.asarray(h["code"]) == value) for h in kinds):
            hatched = Patch(facecolor=theme.background, edgecolor=theme.neutral, hatch=hatch)
            hatched.set_label(t(key))
            handles.append(hatched)
    notes = [t("note_mrope_unread", layout=t(f"mrope_{n['layout']}")) for n in data["notes"]]
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_yticks(list(range(rows)), labels)
    ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    ax.set_xlabel(t("slot"))
    _legend_above(ax, handles, notes)  # notes: mrope_interleaved is not read
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def draw_scales(fig: FigureBase, data: Mapping[str, Any], t: Labels, theme: Theme) -> None:
    """The query temperature against position, under a strip that states the softmax scale and
    the factor on cos and sin: separate numbers."""
    lines = [t("softmax_box", s=float(data["softmax"]))]
    for key, a in zip(data["kinds"], data["factors"], strict=True):
        lines.append(t("factor_box", a=float(a), name=t(f"short_{key}")))
    for note in data["notes"]:
        lines.append(t("note_tuning", v=note["value"]))
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
    p = np.asarray(data["position"], dtype=np.float64)
    tau = np.asarray(data["tau"], dtype=np.float64)
    kind = str(data["temperature"])
    if kind != "none":
        ax.step(p, tau, where="post", color=theme.warn, linewidth=2.2, label=t(f"tau_{kind}"))
        if kind == "llama4":  # the RoPE layers keep tau = 1
            ax.axhline(
                1.0, color=theme.accent, linewidth=1.8, linestyle="--", label=t("tau_rope_layers")
            )
    else:
        ax.plot(p, tau, color=theme.accent, linewidth=2.2, label=t("tau_none"))
    # max_position_embeddings (named in the caption)
    ax.axvline(float(data["context"]), color=theme.muted, linewidth=1.2, linestyle=(0, (4, 3)))
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
    "i-similarity": draw_similarity,
    "i-norms": draw_norms,
    "i-offset": draw_offset,
    "i-sinusoidal": draw_sinusoidal,
    "i-wavelengths": draw_wavelengths,
    "i-ratios": draw_ratios,
    "i-turns": draw_turns,
    "i-layout": draw_layout,
    "i-slopes": draw_slopes,
    "i-bias": draw_bias,
    "i-weights": draw_weights,
    "i-reach": draw_reach,
    "i-layer-strip": draw_layer_strip,
    "i-spectrum": draw_spectrum,
    "i-head-slots": draw_head_slots,
    "i-scales": draw_scales,
}
