"""Why RoPE fails past its training length (issue 36 point 11): the arc of angles a pair reaches
at test length that training never reached, against a brute-force count of angle bins, with the
frequencies transformers 5.23 computes for each scaling method."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rope_scaling import hf_rope

from posecards.config import PEParams
from posecards.content.card4 import (
    ROPE_DIM,
    ROPE_FACTOR,
    ROPE_ORIG,
    ROPE_SCHEMES,
    UNSEEN_BASE,
    UNSEEN_MIN,
    UNSEEN_TEST,
    compute,
)
from posecards.encodings.unseen_angles import angle_reach, unseen_angles

BINS = 4096


def _brute(theta_train: float, theta_test: float, train: int, test: int) -> float:
    """Mark the angle bins (mod 2 pi) the continuous distances 0 .. n - 1 pass through, for the
    training and the test context; the bins only the test passes, as radians."""

    def hit(theta: float, n: int) -> np.ndarray:
        end = theta * (n - 1)  # the angle reached at the last distance
        samples = np.linspace(0.0, min(end, 2 * np.pi * 1.01), 20 * BINS)  # the arc, once round
        bins = np.zeros(BINS, dtype=bool)
        bins[(np.mod(samples, 2 * np.pi) / (2 * np.pi) * BINS).astype(int) % BINS] = True
        return bins

    return float(np.sum(hit(theta_test, test) & ~hit(theta_train, train))) * 2 * np.pi / BINS


@settings(max_examples=60, deadline=None)
@given(
    st.floats(1e-6, 2.0),
    st.floats(0.05, 4.0),
    st.integers(2, 5000),
    st.integers(2, 20000),
)
def test_unseen_arc_is_the_bins_only_the_test_reaches(
    theta: float, ratio: float, train: int, test: int
) -> None:
    theta_test = theta * ratio
    ours = float(unseen_angles([theta], [theta_test], train, test)[0])
    assert 0.0 <= ours <= 2 * np.pi
    assert ours == pytest.approx(_brute(theta, theta_test, train, test), abs=3 * 2 * np.pi / BINS)


def test_fast_pairs_see_nothing_new_and_pi_covers_the_training_arc() -> None:
    theta = 10000.0 ** (-np.arange(0, 128, 2) / 128)  # (64,)
    plain = unseen_angles(theta, theta, 8192, 32768)
    turned = angle_reach(theta, 8192) >= 2 * np.pi  # wavelength within L - 1
    assert np.all(plain[turned] == 0.0) and np.all(plain[~turned] > 0.0)
    # position interpolation by s = T / L: theta/s over T - 1 is theta (L - 1/s): almost nothing
    pi = unseen_angles(theta, theta / 4, 8192, 32768)
    np.testing.assert_allclose(pi[~turned], 0.75 * theta[~turned], rtol=1e-10)
    # the same frequencies, a shorter or equal test: nothing new
    assert np.all(unseen_angles(theta, theta, 8192, 8192) == 0.0)


def test_card_4_counts_from_transformers_frequencies() -> None:
    """The card's count of pairs that see new angles (more than 0.01 rad) per method, recomputed
    from the float32 inv_freq transformers 5.23 computes for each rope_parameters."""
    n = compute(PEParams()).numbers
    assert (ROPE_ORIG, UNSEEN_TEST) == (8192, 8192 * ROPE_FACTOR)
    plain, _ = hf_rope({"rope_type": "default", "rope_theta": 10000.0}, ROPE_DIM, ROPE_ORIG)

    def count(train: np.ndarray, test: np.ndarray) -> int:  # written out: max(0, reach' - reach)
        reach = np.minimum(2 * np.pi, train * (ROPE_ORIG - 1))
        reach_t = np.minimum(2 * np.pi, test * (UNSEEN_TEST - 1))
        return int(np.sum(np.maximum(0.0, reach_t - reach) > UNSEEN_MIN))

    assert n["unseen_none_pairs"] == count(plain, plain) == 14
    hf_types = {"linear", "yarn", "llama3"}  # transformers has no static NTK-aware type
    for key, scaling, _ in ROPE_SCHEMES:
        if key in hf_types:
            test, _ = hf_rope({**scaling, "rope_theta": 10000.0}, ROPE_DIM, ROPE_ORIG)
            assert n[f"unseen_{key}_pairs"] == count(plain, test), key
    # NTK-aware: base' = base s^(d/(d-2)), written out
    ntk = (10000.0 * ROPE_FACTOR ** (128 / 126)) ** (-np.arange(0, 128, 2) / 128)
    assert n["unseen_ntk_pairs"] == count(plain, ntk) == 13
    big, _ = hf_rope({"rope_type": "default", "rope_theta": UNSEEN_BASE}, ROPE_DIM, ROPE_ORIG)
    assert n["unseen_base_pairs"] == count(big, big)
    assert (n["unseen_linear_pairs"], n["unseen_yarn_pairs"], n["unseen_llama3_pairs"]) == (0, 0, 0)
