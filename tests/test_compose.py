"""Composing a card: every glyph real, and line breaking that keeps what belongs together
(the sizes, overlaps and edges of every composed card: test_layout.py)."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg

from posecards.figures.style import MissingGlyphError, card_style
from posecards.render import wrap as wrapping


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
    from posecards.render.wrap import wrap

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


def _greedy_wrap(text: str, width_pt: float, size: float, m: object) -> list[str]:
    """The definition wrap keeps: add tokens one by one while the measured line fits (one
    measure per token), then the same rules for punctuation, brackets and orphans."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        para: list[list[str]] = []
        toks: list[str] = []
        for tok in wrapping._glue(wrapping._TOKENS.findall(paragraph)):
            if not toks or m.width("".join([*toks, tok]).strip(), size) <= width_pt:  # type: ignore[attr-defined]
                toks.append(tok)
                continue
            if tok.isspace():
                para.append(toks)
                toks = []
                continue
            carry: list[str] = []
            if tok[0] in wrapping._NO_LINE_START and len(toks) > 1:
                carry = [toks.pop()]
            while len(toks) > 1 and toks[-1] and toks[-1][-1] in wrapping._NO_LINE_END:
                carry.insert(0, toks.pop())
            para.append(toks)
            toks = [*carry, tok]
        para.append(toks)
        para = [ln for ln in para if "".join(ln).strip()]
        if len(para) > 1:
            last = "".join(para[-1]).strip()
            if len([c for c in last if c not in wrapping._PUNCT_ONLY]) <= 1:
                prev = para[-2]
                while prev and prev[-1].isspace():
                    prev.pop()
                if len(prev) > 1:
                    para[-1] = [prev.pop(), *para[-1]]
        lines.extend("".join(ln).strip() for ln in para)
    return [ln for ln in lines if ln] or [""]


class _KernedMeasure:
    """Per-character advances plus a pair kerning that may pull a glyph back, never past the
    one before it: a line's width never shrinks as characters are appended (as for ink boxes)."""

    def __init__(self, advance: dict[str, float], kern: float) -> None:
        self.advance, self.kern, self.calls = advance, kern, 0

    def width(self, s: str, size: float, weight: str = "normal") -> float:
        self.calls += 1
        w = 0.0
        for i, c in enumerate(s):
            a = self.advance.get(c, 0.6) * size
            w += a - (self.kern * a if i and (ord(c) + ord(s[i - 1])) % 3 == 0 else 0.0)
        return w


_WORDS = ["b = 10,000", "6.00 MiB", "旋转", "位置编码", "（", "）", "，", "。", "$\\theta_i$",
          "angle", "of", "the", "pair", "4,096 个", "d", "=", "512", "—", "x"]  # fmt: skip


@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=40),
    seps=st.lists(st.sampled_from(["", " ", " ", "\n"]), min_size=40, max_size=40),
    width=st.floats(5.0, 400.0),
    kern=st.floats(0.0, 0.5),
    advances=st.dictionaries(
        st.sampled_from(list("abdefghilnoprstx旋转位置编码")), st.floats(0.2, 1.2)
    ),
)
def test_bisected_wrap_equals_the_token_by_token_greedy(
    words: list[str], seps: list[str], width: float, kern: float, advances: dict[str, float]
) -> None:
    text = "".join(w + s for w, s in zip(words, seps, strict=False))
    m = _KernedMeasure(advances, kern)
    assert wrapping.wrap(text, width, 10.0, m) == _greedy_wrap(text, width, 10.0, m)  # type: ignore[arg-type]


def test_bisection_measures_a_long_paragraph_a_few_times_per_line() -> None:
    text = " ".join(["the angle of each pair grows with its position"] * 12)
    m = _KernedMeasure({}, 0.0)
    lines = wrapping.wrap(text, 200.0, 10.0, m)  # type: ignore[arg-type]
    tokens = len(wrapping._TOKENS.findall(text))
    assert len(lines) > 5
    assert m.calls < tokens / 3, (m.calls, tokens)  # the greedy measures once per token


def test_a_line_never_gets_narrower_as_tokens_are_appended() -> None:
    """What the bisection rests on, with the cards' fonts and renderer: every prefix of a card's
    thesis and takeaways (both languages, with math and punctuation) is at least as wide as the
    one before it."""
    import matplotlib as mpl
    from matplotlib.figure import Figure

    from posecards.config import PEParams
    from posecards.content import compute_card
    from posecards.render.text import fill_card, load_card_text

    with card_style("light"):
        fig = Figure()
        m = wrapping._Measure(
            FigureCanvasAgg(fig).get_renderer(), list(mpl.rcParams["font.family"])
        )
        checked = 0
        for card in (2, 5):
            numbers = compute_card(card, PEParams()).numbers
            for lang in ("en", "zh"):
                filled = fill_card(load_card_text(card), lang, numbers)
                for s in (filled.thesis, filled.formula_note, *(t for _, t in filled.takeaways)):
                    tokens = wrapping._glue(wrapping._TOKENS.findall(s.replace("\n", " ")))[:40]
                    widths = [
                        m.width("".join(tokens[: k + 1]).strip(), 16.0) for k in range(len(tokens))
                    ]
                    assert widths == sorted(widths), s
                    checked += len(widths)
    assert checked > 200
