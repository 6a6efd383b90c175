"""Sinusoidal encodings: closed forms, exact values, reference implementations, argument errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.sinusoidal import (
    offset_rotation,
    pair_frequencies,
    rotate_by_offset,
    sinusoidal_pe,
    wavelengths,
)

SETTINGS = settings(max_examples=50, deadline=None)
even_dims = st.integers(1, 128).map(lambda h: 2 * h)
bases = st.sampled_from([10000.0, 500000.0, 100.0, 1.5])
layouts = st.sampled_from(["interleaved", "half"])
frequency_rules = st.sampled_from(["paper", "tensor2tensor"])


def _pairs(pe: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) columns of each pair, each (n, d/2)."""
    half = pe.shape[1] // 2
    if layout == "interleaved":
        return pe[:, 0::2], pe[:, 1::2]
    return pe[:, :half], pe[:, half:]


# --- closed forms -------------------------------------------------------------------------------


@SETTINGS
@given(d=even_dims, base=bases, p=st.integers(0, 5000), k=st.integers(-5000, 5000), layout=layouts)
def test_dot_product_depends_on_offset_only(
    d: int, base: float, p: int, k: int, layout: str
) -> None:
    # PE(p)·PE(p+k) = Σ_i cos(k·ω_i)
    pe = sinusoidal_pe([p, p + k], d, base, layout=layout)
    omega = pair_frequencies(d, base)
    expected = np.sum(np.cos(k * omega))
    # each term carries ~|angle|·1e-16 rounding; angles are at most 10^4
    assert pe[0] @ pe[1] == pytest.approx(expected, abs=1e-10 * d)


@SETTINGS
@given(d=even_dims, base=bases, p=st.integers(0, 5000), q=st.integers(0, 5000), layout=layouts)
def test_squared_distance_closed_form(d: int, base: float, p: int, q: int, layout: str) -> None:
    # ‖PE(p) - PE(q)‖² = Σ_i (2 - 2cos((q-p)·ω_i))
    pe = sinusoidal_pe(np.array([p, q]), d, base, layout=layout)
    delta = (q - p) * pair_frequencies(d, base)
    expected = np.sum(2.0 - 2.0 * np.cos(delta))
    assert np.sum((pe[0] - pe[1]) ** 2) == pytest.approx(expected, abs=1e-10 * d)


@SETTINGS
@given(
    d=even_dims,
    base=bases,
    layout=layouts,
    freqs=frequency_rules,
    positions=st.lists(st.floats(-1e5, 1e5), min_size=1, max_size=8),
)
def test_each_pair_has_unit_norm(
    d: int, base: float, layout: str, freqs: str, positions: list[float]
) -> None:
    if freqs == "tensor2tensor" and d < 4:
        d = 4
    s, c = _pairs(sinusoidal_pe(positions, d, base, layout=layout, frequencies=freqs), layout)
    np.testing.assert_allclose(s**2 + c**2, 1.0, atol=1e-14)


@SETTINGS
@given(d=even_dims, base=bases, freqs=frequency_rules, n=st.integers(1, 40))
def test_half_and_interleaved_are_a_column_permutation(
    d: int, base: float, freqs: str, n: int
) -> None:
    if freqs == "tensor2tensor" and d < 4:
        d = 4
    inter = sinusoidal_pe(n, d, base, layout="interleaved", frequencies=freqs)
    half = sinusoidal_pe(n, d, base, layout="half", frequencies=freqs)
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # sin columns, then cos
    np.testing.assert_array_equal(inter[:, perm], half)
    assert not np.array_equal(inter, half) or d == 2  # for d=2 the layouts coincide


# --- exact values -------------------------------------------------------------------------------


def test_pair_frequencies_values() -> None:
    np.testing.assert_allclose(pair_frequencies(4), [1.0, 0.01], rtol=1e-15)
    np.testing.assert_allclose(pair_frequencies(8, 10000.0), [1.0, 0.1, 0.01, 0.001], rtol=1e-14)
    # tensor2tensor spaces ln ω evenly from 0 to -ln(base): the last pair is exactly 1/base
    np.testing.assert_allclose(
        pair_frequencies(8, frequencies="tensor2tensor"),
        [1.0, 10000 ** (-1 / 3), 10000 ** (-2 / 3), 1e-4],
        rtol=1e-14,
    )
    paper = pair_frequencies(512)
    assert paper.shape == (256,) and paper.dtype == np.float64
    assert paper[-1] == pytest.approx(10000.0 ** (-510 / 512), rel=1e-14)
    assert np.all(np.diff(paper) < 0)


