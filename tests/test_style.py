"""card_style's work-sharing inside a drawing process: one mathtext parse per expression for
all renderers, and the same bytes as matplotlib's own per-renderer parses."""

from __future__ import annotations

import functools
import subprocess
import sys
from typing import Any

import pytest

from posecards.figures.style import card_style

EXPRESSIONS = [r"$\omega_i = b^{-2i/d}$", r"$\cos(\theta_i (n - m))$", r"$x_i^{(p)}$"]


def test_one_parse_per_expression_inside_card_style(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib as mpl
    from matplotlib import mathtext
    from matplotlib.font_manager import FontProperties

    parse = mathtext.MathTextParser._parse_cached.__wrapped__  # type: ignore[attr-defined]
    parsed: list[tuple[str, str, float]] = []

    def counting(self: Any, s: str, dpi: float, *args: Any) -> Any:
        parsed.append((self._output_type, s, dpi))
        return parse(self, s, dpi, *args)

    # matplotlib's cached parse, counted underneath (the memo calls what it wraps)
    monkeypatch.setattr(mathtext.MathTextParser, "_parse_cached", functools.lru_cache(50)(counting))
    prop = FontProperties(size=14)
    with card_style("light"):
        first = [mathtext.MathTextParser("path").parse(s, 72, prop) for s in EXPRESSIONS]
        again = [mathtext.MathTextParser("path").parse(s, 72, prop) for s in EXPRESSIONS]
        raster = [mathtext.MathTextParser("agg").parse(s, 72, prop) for s in EXPRESSIONS]
        finer = [mathtext.MathTextParser("path").parse(s, 100, prop) for s in EXPRESSIONS]
    # another parser (another renderer) gets the same parse: one parse per key
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert len(parsed) == 3 * len(EXPRESSIONS)  # path at 72, agg at 72, path at 100 dpi
    assert not any(a is b for a, b in zip(first, raster, strict=True))
    assert not any(a is b for a, b in zip(first, finer, strict=True))
    # a block inside another uses the outer memo; a mathtext rcParam is part of the key
    with card_style("light"):
        outer = mathtext.MathTextParser("path").parse(EXPRESSIONS[0], 72, prop)
        with card_style("dark"):
            assert mathtext.MathTextParser("path").parse(EXPRESSIONS[0], 72, prop) is outer
        with mpl.rc_context({"mathtext.default": "rm"}):
            upright = mathtext.MathTextParser("path").parse(EXPRESSIONS[0], 72, prop)
        assert upright is not outer and upright.glyphs != outer.glyphs
    # after the block, matplotlib's own cache again: one per parser object
    parsed.clear()
    for _ in range(2):
        mathtext.MathTextParser("path").parse(EXPRESSIONS[0], 72, prop)
    assert len(parsed) == 2


DRAW = r"""
import contextlib, hashlib, sys
import posecards.figures.style as style
if sys.argv[1] == "off":
    style.shared_math_parses = contextlib.nullcontext
    style.shared_text_metrics = contextlib.nullcontext
    style.shared_font_lookups = contextlib.nullcontext
from matplotlib.figure import Figure
from posecards.render.files import figure_bytes_multi
exprs = [r"$\omega_i = b^{-2i/d}$", r"$\cos(\theta_i (n - m))$", r"$x_i^{(p)}$", r"$\sqrt{d}$"]
with style.card_style("light"):
    for k in range(3):  # three figures: later ones find the first one's parses
        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot()
        ax.set_title(exprs[k])
        ax.set_xlabel(exprs[(k + 1) % 4])
        for j, e in enumerate(exprs):
            ax.text(0.1, 0.2 * j, e, fontsize=10 + 3 * j)
        fig.set_layout_engine("constrained")
        for fmt, data in sorted(figure_bytes_multi(fig, ["png", "svg", "pdf"]).items()):
            print(k, fmt, hashlib.sha256(data).hexdigest())
"""


@pytest.mark.slow
def test_shared_parses_draw_the_same_bytes_in_every_format() -> None:
    """Each side in a fresh process, as a unit is drawn: PNG, SVG and PDF of figures full of
    mathtext, with the memos (parses, text metrics, font lookups) and with matplotlib's own
    caches."""
    out = {}
    for side in ("on", "off"):
        r = subprocess.run(
            [sys.executable, "-c", DRAW, side], capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, r.stderr
        out[side] = r.stdout
    assert out["on"].count("\n") == 9  # three figures, three formats each
    assert out["on"] == out["off"]


def _cjk_pdf() -> bytes:
    from matplotlib.figure import Figure

    from posecards.render.files import figure_bytes

    fig = Figure(figsize=(4, 2))
    fig.text(0.1, 0.6, "位置编码 · position 12", fontsize=14)
    fig.text(0.1, 0.2, r"$\theta_i = 10000^{-2i/d}$, $\Sigma$ −1", fontsize=14)
    return figure_bytes(fig, "pdf")


def test_fonts_parsed_ahead_serve_one_pdf_with_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fork server of a plan that writes PDFs reads the tables of the CJK file and of
    DejaVu Sans, upright and oblique, twice each (render/warm_pdf.py); each subset of those
    files in a process takes one copy while there is one, with the bytes of a font read as it
    is subset (matplotlib subsets each of them twice here: the codes below 256, the others);
    later subsets read the file again."""
    from collections import Counter

    from posecards import fonts, pdf_fonts

    cjk = str(fonts.cjk_drawn_path())
    sans = {str(fonts.font_file(n).path) for n in ("DejaVuSans.ttf", "DejaVuSans-Oblique.ttf")}
    loads: list[str] = []
    load = pdf_fonts._load_pdf_font

    def counting(subset: Any, fontfile: Any, options: Any) -> Any:
        loads.append(str(fontfile))
        return load(subset, fontfile, options)

    monkeypatch.setattr(pdf_fonts, "_load_pdf_font", counting)
    monkeypatch.setattr(pdf_fonts, "_PARSED_AHEAD", {})
    with card_style("light"):
        lazy = _cjk_pdf()
        read_lazily = Counter(loads)
        loads.clear()
        pdf_fonts.parse_pdf_font_ahead()
        assert Counter(loads) == {cjk: 2, **dict.fromkeys(sans, 2)}  # read here, ahead
        loads.clear()
        ahead = _cjk_pdf()
        assert pdf_fonts._PARSED_AHEAD == {}  # all taken by that PDF, which read no file
        assert loads == []
        again = _cjk_pdf()
        assert Counter(loads) == read_lazily  # the next PDF reads them as usual
    assert read_lazily == {cjk: 2, **dict.fromkeys(sans, 2)}
    assert b"NotoSansCJKsc" in ahead and b"DejaVuSans-Oblique" in ahead
    assert ahead == lazy == again
