"""The whole card as a student sees it: nothing smaller than 16 px at slide size, nothing outside
the page, sidebar and header text never overlapping, and every glyph real."""

from __future__ import annotations

import itertools
import logging

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from posecards.config import CARD_IDS, Look, PEParams
from posecards.content import compute_card
from posecards.figures.style import MissingGlyphError, card_style
from posecards.render.build import footer_text
from posecards.render.compose import compose_card
from posecards.render.text import fill_card, load_card_text

DPI = 100
MIN_PX = 16


@pytest.fixture(scope="module")
def contents() -> dict[int, object]:
    return {c: compute_card(c, PEParams()) for c in CARD_IDS}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("card", list(CARD_IDS))
def test_slide_card_text_is_readable_and_inside(card: int, lang: str, contents: dict) -> None:
    text = load_card_text(card)
    content = contents[card]
    with card_style("light") as th:
        fig = compose_card(
            fill_card(text, lang, content.numbers),
            text,
            content.figures,
            th,
            "slide",
            footer_text(PEParams(), Look(), lang),
        )
        canvas = FigureCanvasAgg(fig)
        renderer = canvas.get_renderer()
        drawn: list[Text] = []  # the texts the renderer really draws (not ticks out of view)
        original = type(renderer).draw_text

        def spy(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):  # type: ignore[no-untyped-def]
            if mtext is not None and s.strip():
                drawn.append(mtext)
            return original(self, gc, x, y, s, prop, angle, ismath, mtext)

        type(renderer).draw_text = spy  # type: ignore[method-assign]
        try:
            canvas.draw()
        finally:
            type(renderer).draw_text = original  # type: ignore[method-assign]
        assert (canvas.get_width_height()) == (1920, 1080)
        texts = drawn
        assert texts
        for t in texts:
            px = t.get_fontsize() * DPI / 72
            assert px >= MIN_PX - 1e-9, f"{t.get_text()!r} is {px:.1f} px"
            box = t.get_window_extent(renderer)
            assert box.x0 >= -1 and box.y0 >= -1, f"{t.get_text()!r} cut off: {box}"
            assert box.x1 <= 1921 and box.y1 <= 1081, f"{t.get_text()!r} cut off: {box}"
        # the card's own text (title, thesis, sidebar, footer) never overlaps itself
        own = [t.get_window_extent(renderer) for t in fig.texts if t.get_text().strip()]
        for a, b in itertools.combinations(own, 2):
            overlap_w = min(a.x1, b.x1) - max(a.x0, b.x0)
            overlap_h = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert overlap_w <= 1 or overlap_h <= 1, (a, b)
        # and the panels stay left of the sidebar
        sidebar_x = min(b.x0 for b in own if b.y1 < 900 and b.x0 > 900)
        for sub in fig.subfigs:
            assert sub.bbox.x1 <= sidebar_x + 1


def test_a_missing_glyph_fails(caplog: pytest.LogCaptureFixture) -> None:
    from matplotlib.figure import Figure

    with pytest.raises(MissingGlyphError, match="missing"):
        with card_style("light"), caplog.at_level(logging.WARNING):
            fig = Figure()
            fig.text(0.1, 0.5, "位置 \u0d9a $x$")  # Sinhala: in neither Noto Sans CJK nor DejaVu
            FigureCanvasAgg(fig).draw()


def test_chinese_math_and_latin_mix_renders_without_missing_glyphs() -> None:
    from matplotlib.figure import Figure

    with card_style("dark"):
        fig = Figure()
        fig.text(0.1, 0.5, "频率 $\\omega_i = b^{-2i/d}$ and θ ≈ 0.1 → ≤ ≥ ×")
        fig.text(0.1, 0.2, "偏差 1.1×10⁻¹⁶, ‖PE(p)−PE(q)‖² = Σ(2−2cos Δθ)")
        FigureCanvasAgg(fig).draw()


class _CharMeasure:
    """Every character is half a point wide per point of size; CJK characters one full."""

    def width(self, s: str, size: float, weight: str = "normal") -> float:
        return sum(size if "\u2e80" <= c <= "\uffef" else size / 2 for c in s)


@pytest.mark.parametrize("width", [40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 110.0, 130.0])
def test_wrap_keeps_values_with_names_and_units(width: float) -> None:
    from posecards.render.compose import wrap

    m = _CharMeasure()
    text = "With base b = 10,000 and d = 512 the table needs 6.00 MiB, turning 3.00 rad."
    lines = wrap(text, width, 10.0, m)  # type: ignore[arg-type]
    assert " ".join(lines) == text
    joined = "\n".join(lines)
    for whole in ("b = 10,000", "d = 512", "6.00 MiB", "3.00 rad"):
        assert whole in joined, (whole, lines)
    zh = "取底数 b = 10,000）时，以 float32 存储需 6.00 MiB，共 4,096 个词元（差 ≤ 3.3×10⁻¹⁶），慢的维度几乎不动。"
    for w in (60.0, 70.0, 80.0, 90.0, 100.0, 120.0, 150.0):
        lines = wrap(zh, w, 10.0, m)  # type: ignore[arg-type]
        assert "".join(lines).replace(" ", "") == zh.replace(" ", "")
        joined = "\n".join(lines)
        for whole in ("b = 10,000", "6.00 MiB", "4,096 个"):
            assert whole in joined, (whole, lines)
        assert not any(ln[0] in "，。）" for ln in lines), lines
        assert not any(ln[-1] in "（(" for ln in lines), lines
        # never one character alone on the last line ("动。")
        assert len(lines[-1].rstrip("。，）")) > 1, lines
