"""Diagnostics of a learned position table: norms, cosine similarity and the offset profile."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from posecards.encodings.cosine import cosine_similarity
from posecards.encodings.position_table import (
    row_norms,
    table_offset_profile,
    table_similarity,
    unit_rows,
)
from posecards.encodings.similarity import offset_profile
from posecards.encodings.sinusoidal import sinusoidal_pe

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def _direct_profile(table: np.ndarray) -> np.ndarray:
    """mean_p cos(P_p, P_{p+k}) from the full similarity matrix, over pairs of non-zero rows."""
    c = table_similarity(table)
    out = []
    for k in range(table.shape[0]):
        diag = np.diagonal(c, k)
        ok = ~np.isnan(diag)
        out.append(diag[ok].mean() if ok.any() else np.nan)
    return np.array(out)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 40).flatmap(
        lambda n: st.integers(1, 12).flatmap(lambda d: arrays(np.float64, (n, d), elements=finite))
    )
)
def test_offset_profile_is_the_mean_of_each_diagonal(table: np.ndarray) -> None:
    # FFT autocorrelation vs the diagonals of the similarity matrix: rounding of an FFT of
    # length <= 128 on unit rows is far below 1e-12 (NaN where no pair of non-zero rows exists).
    np.testing.assert_allclose(table_offset_profile(table), _direct_profile(table), atol=1e-12)
    if np.any(table != 0):
        assert abs(table_offset_profile(table)[0] - 1.0) < 1e-12


def test_similarity_is_the_cosine_of_rows() -> None:
    rng = np.random.default_rng(0)
    table = rng.normal(size=(50, 16))
    rows = np.arange(0, 50, 3)
    np.testing.assert_allclose(
        table_similarity(table, rows), cosine_similarity(table[rows], table[rows]), atol=1e-15
    )
    np.testing.assert_allclose(row_norms(table), np.sqrt((table**2).sum(axis=1)), rtol=1e-15)


def test_sinusoidal_table_profile_matches_closed_form() -> None:
    # For the sinusoidal table g(k) = f(k) exactly: similarity depends only on the offset.
    n, d = 300, 64
    pe = sinusoidal_pe(n, d)
    np.testing.assert_allclose(
        table_offset_profile(pe), offset_profile(np.arange(n), d), atol=1e-12
    )


def test_zero_rows_have_no_direction() -> None:
    table = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 0.0], [-2.0, 0.0], [0.0, 0.0]])
    g = table_offset_profile(table)
    # non-zero rows 0, 2, 3: offset 1 -> (2,3) = -1; offset 2 -> (0,2) = 1; offset 3 -> (0,3) = -1;
    # offset 4 -> (0,4) has a zero row: no pair
    np.testing.assert_allclose(g[:4], [1.0, -1.0, 1.0, -1.0], atol=1e-15)
    assert np.isnan(g[4])
    sim = table_similarity(table)
    assert np.isnan(sim[1]).all() and np.isnan(sim[:, 4]).all()
    assert sim[0, 2] == 1.0 and sim[0, 3] == -1.0


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="non-finite value \\(row 1\\)"):
        row_norms(np.array([[1.0, 2.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="non-empty"):
        unit_rows(np.zeros(5))
    with pytest.raises(ValueError, match="rows must be"):
        table_similarity(np.ones((3, 2)), [0, 3])
