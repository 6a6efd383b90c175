"""The deck's animations (clocks, RoPE's rotating pairs, ALiBi's bias): ``setup`` draws the
static parts and returns ``update(i)``, which moves the artists to frame i of the data in
posecards.deck.frames (nothing is computed here); ``animation_frames`` draws every frame and
``gif_and_apng`` encodes them. Call everything inside ``card_style(theme)``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Arc
from PIL import Image

from posecards.deck.look import deck_look
from posecards.figures.roles import fontsize as role_size
from posecards.figures.roles import freeze_tick_sizes, page_roles
from posecards.mpl_internals import keep_title_positions
from posecards.render.files import freeze_layout

if TYPE_CHECKING:
    from matplotlib.figure import FigureBase

    from posecards.deck.frames import AlibiFrames, ClockFrames, RopeFrames
    from posecards.figures.style import Theme


# --- animations: ``setup`` draws the static parts and returns ``update(i)``, which moves the ----
# artists to frame i of the data in posecards.deck.frames (nothing is computed here).

Update = Callable[[int], None]


def fontsize(role: str) -> float:
    return role_size(role)


# the moving parts take the theme's first categorical colours (>= 3:1 on its background, and
# distinct under colour-vision deficiency: tests/test_palette.py)
ANIM_COLORS = (0, 1, 2, 3)


def _color(th: Theme, i: int) -> str:
    return th.categorical[ANIM_COLORS[i % len(ANIM_COLORS)]]


def _arrow(ax: Any, color: str) -> Any:
    return ax.annotate(
        "",
        xy=(1.0, 0.0),
        xytext=(0.0, 0.0),
        arrowprops={"arrowstyle": "-|>", "color": color, "lw": 3.5, "mutation_scale": 22},
    )


def _dial(ax: Any, th: Theme, ticks: bool) -> None:
    t = np.linspace(0, 2 * np.pi, 181)
    ax.plot(np.cos(t), np.sin(t), color=th.muted, lw=1.5)
    if ticks:
        for h in range(12):
            a = 2 * np.pi * h / 12
            ax.plot(
                [0.9 * np.sin(a), np.sin(a)], [0.9 * np.cos(a), np.cos(a)], color=th.muted, lw=1.2
            )
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    ax.set_aspect("equal")
    ax.axis("off")


def setup_clocks(fig: FigureBase, f: ClockFrames, th: Theme) -> Update:
    """One clock per PE pair; the hand points at (sin pω, cos pω): 12 o'clock at p = 0."""
    axes = np.atleast_1d(fig.subplots(1, len(f.pairs)))
    hands, trails = [], []
    for c, ax in enumerate(axes):
        color = _color(th, c)
        _dial(ax, th, ticks=True)
        (trail,) = ax.plot([], [], ".", color=color, ms=6, alpha=0.6)
        trails.append(trail)
        hands.append(_arrow(ax, color))
        ax.set_title(
            f"$i$ = {int(f.pairs[c])}\n$\\omega_i$ = {float(f.omega[c]):.3f}",
            fontsize=fontsize("subplot_title"),
            color=th.text,
        )
    title = fig.suptitle("", fontsize=fontsize("panel_title"), weight="bold", color=th.text)

    def update(i: int) -> None:
        for c in range(len(f.pairs)):
            hands[c].xy = (float(f.hands[i, c, 0]), float(f.hands[i, c, 1]))
            trails[c].set_data(f.hands[: i + 1, c, 0], f.hands[: i + 1, c, 1])
        title.set_text(f"$p$ = {int(f.positions[i])}")

    return update


def setup_rope(fig: FigureBase, f: RopeFrames, th: Theme) -> Update:
    """q rotated by mθ and k by nθ; the arc between them is (n − m)θ."""
    ax, side = fig.subplots(1, 2)
    _dial(ax, th, ticks=False)
    side.axis("off")
    colors = {"q": _color(th, 0), "k": _color(th, 1)}
    arrows = {name: _arrow(ax, color) for name, color in colors.items()}
    names = {
        name: ax.text(
            0,
            0,
            f"${name}$",
            color=color,
            fontsize=fontsize("panel_title"),
            ha="center",
            va="center",
        )
        for name, color in colors.items()
    }
    rows = [
        side.text(
            0.0,
            0.92 - r * 0.19,
            "",
            fontsize=fontsize("legend"),
            color=th.accent if r == 3 else th.text,
            transform=side.transAxes,
            va="top",
        )
        for r in range(5)
    ]
    arc: list[Any] = []

    def update(i: int) -> None:
        for name, vec in (("q", f.q_rot[i]), ("k", f.k_rot[i])):
            arrows[name].xy = (float(vec[0]), float(vec[1]))
            names[name].set_position((1.17 * float(vec[0]), 1.17 * float(vec[1])))
        rel = float(f.angle_k[i] - f.angle_q[i])
        start = float(np.degrees(np.arctan2(f.q_rot[i, 1], f.q_rot[i, 0])))
        while arc:
            arc.pop().remove()
        arc.append(
            ax.add_patch(
                Arc(
                    (0, 0),
                    0.7,
                    0.7,
                    theta1=start,
                    theta2=start + float(np.degrees(rel)),
                    color=th.accent,
                    lw=3.0,
                )
            )
        )
        score = f"{float(f.score[i]):.3f}".replace("-", "\u2212")
        texts = [
            f"$m$ = {int(f.m[i])},  $n$ = {int(f.n[i])}",
            f"$m\\theta$ = {float(f.angle_q[i]):.1f} rad",
            f"$n\\theta$ = {float(f.angle_k[i]):.1f} rad",
            f"$(n-m)\\theta$ = {rel:.1f} rad",
            f"$\\langle R_{{m\\theta}}q,\\,R_{{n\\theta}}k\\rangle$ = {score}",
        ]
        for t, s in zip(rows, texts, strict=True):
            t.set_text(s)

    return update


