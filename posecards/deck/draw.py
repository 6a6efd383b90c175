"""Slide pictures and animation frames. Draws only: every number comes from the content layer
(posecards.content, posecards.deck.frames); geometry and sizes from ``templates/deck.toml``.

A slide picture is one matplotlib figure of the whole 16:9 slide (title and figure), drawn on a
canvas ``magnify`` times smaller than the 13.333 x 7.5 in slide: the panels' own text sizes (at
least 12 pt) then land at 14 pt or more once the page is shown at slide size. From it come the
slide's PNG (1920 x 1080) and SVG, its vector PDF page (scaled to 13.333 x 7.5 in when the deck
is merged) and the PPTX picture (the picture box cut from the PNG; the PPTX has the title as
real text). Call everything inside ``card_style(theme)``.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from posecards.deck.look import Box, deck_look
from posecards.errors import PosecardsError

if TYPE_CHECKING:
    from matplotlib.figure import Figure, FigureBase, SubFigure

    from posecards.deck.frames import AlibiFrames, ClockFrames, RopeFrames
    from posecards.figures.style import Theme


class SlideFitError(PosecardsError, RuntimeError):
    """A slide's text does not fit its box at the deck's type size."""


@dataclass(frozen=True)
class SlidePicture:
    png: bytes  # the whole slide, 1920 x 1080
    svg: bytes
    # the laid-out figure of its vector PDF page (`scale` times smaller than 13.333 x 7.5 in),
    # written by the caller into its unit's PDF (posecards.deck.pdf.PageBook) at ``pdf_dpi``
    pdf_figure: Any
    pdf_dpi: float
    scale: float
    picture_png: bytes | None  # the picture box alone (for the PPTX), None on text-only slides
    title_lines: list[str]  # the title as wrapped here (the PPTX wraps it itself)
    min_text_px: float  # smallest text anywhere on the picture, px at 1920 x 1080
    min_figure_px: float | None  # smallest text inside the picture box
    min_script_px: float | None = None  # smallest sub/superscript on the slide
    problems: tuple[str, ...] = ()  # the layout test's findings (overlaps, outside, on data ...)


@contextmanager
def _record_text_sizes(sizes: list[tuple[float, float]]) -> Iterator[None]:
    """Record (size in points, y in pixels) of every text Agg draws while the block runs."""
    from matplotlib.backends.backend_agg import RendererAgg

    original: Callable[..., Any] = RendererAgg.draw_text

    def draw_text(
        self: Any, gc: Any, x: float, y: float, s: str, prop: Any, *a: Any, **k: Any
    ) -> Any:
        if s.strip():
            sizes.append((float(prop.get_size_in_points()), float(y)))
        return original(self, gc, x, y, s, prop, *a, **k)

    RendererAgg.draw_text = draw_text  # type: ignore[method-assign]
    try:
        yield
    finally:
        RendererAgg.draw_text = original  # type: ignore[method-assign]


def _encode(fig: Figure, dpi: float) -> tuple[bytes, bytes, list[tuple[float, float]]]:
    """PNG (the canonical Agg draw, which fixes the layout), then SVG of the same layout (the
    PDF page is written later, see SlidePicture.pdf_figure); and the sizes of the texts drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from posecards.render.files import SAVE_METADATA, freeze_layout, without_pre_draw

    FigureCanvasAgg(fig)
    freeze_layout(fig)  # solved once, snapped, then fixed (render/files.freeze_layout)
    sizes: list[tuple[float, float]] = []
    out = {}
    with _record_text_sizes(sizes), without_pre_draw(fig):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata=SAVE_METADATA["png"])
        out["png"] = buf.getvalue()
    return out["png"], slide_svg(fig, dpi), sizes


def slide_svg(fig: Figure, dpi: float) -> bytes:
    """A slide picture's SVG (glyphs as outlines, text kept as titles), placed at the slide's
    13.333 x 7.5 in (960 x 540 pt)."""
    from posecards.render.files import figure_bytes

    return figure_bytes(fig, "svg", print_width=deck_look().width, dpi=dpi)


