"""Offset similarity of sinusoidal encodings: closed form, direct products, memory."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings import similarity
from posecards.encodings.similarity import offset_profile, pe_similarity
from posecards.encodings.sinusoidal import pair_frequencies, sinusoidal_pe

SETTINGS = settings(max_examples=50, deadline=None)
even_dims = st.integers(2, 96).map(lambda h: 2 * h)  # d >= 4 so both frequency rules apply
bases = st.sampled_from([10000.0, 500000.0, 100.0])
frequency_rules = st.sampled_from(["paper", "tensor2tensor"])


def _direct(positions: object, d: int, base: float, freqs: str) -> np.ndarray:
    pe = sinusoidal_pe(positions, d, base, frequencies=freqs)  # type: ignore[arg-type]
    return pe @ pe.T / (d / 2)


@SETTINGS
@given(d=even_dims, base=bases, freqs=frequency_rules, n=st.integers(1, 30))
def test_matches_direct_product_for_ranges(d: int, base: float, freqs: str, n: int) -> None:
    s = pe_similarity(n, d, base, frequencies=freqs)
    assert s.shape == (n, n) and s.dtype == np.float64
    np.testing.assert_allclose(s, _direct(n, d, base, freqs), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.diag(s), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(s, s.T)


@SETTINGS
@given(
    d=even_dims,
    base=bases,
    freqs=frequency_rules,
    positions=st.lists(st.integers(-3000, 3000), min_size=1, max_size=25),
)
def test_matches_direct_product_for_arbitrary_positions(
    d: int, base: float, freqs: str, positions: list[int]
) -> None:
    s = pe_similarity(positions, d, base, frequencies=freqs)
    # angles up to 6000 rad carry ~1e-12 rounding in the direct product
    np.testing.assert_allclose(s, _direct(positions, d, base, freqs), rtol=0, atol=1e-11)
    np.testing.assert_allclose(np.diag(s), 1.0, rtol=0, atol=1e-15)


@SETTINGS
@given(
    d=even_dims,
    positions=st.one_of(
        st.lists(st.floats(-500, 500), min_size=2, max_size=20),  # fractional: np.unique path
        st.lists(st.integers(-(10**7), 10**7), min_size=2, max_size=6),  # huge span: np.unique
    ),
)
def test_matches_direct_product_for_fractional_or_far_positions(
    d: int, positions: list[float]
) -> None:
    s = pe_similarity(positions, d)
    # angles up to 2·10^7 rad carry ~4e-9 absolute rounding in the direct product
    atol = 1e-11 if max(abs(p) for p in positions) <= 500 else 1e-8
    np.testing.assert_allclose(s, _direct(positions, d, 10000.0, "paper"), rtol=0, atol=atol)
    np.testing.assert_allclose(np.diag(s), 1.0, rtol=0, atol=1e-15)


@SETTINGS
@given(
    d=even_dims,
    base=bases,
    start=st.floats(-100, 100),
    step=st.sampled_from([0.25, 0.5, 2.0, 3.0]),
    n=st.integers(2, 20),
)
def test_evenly_spaced_fractional_positions(
    d: int, base: float, start: float, step: float, n: int
) -> None:
    positions = start + step * np.arange(n)
    s = pe_similarity(positions, d, base)
    np.testing.assert_allclose(s, _direct(positions, d, base, "paper"), rtol=0, atol=1e-11)


@SETTINGS
@given(
    d=even_dims,
    base=bases,
    freqs=frequency_rules,
    p=st.integers(0, 4000),
    k=st.integers(-4000, 4000),
)
def test_offset_profile_is_the_normalised_dot_product(
    d: int, base: float, freqs: str, p: int, k: int
) -> None:
    f = offset_profile(k, d, base, frequencies=freqs)
    # f(k) = (1/(d/2)) Σ cos(k ω_i)
    expected = np.mean(np.cos(k * pair_frequencies(d, base, freqs)))
    assert float(f) == pytest.approx(expected, abs=1e-14)
    for layout in ("interleaved", "half"):  # same whatever p and layout
        pe = sinusoidal_pe([p, p + k], d, base, layout=layout, frequencies=freqs)
        assert pe[0] @ pe[1] / (d / 2) == pytest.approx(float(f), abs=1e-11)


def test_offset_profile_values_and_shape() -> None:
    # d = 2: a single pair with ω = 1, so f(k) = cos k
    np.testing.assert_allclose(offset_profile([0.0, math.pi, 2.0], 2), [1.0, -1.0, math.cos(2)])
    assert offset_profile(0, 512) == pytest.approx(1.0, abs=0)
    grid = offset_profile(np.arange(-6, 6).reshape(3, 4), 64)
    assert grid.shape == (3, 4)
    np.testing.assert_array_equal(grid[0, :], offset_profile([-6, -5, -4, -3], 64))
    np.testing.assert_array_equal(offset_profile([-5, -3], 64), offset_profile([5, 3], 64))  # even
    # d = 4, ω = (1, 0.01): f(1) = (cos 1 + cos 0.01)/2
    assert offset_profile(1, 4) == pytest.approx((math.cos(1) + math.cos(0.01)) / 2, rel=1e-15)
    # similarity falls off with distance at first (d=512: f(1) > f(10) > f(100))
    f = offset_profile([1, 10, 100], 512)
    assert f[0] > f[1] > f[2]
    with pytest.raises(ValueError, match="offsets must be finite"):
        offset_profile([1.0, np.inf], 8)


def test_chunks_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    uneven = [0, 5, 1, 9, 30, 2]
    fractional = [0.5, 5, 1, 9.25, 30, 2]
    full, full_fractional = pe_similarity(uneven, 64), pe_similarity(fractional, 64)
    full_range = pe_similarity(50, 64)
    monkeypatch.setattr(similarity, "_CHUNK_ELEMENTS", 64)  # 2 offsets per chunk
    monkeypatch.setattr(similarity, "_CHUNK_ROWS_ELEMENTS", 12)  # 2 rows per block
    np.testing.assert_array_equal(pe_similarity(uneven, 64), full)
    np.testing.assert_array_equal(pe_similarity(fractional, 64), full_fractional)
    np.testing.assert_array_equal(pe_similarity(50, 64), full_range)
    np.testing.assert_allclose(full_range, _direct(50, 64, 10000.0, "paper"), atol=1e-12)


@pytest.mark.parametrize("positions", [800, np.r_[0:400, 1000:1400]])
def test_memory_stays_near_the_output(monkeypatch: pytest.MonkeyPatch, positions: object) -> None:
    # n = 800, d = 4096: the PE matrix alone would take 800·4096·8 B = 26 MB, the output 5 MB.
    monkeypatch.setattr(similarity, "_CHUNK_ELEMENTS", 1 << 16)  # 0.5 MB of cosines per chunk
    tracemalloc.start()
    try:
        s = pe_similarity(positions, 4096)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    n = 800
    assert s.shape == (n, n)
    # the output plus one chunk of cosines and one block of rows: nothing else of size n² or n·d
    assert peak < n * n * 8 + (4 << 20)
    assert s[3, 10] == pytest.approx(float(offset_profile(7, 4096)), abs=1e-15)
