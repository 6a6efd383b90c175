"""Card 1 (why position): computed data against closed forms, card text, and drawing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card1 import compute
from posecards.figures.card1 import DRAW
from posecards.figures.style import card_style
from posecards.render.figure import draw_standalone
from posecards.render.files import figure_bytes
from posecards.render.text import load_card_text

IDS = [
    "c1-permutation",
    "c1-where",
    "c1-counting",
    "c1-wavelengths",
    "c1-pe-table",
    "c1-trajectory",
    "c1-pairs",
]
PANEL_IDS = IDS[:4]  # the table, the trajectory and the pairs: figure pages only


@pytest.fixture(scope="module")
def content() -> CardContent:
    return compute(PEParams())  # one UMAP fit (numba compiles on first use)


@pytest.fixture(scope="module")
def other() -> CardContent:
    return compute(PEParams(d_model=64, base=500.0, positions=32))


# --- permutation ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_attention_without_pe_only_permutes(content: CardContent, lang: str) -> None:
    f = content.figures["c1-permutation"]
    p = list(f.order)
    assert p == [2, 1, 0]  # the reversal
    assert f.sentence(lang).tokens_reordered == [f.sentence(lang).tokens[i] for i in p]
    w, wr = f.sentence(lang).weights_plain, f.sentence(lang).weights_plain_reordered
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)  # softmax rows
    # W(PX) = P W(X) P^T: the same matrix, rows and columns reordered
    np.testing.assert_allclose(wr, w[p][:, p], atol=1e-14)
    assert f.sentence(lang).deviation_without_pe < 1e-14
    assert f.sentence(lang).weight_deviation_without_pe < 1e-14
    # with PE the reordered sentence gives different weights and outputs
    assert f.sentence(lang).weight_deviation_with_pe > 1e-2
    assert f.sentence(lang).deviation_with_pe > 1e-2
    assert content.numbers[f"dev_plain_{lang}"] == f.sentence(lang).deviation_without_pe
    assert content.numbers[f"dev_pe_{lang}"] == f.sentence(lang).deviation_with_pe


def test_tokens_per_language(content: CardContent) -> None:
    f = content.figures["c1-permutation"]
    assert f.tokens_en == ["I", "eat", "apples"]
    assert f.tokens_zh == ["我", "吃", "苹果"]
    assert f.tokens_reordered_zh == ["苹果", "吃", "我"]


# --- PE table -------------------------------------------------------------------------------


@pytest.mark.parametrize("params", [PEParams(), PEParams(base=500.0)])
def test_pe_table_closed_form(params: PEParams) -> None:
    from posecards.content.card1 import _pe_table

    data, numbers = _pe_table(params)
    pe = data.pe
    assert pe.shape == (10, 8)
    p = np.arange(10.0)[:, None]
    i = np.arange(4.0)[None, :]
    angle = p / params.base ** (2 * i / 8)  # p / b^(2i/d)
    np.testing.assert_allclose(pe[:, 0::2], np.sin(angle), atol=1e-15)
    np.testing.assert_allclose(pe[:, 1::2], np.cos(angle), atol=1e-15)
    assert numbers["table_pe_1_0"] == pytest.approx(math.sin(1.0), abs=1e-15)
    assert numbers["table_lam_first"] == pytest.approx(2 * math.pi)
    assert numbers["table_lam_last"] == pytest.approx(2 * math.pi * params.base ** (6 / 8))


# --- trajectory -----------------------------------------------------------------------------


def test_trajectory(content: CardContent) -> None:
    """The card's own positions 0..positions-1 (128, what its footer says; issue 23: the UMAP
    used 0-255 under a footer saying positions = 128)."""
    f = content.figures["c1-trajectory"]
    n = PEParams().positions
    p = np.arange(float(n))
    assert list(f.positions) == list(range(n))
    assert f.umap.shape == (n, 2) and np.all(np.isfinite(f.umap))
    np.testing.assert_allclose(f.fast, np.c_[np.sin(p), np.cos(p)], atol=1e-12)
    # slow pair i = d/4 = 128: ω = b^(-2i/d) = b^(-1/2)
    w = 10000.0**-0.5
    np.testing.assert_allclose(f.slow, np.c_[np.sin(p * w), np.cos(p * w)], atol=1e-12)
    assert list(f.slow_dims) == [256, 257]
    assert f.slow_wavelength == pytest.approx(2 * math.pi * 100.0)
    # positions 0..N-1 turn the slow pair by (N-1)·ω: (N-1)/λ turns
    assert content.numbers["slow_turns"] == pytest.approx((n - 1) / (200 * math.pi))
    assert content.numbers["fast_turns"] == pytest.approx((n - 1) / (2 * math.pi))  # 20.21
    assert content.numbers["traj_n"] == n and content.numbers["traj_last"] == n - 1
    # PCA against an independent eigen-decomposition (axes agree up to sign)
    angle = p[:, None] * 10000.0 ** (-2 * np.arange(256) / 512)  # (n, d/2)
    x = np.empty((n, 512))
    x[:, 0::2], x[:, 1::2] = np.sin(angle), np.cos(angle)
    x -= x.mean(axis=0)
    evals, evecs = np.linalg.eigh(x.T @ x)
    ref = x @ evecs[:, ::-1][:, :2]
    np.testing.assert_allclose(np.abs(f.pca), np.abs(ref), atol=1e-8)
    # UMAP keeps neighbours together: consecutive positions are much closer than a random pair
    step = np.linalg.norm(np.diff(f.umap, axis=0), axis=1)
    spread = np.linalg.norm(f.umap[:, None] - f.umap[None], axis=2)
    assert np.median(step) < 0.1 * np.median(spread)


def test_trajectory_samples_long_position_ranges() -> None:
    """At most TRAJECTORY_POSITIONS points, spread over 0..positions-1, both ends included."""
    from posecards.content.card1 import TRAJECTORY_POSITIONS, _trajectory

    data, numbers = _trajectory(PEParams(d_model=64, positions=5000))
    pos = np.asarray(data.positions)
    assert pos.size == TRAJECTORY_POSITIONS and pos[0] == 0 and pos[-1] == 4999
    assert numbers["traj_last"] == 4999


# --- where position enters ------------------------------------------------------------------


def test_where_position_enters_shift_changes(content: CardContent) -> None:
    """Shift every position by 100: added sinusoids change the scores (absolute), RoPE and the
    ALiBi bias do not (relative), NoPE has nothing to change."""
    f = content.figures["c1-where"]
    assert list(f.places) == ["added", "rotated", "bias", "none"]
    added, rotated, bias, none = (float(v) for v in f.change)
    assert added > 0.5 * content.numbers["where_score_scale"]  # a large change
    assert rotated < 1e-13 and bias == 0.0 and none == 0.0
    assert content.numbers["where_shift"] == f.shift == 100


def test_where_added_change_recomputed_independently() -> None:
    """The added-encoding change, recomputed with torch's own sin/cos (same random head)."""
    import torch

    from posecards.content.card1 import DEMO_D_MODEL, WHERE_SHIFT, WHERE_TOKENS, _where

    d, n = DEMO_D_MODEL, WHERE_TOKENS
    rng = np.random.default_rng(7)
    x = torch.from_numpy(rng.standard_normal((n, d)))
    w_q = torch.from_numpy(rng.standard_normal((d, d)) / np.sqrt(d))
    w_k = torch.from_numpy(rng.standard_normal((d, d)) / np.sqrt(d))
    inv = torch.tensor(10000.0, dtype=torch.float64) ** (
        -torch.arange(0, d, 2, dtype=torch.float64) / d
    )

    def scores(shift: float) -> torch.Tensor:
        ang = (torch.arange(n, dtype=torch.float64) + shift)[:, None] * inv
        pe = torch.stack([ang.sin(), ang.cos()], dim=-1).reshape(n, d)  # interleaved
        xp = x + pe
        return (xp @ w_q) @ (xp @ w_k).T / d**0.5

    ref = float((scores(WHERE_SHIFT) - scores(0.0)).abs().max())
    assert _where(PEParams())[1]["where_added"] == pytest.approx(ref, rel=1e-12)


