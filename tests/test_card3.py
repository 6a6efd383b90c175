"""Card 3 (RoPE): computed data against closed forms and plain-numpy recomputations; text and
figures wired together in both languages and both themes."""

from __future__ import annotations

import io
import math
import time

import numpy as np
import pytest

from posecards.config import PEParams
from posecards.content import card3
from posecards.content.card3 import compute
from posecards.encodings.toeplitz import diagonal_offsets, diagonal_spread
from posecards.figures.card3 import DRAW
from posecards.figures.style import card_style
from posecards.render.figure import draw_standalone
from posecards.render.text import CardLabels, fill_card, load_card_text

IDS = ["c3-rotation", "c3-scores", "c3-decay", "c3-base"]  # the card's panels
EXTRA = ["c3-layouts"]  # a figure that no longer fits on the card


@pytest.fixture(scope="module")
def content():
    return compute(PEParams())


@pytest.fixture(scope="module")
def content_500k():
    return compute(PEParams(base=500000.0))


# --- plain-numpy references ---------------------------------------------------------------------


def _theta(dim: int, base: float) -> np.ndarray:
    return base ** (-np.arange(0, dim, 2) / dim)  # (dim/2,)


def _complex(x: np.ndarray, layout: str) -> np.ndarray:
    """The pairs of x as complex numbers z_k = x_a + i x_b, shape (..., dim/2)."""
    h = x.shape[-1] // 2
    if layout == "half":
        return x[..., :h] + 1j * x[..., h:]
    return x[..., 0::2] + 1j * x[..., 1::2]


def _rope_scores_ref(q, k, pos, theta, layout):
    """S[m, n] = Re sum_k zq_m,k conj(zk_n,k) e^(i (p_m - p_n) theta_k)."""
    zq = _complex(np.atleast_2d(q), layout) * np.exp(1j * np.outer(pos, theta))
    zk = _complex(np.atleast_2d(k), layout) * np.exp(1j * np.outer(pos, theta))
    return (zq @ zk.conj().T).real


def _spread_ref(s: np.ndarray) -> np.ndarray:
    """Peak-to-peak of every diagonal with ufunc.at (no loop), ordered by offset j - i."""
    n_rows, n_cols = s.shape
    off = (np.arange(n_cols)[None, :] - np.arange(n_rows)[:, None]).ravel() + n_rows - 1
    hi = np.full(n_rows + n_cols - 1, -np.inf)
    lo = np.full(n_rows + n_cols - 1, np.inf)
    np.maximum.at(hi, off, s.ravel())
    np.minimum.at(lo, off, s.ravel())
    return hi - lo


# --- toeplitz (new math file) -------------------------------------------------------------------


def test_diagonal_spread_matches_reference_and_is_zero_for_toeplitz():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((7, 5))
    np.testing.assert_allclose(diagonal_spread(m), _spread_ref(m), rtol=0, atol=0)
    assert diagonal_offsets((7, 5)).tolist() == list(range(-6, 5))
    c = rng.standard_normal(11)
    toeplitz = c[np.arange(5)[None, :] - np.arange(7)[:, None] + 6]  # T[i, j] = c[j - i]
    assert diagonal_spread(toeplitz).max() == 0.0
    with pytest.raises(ValueError, match="matrix"):
        diagonal_spread(np.ones(3))


# --- c3-rotation --------------------------------------------------------------------------------


def test_rotation_worked_example_closed_form(content):
    d = content.figures["c3-rotation"]
    m, n, th = card3.EX_M, card3.EX_N, card3.EX_THETA
    # q = (1, 0) rotated by m th is (cos, sin); k = (0, 1) rotated by n th is (-sin, cos)
    np.testing.assert_allclose(d.q_rot, [math.cos(m * th), math.sin(m * th)], atol=1e-15)
    np.testing.assert_allclose(d.k_rot, [-math.sin(n * th), math.cos(n * th)], atol=1e-15)
    np.testing.assert_allclose(d.q_rot_matrix, d.q_rot, atol=1e-15)
    np.testing.assert_allclose(d.k_rot_matrix, d.k_rot, atol=1e-15)
    # <R(a) e1, R(b) e2> = sin(a - b) = -sin((n - m) th)
    expected = -math.sin((n - m) * th)
    assert d.score_rope == pytest.approx(expected, abs=1e-15)
    assert d.score_relative == pytest.approx(expected, abs=1e-15)
    assert d.score_shifted == pytest.approx(expected, abs=1e-14)
    assert d.difference < 1e-15
    assert content.numbers["ex_score"] == pytest.approx(-0.4794255386, abs=1e-10)
    # the seed article's numbers (k_rot ~ (-0.98, 0.21), score ~ -0.36) are wrong
    assert abs(content.numbers["ex_krot1"] - 0.21) > 0.1
    assert abs(content.numbers["ex_score"] + 0.36) > 0.1


