"""Lay out a whole card (title, thesis, 4 panels, formula, takeaways, pitfalls, footer) as one
matplotlib figure, from the filled card text and the computed figure data.

Geometry comes from ``templates/layouts.toml``; colours from the theme. Text is wrapped by
measuring it with the renderer, so what is drawn is what was measured: a block that would not
fit is shrunk down to the layout's minimum size, and a card that still does not fit is an error.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import FancyBboxPatch

from posecards.errors import PosecardsError
from posecards.figures import draw_functions
from posecards.figures.roles import current_scale, fontsize, freeze_tick_sizes, page_roles
from posecards.paths import data_dir
from posecards.render.text import CardLabels, CardText, FilledCard
from posecards.render.ui import ui_strings
from posecards.render.wrap import _Measure, wrap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from posecards.figures.style import Theme


class LayoutError(PosecardsError, RuntimeError):
    """The card text does not fit its page size even at the smallest allowed font size."""


@dataclass(frozen=True)
class Layout:
    name: str
    width: float
    height: float
    arrangement: str
    panel_fraction: float
    margin: float
    columns: Mapping[int, int]  # number of panels -> columns of the panel grid

    def grid(self, n: int) -> tuple[int, int]:
        """(rows, columns) of the panel grid for ``n`` panels on this page."""
        ncols = min(self.columns.get(n, 3), n) if n else 1
        return -(-n // ncols), ncols


@cache
def layout(size: str) -> Layout:
    data = tomllib.loads((data_dir("templates") / "layouts.toml").read_text(encoding="utf-8"))
    if size not in data:
        raise ValueError(f"unknown size {size!r}; choose one of: {', '.join(data)}")
    values = dict(data[size])
    values["columns"] = MappingProxyType({int(k): int(v) for k, v in values["columns"].items()})
    return Layout(name=size, **values)


@dataclass(frozen=True)
class _Sizes:
    """Text sizes (points) of the card's own parts on the current page, from the text roles."""

    title: float
    thesis: float
    heading: float
    body: float
    body_min: float
    formula: float
    footer: float
    panel_title: float
    scale: float

    @classmethod
    def current(cls) -> _Sizes:
        return cls(
            title=fontsize("title"),
            thesis=fontsize("thesis"),
            heading=fontsize("heading"),
            body=fontsize("body"),
            body_min=fontsize("body_min"),
            formula=fontsize("formula"),
            footer=fontsize("footer"),
            panel_title=fontsize("panel_title"),
            scale=current_scale(),
        )


@dataclass
class _Block:
    """A run of wrapped lines at one size, positioned top-down."""

    lines: list[str]
    size: float
    weight: str = "normal"
    color: str | None = None
    bullet: bool = False
    gap_before: float = 0.0  # points

    def height(self) -> float:
        return len(self.lines) * self.size * 1.32 + self.gap_before


def _sidebar_blocks(
    card: FilledCard, sz: _Sizes, width_pt: float, body: float, m: _Measure, th: Theme
) -> tuple[list[_Block], list[_Block], list[_Block]]:
    """Formula, takeaways and pitfalls blocks at body size ``body``."""
    h = ui_strings(card.lang)
    k = sz.scale  # gaps scale with the text
    bullet_indent = body * 1.1
    tex_lines = card.formula_tex.split("\n")
    widest = max(m.width(x, sz.formula) for x in tex_lines)
    tex_size = sz.formula * min(1.0, width_pt / max(widest, 1.0))
    if tex_size < sz.body_min:
        raise LayoutError(
            f"card {card.id}: a line of the key formula is too wide for this page; "
            "split it into a list of shorter lines in [formula] tex"
        )
    formula = [
        _Block([h["key_formula"]], sz.heading, "bold", th.accent),
        _Block(tex_lines, tex_size, gap_before=6 * k),
        _Block(wrap(card.formula_note, width_pt, body, m), body, color=th.muted, gap_before=4 * k),
    ]
    take = [_Block([h["takeaways"]], sz.heading, "bold", th.accent, gap_before=14 * k)]
    for _, s in card.takeaways:
        take.append(
            _Block(wrap(s, width_pt - bullet_indent, body, m), body, bullet=True, gap_before=6 * k)
        )
    pits = [_Block([h["pitfalls"]], sz.heading, "bold", th.warn, gap_before=18 * k)]
    for _, s in card.pitfalls:
        pits.append(
            _Block(
                wrap(s, width_pt - bullet_indent - 12 * k, body, m),
                body,
                bullet=True,
                gap_before=6 * k,
            )
        )
    return formula, take, pits


