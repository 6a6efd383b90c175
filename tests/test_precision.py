"""float32 angle errors: exact cases, agreement with torch float32, growth with position."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.precision import Float32AngleError, float32_angle_error

SETTINGS = settings(max_examples=50, deadline=None)


def test_fields_and_shapes() -> None:
    r = float32_angle_error(64, 10)
    assert isinstance(r, Float32AngleError)
    np.testing.assert_array_equal(r.positions, np.arange(10.0))
    np.testing.assert_array_equal(r.frequency_index, np.arange(32))
    for field in ("angle", "angle_error", "relative_angle_error", "sin_error", "cos_error"):
        arr = getattr(r, field)
        assert arr.shape == (10, 32) and arr.dtype == np.float64
    np.testing.assert_allclose(r.angle[3], 3 * 10000.0 ** (-np.arange(0, 64, 2) / 64), rtol=1e-15)


def test_position_zero_and_pair_zero_are_exact() -> None:
    r = float32_angle_error(128, [0, 1, 2, 1000, 2**24])
    assert np.all(r.angle_error[0] == 0) and np.all(r.sin_error[0] == 0)
    assert np.all(r.relative_angle_error[0] == 0)  # 0/0 is reported as 0, without a warning
    # pair 0 has inv_freq = 1 exactly, and integers up to 2^24 are exact in float32
    assert np.all(r.angle_error[:, 0] == 0)


def test_integers_beyond_two_to_the_24_are_rounded() -> None:
    r = float32_angle_error(8, [2**24 + 1, 2**25 + 1, 2**25 + 3])
    # float32 has a 24-bit significand: 2^24 + 1 rounds to 2^24 (ties to even), the spacing at
    # 2^25 is 4, so 2^25 + 1 -> 2^25 and 2^25 + 3 -> 2^25 + 4
    np.testing.assert_array_equal(r.angle_error[:, 0], [1.0, 1.0, 1.0])


@pytest.mark.parametrize("d", [64, 128])
def test_matches_torch_float32_code(d: int) -> None:
    positions = np.arange(0, 200_000, 37)
    r = float32_angle_error(d, positions)
    # the code this mirrors (Llama-style rotary / sinusoid code):
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    angle32 = torch.tensor(positions).float()[:, None] * inv_freq[None, :]  # (n, d/2) float32
    # numpy and torch do the same IEEE float32 operations: the angles agree bit for bit
    np.testing.assert_array_equal(r.angle_error, np.abs(angle32.double().numpy() - r.angle))
    # sin/cos of float32 come from different libms: they may differ by 1 ulp of [-1, 1] (6e-8)
    sin_err = np.abs(torch.sin(angle32).double().numpy() - np.sin(r.angle))
    cos_err = np.abs(torch.cos(angle32).double().numpy() - np.cos(r.angle))
    np.testing.assert_allclose(r.sin_error, sin_err, rtol=0, atol=1.2e-7)
    np.testing.assert_allclose(r.cos_error, cos_err, rtol=0, atol=1.2e-7)


@SETTINGS
@given(
    d=st.integers(1, 128).map(lambda h: 2 * h),
    positions=st.lists(st.integers(0, 2**20), min_size=1, max_size=20),
    base=st.sampled_from([10000.0, 500000.0, 100.0]),
)
def test_angle_error_is_a_few_ulps_of_the_angle(d: int, positions: list[int], base: float) -> None:
    r = float32_angle_error(d, positions, base)
    # three float32 roundings (pow, division, product) and a pow whose exponent (i/d) is
    # itself rounded, amplified by ln(base) <= 13.2: relative error <= (3 + 13.2 + 3)·2^-24
    assert np.all(r.relative_angle_error <= 20 * 2.0**-24)
    np.testing.assert_allclose(
        r.relative_angle_error * np.abs(r.angle), r.angle_error, rtol=1e-12, atol=0
    )
    # sin/cos errors are the angle error plus one float32 rounding of the result
    assert np.all(r.sin_error <= r.angle_error + 2.0**-23)
    assert np.all(r.cos_error <= r.angle_error + 2.0**-23)


def test_error_grows_with_position() -> None:
    small = float32_angle_error(128, 100)
    large = float32_angle_error(128, np.arange(100_000, 100_100))
    # below position 100 all angles are < 100 rad: errors stay < 100·2^-23 ≈ 1.2e-5
    assert small.angle_error.max() < 1.2e-5
    assert small.sin_error.max() < 1.2e-5
    # near 100 000 the fast pairs (angle ~ 1e5 rad, float32 spacing 2^-7) are off by ~1e-3
    assert large.angle_error.max() > 1e-3
    assert large.sin_error.max() > 1e-3
    assert large.angle_error.max() < 100_100 * 4 * 2.0**-24


def test_a_base_beyond_float32_is_refused() -> None:
    # the float32 path would turn such a base into inf; found by the CLI fuzz test
    float32_angle_error(4, 2, float(np.finfo(np.float32).max))
    with pytest.raises(ValueError, match="must fit in float32"):
        float32_angle_error(4, 2, 3.4028235677973366e38)
