"""encodings/seeded.py (mulberry32, Box–Muller) and score_terms.seeded_score_terms: the seeded
draw the explorer's four-terms view repeats in JavaScript (tests/test_explore_math.py holds the
two languages together; here the Python against independent formulas)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.config import PEParams
from posecards.content import card8
from posecards.encodings.score_terms import score_terms, seeded_score_terms
from posecards.encodings.seeded import mulberry32, seeded_normals
from posecards.encodings.sinusoidal import sinusoidal_pe

M32 = 0xFFFFFFFF


def _mulberry32_loop(seed: int, count: int) -> list[int]:
    """The published JavaScript function, one call at a time, in Python integers masked to 32
    bits (Math.imul is the low 32 bits of the product; >>> a logical shift)."""
    a, out = seed, []
    for _ in range(count):
        a = (a + 0x6D2B79F5) & M32
        t = ((a ^ (a >> 15)) * (a | 1)) & M32
        t = (t ^ ((t + ((t ^ (t >> 7)) * (t | 61))) & M32)) & M32
        out.append((t ^ (t >> 14)) & M32)
    return out


def test_mulberry32_is_the_published_generator() -> None:
    """Seed 0's first output is 1144304738: 0.26642920868471265 × 2³², what the JavaScript form
    of stackoverflow.com/a/47593316 returns first in Node 20 (``mulberry32(0)()``)."""
    assert int(mulberry32(0, 1)[0]) == 1144304738
    assert int(mulberry32(0, 1)[0]) / 2**32 == 0.26642920868471265


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300))
def test_mulberry32_counter_form_equals_the_loop(seed: int, count: int) -> None:
    got = mulberry32(seed, count)
    assert got.dtype == np.uint32
    assert got.tolist() == _mulberry32_loop(seed, count)


def test_seeded_normals_are_box_muller_and_standard() -> None:
    """Each pair is Box–Muller of two outputs; 200,000 draws have mean 0, variance 1 and a
    Kolmogorov–Smirnov distance to the normal CDF below 0.005 (the 1 % critical value is
    1.63/√n = 0.0036)."""
    u = mulberry32(3, 4).astype(np.float64) / 2**32
    r = math.sqrt(-2.0 * math.log(1.0 - u[0]))
    expected = [r * math.cos(2 * math.pi * u[1]), r * math.sin(2 * math.pi * u[1])]
    assert seeded_normals(3, 3)[:2].tolist() == pytest.approx(expected, rel=1e-15)
    assert seeded_normals(3, 3)[2] == seeded_normals(3, 4)[2]  # an odd count keeps the pairs
    z = np.sort(seeded_normals(12345, 200_000))
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1.0) < 0.01
    cdf = 0.5 * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))
    ks = np.max(
        np.maximum(np.arange(1, z.size + 1) / z.size - cdf, cdf - np.arange(z.size) / z.size)
    )
    assert ks < 0.005, ks


@pytest.mark.parametrize(
    ("args", "name"),
    [((-1, 4), "seed"), ((2**32, 4), "seed"), ((True, 4), "seed"), ((1.0, 4), "seed"),
     ((0, 0), "count"), ((0, 2.0), "count")],
)  # fmt: skip
def test_bad_seed_or_count_names_it(args: tuple[object, object], name: str) -> None:
    for fn in (mulberry32, seeded_normals):
        with pytest.raises(ValueError, match=name):
            fn(*args)


def test_seeded_score_terms_split_the_score_of_x_plus_p() -> None:
    """At card 8's shapes: x, W_q, W_k are one stream of seeded_normals in that order (x scaled
    to the content rms, the weights by 1/√d), p card 8's sinusoids; the four terms add up to
    (x + p)W_q((x + p)W_k)ᵀ; the content's rms is the one asked for, within sampling error."""
    n, d, dh, c = card8.TERMS_TOKENS, 512, card8.TERMS_HEAD, card8.TERMS_CONTENT_RMS
    t = seeded_score_terms(n, d, dh, 10000.0, 5, c)
    z = seeded_normals(5, n * d + 2 * d * dh)
    x = z[: n * d].reshape(n, d) * c
    wq = z[n * d : n * d + d * dh].reshape(d, dh) / math.sqrt(d)
    wk = z[n * d + d * dh :].reshape(d, dh) / math.sqrt(d)
    p = sinusoidal_pe(n, d, 10000.0)
    assert np.allclose(t.total, ((x + p) @ wq) @ ((x + p) @ wk).T, rtol=0, atol=1e-12)
    ref = score_terms(x, p, wq, wk)
    for key in ("cc", "cp", "pc", "pp"):
        assert np.array_equal(getattr(t, key), getattr(ref, key)), key
    assert t.cc.shape == (n, n)
    assert abs(math.sqrt(float(np.mean(x**2))) / c - 1.0) < 0.03
    # card 8's own example has the same shapes (its numbers come from numpy's generator)
    ex = card8.terms_example(PEParams())
    assert (ex["x"].shape, ex["wq"].shape, ex["p"].shape) == (x.shape, wq.shape, p.shape)


@pytest.mark.parametrize(
    ("args", "name"),
    [((0, 8, 4, 1e4, 0, 1.0), "n_tokens"), ((4, 8, 0, 1e4, 0, 1.0), "d_head"),
     ((4, 8, 4, 1e4, 0, 0.0), "content_rms"), ((4, 7, 4, 1e4, 0, 1.0), "d_model"),
     ((4, 8, 4, 1.0, 0, 1.0), "base"), ((4, 8, 4, 1e4, -3, 1.0), "seed")],
)  # fmt: skip
def test_seeded_score_terms_bad_input_names_it(args: tuple[float, ...], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        seeded_score_terms(*args)