def _balanced(formula: list[_Block], take: list[_Block], pits: list[_Block]) -> list[list[_Block]]:
    """Two text columns: the formula and the first takeaways left, the other takeaways and the
    pitfalls (kept together, in their box) right, split where the taller column is lowest."""
    seq = formula + take
    best: list[list[_Block]] | None = None
    best_h = float("inf")
    # split before a takeaway (never between a heading and its first item), or before pitfalls
    for cut in range(len(formula) + 2, len(seq) + 1):
        left, right = seq[:cut], seq[cut:] + pits
        h = max(sum(b.height() for b in left), sum(b.height() for b in right))
        if h < best_h:
            best, best_h = [left, right], h
    return best if best is not None else [seq, pits]


def compose_card(
    card: FilledCard,
    text: CardText,
    figures: Mapping[str, Mapping[str, Any]],
    th: Theme,
    size: str,
    footer: str,
) -> Figure:
    """Draw the whole card. Call inside ``card_style(theme)``.

    Every text size comes from the text roles (posecards/style/roles.toml) at this page's scale.
    """
    with page_roles(size):
        fig = _compose(card, text, figures, th, size, footer, _Sizes.current())
        freeze_tick_sizes(fig)
    return fig


PT = 1 / 72.0  # inches per point


def _header(
    fig: Figure, card: FilledCard, sz: _Sizes, m: _Measure, th: Theme, lay: Layout
) -> float:
    """Title and thesis, wrapped to the full width, and the rule under them; returns the
    rule's height (inches from the bottom)."""
    W, H, margin, pt = lay.width, lay.height, lay.margin, PT
    full_w_pt = (W - 2 * margin) / pt
    title_lines = wrap(card.title, full_w_pt, sz.title, m, "bold")
    thesis_lines = wrap(card.thesis, full_w_pt, sz.thesis, m)
    y = H - margin  # cursor, inches from the bottom
    for ln in title_lines:
        fig.text(margin / W, y / H, ln, fontsize=sz.title, weight="bold", va="top")
        y -= sz.title * 1.25 * pt
    y -= 4 * sz.scale * pt
    for ln in thesis_lines:
        fig.text(margin / W, y / H, ln, fontsize=sz.thesis, va="top", color=th.muted)
        y -= sz.thesis * 1.3 * pt
    header_bottom = y - 6 * sz.scale * pt
    fig.add_artist(
        mpl.lines.Line2D(
            [margin / W, 1 - margin / W],
            [header_bottom / H, header_bottom / H],
            color=th.box_edge,
            linewidth=1.2,
        )
    )
    return header_bottom


def _footer(fig: Figure, footer: str, sz: _Sizes, m: _Measure, th: Theme, lay: Layout) -> float:
    """The footer (wrapped: an inspection card's footer names the tensor and config keys it
    read); returns the height the body ends at."""
    W, H, margin, pt = lay.width, lay.height, lay.margin, PT
    footer_lines = wrap(footer, (W - 2 * margin) / pt, sz.footer, m)
    line_h = sz.footer * 1.3 * pt
    for i, ln in enumerate(footer_lines):
        y_ln = margin * 0.5 + (len(footer_lines) - 1 - i) * line_h
        fig.text(margin / W, y_ln / H, ln, fontsize=sz.footer, color=th.muted)
    footer_h = sz.footer * 2.0 * pt + (len(footer_lines) - 1) * line_h
    return margin * 0.5 + footer_h


Rect = tuple[float, float, float, float]


def _regions(lay: Layout, body_top: float, body_bottom: float) -> tuple[Rect, list[Rect]]:
    """The panels' rectangle (x, y, w, h) and the text columns (x, width, top, bottom), inches."""
    W, margin, gap = lay.width, lay.margin, 0.25
    if lay.arrangement == "side":
        panel_rect = (
            margin,
            body_bottom,
            (W - 2 * margin) * lay.panel_fraction,
            body_top - body_bottom,
        )
        text_x = margin + panel_rect[2] + gap
        return panel_rect, [(text_x, W - margin - text_x, body_top, body_bottom)]
    ph = (body_top - body_bottom) * lay.panel_fraction
    panel_rect = (margin, body_top - ph, W - 2 * margin, ph)
    col_w = (W - 2 * margin - gap) / 2
    top = body_top - ph - gap
    return panel_rect, [
        (margin, col_w, top, body_bottom),
        (margin + col_w + gap, col_w, top, body_bottom),
    ]