# --- c3-scores ----------------------------------------------------------------------------------


def test_scores_against_complex_reference(content):
    d = content.figures["c3-scores"]
    pos = d.positions
    rng = np.random.default_rng(card3.SEED)
    q, k = rng.standard_normal(card3.HEAD_DIM), rng.standard_normal(card3.HEAD_DIM)
    theta = _theta(card3.HEAD_DIM, 10000.0)
    ref = _rope_scores_ref(np.tile(q, (pos.size, 1)), np.tile(k, (pos.size, 1)), pos, theta, "half")
    np.testing.assert_allclose(d.scores_rope, ref, atol=1e-11)
    # additive: (q + PE_m).(k + PE_n), PE interleaved (sin at 2i, cos at 2i+1)
    ang = np.outer(pos, theta)
    pe = np.empty((pos.size, card3.HEAD_DIM))
    pe[:, 0::2], pe[:, 1::2] = np.sin(ang), np.cos(ang)
    np.testing.assert_allclose(d.scores_additive, (q + pe) @ (k + pe).T, atol=1e-11)
    assert d.deviation_rope == pytest.approx(_spread_ref(ref).max(), abs=1e-11)
    assert d.deviation_additive == pytest.approx(
        _spread_ref((q + pe) @ (k + pe).T).max(), rel=1e-12
    )
    assert d.deviation_rope < 1e-10 < 1.0 < d.deviation_additive
    assert content.numbers["scores_n"] == 128 and content.numbers["scores_step"] == 1


def test_scores_decimated_to_512_and_fast():
    t0 = time.perf_counter()
    c = compute(PEParams(d_model=65536, positions=131072, base=1e6))
    assert time.perf_counter() - t0 < 2.0
    d = c.figures["c3-scores"]
    assert d.scores_rope.shape == (512, 512) and d.step == 256
    assert np.all(np.diff(d.positions) == 256)
    assert d.deviation_rope < 1e-8 < 1.0 < d.deviation_additive
    # a third base appears next to 10,000 and 500,000
    assert c.figures["c3-decay"].bases.tolist() == [1e4, 5e5, 1e6]
    assert c.figures["c3-base"].wavelengths.shape == (3, 64)


# --- c3-decay -----------------------------------------------------------------------------------


def _bound_ref(r: float, theta: np.ndarray) -> float:
    s = 0j
    total = 0.0
    for t in theta:  # S_j = sum_{i <= j} e^(i r theta_i), bound = mean_j |S_j|
        s += complex(math.cos(r * t), math.sin(r * t))
        total += abs(s)
    return total / theta.size


def test_decay_bound_closed_form_and_reference(content):
    d = content.figures["c3-decay"]
    assert d.bases.tolist() == [10000.0, 500000.0]
    # at distance 0 every S_j = j, so the bound is mean(1..d/2) = (d/2 + 1) / 2
    assert content.numbers["decay_at0"] == pytest.approx((card3.HEAD_DIM / 2 + 1) / 2, abs=1e-12)
    # the card quotes the bound at distance 1, the left end of its log axis
    b1 = _bound_ref(1.0, _theta(card3.HEAD_DIM, 10000.0))
    assert content.numbers["decay_at1"] == pytest.approx(b1, rel=1e-12)
    assert content.numbers["decay_at1"] < content.numbers["decay_at0"]
    r = d.distances
    assert r[0] == 1.0 and r[-1] == pytest.approx(65536.0)
    for i, b in enumerate(d.bases):
        theta = _theta(card3.HEAD_DIM, b)
        for j in (0, 200, 450, len(r) - 1):
            assert d.bounds[i, j] == pytest.approx(_bound_ref(r[j], theta), rel=1e-10)
        assert d.probe_values[i] == pytest.approx(_bound_ref(1000.0, theta), rel=1e-10)
    # the larger base decays later
    assert content.numbers["decay_500k_probe"] > content.numbers["decay_10k_probe"]


