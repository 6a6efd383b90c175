"""Card 4 (ALiBi, RoPE scaling, buckets, 2-D grids): data and numbers against closed forms."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card4 import compute
from posecards.encodings.alibi import alibi_bias
from posecards.encodings.cosine import cosine_similarity
from posecards.encodings.softmax import softmax
from posecards.figures.card4 import DRAW
from posecards.render.text import fill_card, load_card_text

IDS = ["c4-alibi", "c4-rope-scaling", "c4-buckets", "c4-grid2d"]  # the card's panels
EXTRA = [
    "c4-alibi-slopes",
    "c4-deberta",
    "c4-unseen-angles",
]  # figures that no longer fit on the card


@pytest.fixture(scope="module")
def card() -> CardContent:
    return compute(PEParams())


# --- ALiBi -------------------------------------------------------------------------------


def test_alibi_slopes_closed_form(card: CardContent) -> None:
    data = card.figures["c4-alibi-slopes"]
    np.testing.assert_array_equal(data.slopes8, [2.0**-h for h in range(1, 9)])
    # 12 heads: the 8 slopes of 8, then the odd-numbered slopes 2^(-(2k-1)/2) of the 16-head set
    extra = [2.0 ** (-(2 * k - 1) / 2) for k in range(1, 5)]
    np.testing.assert_allclose(data.slopes12, [2.0**-h for h in range(1, 9)] + extra, rtol=1e-15)
    np.testing.assert_allclose(data.slopes12[8:], data.slopes16[0:8:2], rtol=0)
    assert data.odd_first_extra == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    assert data.odd_last_extra == pytest.approx(2.0**-3.5, rel=1e-15)


def test_alibi_bias_matrices_are_never_positive(card: CardContent) -> None:
    data = card.figures["c4-alibi"]
    bias = data.bias  # head 1 only
    n = bias.shape[-1]
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    assert data.bias_head == 1 and data.bias_inv_slope == 2.0
    np.testing.assert_array_equal(bias, np.where(j <= i, -0.5 * (i - j), -np.inf))
    finite = bias[np.isfinite(bias)]
    assert finite.max() == 0.0  # on the diagonal; everywhere else strictly negative
    assert card.numbers["alibi_corner"] == -0.5 * (n - 1)
    assert list(data.shown_heads) == [1, 4, 8]


def test_alibi_decay_closed_form(card: CardContent) -> None:
    data = card.figures["c4-alibi"]
    length = PEParams().positions
    d = np.arange(length, dtype=np.float64)
    for k, m in enumerate(data.shown_slopes):
        # softmax over distances d of -m·d: geometric weights e^(-m d) (1 - e^-m) / (1 - e^(-m L))
        expected = np.exp(-m * d) * (1 - np.exp(-m)) / (1 - np.exp(-m * length))
        np.testing.assert_allclose(data.weights[k], expected, rtol=1e-12)
    m1 = data.shown_slopes[0]
    wrong = np.exp(m1 * d) / np.exp(m1 * d).sum()
    np.testing.assert_allclose(data.weights_wrong_first, wrong, rtol=1e-12)
    nums = card.numbers
    assert nums["alibi_step_first"] == pytest.approx(math.exp(-0.5), rel=1e-12)
    assert nums["alibi_step_last"] == pytest.approx(math.exp(-1 / 256), rel=1e-12)
    far = length - 1
    assert nums["alibi_far_wrong"] == pytest.approx(
        (1 - math.exp(-0.5)) / (1 - math.exp(-0.5 * length))
    )
    assert nums["alibi_far_first"] == pytest.approx(
        math.exp(-0.5 * far) * (1 - math.exp(-0.5)) / (1 - math.exp(-0.5 * length)), rel=1e-10
    )
    assert nums["alibi_far_wrong"] > 0.3 > 1e-20 > nums["alibi_far_first"]


def test_alibi_key_only_softmax_equals_full_bias_softmax() -> None:
    # The card uses the memory-light key-only bias; it must give the causal bias's weights.
    small = compute(PEParams(positions=40)).figures["c4-alibi"]
    full = alibi_bias(8, 40)[[0, 3, 7], -1, :]  # last query row, keys 0..L-1
    np.testing.assert_allclose(small.weights, softmax(full)[:, ::-1], rtol=1e-12)


def test_softmax_masks_and_normalises() -> None:
    w = softmax([[0.0, -np.inf, 1.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert w[0, 1] == 0.0
    np.testing.assert_allclose(w[0, [0, 2]], np.exp([0, 1]) / (1 + math.e))
    with pytest.raises(ValueError, match="at least one finite"):
        softmax([-np.inf, -np.inf])


# --- RoPE scaling --------------------------------------------------------------------------


def _independent_ratios(base: float, d: int = 128, length: int = 8192) -> dict[str, np.ndarray]:
    k = np.arange(d // 2, dtype=np.float64)
    theta = base ** (-2 * k / d)
    lam = 2 * np.pi / theta
    # YaRN: ramp over k between floor(c(32)) and ceil(c(1)), c(b) = d ln(L/(2π b)) / (2 ln base)
    lo = max(math.floor(d * math.log(length / (2 * math.pi * 32)) / (2 * math.log(base))), 0)
    hi = min(math.ceil(d * math.log(length / (2 * math.pi * 1)) / (2 * math.log(base))), d - 1)
    r = np.clip((k - lo) / (hi - lo), 0, 1)
    yarn = (1 - r) + r / 4
    # Llama 3 at the same factor 4 as the others (issue 23: it was drawn at 8 beside them at 4):
    # keep λ < L/4, divide by 4 for λ > L, smooth in between
    a = (length / lam - 1) / (4 - 1)
    llama = np.where(lam < length / 4, 1.0, np.where(lam > length, 1 / 4, (1 - a) / 4 + a))
    return {
        "linear": np.full(d // 2, 0.25),
        "ntk": 4.0 ** (-2 * k / (d - 2)),  # base' = base·4^(d/(d-2))
        "dynamic2": 5.0 ** (-2 * k / (d - 2)),  # alpha = 4·2 - 3
        "dynamic4": 13.0 ** (-2 * k / (d - 2)),  # alpha = 4·4 - 3
        "yarn": yarn,
        "llama3": llama,
    }


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_rope_ratios_closed_form(base: float) -> None:
    content = compute(PEParams(base=base))
    data = content.figures["c4-rope-scaling"]
    expected = _independent_ratios(base)
    for row, key in zip(data.ratio, data.keys, strict=True):
        np.testing.assert_allclose(row, expected[key], rtol=1e-12, err_msg=key)
    np.testing.assert_allclose(
        data.attention_factor, [1, 1, 1, 1, 0.1 * math.log(4) + 1, 1], rtol=1e-15
    )
    assert set(data.factor) == {4.0}  # one factor for every method on the plot
    np.testing.assert_allclose(data.score_factor, data.attention_factor**2, rtol=1e-15)
    nums = content.numbers
    assert nums["llama3_factor"] == nums["rope_factor"] == 4 and nums["llama31_factor"] == 8
    assert nums["yarn_untouched"] == int(np.sum(expected["yarn"] == 1.0))
    assert nums["llama3_untouched"] == int(np.sum(np.isclose(expected["llama3"], 1.0, rtol=1e-12)))


def test_rope_pitfall_numbers(card: CardContent) -> None:
    nums = card.numbers
    assert nums["pi_short_orig"] == pytest.approx(2 * math.pi, rel=1e-15)
    assert nums["pi_short_scaled"] == pytest.approx(4 * 2 * math.pi, rel=1e-15)
    assert nums["ntk_ratio_high"] == 1.0 and nums["yarn_ratio_high"] == 1.0
    assert nums["ntk_ratio_low"] == pytest.approx(0.25, rel=1e-12)
    assert nums["dyn2_ratio_low"] == pytest.approx(1 / 5, rel=1e-12)
    assert nums["dyn4_ratio_low"] == pytest.approx(1 / 13, rel=1e-12)
    assert nums["yarn_attention"] == pytest.approx(1.1386294361119891, rel=1e-12)
    assert (nums["yarn_untouched"], nums["llama3_untouched"]) == (26, 41)
    assert nums["rope_longest"] == pytest.approx(2 * math.pi * 10000 ** (126 / 128), rel=1e-12)


# --- buckets -----------------------------------------------------------------------------


def _t5_reference(n: int, bidirectional: bool) -> int:
    """Hugging Face's T5Attention._relative_position_bucket for a key n tokens back."""
    import torch
    from transformers.models.t5.modeling_t5 import T5Attention

    r = torch.tensor([-n])
    return int(T5Attention._relative_position_bucket(r, bidirectional, 32, 128)[0])


