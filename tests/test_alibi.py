"""ALiBi: slopes, bias forms, and agreement with Bloom and with Press et al.'s reference rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from posecards.encodings.alibi import alibi_bias, alibi_bias_key_only, alibi_slopes

SETTINGS = settings(max_examples=50, deadline=None)


def _press_get_slopes(n: int) -> list[float]:
    """Press et al.'s reference code (attention_with_linear_biases, fairseq transformer.py)."""

    def get_slopes_power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + _press_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def _softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def test_slopes_known_values() -> None:
    np.testing.assert_array_equal(alibi_slopes(8), 2.0 ** -np.arange(1, 9))  # 1/2 .. 1/256
    np.testing.assert_allclose(alibi_slopes(16), 2.0 ** (-0.5 * np.arange(1, 17)), rtol=1e-15)
    assert alibi_slopes(1).tolist() == [2.0**-8]
    # 12 heads: the 8 slopes of 8, then slopes 1, 3, 5, 7 of 16 = 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
    expected_12 = np.r_[2.0 ** -np.arange(1, 9), 2.0 ** -(np.arange(4) + 0.5)]
    np.testing.assert_allclose(alibi_slopes(12), expected_12, rtol=1e-15)
    assert alibi_slopes(12).dtype == np.float64


@pytest.mark.parametrize("n", range(1, 65))
def test_slopes_match_press_reference_and_are_positive(n: int) -> None:
    m = alibi_slopes(n)
    np.testing.assert_allclose(m, _press_get_slopes(n), rtol=1e-14)
    assert m.shape == (n,) and np.all(m > 0) and np.all(m < 1)
    n0 = 2 ** math.floor(math.log2(n))
    assert np.all(np.diff(m[:n0]) < 0)  # decreasing within the power-of-two block
    assert np.all(np.diff(m[n0:]) < 0)  # and within the interleaved extra block
    assert len(set(m.tolist())) == n  # no two heads share a slope


def test_matches_bloom_for_1_to_64_heads() -> None:
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    length = 9
    mask = torch.ones(1, length, dtype=torch.long)
    for n in range(1, 65):
        ref = build_alibi_tensor(mask, n, torch.float32).double().numpy()  # (n, 1, L)
        ours = alibi_bias_key_only(n, length)
        # Bloom rounds the base 2^(-8/n0) to float32 (relative error <= 2^-24) and raises it to
        # the integer power h in float32, so slope h carries up to (h + 1)·2^-24 relative error,
        # plus 2^-24 for the product with j: bound |Δ| <= (h + 2)·2^-24·|value|.
        n0 = 2 ** math.floor(math.log2(n))
        h = np.r_[np.arange(1, n0 + 1), np.arange(1, 2 * (n - n0), 2)]  # the power per head
        bound = (h + 2)[:, None, None] * 2.0**-24 * np.abs(ours)
        assert np.all(np.abs(ours - ref) <= bound)
        assert np.all(np.abs(ref[:, 0, 1] - alibi_slopes(n)) <= bound[:, 0, 1])


def test_causal_bias_values() -> None:
    b = alibi_bias(2, 4)  # slopes 2^-4, 2^-8
    assert b.shape == (2, 4, 4)
    m = 2.0**-4
    np.testing.assert_array_equal(b[0, 3], [-3 * m, -2 * m, -m, 0.0])
    np.testing.assert_array_equal(np.diagonal(b, axis1=1, axis2=2), 0.0)
    assert np.all(np.isneginf(b[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]]))
    assert np.all(np.isfinite(b[:, np.tril_indices(4)[0], np.tril_indices(4)[1]]))


def test_bidirectional_bias_is_symmetric() -> None:
    b = alibi_bias(3, 6, causal=False)
    np.testing.assert_array_equal(b, np.transpose(b, (0, 2, 1)))
    assert np.all(np.isfinite(b))
    np.testing.assert_array_equal(b[:, 0, 5], -5 * alibi_slopes(3))
    lower = np.tril(np.ones((6, 6), dtype=bool))
    np.testing.assert_array_equal(b[:, lower], alibi_bias(3, 6)[:, lower])


@SETTINGS
@given(
    n_heads=st.integers(1, 12),
    scores=arrays(np.float64, (7, 7), elements=st.floats(-30, 30)),
)
def test_key_only_bias_gives_the_same_causal_softmax(n_heads: int, scores: np.ndarray) -> None:
    length = scores.shape[0]
    causal = _softmax(scores[None] + alibi_bias(n_heads, length))  # (H, L, L)
    mask = np.where(np.triu(np.ones((length, length), dtype=bool), 1), -np.inf, 0.0)
    key_only = _softmax(scores[None] + alibi_bias_key_only(n_heads, length) + mask)  # (H, L, L)
    np.testing.assert_allclose(causal, key_only, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(causal.sum(-1), 1.0, rtol=1e-14)
    # the two biases differ per row by the constant m_h·i only
    diff = alibi_bias(n_heads, length) - alibi_bias_key_only(n_heads, length)
    lower = np.tril(np.ones((length, length), dtype=bool))
    expected = -alibi_slopes(n_heads)[:, None] * np.arange(length)[None, :]  # (H, L): -m_h·i
    got = np.where(lower[None], diff, np.nan)
    np.testing.assert_allclose(np.nanmax(got, -1), expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(np.nanmin(got, -1), expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: alibi_slopes(0), "n_heads must be a positive integer"),
        (
            lambda: alibi_slopes(4.0),  # type: ignore[arg-type]
            "n_heads must be a positive integer",
        ),
        (lambda: alibi_bias(4, 0), "length must be a positive integer"),
        (lambda: alibi_bias_key_only(-2, 4), "n_heads must be a positive integer"),
    ],
)
def test_bad_arguments(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


@pytest.mark.parametrize("max_bias", [8.0, 4.0, 16.0])
@pytest.mark.parametrize("n_heads", list(range(1, 65)))
def test_mpt_slopes_match_transformers(n_heads: int, max_bias: float) -> None:
    """MPT's order (even-h slopes of the next power of two first) against HF's MPT code.

    HF builds slopes in float32 (``1 / torch.pow(2, base)``, base float32): rtol 2^-23.
    """
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    length = 5
    ref = build_mpt_alibi_tensor(n_heads, length, alibi_bias_max=max_bias)  # (H, 1, L)
    # HF: bias[h, 0, j] = m_h * (j - (L - 1)); the last key (distance 1 back) gives -m_h
    ref_slopes = -ref[:, 0, length - 2].double().numpy()
    got = alibi_slopes(n_heads, max_bias)
    np.testing.assert_allclose(got, ref_slopes, rtol=2.0**-23, atol=0)


def test_press_bloom_rule_is_mpt_rule_at_max_bias_8() -> None:
    # The two reference rules look different but give the same slopes for every head count
    # (Press multiplies start * ratio^i: a few ulps of rounding).
    for n in range(1, 200):
        np.testing.assert_allclose(alibi_slopes(n), _press_get_slopes(n), rtol=1e-14, atol=0)
    with pytest.raises(ValueError, match="max_bias"):
        alibi_slopes(8, float("nan"))
