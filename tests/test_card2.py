"""Card 2 (sinusoidal geometry): data and numbers against plain-numpy recomputations, text, figures."""

from __future__ import annotations

import io
import time
from typing import Any

import numpy as np
import pytest

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card2 import compute
from posecards.encodings.dimension_index_bug import dimension_index_bug_pe
from posecards.figures.card2 import DRAW
from posecards.figures.style import card_style
from posecards.render.figure import draw_standalone
from posecards.render.text import fill_card, load_card_text

# every figure the card computes (the figure pages), and the four on the card itself
FIGURE_IDS = [
    "c2-heatmap",
    "c2-curves",
    "c2-rotation",
    "c2-similarity",
    "c2-pitfalls",
    "c2-float32",
    "c2-layouts",
]
PANEL_IDS = ["c2-heatmap", "c2-similarity", "c2-rotation", "c2-pitfalls"]


def pe_numpy(pos: np.ndarray, d: int, base: float) -> np.ndarray:
    """Reference sinusoidal PE, interleaved, written out independently of posecards."""
    pos = np.asarray(pos, dtype=np.float64)
    out = np.zeros((pos.shape[0], d))
    for i in range(d // 2):
        w = 1.0 / base ** (2 * i / d)
        out[:, 2 * i] = np.sin(pos * w)
        out[:, 2 * i + 1] = np.cos(pos * w)
    return out


def f_numpy(k: np.ndarray | float, d: int, base: float) -> np.ndarray:
    w = base ** (-2.0 * np.arange(d // 2) / d)
    return np.cos(np.multiply.outer(np.asarray(k, dtype=np.float64), w)).mean(axis=-1)


def nums(content: CardContent) -> dict[str, Any]:
    """The numbers of a card, typed loosely for arithmetic in asserts."""
    return dict(content.numbers)


@pytest.fixture(scope="module")
def default() -> CardContent:
    return compute(PEParams())


@pytest.fixture(scope="module")
def other_base() -> CardContent:
    return compute(PEParams(base=500000.0))


# --- numbers against closed forms and independent computations --------------------------------


def test_offset_similarity_numbers(default: CardContent) -> None:
    n = nums(default)
    assert n["f1"] == pytest.approx(float(f_numpy(1, 512, 1e4)), abs=1e-14)
    assert n["f10"] == pytest.approx(float(f_numpy(10, 512, 1e4)), abs=1e-14)
    # the seed article's "≈ 0.85 at offset 10" is wrong for d = 512, base = 10000
    assert abs(n["f10"] - 0.85) > 0.1
    assert n["pe_norm"] == pytest.approx(np.sqrt(256), abs=1e-12)
    assert n["lambda_min"] == pytest.approx(2 * np.pi)
    assert n["lambda_max"] == pytest.approx(2 * np.pi * 1e4 ** (510 / 512))


def test_first_rise_matches_numpy(default: CardContent) -> None:
    f = f_numpy(np.arange(0, 200), 512, 1e4)
    k = int(np.nonzero(np.diff(f) > 0)[0][0])
    assert default.numbers["k_mono"] == k
    assert default.numbers["f_mono"] == pytest.approx(float(f[k]), abs=1e-14)
    assert np.all(np.diff(f[: k + 1]) < 0) and f[k + 1] > f[k]
    assert default.figures["c2-similarity"].mono_found


def test_measured_profiles_coincide(default: CardContent) -> None:
    data = default.figures["c2-similarity"]
    k = np.asarray(data.offsets)
    starts = list(data.starts)
    assert 0 in starts and 17 in starts and len(starts) == 3
    for r, p0 in enumerate(starts):
        pe0 = pe_numpy(np.array([p0]), 512, 1e4)[0]
        ref = pe_numpy(p0 + k, 512, 1e4) @ pe0 / 256
        np.testing.assert_allclose(data.measured[r], ref, atol=1e-12)
    np.testing.assert_allclose(data.formula, f_numpy(k, 512, 1e4), atol=1e-14)
    assert nums(default)["start_dev"] < 1e-13


def test_similarity_matrix(default: CardContent) -> None:
    data = default.figures["c2-similarity"]
    pos = np.asarray(data.positions)
    pe = pe_numpy(pos, 512, 1e4)
    np.testing.assert_allclose(data.similarity, pe @ pe.T / 256, atol=1e-12)
    np.testing.assert_allclose(np.diag(data.similarity), 1.0, atol=1e-15)


def test_distance_identity(default: CardContent) -> None:
    assert 0 <= nums(default)["dist_err"] < 1e-10
    # the identity itself, independently: ||PE(p)-PE(q)||² = Σ(2 - 2cos Δθ)
    pe = pe_numpy(np.array([3.0, 40.0]), 512, 1e4)
    w = 1e4 ** (-2.0 * np.arange(256) / 512)
    assert ((pe[0] - pe[1]) ** 2).sum() == pytest.approx((2 - 2 * np.cos(37 * w)).sum())


def test_heatmap_and_curves_values(default: CardContent) -> None:
    heat = default.figures["c2-heatmap"]
    assert heat.values.shape == (128, 96)  # 48 of the 256 pairs, sin and cos of each
    pairs = np.round(np.linspace(0, 255, 48)).astype(int)  # both ends, evenly spread
    dims = np.sort(np.concatenate([2 * pairs, 2 * pairs + 1]))
    np.testing.assert_array_equal(heat.dims, dims)
    np.testing.assert_allclose(heat.values, pe_numpy(np.arange(128), 512, 1e4)[:, dims], atol=1e-12)
    # the wavelength ticks name shown pairs, the first and the last among them
    assert set(np.asarray(heat.wavelength_tick_dims)) <= set(dims[::2])
    assert heat.wavelength_tick_dims[0] == 0 and heat.wavelength_tick_dims[-1] == 510
    np.testing.assert_allclose(
        heat.wavelength_ticks, 2 * np.pi * 1e4 ** (np.asarray(heat.wavelength_tick_dims) / 512)
    )
    curves = default.figures["c2-curves"]
    assert list(curves.fast_dims) == [0, 1, 2, 3]
    assert list(curves.slow_dims) == [128, 256]
    ref = pe_numpy(curves.slow_positions, 512, 1e4)[:, [128, 256]].T
    np.testing.assert_allclose(curves.slow_values, ref, atol=1e-12)
    ref = pe_numpy(curves.fast_positions, 512, 1e4)[:, :4].T
    np.testing.assert_allclose(curves.fast_values, ref, atol=1e-12)
    assert default.numbers["turns_a"] == pytest.approx(128 / (2 * np.pi / 1e4 ** (-128 / 512)))


def test_rotation_bridge(default: CardContent) -> None:
    """PE(p+k) = R(k)·PE(p): the drawn R(k) and the check, recomputed by hand."""
    data = default.figures["c2-rotation"]
    n = nums(default)
    k, p, d = n["rot_k"], n["rot_p"], n["rot_d"]
    w = 1e4 ** (-2.0 * np.arange(d // 2) / d)
    r = np.zeros((d, d))
    for i, wi in enumerate(w):  # [[cos, sin], [-sin, cos]] per pair, interleaved
        c, s = np.cos(k * wi), np.sin(k * wi)
        r[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    np.testing.assert_allclose(data.r, r, atol=1e-15)
    np.testing.assert_allclose(r @ pe_numpy(np.array([p]), d, 1e4)[0], data.pe_pk, atol=1e-14)
    assert n["rot_angle_0"] == pytest.approx(k * 1.0) and n["rot_angle_1"] == pytest.approx(k * 0.1)
    # at the card's size: every start and offset of the grid
    big = pe_numpy(np.arange(256.0), 512, 1e4)
    w512 = 1e4 ** (-2.0 * np.arange(256) / 512)
    worst = 0.0
    for kk in (1, 10, 127):
        c, s = np.cos(kk * w512), np.sin(kk * w512)
        sin_p, cos_p = big[:128, 0::2], big[:128, 1::2]
        shifted = np.empty((128, 512))
        shifted[:, 0::2] = c * sin_p + s * cos_p
        shifted[:, 1::2] = -s * sin_p + c * cos_p
        worst = max(worst, float(np.abs(shifted - big[kk : kk + 128]).max()))
    assert worst < 1e-12 and 0 < n["rot_err"] < 1e-12
    assert n["rot_check_max_k"] == 127 and n["rot_check_starts"] == 64


def test_dimension_index_bug(default: CardContent) -> None:
    d, base = 512, 1e4
    pos = np.arange(5.0)
    bug = dimension_index_bug_pe(pos, d, base)
    j = np.arange(d)
    ref = np.where(j % 2 == 0, np.sin(np.outer(pos, base ** (-j / d))), 0.0)
    ref = np.where(j % 2 == 1, np.cos(np.outer(pos, base ** (-j / d))), ref)
    np.testing.assert_allclose(bug, ref, atol=1e-15)
    np.testing.assert_allclose(bug[:, 0::2], pe_numpy(pos, d, base)[:, 0::2], atol=1e-15)

    data = default.figures["c2-pitfalls"]
    starts = np.asarray(data.bug_starts)
    a = ref_bug = dimension_index_bug_pe(starts, d, base)
    b = dimension_index_bug_pe(starts + 10, d, base)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(data.bug_cos_bug, cos, atol=1e-12)
    np.testing.assert_allclose(data.bug_cos_correct, f_numpy(10, d, base), atol=1e-12)
    n = nums(default)
    assert n["correct_spread"] < 1e-12
    assert n["bug_spread"] == pytest.approx(cos.max() - cos.min())
    assert n["bug_spread"] > 0.01
    pair_sq = ref_bug[:, 0::2] ** 2 + ref_bug[:, 1::2] ** 2
    assert n["bug_norm_min"] == pytest.approx(pair_sq.min())
    assert n["bug_norm_max"] == pytest.approx(pair_sq.max())


def test_layouts_and_frequency_rules(default: CardContent) -> None:
    n = nums(default)
    assert n["layout_perm_diff"] == 0.0
    assert n["layout_raw_diff"] > 1.0
    assert n["layout_sim_diff"] < 1e-12
    d, base = 512, 1e4
    w = np.exp(-np.arange(d // 2) * np.log(base) / (d // 2 - 1))  # tensor2tensor
    k = np.arange(-127, 128, dtype=np.float64)
    t2t = np.cos(np.outer(k, w)).mean(1)
    assert n["layout_t2t_sim_diff"] == pytest.approx(np.abs(t2t - f_numpy(k, d, base)).max())


def test_float32_error_location(default: CardContent) -> None:
    d, base = 512, 1e4
    pos = np.asarray(default.figures["c2-pitfalls"].f32_positions)
    # the recipe (HF Llama's float32 steps, each correctly rounded): numpy's own float32 pow is
    # an ulp off on some CPUs, so pow is taken in float64 and rounded once to float32
    e32 = np.arange(0, d, 2, dtype=np.float32) / np.float32(d)
    pow32 = np.power(np.float64(base), e32.astype(np.float64)).astype(np.float32)
    inv32 = np.float32(1) / pow32
    a32 = pos.astype(np.float32)[:, None] * inv32[None, :]
    exact = pos[:, None] * base ** (-np.arange(0, d, 2) / d)[None, :]
    err = np.abs(a32.astype(np.float64) - exact)
    n = nums(default)
    assert n["f32_max"] == pytest.approx(err.max())
    r, i = np.unravel_index(err.argmax(), err.shape)
    assert (n["f32_max_pos"], n["f32_max_i"]) == (int(pos[r]), int(i))
    # the error is in the fast pairs (small i), not at large i
    assert n["f32_max_i"] < d // 4
    assert n["f32_slow_max"] == pytest.approx(err[:, d // 4 :].max())
    assert n["f32_slow_max"] < n["f32_max"] / 10


def test_base_changes_numbers(default: CardContent, other_base: CardContent) -> None:
    for key in ("f1", "f10", "k_mono", "lambda_max", "bug_f10_min", "layout_t2t_sim_diff"):
        assert default.numbers[key] != other_base.numbers[key], key
    assert other_base.numbers["f10"] == pytest.approx(float(f_numpy(10, 512, 5e5)), abs=1e-14)


def test_params_change_data() -> None:
    c = compute(PEParams(d_model=64, positions=300))
    heat = c.figures["c2-heatmap"]
    assert heat.values.shape == (100, 64)  # every 3rd position (at most 128), all 32 pairs
    np.testing.assert_array_equal(heat.positions, np.arange(0, 300, 3))
    assert c.numbers["f1"] == pytest.approx(float(f_numpy(1, 64, 1e4)), abs=1e-14)
    assert c.numbers["last_pos"] == 299


def test_large_params_are_decimated_and_fast() -> None:
    t0 = time.perf_counter()
    c = compute(PEParams(d_model=65536, positions=131072))
    elapsed = time.perf_counter() - t0
    assert elapsed < 30.0  # ~2 s unloaded; only catches a blow-up (e.g. a full 131072² table)
    heat = c.figures["c2-heatmap"]
    assert heat.values.shape[0] <= 128 and heat.values.shape[1] <= 96
    pos = np.asarray(heat.positions)
    assert len(set(np.diff(pos))) == 1  # evenly spaced
    np.testing.assert_allclose(
        heat.values[:3], pe_numpy(pos[:3], 65536, 1e4)[:, heat.dims], atol=1e-9
    )
    sim = c.figures["c2-similarity"].similarity
    assert sim.shape[0] <= 512 and sim.shape[0] == sim.shape[1]
    assert c.figures["c2-pitfalls"].f32_angle_error.shape[1] <= 256
    assert c.numbers["f1"] == pytest.approx(float(f_numpy(1, 65536, 1e4)), abs=1e-13)


# --- text ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params", [PEParams(), PEParams(d_model=8, positions=4), PEParams(d_model=2, positions=1)]
)
def test_every_placeholder_has_a_value(params: PEParams) -> None:
    text = load_card_text(2)
    numbers = compute(params).numbers
    for lang in ("en", "zh"):
        filled = fill_card(text, lang, numbers)
        assert "{{" not in filled.thesis
        assert len(filled.takeaways) == 3 and len(filled.pitfalls) >= 2


def test_figure_ids_agree(default: CardContent) -> None:
    text = load_card_text(2)
    assert list(DRAW) == FIGURE_IDS
    assert list(default.figures) == FIGURE_IDS
    assert [p.id for p in text.panels] == PANEL_IDS


# --- figures ------------------------------------------------------------------------------------


# The figures at the default parameters, in both languages and themes, are drawn inside
# card_style (a missing glyph raises) by tests/test_layout.py and tests/test_contrast.py.


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "theme"), [("zh", "light"), ("en", "dark")])
def test_figures_draw_other_params(lang: str, theme: str) -> None:
    """Panel size, and parameters far from the defaults (a tiny model, a long range)."""
    params = PEParams(d_model=4, positions=2) if lang == "zh" else PEParams(positions=3000)
    c = compute(params)
    with card_style(theme):
        for fid in FIGURE_IDS:
            fig = draw_standalone(fid, c.figures[fid], lang, theme, size=(6.5, 4.4))
            fig.savefig(io.BytesIO(), format="png")


def test_offset_only_is_said_for_raw_encodings_and_both_signs() -> None:
    """Issue 36 point 7: f(k) = f(-k) (computed from the sinusoids written out here), and after
    random W_q, W_k (the same seed, recomputed independently) the score at one offset depends on
    the start; the card says both, and R(k) has a colour bar."""
    from posecards.content.card2 import OFFSET_B, PROJ_HEAD, PROJ_SEED
    from posecards.render.text import fill_card, load_card_text

    params = PEParams()
    n = compute(params).numbers
    d, b = params.d_model, params.base
    omega = b ** (-np.arange(0, d, 2) / d)  # (d/2,)

    def pe(p: np.ndarray) -> np.ndarray:  # (m, d): sin at 2i, cos at 2i + 1
        out = np.empty((p.size, d))
        out[:, 0::2], out[:, 1::2] = np.sin(np.outer(p, omega)), np.cos(np.outer(p, omega))
        return out

    p0, k = np.array([64.0]), np.arange(1, 60, dtype=np.float64)
    ahead, behind = pe(p0 + k) @ pe(p0)[0], pe(p0 - k) @ pe(p0)[0]
    assert np.abs(ahead - behind).max() / (d / 2) < 1e-13 and n["sign_dev"] < 1e-13
    rng = np.random.default_rng(PROJ_SEED)
    w_q = rng.standard_normal((d, PROJ_HEAD)) / np.sqrt(d)
    w_k = rng.standard_normal((d, PROJ_HEAD)) / np.sqrt(d)
    starts = np.arange(params.positions - OFFSET_B, dtype=np.float64)
    scores = np.sum((pe(starts) @ w_q) * (pe(starts + OFFSET_B) @ w_k), axis=1) / PROJ_HEAD
    assert n["proj_spread"] == pytest.approx(np.ptp(scores), rel=1e-9)
    assert n["proj_spread"] > 1e10 * n["start_dev"]  # raw: one value; projected: many
    for lang, raw in (("en", "Raw encodings"), ("zh", "编码本身")):
        filled = fill_card(load_card_text(2), lang, n)
        title, _, caption = next(p[1:] for p in filled.panels if p[0] == "c2-similarity")
        assert title.startswith(raw) and "f(k) = f(−k)" in caption and "W_q" in caption
    assert "rot_cbar" in load_card_text(2).labels


@pytest.mark.parametrize("size", ["slide", "4x3", "a4", "square"])
def test_heatmap_cells_are_big_enough_to_show_no_moire(default: CardContent, size: str) -> None:
    """The heatmap's cells in the PNG at every card size: columns at least 2.4 pixels wide (the
    slow pairs alternate sin ≈ 0 and cos ≈ 1 column by column: under 2 pixels a column, nearest
    sampling beats against that alternation), rows at least 1.3 high (none dropped, even at 75 %
    zoom). Before, 512 columns in about 410 pixels (0.8 a column) drew false stripes (moiré)."""
    from posecards.config import Look
    from posecards.render.compose import compose_card
    from posecards.render.footers import footer_text

    text = load_card_text(2)
    with card_style("light") as th:
        fig = compose_card(
            fill_card(text, "en", default.numbers),
            text,
            default.figures,
            th,
            size,
            footer_text(PEParams(), Look(), "en"),
        )
        fig.canvas.draw()
        heat = default.figures["c2-heatmap"].values
        found = [
            im
            for ax in fig.get_axes()
            for im in ax.get_images()
            if im.get_array() is not None and im.get_array().shape == heat.shape
        ]
        assert len(found) == 1
        box = found[0].get_window_extent()
        rows, cols = heat.shape
        assert box.width / cols >= 2.4, (size, box.width / cols)
        assert box.height / rows >= 1.3, (size, box.height / rows)
