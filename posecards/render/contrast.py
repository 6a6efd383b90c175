"""The contrast of every text a figure draws against what it sits on (WCAG 2 contrast ratio).

One Agg draw, with every text drawn transparent (their bounding boxes, legend frames, heat-map
cells and axes stay), finds every text really drawn, the ink box of each of its lines
(posecards.render.measure) and the pixels behind them. A text's
background is the median-luminance pixel under its ink boxes: the surface it sits on (a heat-map
cell, a legend frame, a box, the page), not a line it crosses. Its colour is the text colour
composited over that background when it is translucent.

``python -m posecards.render.contrast`` prints every text under 4.5:1 on the cards (slide size)
and the standalone figures, in both themes (tests/test_contrast.py also measures the deck's
slides).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from posecards.figures._common import LUMA_WEIGHTS, contrast_ratio, linear_light

if TYPE_CHECKING:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    from posecards.render.measure import LayoutReport

MIN_TEXT_CONTRAST = 4.5  # WCAG AA for text, whatever its size
RGB = tuple[float, float, float]


def hex_rgb(colour: str) -> RGB:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(colour)
    return (float(r), float(g), float(b))


@dataclass(frozen=True)
class TextContrast:
    text: str
    colour: RGB  # as drawn over its background
    background: RGB
    ratio: float

    def describe(self) -> str:
        def h(c: RGB) -> str:
            return "#" + "".join(f"{round(v * 255):02x}" for v in c)

        return f"{self.text!r}: {h(self.colour)} on {h(self.background)} = {self.ratio:.2f}:1"


# an 8-bit channel has 256 levels: each one's linear light, looked up per pixel (not computed for
# every pixel of the page, under a text or not)
_LINEAR = linear_light(np.arange(256, dtype=np.float64) / 255.0)  # (256,)


def text_contrasts(fig: Figure) -> list[TextContrast]:
    """The contrast of every drawn text of ``fig`` with the pixels it sits on."""
    return _drawn_contrasts(fig)[0]


def contrasts_and_layout(
    fig: Figure, scale: float = 1.0
) -> tuple[list[TextContrast], LayoutReport]:
    """text_contrasts and measure_figure's layout report (floors for a page of text ``scale``)
    from one draw: the texts are laid out as in any draw, only drawn transparent."""
    from posecards.render.measure import measure_drawn

    found, canvas, drawn = _drawn_contrasts(fig)
    return found, measure_drawn(fig, canvas, drawn, scale)


def _drawn_contrasts(fig: Figure) -> tuple[list[TextContrast], FigureCanvasAgg, list[Text]]:
    """One Agg draw of ``fig`` with its texts transparent: their contrasts, the canvas, the
    texts drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgba

    from posecards.render.measure import _spy_texts, ink_boxes

    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    with _spy_texts(transparent=True) as drawn:
        canvas.draw()
    rgb8 = np.asarray(canvas.buffer_rgba())[..., :3]  # (H, W, 3) uint8
    width, height = canvas.get_width_height()
    out = []
    for t in drawn:
        boxes = ink_boxes(t, renderer)
        if not boxes:
            continue
        rgba = to_rgba(t.get_color(), t.get_alpha())
        under = []
        for x0, y0, x1, y1 in boxes:
            # display y runs up from the bottom; image rows run down from the top
            c0, c1 = max(0, int(np.floor(x0))), min(width, int(np.ceil(x1)))
            r0, r1 = max(0, int(np.floor(height - y1))), min(height, int(np.ceil(height - y0)))
            if c1 > c0 and r1 > r0:
                under.append(rgb8[r0:r1, c0:c1].reshape(-1, 3))
        if not under:
            continue
        px = np.concatenate(under)  # (n, 3) uint8
        lum = _LINEAR[px] @ LUMA_WEIGHTS  # (n,) relative luminance
        mid = px[np.argsort(lum, kind="stable")[len(px) // 2]] / 255.0  # (3,)
        bg: RGB = (float(mid[0]), float(mid[1]), float(mid[2]))
        a = float(rgba[3])
        fg: RGB = tuple(float(a * rgba[k] + (1 - a) * bg[k]) for k in range(3))  # type: ignore[assignment]
        out.append(TextContrast(t.get_text(), fg, bg, contrast_ratio(fg, bg)))
    return out, canvas, drawn


def low_contrast(fig: Figure, minimum: float = MIN_TEXT_CONTRAST) -> list[TextContrast]:
    return [c for c in text_contrasts(fig) if c.ratio < minimum - 1e-9]


def card_figures(
    theme_name: str, lang: str, contents: Mapping[int, Any], standalone: bool = True
) -> Iterator[tuple[str, Figure]]:
    """(name, figure): each card of ``contents`` ({card: CardContent}) at slide size with its
    footer and, with ``standalone``, each of its figures on its own canvas."""
    from posecards.config import Look, PEParams
    from posecards.figures import draw_functions
    from posecards.figures.style import card_style
    from posecards.render.compose import compose_card
    from posecards.render.figure import draw_standalone
    from posecards.render.footers import footer_text
    from posecards.render.text import fill_card, load_card_text

    for card, content in contents.items():
        text = load_card_text(card)
        with card_style(theme_name) as th:
            footer = footer_text(PEParams(), Look(theme_name, "slide"), lang, card)
            filled = fill_card(text, lang, content.numbers)
            yield f"card {card}", compose_card(filled, text, content.figures, th, "slide", footer)
            if standalone:
                for fid in draw_functions(card):
                    yield fid, draw_standalone(fid, content.figures[fid], lang, theme_name)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m posecards.render.contrast")
    from posecards.config import CARD_IDS

    ap.add_argument("--cards", default=",".join(map(str, CARD_IDS)))
    ap.add_argument("--themes", default="light,dark")
    ap.add_argument("--langs", default="en")
    args = ap.parse_args(argv)
    from posecards.config import PEParams
    from posecards.content import compute_card

    contents = {int(c): compute_card(int(c), PEParams()) for c in args.cards.split(",")}
    total = failing = 0
    for theme_name in args.themes.split(","):
        for lang in args.langs.split(","):
            for name, fig in card_figures(theme_name, lang, contents):
                found = text_contrasts(fig)
                low = [c for c in found if c.ratio < MIN_TEXT_CONTRAST - 1e-9]
                total += len(found)
                failing += len(low)
                for c in low:
                    print(f"{theme_name} {lang} {name}: {c.describe()}")
    print(f"{failing} of {total} drawn texts under {MIN_TEXT_CONTRAST}:1")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