def _fitted_columns(
    card: FilledCard, sz: _Sizes, m: _Measure, th: Theme, text_cols: list[Rect], size: str
) -> list[list[_Block]]:
    """The formula, takeaways and pitfalls in the text column(s): the body size shrinks until
    everything fits."""
    pt = PT
    body = sz.body
    while True:
        w_pt = text_cols[0][1] / pt
        formula, take, pits = _sidebar_blocks(card, sz, w_pt, body, m, th)
        if len(text_cols) == 1:
            columns = [formula + take + pits]
        else:
            columns = _balanced(formula, take, pits)
        fits = all(
            sum(b.height() for b in blocks) * pt <= (col[2] - col[3]) - 0.05
            for blocks, col in zip(columns, text_cols, strict=True)
        )
        if fits:
            return columns
        if body - 0.5 * sz.scale < sz.body_min - 1e-9:
            raise LayoutError(
                f"card {card.id} ({card.lang}) text does not fit the '{size}' page "
                f"even at {sz.body_min:.1f} pt: shorten its takeaways or pitfalls"
            )
        body -= 0.5 * sz.scale


def _draw_columns(
    fig: Figure,
    columns: list[list[_Block]],
    text_cols: list[Rect],
    sz: _Sizes,
    th: Theme,
    lay: Layout,
) -> None:
    """The text columns' lines, and the pitfalls' box."""
    W, H = lay.width, lay.height
    pt = PT
    for blocks, (x0, cw, top, _bottom) in zip(columns, text_cols, strict=True):
        y = top
        pit_top = None
        for b in blocks:
            if b.weight == "bold" and b.color == th.warn:
                pit_top = y
            y -= b.gap_before * pt
            for ln in b.lines:
                x = x0 + (b.size * 1.1 * pt if b.bullet else 0.0)
                if b.bullet and ln is b.lines[0]:
                    fig.text(x0 / W, y / H, "•", fontsize=b.size, va="top", color=th.accent)
                fig.text(
                    x / W,
                    y / H,
                    ln,
                    fontsize=b.size,
                    weight=b.weight,
                    va="top",
                    color=b.color or th.text,
                )
                y -= b.size * 1.32 * pt
        if pit_top is not None:
            pad = 0.08
            box_top = pit_top - 10 * sz.scale * pt
            fig.add_artist(
                FancyBboxPatch(
                    ((x0 - pad) / W, (y - pad) / H),
                    (cw + 2 * pad - 0.02) / W,
                    (box_top - y + pad) / H,
                    boxstyle="round,pad=0,rounding_size=0.004",
                    transform=fig.transFigure,
                    facecolor=th.pitfall_box,
                    edgecolor=th.box_edge,
                    linewidth=1.0,
                    zorder=-1,
                )
            )


def _panels(
    fig: Figure,
    card: FilledCard,
    text: CardText,
    figures: Mapping[str, Mapping[str, Any]],
    th: Theme,
    lay: Layout,
    panel_rect: Rect,
    sz: _Sizes,
    m: _Measure,
) -> None:
    """A grid of subfigures (columns per page size and panel count, from layouts.toml) laid out
    by constrained layout inside panel_rect; titles wrap to their cell."""
    W, H = lay.width, lay.height
    x0, y0, pw, ph_ = panel_rect
    fig.set_layout_engine(
        ConstrainedLayoutEngine(rect=(x0 / W, y0 / H, pw / W, ph_ / H), w_pad=0.06, h_pad=0.06)
    )
    draw = draw_functions(card.id)
    labels = CardLabels(text.labels, card.lang, text.path.name)
    n = len(card.panels)
    nrows, ncols = lay.grid(n)
    subs = fig.subfigures(nrows, ncols, wspace=0.02, hspace=0.02)
    flat = list(subs.flat) if hasattr(subs, "flat") else [subs]
    cell_w_pt = (pw / ncols) / PT * 0.96
    for sub, (fid, title, _alt, _cap) in zip(flat, card.panels, strict=False):
        lines = wrap(title, cell_w_pt, sz.panel_title, m, "bold")
        sub.suptitle("\n".join(lines), fontsize=sz.panel_title, weight="bold", x=0.02, ha="left")
        draw[fid](sub, figures[fid], labels, th)
    for sub in flat[n:]:
        sub.set_visible(False)


def _compose(
    card: FilledCard,
    text: CardText,
    figures: Mapping[str, Mapping[str, Any]],
    th: Theme,
    size: str,
    footer: str,
    sz: _Sizes,
) -> Figure:
    lay = layout(size)
    fig = Figure(figsize=(lay.width, lay.height))
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    m = _Measure(renderer, list(mpl.rcParams["font.family"]))
    header_bottom = _header(fig, card, sz, m, th, lay)
    body_bottom = _footer(fig, footer, sz, m, th, lay)
    body_top = header_bottom - 8 * sz.scale * PT
    panel_rect, text_cols = _regions(lay, body_top, body_bottom)
    columns = _fitted_columns(card, sz, m, th, text_cols, size)
    _draw_columns(fig, columns, text_cols, sz, th, lay)
    _panels(fig, card, text, figures, th, lay, panel_rect, sz, m)
    return fig