def test_t5_bucket_numbers(card: CardContent) -> None:
    data = card.figures["c4-buckets"]
    nums = card.numbers
    n = data.distance.astype(int)
    for key, values, bidirectional in (
        ("encoder", data.encoder, True),
        ("decoder", data.decoder, False),
    ):
        ref = [_t5_reference(int(x), bidirectional) for x in n]
        np.testing.assert_array_equal(values, ref, err_msg=key)
    # encoder: 16 buckets per side, 8 exact; the last starts at ceil(8·16^(7/8))
    assert nums["t5_enc_exact"] == 8 and nums["t5_enc_last_bucket"] == 15
    assert nums["t5_enc_last_start"] == math.ceil(8 * 16 ** (7 / 8)) == 91
    # decoder: all 32 buckets on one side, 16 exact; the last starts at ceil(16·8^(15/16))
    assert nums["t5_dec_exact"] == 16 and nums["t5_dec_last_bucket"] == 31
    assert nums["t5_dec_last_start"] == math.ceil(16 * 8 ** (15 / 16)) == 113
    enc, dec = data.encoder, data.decoder
    np.testing.assert_array_equal(enc[:8], np.arange(8))
    np.testing.assert_array_equal(dec[:16], np.arange(16))
    assert np.all(enc[91:] == 15) and enc[90] == 14
    assert np.all(dec[113:] == 31) and dec[112] == 30