# --- c3-layouts and c3-base -------------------------------------------------------------------------------


def test_layout_diagram_and_permutation(content):
    d = content.figures["c3-layouts"]
    assert d.permutation.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert d.pair_interleaved.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert d.pair_half.tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    # slot j of the half layout holds interleaved coordinate P[j]: same pair on both ends
    assert np.array_equal(d.pair_half, d.pair_interleaved[d.permutation])


def test_layout_score_errors_against_reference(content):
    pos, _ = card3._shown_positions(128)
    rng = np.random.default_rng(card3.SEED + 1)
    q = rng.standard_normal((pos.size, card3.HEAD_DIM))
    k = rng.standard_normal((pos.size, card3.HEAD_DIM))
    theta = _theta(card3.HEAD_DIM, 10000.0)
    inter = _rope_scores_ref(q, k, pos, theta, "interleaved")
    wrong = np.abs(_rope_scores_ref(q, k, pos, theta, "half") - inter)
    n = content.numbers
    assert n["perm_diff"] < 1e-12
    assert n["wrong_max"] == pytest.approx(wrong.max(), rel=1e-9)
    assert n["wrong_mean"] == pytest.approx(wrong.mean(), rel=1e-9)
    assert n["score_mean_abs"] == pytest.approx(np.abs(inter).mean(), rel=1e-9)
    assert n["wrong_mean"] > 0.5 * n["score_mean_abs"]  # the error is as large as the scores


def _turns_ref(dim: int, base: float, context: int) -> int:
    """#{k : 2 pi base^(2k/dim) <= context - 1} by solving for k."""
    kmax = math.floor(dim / 2 * math.log((context - 1) / (2 * math.pi)) / math.log(base))
    return min(dim // 2, kmax + 1)


@pytest.mark.parametrize("params", [PEParams(), PEParams(base=500000.0, d_model=256)])
def test_base_wavelengths_and_turn_counts(params):
    c = compute(params)
    d = c.figures["c3-base"]
    for i, b in enumerate(d.bases):
        np.testing.assert_allclose(
            d.wavelengths[i], 2 * np.pi / _theta(card3.HEAD_DIM, b), rtol=1e-13
        )
        for j, ctx in enumerate(d.contexts):
            assert d.turns[i, j] == _turns_ref(card3.HEAD_DIM, b, int(ctx))
    n = c.numbers
    # RoPE rotates each head on its own: the pairs of one head of 128, whatever d_model is
    assert n["pairs"] == card3.HEAD_DIM // 2 == 64
    assert n["never_500k_4k"] == n["pairs"] - _turns_ref(card3.HEAD_DIM, 5e5, 4096)
    assert n["slowest_angle_500k_4k"] == pytest.approx(
        4095 * 5e5 ** (-(card3.HEAD_DIM - 2) / card3.HEAD_DIM), rel=1e-12
    )


def test_default_turn_counts(content):
    n = content.numbers
    assert (n["turns_base_4k"], n["turns_base_128k"]) == (46, 64)
    assert (n["never_10k_4k"], n["never_500k_4k"]) == (18, 32)


# --- value pitfall ------------------------------------------------------------------------------


def test_values_pitfall(content):
    pos, _ = card3._shown_positions(128)
    rng = np.random.default_rng(card3.SEED + 2)
    _, _, v = rng.standard_normal((3, pos.size, card3.HEAD_DIM))
    theta = _theta(card3.HEAD_DIM, 10000.0)
    # |R(a) x - x|^2 = (2 - 2 cos a) |x|^2 pair by pair, a = SHIFT * theta_k
    zv = _complex(v, "half")
    change = np.sqrt(((2 - 2 * np.cos(card3.SHIFT * theta)) * np.abs(zv) ** 2).sum(axis=1))
    ref = 100 * (change / np.linalg.norm(v, axis=1)).mean()
    assert content.numbers["shift_value_change_pct"] == pytest.approx(ref, rel=1e-10)
    assert content.numbers["shift_score_change"] < 1e-10


# --- parameters ---------------------------------------------------------------------------------


def test_numbers_follow_base(content, content_500k):
    a, b = content.numbers, content_500k.numbers
    for key in ("decay_base_probe", "turns_base_4k", "scores_dev_add", "wrong_max", "base"):
        assert a[key] != b[key], key
    assert b["decay_base_probe"] == pytest.approx(b["decay_500k_probe"])
    assert a["decay_base_probe"] == pytest.approx(a["decay_10k_probe"])


def test_numbers_follow_d_model_and_positions(content):
    c = compute(PEParams(d_model=128, positions=1000))
    # the base panel is one head of 128 (RoPE rotates per head): d_model does not change it
    assert c.numbers["pairs"] == content.numbers["pairs"] == 64
    assert c.numbers["turns_base_4k"] == content.numbers["turns_base_4k"]
    assert c.numbers["scores_n"] == 500 and c.numbers["scores_step"] == 2
    assert c.figures["c3-decay"].context == 1000


def test_tiny_parameters():
    c = compute(PEParams(d_model=2, positions=1, base=1.5))
    assert c.numbers["pairs"] == 64 and c.numbers["scores_n"] == 1


# --- text and figures ---------------------------------------------------------------------------


def test_ids_agree(content):
    text = load_card_text(3)
    assert list(DRAW) == IDS + EXTRA
    assert list(content.figures) == IDS + EXTRA
    assert [p.id for p in text.panels] == IDS


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_has_a_value(content, content_500k, lang):
    text = load_card_text(3)
    for c in (content, content_500k):
        filled = fill_card(text, lang, c.numbers)
        assert len(filled.takeaways) == 3 and len(filled.pitfalls) >= 2
        for _, body in filled.takeaways + filled.pitfalls:
            assert "{{" not in body
            if lang == "en":
                assert len(body.split()) <= 32, body


def test_formula_renders():
    from matplotlib.figure import Figure

    text = load_card_text(3)
    with card_style("light"):
        fig = Figure()
        fig.text(0, 0.5, text.formula_tex)
        fig.savefig(io.BytesIO(), format="png")


# The figures at the default parameters, in both languages and themes, are drawn inside
# card_style (a missing glyph raises) by tests/test_layout.py and tests/test_contrast.py.


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_context_length_labels_are_short(lang: str) -> None:
    text = load_card_text(3)
    labels = CardLabels(text.labels, lang, text.path.name)
    assert labels("bs_ctx", k=4) == "4k"


@pytest.mark.parametrize("fid", ["c3-decay", "c3-base"])
def test_base_lines_differ_by_more_than_colour(content, fid):
    with card_style("light"):
        fig = draw_standalone(fid, content.figures[fid], "en", "light")
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if not str(ln.get_label()).startswith("_")]
        styles = [(ln.get_linestyle(), ln.get_marker()) for ln in lines]
        assert len(set(styles)) == len(styles), styles
    assert any(len(ax.get_lines()) >= 2 for ax in fig.axes)


