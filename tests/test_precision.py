"""float32 angle errors: exact cases, agreement with torch float32, growth with position."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings import exact
from posecards.encodings.exact import sin_cos_float32
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
    # the code this mirrors (Hugging Face Llama rotary embedding):
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    angle32 = torch.tensor(positions).float()[:, None] * inv_freq[None, :]  # (n, d/2) float32
    # torch's float32 pow is not correctly rounded on every CPU (an ulp off on some AVX-512
    # machines), so its angles may differ from the recipe's by an ulp of inv_freq (2^-23
    # relative) and one more rounding of the product: at most 2 ulp of the angle
    torch_err = np.abs(angle32.double().numpy() - r.angle)
    ulp = np.spacing(np.abs(angle32.numpy())).astype(np.float64)  # (n, d/2)
    assert np.all(np.abs(torch_err - r.angle_error) <= 2 * ulp)
    # sin/cos of float32 come from different libms: they may differ by 1 ulp of [-1, 1] (6e-8)
    sin_err = np.abs(torch.sin(angle32).double().numpy() - np.sin(r.angle))
    cos_err = np.abs(torch.cos(angle32).double().numpy() - np.cos(r.angle))
    np.testing.assert_allclose(r.sin_error, sin_err, rtol=0, atol=2.5e-7)
    np.testing.assert_allclose(r.cos_error, cos_err, rtol=0, atol=2.5e-7)


def _fl32(x: mpmath.mpf) -> float:
    """Round a 200-bit value to float32, directly (no float64 step)."""
    with mpmath.workprec(24):
        return float(+x)


@SETTINGS
@given(
    d=st.integers(1, 512).map(lambda h: 2 * h),
    p=st.integers(0, 2**24),
    base=st.sampled_from([10000.0, 500000.0, 100.0, 1e6 + 1]),
    frac=st.floats(0, 1),
)
def test_every_step_is_the_correctly_rounded_float32_operation(
    d: int, p: int, base: float, frac: float
) -> None:
    # an independent evaluation of the recipe with 200-bit arithmetic, each step rounded to
    # float32 directly: the emulation must agree bit for bit, on any CPU
    i = min(d // 2 - 1, int(frac * d / 2))
    r = float32_angle_error(d, [p], base)
    with mpmath.workprec(200):
        e = _fl32(mpmath.mpf(2 * i) / d)
        pw = _fl32(mpmath.power(mpmath.mpf(_fl32(mpmath.mpf(base))), mpmath.mpf(e)))
        inv = _fl32(1 / mpmath.mpf(pw))
        angle32 = _fl32(mpmath.mpf(_fl32(mpmath.mpf(p))) * mpmath.mpf(inv))
        exact = mpmath.mpf(p) * mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d)
        sin32 = _fl32(mpmath.sin(mpmath.mpf(angle32)))
        cos32 = _fl32(mpmath.cos(mpmath.mpf(angle32)))
    assert r.angle[0, i] == float(exact) or abs(r.angle[0, i] - float(exact)) <= np.spacing(
        float(exact)
    )
    assert r.angle_error[0, i] == abs(angle32 - r.angle[0, i])
    assert r.sin_error[0, i] == abs(sin32 - np.sin(r.angle[0, i]))
    assert r.cos_error[0, i] == abs(cos32 - np.cos(r.angle[0, i]))


def test_sin_cos_fall_back_to_high_precision_near_a_float32_midpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = np.float32(np.arange(1, 2000, dtype=np.float32) * np.float32(0.37))
    plain = sin_cos_float32(x)
    # a band so wide that every value is "unsure": all go through the 113-bit path
    monkeypatch.setattr(exact, "BAND", 2.0**-10)
    careful = sin_cos_float32(x)
    np.testing.assert_array_equal(plain[0], careful[0])
    np.testing.assert_array_equal(plain[1], careful[1])
    with mpmath.workprec(200):
        for v, s, c in zip(x[:50], careful[0][:50], careful[1][:50], strict=True):
            assert s == _fl32(mpmath.sin(mpmath.mpf(float(v))))
            assert c == _fl32(mpmath.cos(mpmath.mpf(float(v))))


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