def test_deberta_bucket_numbers(card: CardContent) -> None:
    data = card.figures["c4-deberta"]
    r = data.distance.astype(int)
    b = data.bucket.astype(int)

    def ref(x: int) -> int:  # float64 reference, away from integer edges
        if abs(x) <= 128:
            return x
        return int(
            math.copysign(128 + math.ceil(math.log(abs(x) / 128) / math.log(511 / 128) * 127), x)
        )

    for x in (0, 1, -1, 128, -128, 129, 300, -777, 1000, -1000):
        assert b[r == x][0] == ref(x), x
    assert np.array_equal(b, -b[::-1])  # odd symmetry
    assert data.edge_bucket == 255 and data.far_bucket == ref(1000) == 317
    # first distance sharing a bucket: 131 and 132 both map to 131
    assert data.first_shared == 131
    assert len(set(b[(r >= 0) & (r <= 130)])) == 131


# --- 2-D grid ----------------------------------------------------------------------------


def _mae_reference(g: int, d: int, base: float) -> np.ndarray:
    rows, cols = np.divmod(np.arange(g * g), g)
    omega = base ** (-np.arange(d // 4) / (d / 4))  # 1/base^(2i/(d/2))

    def half(p: np.ndarray) -> np.ndarray:
        return np.concatenate([np.sin(p[:, None] * omega), np.cos(p[:, None] * omega)], axis=1)

    return np.concatenate([half(cols.astype(float)), half(rows.astype(float))], axis=1)


@pytest.mark.parametrize(("d_model", "d_used"), [(512, 512), (510, 508), (66, 64)])
def test_grid_similarity_maps(d_model: int, d_used: int) -> None:
    content = compute(PEParams(d_model=d_model, base=10000.0))
    data = content.figures["c4-grid2d"]
    assert data.d_used == d_used and data.d_adjusted == (d_used != d_model)
    pe = _mae_reference(14, d_used, 10000.0)
    unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    for k, (y, x) in enumerate(data.patches.astype(int)):
        np.testing.assert_allclose(
            data.sim_mae[k].ravel(), unit @ unit[y * 14 + x], rtol=0, atol=1e-12
        )
        assert data.sim_mae[k, y, x] == pytest.approx(1.0, abs=1e-12)
        # sum angle: the map depends on x + y only (constant along anti-diagonals)
        s = data.sim_sum[k]
        yy, xx = np.divmod(np.arange(196), 14)
        for total in range(27):
            vals = s.ravel()[yy + xx == total]
            assert np.ptp(vals) < 1e-12


def test_grid_collision_numbers(card: CardContent) -> None:
    nums = card.numbers
    assert nums["grid_diff_sum"] == 0.0
    # the fastest pair (ω = 1) differs most: |cos 1 - cos 2|
    assert nums["grid_diff_mae"] == pytest.approx(math.cos(1) - math.cos(2), rel=1e-12)
    assert nums["grid_sum_distinct"] == 2 * 14 - 1
    assert nums["grid_mae_distinct"] == 14 * 14
    assert nums["grid_same_centre"] == 13  # x + y = 14 with 1 <= x <= 13
    assert 0.9 < nums["grid_cos_mae"] < 1.0


def test_cosine_similarity_helper() -> None:
    c = cosine_similarity([[1.0, 0.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, -3.0]])
    np.testing.assert_allclose(c, [[1, 0], [1 / math.sqrt(2), -1 / math.sqrt(2)]], atol=1e-15)
    with pytest.raises(ValueError, match="zero vector"):
        cosine_similarity([0.0, 0.0], [1.0, 0.0])


# --- parameters flow into the numbers -------------------------------------------------------


def test_numbers_follow_parameters(card: CardContent) -> None:
    other_base = compute(PEParams(base=500000.0)).numbers
    for key in ("yarn_untouched", "llama3_untouched", "rope_longest", "grid_cos_mae"):
        assert other_base[key] != card.numbers[key], key
    other_pos = compute(PEParams(positions=64)).numbers
    assert (
        other_pos["alibi_far"] == 63
        and other_pos["alibi_far_first"] != card.numbers["alibi_far_first"]
    )
    other_d = compute(PEParams(d_model=130))
    assert other_d.numbers["grid_d"] == 128 and other_d.numbers["grid_d_adjusted"] is True
    assert other_d.numbers["grid_cos_mae"] != card.numbers["grid_cos_mae"]


def test_extreme_parameters_are_fast_enough() -> None:
    import time

    start = time.perf_counter()
    content = compute(PEParams(d_model=4096, base=1e6, positions=131072))
    assert time.perf_counter() - start < 2.0
    assert content.figures["c4-alibi"].weights.shape == (3, 131072)


# --- text, ids, drawing ----------------------------------------------------------------------


def test_ids_match_everywhere(card: CardContent) -> None:
    text = load_card_text(4)
    assert list(DRAW) == IDS + EXTRA
    assert list(card.figures) == IDS + EXTRA
    assert [p.id for p in text.panels] == IDS


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_has_a_value(card: CardContent, lang: str) -> None:
    filled = fill_card(load_card_text(4), lang, card.numbers)
    assert len(filled.takeaways) == 3 and len(filled.pitfalls) >= 2
    blob = " ".join(
        [filled.title, filled.thesis, filled.formula_note]
        + [" ".join(p[1:]) for p in filled.panels]
        + [v for _, v in filled.takeaways + filled.pitfalls]
    )
    assert "{{" not in blob and "}}" not in blob
    assert "0.39" in blob  # ALiBi wrong-sign weight
    assert "91" in blob and "113" in blob  # T5's last bucket: encoder, decoder


def test_formula_renders() -> None:
    from matplotlib.mathtext import MathTextParser

    MathTextParser("path").parse(load_card_text(4).formula_tex)


def test_card_text_has_no_typed_numbers_outside_placeholders() -> None:
    text = load_card_text(4)
    entries = [text.thesis, text.formula_note, *(v for _, v in text.takeaways + text.pitfalls)]
    entries += [
        b for p in (*text.panels, *text.figures) for b in (p.alt, p.caption) if b is not None
    ]
    allowed = {"0", "1"}  # "head 1", "similarity 1", "bucket 0", "bias ≤ 0"
    for entry in entries:
        for lang in ("en", "zh"):
            bare = re.sub(r"\{\{.*?\}\}", "", entry.get(lang))
            bare = re.sub(
                r"T5|Llama 3|\d-D|2\^\(−8h/H\)|card [78]|第 [78] 张卡|2π", "", bare
            )  # names
            found = set(re.findall(r"\d+(?:\.\d+)?", bare)) - allowed
            assert not found, (entry.en[:40], found)


# The figures at the default parameters, in both languages and themes, are drawn inside
# card_style (a missing glyph raises) by tests/test_layout.py and tests/test_contrast.py.


def _styles_differ(fig: object) -> list[tuple[str, str]]:
    """Pairs of labelled lines in one axes that differ by colour only (same style and marker)."""
    same = []
    for ax in fig.axes:  # type: ignore[attr-defined]
        lines = [ln for ln in ax.get_lines() if not str(ln.get_label()).startswith("_")]
        for i, a in enumerate(lines):
            for b in lines[i + 1 :]:
                if (a.get_linestyle(), a.get_marker()) == (b.get_linestyle(), b.get_marker()):
                    same.append((str(a.get_label()), str(b.get_label())))
    return same


@pytest.mark.parametrize("fid", ["c4-alibi", "c4-rope-scaling"])
def test_lines_differ_by_more_than_colour(card: CardContent, fid: str) -> None:
    """Under deuteranopia NTK-aware and YaRN (and heads 4 and 8) share a hue: style tells them
    apart."""
    from posecards.figures.style import card_style
    from posecards.render.figure import draw_standalone

    with card_style("light"):
        fig = draw_standalone(fid, card.figures[fid], "en", "light")
    assert sum(len(ax.get_lines()) for ax in fig.axes) >= 3
    assert _styles_differ(fig) == []


def test_alibi_formula_states_its_condition_and_the_rule_for_other_head_counts() -> None:
    """One story with card 7: m_h = 2^(-8h/H) is Press et al.'s slope set only when H is a power
    of two (closed form against alibi_slopes); card 4 says so in its formula and note, and card 7
    names the same formula, with the same letter, as the mistake for other head counts."""
    from posecards.encodings.alibi import alibi_slopes

    for heads in (1, 2, 4, 8, 16, 32, 64):
        h = np.arange(1, heads + 1, dtype=np.float64)
        np.testing.assert_array_equal(alibi_slopes(heads), 2.0 ** (-8.0 * h / heads))
    for heads in (6, 12, 40):  # not powers of two: the formula is not what was trained
        h = np.arange(1, heads + 1, dtype=np.float64)
        assert not np.allclose(alibi_slopes(heads), 2.0 ** (-8.0 * h / heads))
    text4, text7 = load_card_text(4), load_card_text(7)
    assert "2^{-8h/H}" in text4.formula_tex and "2^(−8h/H)" in text7.panels[2].title.en
    assert "power of two" in text4.formula_note.en and "二的幂" in text4.formula_note.zh
    assert "card 7" in text4.formula_note.en and "第 7 张卡" in text4.formula_note.zh
    # the rule for other head counts, on card 4's own figure page
    rule = text4.figures[[f.id for f in text4.figures].index("c4-alibi-slopes")].alt
    assert "every other slope" in rule.en and "not a power of two" in rule.en