def test_scores_need_not_decay_and_the_card_says_the_bound_is_a_bound(content):
    """Issue 36 point 8: the decay panel's bound falls with the distance, the RoPE score itself
    does not: over many random q, k (recomputed here with rotate_half scores) the mean |score|
    is the same near and far; the card says so, and labels which score map is relative."""
    from posecards.encodings.rope import rope_scores
    from posecards.encodings.rope_scaling import rope_inv_freq
    from posecards.render.text import CardLabels, fill_card

    rng = np.random.default_rng(5)
    inv, _ = rope_inv_freq(card3.HEAD_DIM, 10000.0)
    near, far = [], []
    for _ in range(64):
        q, k = rng.standard_normal((2, card3.HEAD_DIM))
        keys = np.broadcast_to(k, (127, card3.HEAD_DIM))  # the same key at distances 1..127
        s = rope_scores(q[None], keys, np.zeros(1), np.arange(1.0, 128.0), inv, "half")[0]
        near.append(np.abs(s[:63]).mean())
        far.append(np.abs(s[63:]).mean())
    ours = content.numbers["scores_far_near"]
    assert 0.85 < ours < 1.15 and 0.85 < np.mean(far) / np.mean(near) < 1.15
    assert content.numbers["decay_at1"] > 5 * content.numbers["decay_base_probe"] / 2
    from posecards.render.text import load_card_text

    text = load_card_text(3)
    for lang, need in (("en", "need not decay"), ("zh", "未必衰减")):
        filled = fill_card(text, lang, content.numbers)
        assert need in dict(filled.takeaways)["decay"]
        assert need in next(p[3] for p in filled.panels if p[0] == "c3-decay")
    labels = CardLabels(text.labels, "en")
    assert labels("sc_spread_rope", v=1e-13).startswith("relative")
    assert labels("sc_spread_add", v=43.1).startswith("not relative")