def setup_alibi(fig: FigureBase, f: AlibiFrames, th: Theme) -> Update:
    """The query at position i attends to keys 0..i; one row of bars per head."""
    axes = np.atleast_1d(fig.subplots(len(f.heads), 1, sharex=True))
    keys = np.arange(f.weights.shape[2])
    bars, lines = [], []
    for h, ax in enumerate(axes):
        color = _color(th, h)
        bars.append(ax.bar(keys, np.zeros_like(keys, dtype=float), width=0.85, color=color))
        lines.append(ax.axvline(0, color=th.muted, lw=1.5, ls="--"))
        ax.set_ylim(0, 1.0)
        ax.set_yticks([0, 1])
        ax.tick_params(labelsize=fontsize("tick"))
        ax.text(
            1.01,
            0.5,
            f"$h$ = {int(f.heads[h])}, $m$ = 1/{round(1 / float(f.slopes[h]))}",
            transform=ax.transAxes,
            fontsize=fontsize("annotation"),
            va="center",
            color=th.text,
        )
    axes[-1].set_xlabel("key position $j$", fontsize=fontsize("axis_label"))
    axes[-1].set_xlim(-0.6, len(keys) - 0.4)
    title = fig.suptitle("", fontsize=fontsize("subplot_title"), color=th.text)

    def update(i: int) -> None:
        q = int(f.query[i])
        for h in range(len(f.heads)):
            for rect, w in zip(bars[h], f.relative[i, h], strict=True):
                rect.set_height(float(w))
            lines[h].set_xdata([q, q])
        title.set_text(
            f"query $i$ = {q}: attention to key $j$ relative to key $i$ = $e^{{-m(i-j)}}$"
        )

    return update


ANIMATION_SETUP: dict[str, Callable[..., Update]] = {
    "clocks": setup_clocks,
    "rope": setup_rope,
    "alibi": setup_alibi,
}


def draw_animation_frame(fig: FigureBase, name: str, data: Any, i: int, th: Theme) -> None:
    """Frame ``i`` of an animation, as a still (the slide picture and the PDF page)."""
    ANIMATION_SETUP[name](fig, data, th)(i)


def animation_frames(
    name: str, data: Any, th: Theme, n_frames: int, size_in: tuple[float, float]
) -> list[Any]:
    """Every frame of one animation as an RGB image, ``animation_px`` wide: one figure, laid
    out once at the middle frame, then its artists moved frame by frame."""
    look = deck_look()
    dpi = look.animation_px / size_in[0]
    fig = Figure(figsize=size_in, dpi=dpi, layout="constrained", facecolor=th.background)
    canvas = FigureCanvasAgg(fig)
    with page_roles("deck"):
        update = ANIMATION_SETUP[name](fig, data, th)
        freeze_tick_sizes(fig)
    update(n_frames // 2)
    freeze_layout(fig)  # solved once, snapped, then fixed (render/files.freeze_layout)
    canvas.draw()
    for ax in fig.axes:
        # the axes titles stay where that draw placed them (no frame moves an axes or a
        # title): matplotlib would otherwise measure every tick label again on each frame to
        # place them, half of a clocks frame's time
        keep_title_positions(ax)
    frames = []
    for i in range(n_frames):
        update(i)
        canvas.draw()
        # RGBA to RGB drops the alpha channel (no compositing): the same pixels as slicing it
        # off, four times faster
        frames.append(Image.fromarray(np.asarray(canvas.buffer_rgba())).convert("RGB"))
    return frames


def gif_and_apng(frames: list[Any], ms: int) -> tuple[bytes, bytes]:
    """An endlessly looping GIF (plays in PowerPoint, Keynote, Google Slides) and APNG."""
    # one shared palette for all frames: no flicker between frames, deterministic
    palette = frames[len(frames) // 2].quantize(
        colors=96, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
    )
    pal = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in frames]
    gif = io.BytesIO()
    pal[0].save(
        gif,
        format="GIF",
        save_all=True,
        append_images=pal[1:],
        duration=ms,
        loop=0,
        optimize=False,
        disposal=1,
    )
    apng = io.BytesIO()
    pal[0].save(
        apng,
        format="PNG",
        save_all=True,
        append_images=pal[1:],
        duration=ms,
        loop=0,
        default_image=False,
    )
    return gif.getvalue(), apng.getvalue()