def _png(rgba: Any) -> bytes:
    """An RGB PNG of an Agg buffer (no metadata: deterministic bytes)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgba[:, :, :3]).save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


class _Page:
    """A magnified slide canvas: positions in slide inches from the top-left, sizes in slide
    points; both divided by ``magnify`` on the figure."""

    def __init__(self, th: Theme, magnify: float) -> None:
        import matplotlib as mpl
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from posecards.render.compose import _Measure

        self.look = deck_look()
        self.k = magnify
        self.th = th
        self.W, self.H = self.look.width, self.look.height
        self.dpi = self.look.picture_px / (self.W / self.k)  # the PNG is 1920 px wide
        self.fig = Figure(
            figsize=(self.W / self.k, self.H / self.k), dpi=self.dpi, facecolor=th.background
        )
        FigureCanvasAgg(self.fig)
        renderer = self.fig.canvas.get_renderer()  # type: ignore[attr-defined]
        self.m = _Measure(renderer, list(mpl.rcParams["font.family"]))

    def wrap(self, text: str, box: Box, size: float, weight: str = "normal") -> list[str]:
        """Lines of ``text`` at ``size`` slide points within the box width (5 % kept free,
        since PowerPoint and LibreOffice measure a little differently)."""
        from posecards.render.compose import wrap

        width_pt = box[2] * 72.0 * 0.95 - 14.4  # text frame insets: 0.1 in each side
        return wrap(text, width_pt / self.k, size / self.k, self.m, weight)

    def text(
        self,
        x: float,
        y: float,
        s: str,
        size: float,
        weight: str = "normal",
        color: str | None = None,
        ha: str = "left",
    ) -> None:
        self.fig.text(
            x / self.W,
            1 - y / self.H,
            s,
            fontsize=size / self.k,
            weight=weight,
            color=color or self.th.text,
            va="top",
            ha=ha,
        )

    def block(
        self,
        lines: list[str],
        box: Box,
        size: float,
        weight: str = "normal",
        color: str | None = None,
        y: float | None = None,
        bullet: bool = False,
    ) -> float:
        """Draw lines top-down from ``y`` (default: the box top, below the frame inset);
        return the y below the last line. Raises SlideFitError past the box bottom."""
        x = box[0] + 0.1
        y = box[1] + 0.05 if y is None else y
        step = size * 1.2 / 72.0
        for i, ln in enumerate(lines):
            if bullet and i == 0:
                self.text(x, y, "•", size, color=self.th.accent)
            self.text(x + (size * 1.1 / 72.0 if bullet else 0.0), y, ln, size, weight, color)
            y += step
        if y > box[1] + box[3] + 1e-9:
            raise SlideFitError(f"text does not fit its box: {lines[0][:40]!r}…")
        return y

    def picture_subfigure(self) -> SubFigure:
        """A subfigure filling the picture box, laid out by constrained layout."""
        from matplotlib.layout_engine import ConstrainedLayoutEngine

        left, top, w, h = self.look.picture_box
        rect = (left / self.W, 1 - (top + h) / self.H, w / self.W, h / self.H)
        self.fig.set_layout_engine(ConstrainedLayoutEngine(rect=rect, w_pad=0.06, h_pad=0.06))
        sub: SubFigure = self.fig.subfigures(1, 1)  # type: ignore[assignment]
        sub.set_facecolor(self.th.background)
        return sub

    def finish(self, title_lines: list[str], has_picture: bool) -> SlidePicture:
        """Measure the slide with the cards' layout test (its canonical Agg draw fixes the
        layout), then encode PNG and SVG of that layout and cut the PPTX picture (the PDF page
        is written by the caller from ``pdf_figure``)."""
        import numpy as np

        from posecards.figures.roles import SCRIPT_FRACTION
        from posecards.render.files import freeze_layout
        from posecards.render.measure import measure_figure

        look = self.look
        freeze_layout(self.fig)  # the cards' layout: solved once, snapped, then fixed
        report = measure_figure(self.fig, pixels=True)
        # that draw is the PNG: encode its buffer rather than drawing the slide again
        rgba = np.asarray(self.fig.canvas.buffer_rgba())  # type: ignore[attr-defined]
        out = {"png": _png(rgba)}
        out["svg"] = slide_svg(self.fig, self.dpi)
        picture_png = None
        min_fig = None
        if has_picture:
            left, top, w, h = look.picture_box
            per_in = look.picture_px / self.W  # px per slide inch
            box = (
                round(left * per_in),
                round(top * per_in),
                round((left + w) * per_in),
                round((top + h) * per_in),
            )
            picture_png = _png(rgba[box[1] : box[3], box[0] : box[2]])
            height = self.H * per_in
            inside = [
                t.px
                for t in report.texts
                if all(box[1] - 2 <= height - b[3] and height - b[1] <= box[3] + 2 for b in t.boxes)
            ]
            min_fig = min(inside) if inside else None
        scripts = [t.script_px for t in report.texts if t.script_px is not None]
        # the deck's floors: text min_figure_px, its sub/superscripts at mathtext's 0.7 of that
        floor, script_floor = look.min_figure_px, look.min_figure_px * SCRIPT_FRACTION
        problems = [f"{t.text!r}: {t.px:.1f} px" for t in report.texts if t.px < floor - 1e-6]
        problems += [
            f"{t.text!r}: scripts {t.script_px:.1f} px"
            for t in report.texts
            if t.script_px is not None and t.script_px < script_floor - 1e-6
        ]
        problems += [f"overlap: {a!r} / {b!r}" for a, b in report.overlaps]
        problems += [f"lines touch inside: {a!r}" for a in report.lines_touch]
        problems += [f"outside the page: {a!r}" for a in report.outside]
        problems += [f"on its data: {a!r} on {b}" for a, b in report.on_data]
        return SlidePicture(
            png=out["png"],
            svg=out["svg"],
            pdf_figure=self.fig,
            pdf_dpi=self.dpi,
            scale=self.k,
            picture_png=picture_png,
            title_lines=title_lines,
            min_text_px=report.min_px,
            min_figure_px=min_fig,
            min_script_px=min(scripts) if scripts else None,
            problems=tuple(problems),
        )


def _title(page: _Page, title: str) -> list[str]:
    look = page.look
    lines = page.wrap(title, look.title_box, look.title_size, "bold")
    if len(lines) > look.title_max_lines:
        raise SlideFitError(
            f"slide title longer than {look.title_max_lines} lines at {look.title_size:g} pt: "
            f"{title!r}"
        )
    page.block(lines, look.title_box, look.title_size, "bold")
    return lines


def figure_slide(
    title: str, th: Theme, draw: Callable[[FigureBase], None], magnify: float | None = None
) -> SlidePicture:
    """A slide with a title and one figure (a panel redrawn at slide scale through the same
    text roles as the cards, or an animation frame). The figure is drawn again on a larger
    canvas if any of its text would land under ``min_figure_px``."""
    from posecards.figures.roles import freeze_tick_sizes, page_roles

    look = deck_look()
    k = look.magnify if magnify is None else magnify
    with page_roles("deck"):
        page = _Page(th, k)
        lines = _title(page, title)
        sub = page.picture_subfigure()
        draw(sub)
        freeze_tick_sizes(sub)
        pic = page.finish(lines, has_picture=True)
    if pic.min_figure_px is not None and pic.min_figure_px < look.min_figure_px - 1e-6:
        # the figure has text smaller than the panels' usual minimum: magnify more
        return figure_slide(title, th, draw, k * look.min_figure_px / pic.min_figure_px)
    return pic


def title_slide(title: str, subtitle: str, agenda: list[str], th: Theme) -> SlidePicture:
    look = deck_look()
    page = _Page(th, look.magnify)
    box = look.deck_title_box
    lines = page.wrap(title, box, look.deck_title_size, "bold")
    page.block(lines, box, look.deck_title_size, "bold", color=th.accent)
    box = look.deck_subtitle_box
    page.block(
        page.wrap(subtitle, box, look.deck_subtitle_size),
        box,
        look.deck_subtitle_size,
        color=th.muted,
    )
    box = look.agenda_box
    y = box[1] + 0.05
    for item in agenda:
        y = page.block(page.wrap(item, box, look.agenda_size), box, look.agenda_size, y=y)
    return page.finish(lines, has_picture=False)


def bullets_slide(
    title: str, items: list[str], th: Theme, size: float | None = None
) -> SlidePicture:
    """Title and bullets (the pitfalls; the sources at ``size`` = look.sources_size)."""
    look = deck_look()
    size = look.body_size if size is None else size
    page = _Page(th, look.magnify)
    lines = _title(page, title)
    box = look.body_box
    y = box[1] + 0.05
    indent = size * 1.1 / 72.0
    inner = (box[0] + indent, box[1], box[2] - indent, box[3])
    for item in items:
        wrapped = page.wrap(item, inner, size)
        y = page.block(wrapped, box, size, y=y, bullet=True) + 0.12
    return page.finish(lines, has_picture=False)


def picture_slide(
    png: bytes, svg: bytes, fig: Figure, dpi: float, sizes: list[float]
) -> SlidePicture:
    """The overview slide: the card itself, filling the slide (its own title is on it)."""
    look = deck_look()
    fig_width_in = float(fig.get_figwidth())
    px = look.px_per_pt(fig_width_in)
    return SlidePicture(
        png=png,
        svg=svg,
        pdf_figure=fig,
        pdf_dpi=dpi,
        scale=look.width / fig_width_in,
        picture_png=png,
        title_lines=[],
        min_text_px=min(sizes) * px,
        min_figure_px=min(sizes) * px,
    )


def card_slide(fig: Figure) -> SlidePicture:
    """The overview slide: the whole card drawn 1920 px wide (PNG, SVG; its PDF page from
    ``fig``) and its text sizes."""
    look = deck_look()
    dpi = look.picture_px / float(fig.get_figwidth())
    png, svg, sizes = _encode(fig, dpi)
    return picture_slide(png, svg, fig, dpi, [s for s, _ in sizes])


# --- animations: ``setup`` draws the static parts and returns ``update(i)``, which moves the ----
# artists to frame i of the data in posecards.deck.frames (nothing is computed here).

Update = Callable[[int], None]


def fontsize(role: str) -> float:
    from posecards.figures.roles import fontsize as role_size

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
    import numpy as np

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
    import numpy as np

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
    import numpy as np
    from matplotlib.patches import Arc

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
    import numpy as np

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
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    from posecards.figures.roles import freeze_tick_sizes, page_roles
    from posecards.mpl_internals import keep_title_positions
    from posecards.render.files import freeze_layout

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
    from PIL import Image

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