# --- counting to a sinusoid -----------------------------------------------------------------


def test_counting_panel(content: CardContent) -> None:
    f = content.figures["c1-counting"]
    n, p = int(f.length), int(f.p)
    assert f.normalised[p] == pytest.approx(p / (n - 1))
    assert f.normalised_short[p] == pytest.approx(p / (int(f.short_length) - 1))
    digits = np.asarray(f.digits)  # (bits, n)
    assert [int("".join(str(int(b)) for b in digits[::-1, q]), 2) for q in range(n)] == list(
        range(n)
    ) or digits.shape[0] < 4  # the digits read back as the positions (mod 2^bits)
    assert all(
        sum(int(digits[j, q]) << j for j in range(digits.shape[0])) == q % 2 ** digits.shape[0]
        for q in range(n)
    )
    nums = content.numbers
    assert nums["count_pair_ratio"] == pytest.approx(10000.0 ** (2 / 512))
    assert nums["count_period_max"] == 2 ** digits.shape[0]


# --- wavelengths ----------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["content", "other"])
def test_wavelength_ladder(which: str, content: CardContent, other: CardContent) -> None:
    c = content if which == "content" else other
    params = PEParams() if which == "content" else PEParams(d_model=64, base=500.0)
    d, b = params.d_model, params.base
    f = c.figures["c1-wavelengths"]
    i = np.arange(d // 2)
    np.testing.assert_allclose(f.wavelengths, 2 * np.pi * b ** (2 * i / d), rtol=1e-13)
    assert c.numbers["lam_min"] == pytest.approx(2 * math.pi)
    assert c.numbers["lam_max"] == pytest.approx(2 * math.pi * b ** ((d - 2) / d))
    # pairs with λ_i <= L: i <= (d/2) log_b(L / 2π)
    for length, k in zip(f.context_lengths, f.pairs_turning, strict=True):
        bound = (d / 2) * math.log(length / (2 * math.pi), b)
        assert k == min(d // 2, math.floor(bound) + 1)
    assert list(f.context_lengths) == [512, 2048, 8192, 32768, 131072]


def test_default_numbers(content: CardContent) -> None:
    n = content.numbers
    assert n["lam_max"] == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert n["pairs_turning_ctx"] == 161  # i <= 256 · log10(2048 / 2π) / 4 = 160.8
    assert n["n_pairs"] == 256


# --- learned vs sinusoidal --------------------------------------------------------------------


def test_learned_table(content: CardContent, other: CardContent) -> None:
    n = content.numbers
    assert n["learned_raises"] is True
    assert "2048" in str(n["learned_error"])
    assert n["learned_bytes"] == 2048 * 768 * 4
    assert n["learned_mib"] == 6.0
    assert n["learned_last"] == 2047
    assert n["sin_beyond_finite"] is True
    assert n["sin_beyond_norm"] == pytest.approx(math.sqrt(768 / 2))
    assert n["pe_norm"] == pytest.approx(math.sqrt(512 / 2)) and float(n["pe_norm_spread"]) < 1e-12
    assert other.numbers["pe_norm"] == pytest.approx(math.sqrt(64 / 2))
    assert other.numbers["pe_norm_positions"] == 32


def test_numbers_follow_params(content: CardContent, other: CardContent) -> None:
    changed = [
        "lam_max",
        "lam_ratio",
        "pairs_turning_ctx",
        "n_pairs",
        "lam_slow",
        "table_lam_last",
        "table_pe_9_last",
        "pe_norm",
    ]
    for key in changed:
        assert content.numbers[key] != other.numbers[key], key
    base_only = compute_base_only(500.0)
    assert base_only["lam_max"] != content.numbers["lam_max"]


def compute_base_only(base: float) -> dict[str, object]:
    from posecards.content.card1 import _pe_table, _wavelengths

    params = PEParams(base=base)
    return {**_pe_table(params)[1], **_wavelengths(params)[1]}


# --- card text and figures ------------------------------------------------------------------


def test_ids_match(content: CardContent) -> None:
    text = load_card_text(1)
    assert list(DRAW) == IDS
    assert list(content.figures) == IDS
    assert [p.id for p in text.panels] == PANEL_IDS
    assert len(text.takeaways) == 3 and len(text.pitfalls) >= 2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_has_a_value(content: CardContent, lang: str) -> None:
    from posecards.render.text import fill_card

    filled = fill_card(load_card_text(1), lang, content.numbers)
    assert "{{" not in repr(filled)
    assert filled.title and len(filled.panels) == 4


def test_formula_renders() -> None:
    import io

    from matplotlib.mathtext import math_to_image

    math_to_image(load_card_text(1).formula_tex, io.BytesIO(), format="png")


# The figures at the default parameters, in both languages and themes, are drawn inside
# card_style (a missing glyph raises) by tests/test_layout.py and tests/test_contrast.py.


@pytest.mark.slow
def test_figures_draw_other_params(other: CardContent) -> None:
    for fid in IDS:
        with card_style("light"):
            figure_bytes(draw_standalone(fid, other.figures[fid], "en", "light"), "png")


def test_card_1_statements_say_what_their_numbers_show(content: CardContent) -> None:
    """Issue 36 point 6: the 3-digit counter repeats after 8 (p and p + 8 share a code, checked
    with Python's own binary digits); the normalised position is p/(N − 1), divided by the last
    position; the reversed sentence is labelled; the outputs' and the weights' differences are
    named apart; relative vectors inside attention are a route, unmoved by a shift."""
    from posecards.content.card1 import COUNT_BITS, COUNT_POSITIONS
    from posecards.render.text import CardLabels, fill_card

    n = content.numbers
    code = [tuple((p >> j) & 1 for j in range(COUNT_BITS)) for p in range(COUNT_POSITIONS)]
    repeat = next(p for p in range(1, COUNT_POSITIONS) if code[p] == code[0])
    assert n["count_repeat"] == repeat == 2**COUNT_BITS == 8
    assert all(code[p] == code[p + repeat] for p in range(COUNT_POSITIONS - repeat))
    text = load_card_text(1)
    labels = CardLabels(text.labels, "en")
    assert "p + 8 repeats p" in labels("count_bits_title", r=n["count_repeat"])
    assert labels("query_reversed") != labels("query")
    for lang in ("en", "zh"):
        filled = fill_card(text, lang, n)
        counting = dict((p[0], p[2]) for p in filled.panels)["c1-counting"]
        assert "sequence length" not in counting and "序列长度" not in counting
        blind = dict(filled.takeaways)["order-blind"]
        outputs, weights = f"{n[f'dev_pe_{lang}']:.3f}", f"{n[f'wdev_pe_{lang}']:.3f}"
        assert outputs in blind and weights in blind  # two numbers, each named
        where = dict((p[0], p[2]) for p in filled.panels)["c1-where"]
        assert "DeBERTa" in where and "Transformer-XL" in where and "Shaw" in where
    assert n["where_relative"] == 0.0 and n["where_added"] > 1.0
