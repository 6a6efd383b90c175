"""The road from counting to the sinusoid (card 1): normalised positions, binary digits and
their smooth twins, checked against closed forms and Python's own integers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.counting import binary_digits, normalised_positions, smooth_digits


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 20))
def test_binary_digits_are_the_bits_of_p(p: int, bits: int) -> None:
    got = binary_digits(np.array([p]), bits)[0]
    assert got.tolist() == [float((p >> j) & 1) for j in range(bits)]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 4096), st.integers(1, 12))
def test_smooth_twin_has_the_digit_period_and_agrees_at_its_turns(p: int, bits: int) -> None:
    """Same period 2^(j+1) as digit j; equal to the digit at p = 0 and p = 2^j (mod 2^(j+1))."""
    j = np.arange(bits)
    now = smooth_digits(np.array([p]), bits)[0]
    later = smooth_digits(np.array([p]) + 2.0 ** (j + 1), bits)  # each digit one period later
    np.testing.assert_allclose(np.diag(later), now, atol=1e-9)
    assert now == pytest.approx([0.5 * (1 - math.cos(math.pi * p / 2**i)) for i in j], abs=1e-12)
    for i in range(bits):
        if p % 2 ** (i + 1) in (0, 2**i):
            assert now[i] == pytest.approx(binary_digits(np.array([p]), bits)[0, i], abs=1e-12)


def test_fastest_twin_is_the_lowest_bit() -> None:
    """At integer positions the period-2 twin is exactly the last bit: (1 - cos(πp))/2."""
    p = np.arange(64)
    np.testing.assert_allclose(smooth_digits(p, 1)[:, 0], binary_digits(p, 1)[:, 0], atol=1e-12)


def test_normalised_position_depends_on_the_length() -> None:
    assert normalised_positions([0, 5, 15], 16).tolist() == [0.0, 5 / 15, 1.0]
    assert normalised_positions([5], 8)[0] == pytest.approx(5 / 7)
    with pytest.raises(ValueError, match="length must be at least 2"):
        normalised_positions([0], 1)


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(ValueError, match="non-negative integers"):
        binary_digits([1.5], 3)
    with pytest.raises(ValueError, match="n_bits must be a positive integer"):
        smooth_digits([1], 0)
