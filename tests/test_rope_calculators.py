"""The RoPE calculators: the smallest base for a context (Men et al. 2024), the critical
dimension (Liu et al. 2024) and the scaling factor a target context needs per method.

Each is checked against an independent computation written here from the formula (brute force
over distances, pairs or factors, not through posecards' helpers)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.critical_dim import (
    critical_dimension,
    extrapolation_bound,
    turning_pairs,
)
from posecards.encodings.rope_base_bound import base_holds, cos_sum, smallest_base
from posecards.encodings.scaling_needed import METHODS, factor_needed, unseen_at


def _b_brute(m: int, d: int, base: float) -> float:
    return sum(math.cos(m * base ** (-2 * i / d)) for i in range(d // 2))


def _holds_brute(context: int, d: int, base: float) -> bool:
    k = np.arange(d // 2)
    theta = base ** (-2.0 * k / d)
    m = np.arange(context)[:, None]
    return bool((np.cos(m * theta).sum(axis=1) >= 0).all())


# --- Men et al.: B(m) and the smallest base ---------------------------------------------------


@given(st.integers(0, 5000), st.sampled_from([8, 32, 64, 128]), st.floats(10.0, 1e7))
@settings(max_examples=60, deadline=None)
def test_cos_sum_is_the_sum_over_pairs(m: int, d: int, base: float) -> None:
    assert cos_sum(m, d, base) == pytest.approx(_b_brute(m, d, base), abs=1e-9)


def test_b_at_zero_is_the_number_of_pairs() -> None:
    assert cos_sum(0, 128, 10000.0) == 64.0


def _first_holding_brute(context: int, d: int, bases: np.ndarray) -> np.ndarray:
    """Which bases hold, all distances at once (bases, context, d/2)."""
    theta = bases[:, None] ** (-2.0 * np.arange(d // 2) / d)  # (bases, d/2)
    m = np.arange(context, dtype=np.float64)
    return (np.cos(m[None, :, None] * theta[:, None, :]).sum(axis=2) >= 0).all(axis=1)


@pytest.mark.parametrize("context,d", [(64, 16), (128, 16), (200, 32)])
def test_smallest_base_is_the_first_base_of_a_fine_scan(context: int, d: int) -> None:
    found = smallest_base(context, d)
    assert base_holds(context, d, found) and _holds_brute(context, d, found)
    # a scan 4x finer than posecards' (0.025 % steps) finds no holding base below it
    grid = np.exp(np.arange(math.log(2.0), math.log(found), math.log(1.00025)))[:-8]
    holds = np.concatenate(
        [_first_holding_brute(context, d, grid[i : i + 500]) for i in range(0, grid.size, 500)]
    )
    assert not holds.any(), f"a smaller base holds: {grid[holds][:3]}"
    # and just below the bisection's end it fails
    assert not _holds_brute(context, d, found * (1 - 1e-5))


def test_smallest_base_grows_with_the_context() -> None:
    bases = [smallest_base(n, 32) for n in (64, 128, 256, 512)]
    assert bases == sorted(bases) and bases[-1] > 4 * bases[0]


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="head_dim"):
        cos_sum(3, 7, 100.0)
    with pytest.raises(ValueError, match="base"):
        cos_sum(3, 8, 1.0)
    with pytest.raises(ValueError, match="context"):
        smallest_base(0, 8)


# --- Liu et al.: critical dimension ------------------------------------------------------------


def test_llama2_settings_give_92() -> None:
    # Liu et al.'s closed form at LLaMA 2's settings (head dim 128, base 10000, 4096 tokens):
    # (d/2) log_b(T / 2 pi) = 45.03, so 46 pairs turn and d_extra = 2 x 46
    assert critical_dimension(128, 10000.0, 4096) == 92 and turning_pairs(128, 10000.0, 4096) == 46
    assert extrapolation_bound(128, 10000.0, 4096) == pytest.approx(
        2 * math.pi * 10000.0 ** (92 / 128), rel=1e-12
    )


@given(st.sampled_from([16, 32, 64, 128, 256]), st.floats(100.0, 1e8), st.integers(8, 10**6))
@settings(max_examples=200, deadline=None)
def test_critical_dim_counts_the_pairs_that_turn(d: int, base: float, context: int) -> None:
    # brute force: pairs whose period 2 pi b^(2i/d) fits in the context
    periods = [2 * math.pi * base ** (2 * i / d) for i in range(d // 2)]
    count = sum(p <= context for p in periods)
    assert turning_pairs(d, base, context) == count
    x = (d / 2) * math.log(context / (2 * math.pi)) / math.log(base)
    if abs(x - round(x)) > 1e-9:  # off the measure-zero case of an integer x
        assert critical_dimension(d, base, context) == 2 * count
    # the first pair past the critical dimension does not turn within the context
    if critical_dimension(d, base, context) < d:
        assert extrapolation_bound(d, base, context) > context


# --- the factor each scaling method needs --------------------------------------------------------


def _unseen_linear(d: int, base: float, s: float, L: int, T: int) -> float:
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    train = np.minimum(2 * np.pi, theta * (L - 1))
    test = np.minimum(2 * np.pi, theta / s * (T - 1))
    return float(np.maximum(0.0, test - train).max())


@pytest.mark.parametrize("d,base,L,T", [(128, 10000.0, 4096, 32768), (64, 500000.0, 8192, 131072)])
def test_linear_needs_the_ratio_of_the_distances(d: int, base: float, L: int, T: int) -> None:
    s = factor_needed("linear", d, base, L, T)
    assert s == pytest.approx((T - 1) / (L - 1), rel=1e-8)
    assert _unseen_linear(d, base, s, L, T) <= 1e-12
    assert _unseen_linear(d, base, s * (1 - 1e-6), L, T) > 0


@pytest.mark.parametrize("method", list(METHODS))
def test_each_method_factor_is_the_smallest_that_covers(method: str) -> None:
    d, base, L, T = 64, 10000.0, 2048, 16384
    s = factor_needed(method, d, base, L, T)
    assert unseen_at(method, d, base, s, L, T) <= 1e-12
    assert unseen_at(method, d, base, s * (1 - 1e-6), L, T) > 1e-12
    # a brute-force scan of factors agrees on where the unseen arc first vanishes
    grid = np.exp(np.linspace(0.0, math.log(4 * s), 400))
    first = next(g for g in grid if unseen_at(method, d, base, float(g), L, T) <= 1e-12)
    assert s <= first * (1 + 1e-9) and first <= s * (4 * s) ** (1 / 399) * (1 + 1e-9)


def test_ntk_needs_more_than_linear() -> None:
    # NTK-aware slows pair k by s^(2k/(d-2)): the middle pairs that never turned are slowed less
    # than the slowest, so covering them takes a larger factor than position interpolation
    ntk = factor_needed("ntk", 128, 10000.0, 4096, 32768)
    assert ntk > factor_needed("linear", 128, 10000.0, 4096, 32768) * 1.5


def test_no_factor_needed_within_the_training_length() -> None:
    assert factor_needed("yarn", 64, 10000.0, 4096, 4096) == 1.0


def test_lowest_mean_cos_is_the_running_minimum_of_the_mean_cosine() -> None:
    from posecards.encodings.rope_base_bound import lowest_mean_cos

    d, base, n = 16, 30.0, 400
    theta = base ** (-np.arange(0, d, 2) / d)  # (d/2,)
    mean = np.cos(np.outer(np.arange(n), theta)).mean(axis=1)  # (n,)
    want = np.minimum.accumulate(mean)
    np.testing.assert_allclose(lowest_mean_cos(d, base, n), want, rtol=0, atol=1e-13)
    assert lowest_mean_cos(d, base, n).min() < 0  # base 30 fails within 400: the curve dips