def test_wavelengths_span_two_pi_to_base_two_pi() -> None:
    lam = wavelengths(512)
    assert lam[0] == pytest.approx(2 * math.pi, rel=1e-15)
    assert lam[-1] == pytest.approx(2 * math.pi * 10000.0 ** (510 / 512), rel=1e-13)
    np.testing.assert_allclose(lam[1:] / lam[:-1], 10000.0 ** (2 / 512), rtol=1e-13)


def test_values_at_small_positions() -> None:
    pe = sinusoidal_pe(3, 4)
    np.testing.assert_allclose(pe[0], [0.0, 1.0, 0.0, 1.0], atol=0)
    np.testing.assert_allclose(
        pe[2], [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)], rtol=1e-15
    )
    half = sinusoidal_pe([2.5], 4, layout="half")
    np.testing.assert_allclose(
        half[0], [math.sin(2.5), math.sin(0.025), math.cos(2.5), math.cos(0.025)], rtol=1e-15
    )
    assert sinusoidal_pe(7, 16).shape == (7, 16)
    assert sinusoidal_pe(7, 16).dtype == np.float64


# --- reference implementations (transformers 5.23.0) --------------------------------------------
# DistilBERT and Marian compute the table in float64 numpy and store it as float32, so the only
# difference is one float32 rounding of values in [-1, 1]: |Δ| <= 2^-24 < 1e-7.


@pytest.mark.parametrize(("n", "d"), [(1, 2), (16, 8), (512, 64), (512, 768)])
def test_matches_distilbert_interleaved(n: int, d: int) -> None:
    from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

    out = torch.empty(n, d)
    create_sinusoidal_embeddings(n, d, out)
    np.testing.assert_allclose(sinusoidal_pe(n, d), out.double().numpy(), rtol=0, atol=1e-7)


@pytest.mark.parametrize(("n", "d"), [(1, 2), (16, 8), (512, 64), (512, 512)])
def test_matches_marian_half(n: int, d: int) -> None:
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    ref = MarianSinusoidalPositionalEmbedding(n, d).create_weight().double().numpy()
    np.testing.assert_allclose(sinusoidal_pe(n, d, layout="half"), ref, rtol=0, atol=1e-7)
    # and it is not the interleaved layout (from position 1 on, where sin ≠ 0)
    assert np.abs(sinusoidal_pe(n, d) - ref).max() > 0.1 or n == 1 or d == 2


def _angle_tolerance(n: int, d: int) -> np.ndarray:
    # M2M100 computes ω (via exp of a float32 argument up to ln 10000 ≈ 9.2) and p·ω in float32,
    # so the angle has relative error ≈ (9.2 + 2)·2^-24; |Δsin| <= |Δangle|. Bound: 8·|angle|·2^-23
    # (= 16·|angle|·2^-24) plus 1e-7 for the final float32 rounding of sin/cos.
    angle = np.arange(n)[:, None] * pair_frequencies(d, frequencies="tensor2tensor")[None, :]
    return 8.0 * np.concatenate([angle, angle], axis=1) * 2.0**-23 + 1e-7  # (n, d) half layout


@pytest.mark.parametrize(("n", "d"), [(4, 4), (64, 16), (1026, 64), (2050, 1024)])
def test_matches_m2m100_tensor2tensor_half(n: int, d: int) -> None:
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    # get_embedding(n, d) without padding_idx: row r is exactly PE(r), [sin | cos] half layout
    ref = M2M100SinusoidalPositionalEmbedding.get_embedding(n, d).double().numpy()
    ours = sinusoidal_pe(n, d, layout="half", frequencies="tensor2tensor")
    assert np.all(np.abs(ours - ref) <= _angle_tolerance(n, d))
    # the paper frequencies are clearly different (except pair 0, where both give ω = 1)
    if n > 10:
        assert np.abs(sinusoidal_pe(n, d, layout="half") - ref).max() > 1e-2


def test_m2m100_offsets_positions_by_padding_idx_plus_one() -> None:
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    d, pad = 16, 1
    emb = M2M100SinusoidalPositionalEmbedding(num_positions=32, embedding_dim=d, padding_idx=pad)
    table = emb.weights.double().numpy()  # (32 + 2, d)
    np.testing.assert_array_equal(table[pad], 0.0)  # the padding row is zeroed
    # fairseq convention: the first real token (index 0) is looked up at row padding_idx + 1 = 2
    tokens = torch.tensor([[5, 6, 7, pad]])  # three tokens, then one padding token
    got = emb(input_ids=tokens)[0].double().numpy()  # (4, d)
    expected = sinusoidal_pe([2, 3, 4], d, layout="half", frequencies="tensor2tensor")
    np.testing.assert_allclose(got[:3], expected, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got[3], 0.0)


