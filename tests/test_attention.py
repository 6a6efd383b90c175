"""Permutation equivariance of attention without PE, and its loss with PE."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.attention import attention_permutation_demo


def test_reordering_only_permutes_rows_without_pe() -> None:
    demo = attention_permutation_demo(("I", "eat", "apples"))
    p = list(demo.order)
    assert demo.order == (2, 1, 0)
    # Attn(PX) = P Attn(X): outputs and weights are the originals with rows (and columns) permuted
    assert demo.deviation_without_pe < 1e-14
    np.testing.assert_allclose(demo.outputs_plain_reordered, demo.outputs_plain[p], atol=1e-14)
    np.testing.assert_allclose(
        demo.weights_plain_reordered, demo.weights_plain[np.ix_(p, p)], atol=1e-14
    )
    # with PE the reordered sentence is a different input: far from a permutation
    assert demo.deviation_with_pe > 1e-3
    assert np.abs(demo.outputs_pe_reordered - demo.outputs_pe[p]).max() == demo.deviation_with_pe
    for w in (demo.weights_plain, demo.weights_pe, demo.weights_pe_reordered):
        np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-15)
        assert w.dtype == np.float64


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 7), seed=st.integers(0, 10_000), data=st.data())
def test_any_permutation_any_seed(n: int, seed: int, data: st.DataObject) -> None:
    order = tuple(data.draw(st.permutations(range(n))))
    tokens = tuple(f"t{i}" for i in range(n))
    demo = attention_permutation_demo(tokens, order=order, d_model=8, seed=seed)
    assert demo.deviation_without_pe < 1e-13


def test_same_seed_same_numbers() -> None:
    a = attention_permutation_demo(("我", "吃", "苹果"))
    b = attention_permutation_demo(("我", "吃", "苹果"))
    assert np.array_equal(a.outputs_pe, b.outputs_pe)


def test_bad_order_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="order must be a permutation"):
        attention_permutation_demo(("a", "b"), order=(0, 0))


def test_translations_give_the_same_numbers() -> None:
    """The English and the Chinese card show one demo: embedding rows follow first appearance."""
    en = attention_permutation_demo(("I", "eat", "apples"))
    zh = attention_permutation_demo(("我", "吃", "苹果"))
    assert np.array_equal(en.weights_pe, zh.weights_pe)
    assert en.deviation_with_pe == zh.deviation_with_pe
    repeated = attention_permutation_demo(("a", "b", "a"))
    assert np.array_equal(
        repeated.weights_plain[0], repeated.weights_plain[2]
    )  # same token, same row
