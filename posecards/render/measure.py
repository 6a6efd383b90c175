"""Measure a laid-out card as a student in the back row would see it.

After one Agg draw (no encoding), every text the renderer really drew is collected with the ink
box of each of its lines (glyph extents, not line boxes), and the card is checked for:

- text smaller than the page's floor (18 px at slide size; sub/superscripts 14 px; other pages
  in proportion to their text scale),
- pairs of texts whose ink boxes intersect, and lines of one multi-line text that touch,
- texts that leave the page,
- labels written in an axes (annotations, legend entries) that sit on a line or a marker of the
  data drawn in the same axes.

``measure_figure`` works on any figure; ``measure_card`` composes a card first. ``python -m
posecards.render.measure`` prints the counts per card and size (the before/after table of issue 11).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

# mathtext draws sub/superscripts at 0.7 of the text size; Unicode sub/superscript digits and
# letters are drawn about as small
SCRIPT_FRACTION = 0.7
_MATH_SCRIPT = re.compile(r"\$[^$]*[_^][^$]*\$")
_UNICODE_SCRIPT = re.compile("[\u2070-\u209f\u00b2\u00b3\u00b9\u1d62-\u1d6a\u2c7c]")
TOLERANCE_PX = 0.5  # boxes must overlap by more than this (both ways) to count


Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in display pixels


@dataclass(frozen=True)
class TextItem:
    text: str
    px: float  # font size in pixels
    script_px: float | None  # size of its sub/superscripts, if it has any
    boxes: tuple[Box, ...]  # ink box of each line


@dataclass
class LayoutReport:
    width_px: float
    height_px: float
    floor_px: float
    floor_script_px: float
    texts: list[TextItem]
    overlaps: list[tuple[str, str]] = field(default_factory=list)
    lines_touch: list[str] = field(default_factory=list)  # multi-line texts whose lines touch
    outside: list[str] = field(default_factory=list)
    on_data: list[tuple[str, str]] = field(default_factory=list)  # (label, what it sits on)
    under_panels: list[str] = field(default_factory=list)  # card text a panel's area covers

    @property
    def min_px(self) -> float:
        return min((t.px for t in self.texts), default=math.inf)

    @property
    def min_script_px(self) -> float:
        return min((t.script_px for t in self.texts if t.script_px is not None), default=math.inf)

    @property
    def small(self) -> list[str]:
        """Texts under the floor (with their size)."""
        out = [f"{t.text!r} {t.px:.1f} px" for t in self.texts if t.px < self.floor_px - 1e-6]
        out += [
            f"{t.text!r} scripts {t.script_px:.1f} px"
            for t in self.texts
            if t.script_px is not None and t.script_px < self.floor_script_px - 1e-6
        ]
        return out

    def problems(self) -> list[str]:
        """One line per defect; empty when the card passes."""
        out = [f"under the floor ({self.floor_px:.1f} px): {s}" for s in self.small]
        out += [f"overlap: {a!r} / {b!r}" for a, b in self.overlaps]
        out += [f"lines touch inside: {a!r}" for a in self.lines_touch]
        out += [f"outside the page: {a!r}" for a in self.outside]
        out += [f"on its data: {a!r} on {b}" for a, b in self.on_data]
        out += [f"under a panel: {a!r}" for a in self.under_panels]
        return out


def _has_script(s: str) -> bool:
    return bool(_MATH_SCRIPT.search(s) or _UNICODE_SCRIPT.search(s))


def _rotate(x: float, y: float, angle: float) -> tuple[float, float]:
    a = math.radians(angle)
    return x * math.cos(a) - y * math.sin(a), x * math.sin(a) + y * math.cos(a)


def ink_boxes(t: Text, renderer: RendererBase) -> list[Box]:
    """The glyph (ink) box of every line of a drawn text, in display pixels."""
    from posecards.mpl_internals import text_lines, text_metrics

    x, y = t.get_unitless_position()
    x, y = t.get_transform().transform((x, y))
    angle = t.get_rotation()
    boxes: list[Box] = []
    for clean, ismath, lx, ly in text_lines(t, renderer):
        if not clean.strip():
            continue
        # matplotlib's own memo of the metrics its layout of this line just measured
        w, h, d = text_metrics(
            renderer,
            clean,
            t.get_fontproperties(),
            ismath,
            t.get_figure(root=True).dpi,  # type: ignore[union-attr]
        )
        corners = [_rotate(cx, cy, angle) for cx, cy in ((0, -d), (0, h - d), (w, h - d), (w, -d))]
        xs = [x + lx + cx for cx, _ in corners]
        ys = [y + ly + cy for _, cy in corners]
        boxes.append((min(xs), min(ys), max(xs), max(ys)))
    return boxes


def _intersect(a: Box, b: Box, tol: float = TOLERANCE_PX) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > tol and min(a[3], b[3]) - max(a[1], b[1]) > tol


def _touching_items(items: Sequence[TextItem], tol: float = TOLERANCE_PX) -> Any:
    """A boolean matrix: [i, j] when a box of ``items[i]`` and a box of ``items[j]``
    intersect (by ``_intersect``, the same float operations, for every pair of boxes at once:
    a card has some 300 texts, 45,000 pairs)."""
    import numpy as np

    boxes = np.array([b for it in items for b in it.boxes], dtype=float).reshape(-1, 4)
    owner = np.repeat(np.arange(len(items)), [len(it.boxes) for it in items])
    x0, y0, x1, y1 = boxes.T
    hit = (np.minimum.outer(x1, x1) - np.maximum.outer(x0, x0) > tol) & (
        np.minimum.outer(y1, y1) - np.maximum.outer(y0, y0) > tol
    )
    touching = np.zeros((len(items), len(items)), dtype=bool)
    if not np.isfinite(boxes).all():  # Python's min and max order a NaN unlike numpy's
        for (i, a), (j, b) in itertools.combinations(enumerate(items), 2):
            touching[i, j] = any(_intersect(p, q, tol) for p in a.boxes for q in b.boxes)
        return touching
    rows, cols = np.nonzero(hit)
    touching[owner[rows], owner[cols]] = True
    return touching


@contextmanager
def _spy_texts(*, transparent: bool = False) -> Iterator[list[Text]]:
    """Collect the texts really drawn (not ticks out of view, not empty or invisible ones).

    Text.draw itself is watched: the renderer's draw_text does not name its Text for
    multi-line texts. ``transparent``: each text is drawn with alpha 0 (its bounding box patch
    and everything else as usual) and gets its own alpha back after, so the draw shows what
    lies under the texts, laid out as with them.
    """
    from matplotlib.text import Text

    drawn: list[Text] = []
    seen: set[int] = set()
    original = Text.draw

    def spy(self: Text, renderer: Any) -> None:
        if transparent:
            alpha = self.get_alpha()
            self.set_alpha(0.0)
            try:
                original(self, renderer)
            finally:
                self.set_alpha(alpha)
        else:
            original(self, renderer)
        if self.get_visible() and self.get_text().strip() and id(self) not in seen:
            seen.add(id(self))
            drawn.append(self)

    Text.draw = spy  # type: ignore[method-assign,assignment]
    try:
        yield drawn
    finally:
        Text.draw = original  # type: ignore[method-assign]


def _data_marks(ax: Axes, renderer: RendererBase) -> list[tuple[str, Any, float]]:
    """(what, display-space path, marker radius in px) for every line and scatter of ``ax``."""
    from matplotlib.collections import PathCollection
    from matplotlib.path import Path

    dpi = float(getattr(renderer, "dpi", 100.0))
    marks: list[tuple[str, Any, float]] = []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(line.get_xydata())
        xy = xy[(abs(xy) < 1e9).all(axis=1)]
        if xy.shape[0] == 0:
            continue
        name = f"line {line.get_label()!r}"
        if line.get_linestyle() not in ("None", "none", " ", "") and xy.shape[0] > 1:
            marks.append((name, Path(xy), 0.0))
        if line.get_marker() not in (None, "None", "none", " ", ""):
            r = float(line.get_markersize()) * dpi / 72.0 / 2
            marks.extend((name + " marker", p, r) for p in xy)
    for coll in ax.collections:
        if not isinstance(coll, PathCollection) or not coll.get_visible():
            continue
        offsets = coll.get_offset_transform().transform(coll.get_offsets())
        sizes = coll.get_sizes()
        for k, p in enumerate(offsets):
            s = float(sizes[k % len(sizes)]) if len(sizes) else 36.0
            marks.append(("scatter point", p, math.sqrt(s) * dpi / 72.0 / 2))
    return marks


def _sits_on(box: Box, mark: tuple[str, Any, float], clip: Box) -> bool:
    from matplotlib.path import Path
    from matplotlib.transforms import Bbox

    _, geom, r = mark
    x0, y0 = max(box[0], clip[0]), max(box[1], clip[1])
    x1, y1 = min(box[2], clip[2]), min(box[3], clip[3])
    if x1 - x0 <= TOLERANCE_PX or y1 - y0 <= TOLERANCE_PX:
        return False
    if isinstance(geom, Path):
        return bool(geom.intersects_bbox(Bbox([[x0, y0], [x1, y1]]), filled=False))
    px, py = float(geom[0]), float(geom[1])
    return x0 - r < px < x1 + r and y0 - r < py < y1 + r


def measure_figure(fig: Figure, scale: float = 1.0, *, pixels: bool = False) -> LayoutReport:
    """Lay ``fig`` out with Agg's renderer once and measure its text (floors for a page of text
    ``scale``). ``pixels``: a full draw, whose buffer the caller encodes (the deck's slides);
    otherwise the draw lays out and paints nothing (what is measured is geometry)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from posecards.mpl_internals import draw_disabled

    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    with _spy_texts() as drawn:
        if pixels:
            canvas.draw()
        else:
            with draw_disabled(renderer):
                fig.draw(renderer)
    return measure_drawn(fig, canvas, drawn, scale)


def measure_drawn(
    fig: Figure, canvas: FigureCanvasAgg, drawn: Sequence[Text], scale: float = 1.0
) -> LayoutReport:
    """The report of ``fig`` just drawn on ``canvas`` (``drawn``: its texts as _spy_texts
    collected them): the measure of measure_figure, for a caller that drew the figure itself
    (posecards.render.contrast, whose one draw serves both)."""
    from posecards.figures.roles import axes_in, floor_px

    renderer = canvas.get_renderer()
    dpi = float(fig.dpi)
    W, H = canvas.get_width_height()
    items: list[TextItem] = []
    box_of: dict[int, list[Box]] = {}
    for t in drawn:
        boxes = ink_boxes(t, renderer)
        if not boxes:
            continue
        box_of[id(t)] = boxes
        px = float(t.get_fontsize()) * dpi / 72.0
        s = t.get_text()
        items.append(
            TextItem(s, px, px * SCRIPT_FRACTION if _has_script(s) else None, tuple(boxes))
        )
    report = LayoutReport(
        width_px=float(W),
        height_px=float(H),
        floor_px=floor_px(dpi, scale=scale),
        floor_script_px=floor_px(dpi, script=True, scale=scale),
        texts=items,
    )
    touching = _touching_items(items)
    for (i, a), (j, b) in itertools.combinations(enumerate(items), 2):
        if touching[i, j]:
            report.overlaps.append((a.text, b.text))
    for it in items:  # the lines of one label: their ink must not touch either
        if any(_intersect(p, q, tol=0.0) for p, q in itertools.pairwise(it.boxes)):
            report.lines_touch.append(it.text)
    for it in items:
        if any(
            b[0] < -TOLERANCE_PX
            or b[1] < -TOLERANCE_PX
            or b[2] > W + TOLERANCE_PX
            or b[3] > H + TOLERANCE_PX
            for b in it.boxes
        ):
            report.outside.append(it.text)
    drawn_ids = set(box_of)
    for ax in axes_in(fig):
        if not ax.get_visible():
            continue
        labels: list[Text] = list(ax.texts)
        legend = ax.get_legend()
        if legend is not None:
            labels += list(legend.get_texts())
        labels = [t for t in labels if id(t) in drawn_ids]
        if not labels:
            continue
        marks = _data_marks(ax, renderer)
        clip = tuple(ax.bbox.extents)
        for t in labels:
            hit = next(
                (m for m in marks for b in box_of[id(t)] if _sits_on(b, m, clip)),  # type: ignore[arg-type]
                None,
            )
            if hit is not None:
                report.on_data.append((t.get_text(), hit[0]))
    return report


def measure_card(
    card: Any,
    content: Any,
    lang: str,
    size: str,
    theme_name: str = "light",
    footer: str | None = None,
    text: Any = None,
) -> LayoutReport:
    """Compose card ``card`` (an id, or an inspection card's CardText via ``text``) and measure it."""
    from posecards.config import Look, PEParams
    from posecards.figures.roles import page_scale
    from posecards.figures.style import card_style
    from posecards.render.compose import compose_card
    from posecards.render.footers import footer_text
    from posecards.render.text import fill_card, load_card_text

    text = load_card_text(card) if text is None else text
    if footer is None:
        footer = footer_text(PEParams(), Look(), lang)
    with card_style(theme_name) as th:
        fig = compose_card(
            fill_card(text, lang, content.numbers), text, content.figures, th, size, footer
        )
        report = measure_figure(fig, scale=page_scale(size))
        report.under_panels = texts_under_panels(fig)  # measured with the card's fonts
    return report


def texts_under_panels(fig: Figure) -> list[str]:
    """The figure's own texts (a card's header, sidebar and footer) whose ink reaches into the
    area of a visible subfigure (a panel), after a draw; inside the figure's card_style (its
    fonts are found only there)."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    panels = [tuple(sub.bbox.extents) for sub in fig.subfigs if sub.get_visible()]
    return [
        t.get_text()
        for t in fig.texts
        if t.get_text().strip()
        and any(_intersect(b, p) for b in ink_boxes(t, renderer) for p in panels)  # type: ignore[arg-type]
    ]


def summary_rows(
    reports: Mapping[tuple[str, str, str], LayoutReport],
) -> list[str]:
    """Per size: smallest text px, smallest script px, overlapping pairs, outside, on data,
    under the floor, card text under a panel."""
    sizes: dict[str, list[LayoutReport]] = {}
    for (_card, _lang, size), rep in reports.items():
        sizes.setdefault(size, []).append(rep)
    rows = ["size     min px  min script px  overlaps  outside  on-data  under-floor  under-panel"]
    for size, reps in sizes.items():
        rows.append(
            f"{size:8s} {min(r.min_px for r in reps):6.1f}  "
            f"{min(r.min_script_px for r in reps):13.1f}  "
            f"{sum(len(r.overlaps) for r in reps):8d}  {sum(len(r.outside) for r in reps):7d}  "
            f"{sum(len(r.on_data) for r in reps):7d}  {sum(len(r.small) for r in reps):11d}  "
            f"{sum(len(r.under_panels) for r in reps):11d}"
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from posecards.config import PEParams
    from posecards.content import compute_card
    from posecards.render.compose import LayoutError

    ap = argparse.ArgumentParser(prog="python -m posecards.render.measure")
    ap.add_argument("--cards", default="1,2,3,4")
    ap.add_argument("--sizes", default="slide,4x3,a4,square")
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--theme", default="light")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every problem")
    args = ap.parse_args(argv)
    reports: dict[tuple[str, str, str], LayoutReport] = {}
    for card in map(int, args.cards.split(",")):
        content = compute_card(card, PEParams())
        for size in args.sizes.split(","):
            for lang in args.langs.split(","):
                try:
                    rep = measure_card(card, content, lang, size, args.theme)
                except LayoutError as exc:
                    print(f"card {card} {lang} {size}: does not fit: {exc}")
                    continue
                reports[(str(card), lang, size)] = rep
                if args.verbose:
                    for p in rep.problems():
                        print(f"card {card} {lang} {size}: {p}")
    print("\n".join(summary_rows(reports)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