# --- argument errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 7}, "d_model must be even"),
        ({"d_model": 0}, "d_model must be a positive integer"),
        ({"d_model": -4}, "d_model must be a positive integer"),
        ({"d_model": 8.0}, "d_model must be a positive integer"),
        ({"base": 1.0}, "base must be a finite number > 1"),
        ({"base": 0.5}, "base must be a finite number > 1"),
        ({"base": float("nan")}, "base must be a finite number > 1"),
        ({"base": float("inf")}, "base must be a finite number > 1"),
        ({"layout": "blocked"}, "unknown layout 'blocked'; choose one of: interleaved, half"),
        ({"frequencies": "t2t"}, "unknown frequencies 't2t'; choose one of: paper, tensor2tensor"),
        ({"d_model": 2, "frequencies": "tensor2tensor"}, "d_model must be >= 4"),
        ({"positions": 0}, "positions must be a positive integer"),
        ({"positions": []}, "positions must not be empty"),
        ({"positions": [0.0, float("nan")]}, "positions must be finite"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"positions": 4, "d_model": 8, **kwargs}
    with pytest.raises(ValueError, match=match):
        sinusoidal_pe(**args)  # type: ignore[arg-type]


def test_bad_arguments_in_frequency_helpers() -> None:
    with pytest.raises(ValueError, match="d_model must be even"):
        pair_frequencies(9)
    with pytest.raises(ValueError, match="base must be"):
        wavelengths(8, base=-3.0)
    with pytest.raises(ValueError, match="choose one of: paper, tensor2tensor"):
        wavelengths(8, frequencies="rope")


def test_display_sampling_rules() -> None:
    from posecards.encodings.sampling import even_positions, position_step, spread_positions

    assert position_step(131072, 512) == 256 and position_step(100, 512) == 1
    np.testing.assert_array_equal(even_positions(10, 4), [0.0, 3.0, 6.0, 9.0])
    assert even_positions(131072, 512).size == 512
    s = spread_positions(131072, 1024)
    assert s[0] == 0 and s[-1] == 131071 and s.size == 1024 and np.all(np.diff(s) > 0)
    np.testing.assert_array_equal(spread_positions(5, 100), np.arange(5.0))


# --- the rotation bridge PE(p+k) = R(k)·PE(p) -------------------------------------------------


@SETTINGS
@given(
    d=even_dims,
    base=bases,
    p=st.integers(0, 5000),
    k=st.integers(-5000, 5000),
    layout=layouts,
    rule=frequency_rules,
)
def test_shift_is_a_block_diagonal_rotation(
    d: int, base: float, p: int, k: int, layout: str, rule: str
) -> None:
    if rule == "tensor2tensor" and d < 4:
        return
    r = offset_rotation(k, d, base, layout=layout, frequencies=rule)  # (d, d)
    pe = sinusoidal_pe([p, p + k], d, base, layout=layout, frequencies=rule)
    # angles up to 10^4 rad carry ~1e-12 rounding in sin/cos
    np.testing.assert_allclose(r @ pe[0], pe[1], atol=1e-11)
    turned = rotate_by_offset(pe[:1], k, base, layout=layout, frequencies=rule)  # no (d, d)
    np.testing.assert_allclose(turned[0], r @ pe[0], atol=1e-13)
    np.testing.assert_allclose(r.T @ r, np.eye(d), atol=1e-14)  # orthogonal
    assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-9)  # a rotation, not a reflection
    # block diagonal: nothing couples two different pairs
    half = d // 2
    pair_of = np.arange(d) // 2 if layout == "interleaved" else np.arange(d) % half
    assert np.all(r[pair_of[:, None] != pair_of[None, :]] == 0.0)


@SETTINGS
@given(d=even_dims, j=st.integers(-300, 300), k=st.integers(-300, 300), layout=layouts)
def test_rotations_compose_by_adding_offsets(d: int, j: int, k: int, layout: str) -> None:
    """R(j)·R(k) = R(j+k), R(0) = I: shifting by k then j is shifting by j + k."""
    r = offset_rotation
    np.testing.assert_allclose(
        r(j, d, layout=layout) @ r(k, d, layout=layout), r(j + k, d, layout=layout), atol=1e-12
    )
    np.testing.assert_array_equal(r(0, d, layout=layout), np.eye(d))


def test_rotation_blocks_by_hand() -> None:
    """d = 4, b = 100: ω = (1, 0.1); block i is [[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]]."""
    r = offset_rotation(2, 4, 100.0)
    c0, s0, c1, s1 = math.cos(2.0), math.sin(2.0), math.cos(0.2), math.sin(0.2)
    expected = np.array(
        [[c0, s0, 0, 0], [-s0, c0, 0, 0], [0, 0, c1, s1], [0, 0, -s1, c1]], dtype=np.float64
    )
    np.testing.assert_allclose(r, expected, rtol=0, atol=1e-16)
