"""Relative-position buckets: the correctly rounded float32 log, T5 and DeBERTa-v2 reference
agreement, properties, no warnings.

What the agreement tests compare: our buckets (float32 arithmetic with the correctly rounded
float32 log, the same on every CPU) against Hugging Face's, which take ``torch.log`` of float32
tensors on *this* CPU (SLEEF or libm; not correctly rounded, CPU-dependent). At every position
whose float32 log input torch rounds correctly here, the buckets must be identical; where torch's
log is off by an ulp, they may differ by at most one bucket (and the tests print how often they
do). This holds natively and with NPY_DISABLE_CPU_FEATURES / ATEN_CPU_CAPABILITY=default.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.buckets import (
    LOG_BAND,
    deberta_log_bucket,
    log_float32,
    t5_relative_bucket,
)

SETTINGS = settings(max_examples=50, deadline=None)
RELATIVE = np.r_[np.arange(-3000, 3001), [-(10**6), -20000, -4096, 4096, 20000, 10**6]]

T5_CONFIGS = [
    (True, 32, 128),  # T5 default
    (False, 32, 128),  # T5 decoder self-attention
    (True, 64, 256),
    (False, 64, 256),
    (True, 16, 64),
    (True, 8, 20),
    (False, 8, 20),
    (True, 128, 1024),
    # settings where a bucket edge lies (almost) exactly on an integer: the float32 rounding of
    # the log decides the bucket (tests/test_explore_math.py uses them too)
    (False, 54, 343),
    (True, 96, 81),
    (False, 108, 294),
    (True, 144, 100),
]


def _t5_reference(r: np.ndarray, bidirectional: bool, nb: int, md: int) -> np.ndarray:
    from transformers.models.t5.modeling_t5 import T5Attention

    out = T5Attention._relative_position_bucket(torch.tensor(r), bidirectional, nb, md)
    return out.numpy()


def _deberta_reference(r: np.ndarray, bucket_size: int, max_position: int) -> np.ndarray:
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    # DeBERTa returns float buckets; build_relative_position then casts them .to(torch.long)
    return make_log_bucket_position(torch.tensor(r), bucket_size, max_position).long().numpy()


def _torch_log_is_correct(x32: np.ndarray) -> np.ndarray:
    """Where torch's float32 log (this CPU's kernel) gives the correctly rounded value."""
    ours = log_float32(x32)
    return np.asarray(torch.log(torch.from_numpy(np.ascontiguousarray(x32))).numpy() == ours)


def _compare(ours: np.ndarray, ref: np.ndarray, log_ok: np.ndarray, name: str) -> None:
    """Identical where torch's logs were correctly rounded; elsewhere at most one bucket apart.
    (log_ok is False everywhere outside the exact range if torch's log of the denominator
    was off; otherwise it is True at all but a few positions.)"""
    np.testing.assert_array_equal(ours[log_ok], ref[log_ok], err_msg=name)
    assert np.all(np.abs(ours - ref) <= 1), name
    print(f"{name}: {int((~log_ok).sum())} positions where torch.log is not correctly rounded, "
          f"{int((ours != ref).sum())} of them in another bucket")  # fmt: skip


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), T5_CONFIGS)
def test_t5_matches_transformers(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    ours = t5_relative_bucket(RELATIVE, bidirectional, num_buckets, max_distance)
    assert ours.dtype == np.int64
    ref = _t5_reference(RELATIVE, bidirectional, num_buckets, max_distance)
    # the float32 values T5 takes the log of, per position: n / max_exact
    nb = num_buckets // 2 if bidirectional else num_buckets
    max_exact = nb // 2
    n = np.abs(RELATIVE) if bidirectional else np.maximum(-RELATIVE, 0)
    x = np.maximum(n, max_exact).astype(np.float32) / np.float32(max_exact)
    log_ok = (n < max_exact) | _torch_log_is_correct(x)
    # T5 divides by math.log(max_distance / max_exact) (float64, libm) rounded to float32
    if np.float32(math.log(max_distance / max_exact)) != log_float32(max_distance / max_exact):
        log_ok = n < max_exact
    else:
        assert log_ok.mean() > 0.9, f"torch's float32 log is off at {(~log_ok).sum()} inputs"
    _compare(ours, ref, log_ok, f"T5 {bidirectional, num_buckets, max_distance}")


def test_t5_where_torch_log_is_not_correctly_rounded() -> None:
    # 96 buckets, max 81, bidirectional: 48 per side, 24 exact; at n = 36 the exact quotient is
    # ln(1.5)/ln(81/24)·24 = ln(1.5)/(3·ln 1.5)·24 = 8. In float32, correctly rounded:
    # log(1.5) = 0.4054651 (below ln 1.5 = 0.405465108), log(3.375) = 1.2163954 (above), so the
    # quotient is just below 8: bucket 24 + 7 = 31 (48 more for keys after the query).
    assert log_float32(np.float32(1.5)) == np.float32(0.4054651)
    assert log_float32(3.375) == np.float32(1.2163954)
    np.testing.assert_array_equal(t5_relative_bucket([-36, 36, -37], True, 96, 81), [31, 79, 32])
    # torch's float32 log(1.5) is 0.40546513 on some CPUs (SLEEF and glibc's logf here): there
    # the model's bucket is 32 (docs/portability.md)


def test_t5_known_values() -> None:
    r = np.array([0, -1, 1, -7, -8, -15, -16, -127, -128, -(10**5), 8, 128])
    # bidirectional 32/128: 16 buckets per direction, 8 exact; keys after the query add 16
    np.testing.assert_array_equal(
        t5_relative_bucket(r), [0, 1, 17, 7, 8, 9, 10, 15, 15, 15, 24, 31]
    )
    # the log(16/8)/log(128/8)·8 = 2 edge: distance 16 opens bucket 8 + 2 = 10 (float32 as in T5)
    assert int(t5_relative_bucket(-16)) == 10 and int(t5_relative_bucket(-15)) == 9
    # unidirectional: 32 buckets, 16 exact; keys after the query (r > 0) all share bucket 0
    np.testing.assert_array_equal(
        t5_relative_bucket(r, bidirectional=False), [0, 1, 0, 7, 8, 15, 16, 31, 31, 31, 0, 0]
    )


@SETTINGS
@given(
    config=st.sampled_from(T5_CONFIGS),
    a=st.integers(0, 5000),
    b=st.integers(0, 5000),
    sign=st.sampled_from([-1, 1]),
)
def test_t5_monotone_in_distance_and_in_range(
    config: tuple[bool, int, int], a: int, b: int, sign: int
) -> None:
    bidirectional, nb, md = config
    near, far = min(a, b), max(a, b)
    if not bidirectional:
        sign = -1  # only keys before the query are distinguished
    bucket_near = int(t5_relative_bucket(sign * near, bidirectional, nb, md))
    bucket_far = int(t5_relative_bucket(sign * far, bidirectional, nb, md))
    assert 0 <= bucket_near <= bucket_far < nb
    if far >= md:  # every distance >= max_distance shares the last bucket of its direction
        assert bucket_far == (nb - 1 if not bidirectional or sign > 0 else nb // 2 - 1)
    if bidirectional and near > 0:  # the two directions use disjoint halves
        assert (bucket_near >= nb // 2) == (sign > 0)


DEBERTA_CONFIGS = [
    (256, 512),  # DeBERTa-v3 default: position_buckets=256, max_relative_positions=512
    (256, 256),
    (128, 128),
    (512, 1024),
    (16, 128),
    (64, 256),
    (4, 16),
    (6, 148),
    (16, 692),
    (18, 11),
    (22, 13),
    (24, 14),
]


@pytest.mark.parametrize(("bucket_size", "max_position"), DEBERTA_CONFIGS)
def test_deberta_matches_transformers(bucket_size: int, max_position: int) -> None:
    ours = deberta_log_bucket(RELATIVE, bucket_size, max_position)
    assert ours.dtype == np.int64
    ref = _deberta_reference(RELATIVE, bucket_size, max_position)
    mid = bucket_size // 2
    a = np.abs(RELATIVE)
    x = np.maximum(a, mid).astype(np.float32) / np.float32(mid)  # what DeBERTa takes the log of
    log_ok = (a <= mid) | _torch_log_is_correct(x)
    den = np.float32((max_position - 1) / mid)
    if not _torch_log_is_correct(np.array([den]))[0]:
        log_ok = a <= mid
    else:
        assert log_ok.mean() > 0.9, f"torch's float32 log is off at {(~log_ok).sum()} inputs"
    _compare(ours, ref, log_ok, f"DeBERTa {bucket_size, max_position}")


def test_deberta_float32_edge_needs_float32() -> None:
    # bucket 256 / max 256 at |r| = 1292: the exact quotient ln(1292/128)/ln(255/128)·127 is
    # 426.000011, so ceil gives 427; in float32 it is 425.99997 and ceil gives 426. The model
    # was trained with the float32 buckets, so we reproduce them: one bucket lower than exact.
    r = np.array([1291, 1292, -1292])
    ours = deberta_log_bucket(r, 256, 256)
    np.testing.assert_array_equal(ours, _deberta_reference(r, 256, 256))
    mid = 128
    exact64 = math.ceil(math.log(1292 / mid) / math.log(255 / mid) * (mid - 1)) + mid
    assert exact64 == 128 + 427
    assert int(ours[1]) == exact64 - 1 and int(ours[2]) == -(exact64 - 1)


def test_deberta_known_values() -> None:
    r = np.array([0, 1, -1, 128, -128, 129, -129, 511, 512, 10**5])
    out = deberta_log_bucket(r, 256, 512)
    np.testing.assert_array_equal(out[:5], [0, 1, -1, 128, -128])  # exact up to bucket_size/2
    assert out[5] == 129 and out[6] == -129
    assert out[7] == 128 + 127 == 255  # ⌈ln(511/128)/ln(511/128)·127⌉ + 128
    assert out[9] > 255  # no clamping beyond max_position


@SETTINGS
@given(r=st.integers(-100000, 100000), config=st.sampled_from(DEBERTA_CONFIGS))
def test_deberta_is_odd_and_monotone(r: int, config: tuple[int, int]) -> None:
    bs, mp = config
    b = int(deberta_log_bucket(r, bs, mp))
    assert int(deberta_log_bucket(-r, bs, mp)) == -b
    assert int(deberta_log_bucket(r + 1, bs, mp)) >= b


@pytest.mark.parametrize("value", [0, np.int64(0), np.array(0), np.array([0, 0, 1, -1])])
def test_no_numpy_warnings_at_zero(value: object) -> None:
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        t5 = t5_relative_bucket(value)  # type: ignore[arg-type]
        t5u = t5_relative_bucket(value, bidirectional=False)  # type: ignore[arg-type]
        de = deberta_log_bucket(value, 256, 512)  # type: ignore[arg-type]
    assert np.all(t5 == np.abs(np.asarray(value)) + 16 * (np.asarray(value) > 0))
    assert np.all(t5u == np.maximum(-np.asarray(value), 0))
    np.testing.assert_array_equal(de, value)


def test_scalars_and_shapes() -> None:
    assert t5_relative_bucket(-20).shape == ()
    assert int(t5_relative_bucket(-20)) == 10
    grid = np.arange(5)[None, :] - np.arange(5)[:, None]  # key - query
    assert t5_relative_bucket(grid).shape == (5, 5)
    assert deberta_log_bucket(-grid, 8, 64).shape == (5, 5)
    np.testing.assert_array_equal(deberta_log_bucket([3.0, -2.0], 8, 64), [3, -2])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: t5_relative_bucket(0, num_buckets=0), "num_buckets must be a positive integer"),
        (lambda: t5_relative_bucket(0, num_buckets=2), "num_buckets must be >= 4"),
        (lambda: t5_relative_bucket(0, max_distance=8), "max_distance must be > the 8 exact"),
        (lambda: t5_relative_bucket(0, max_distance=-1), "max_distance must be a positive"),
        (lambda: t5_relative_bucket([0.5]), "relative_position must be whole numbers"),
        (lambda: deberta_log_bucket(0, 1, 512), "bucket_size must be >= 2"),
        (lambda: deberta_log_bucket(0, 256, 100), "max_position must be >"),
        (lambda: deberta_log_bucket(0, 256, 0), "max_position must be a positive integer"),
        (lambda: deberta_log_bucket([np.nan], 256, 512), "relative_position must be whole"),
    ],
)
def test_bad_arguments(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


# --- the float32 logarithm -----------------------------------------------------------------


def _nearest_float32(x: float) -> np.float32:
    """An independent oracle: ln x with 300 bits, rounded once to 24 bits by mpmath."""
    import mpmath

    with mpmath.workprec(300):
        exact = mpmath.log(mpmath.mpf(x))
    with mpmath.workprec(24):
        return np.float32(float(+exact))


# float32 inputs of the buckets (n / max_exact) whose ln lies within LOG_BAND of a point halfway
# between two float32s: the float64 log cannot settle them, the exact path does
HARD = [127729.0, 439410.5, 495891.0, 613049.5, 145986.328125, 441861.65625, 584397.6875,
        142468.625, 177806.625, 156001.828125, 31437.15625, 43416.46875]  # fmt: skip


def test_log_float32_hard_inputs_take_the_exact_path() -> None:
    x = np.array(HARD, dtype=np.float32)
    approx = np.log(x.astype(np.float64))
    assert np.all(
        (approx * (1 - LOG_BAND)).astype(np.float32) != (approx * (1 + LOG_BAND)).astype(np.float32)
    )
    np.testing.assert_array_equal(log_float32(x), [_nearest_float32(float(v)) for v in x])


@settings(max_examples=300, deadline=None)
@given(
    x=st.one_of(
        st.floats(1.0, 2.0**63, width=32),
        st.floats(1e-30, 1e30, allow_subnormal=False),
        st.integers(1, 10**7).map(lambda n: float(np.float32(n) / np.float32(7))),
    )
)
def test_log_float32_is_correctly_rounded(x: float) -> None:
    assert log_float32(x) == _nearest_float32(x)


def test_float64_log_is_inside_the_band() -> None:
    """The premise of log_float32 on this CPU (numpy's float64 log, whichever kernel it
    dispatches to): relative error far below LOG_BAND, on the bucket inputs n / mid."""
    import mpmath

    x = (np.arange(1, 200_001, 37).astype(np.float32) / np.float32(3)).astype(np.float64)
    x = x[x > 1]
    approx = np.log(x)
    worst = 0.0
    with mpmath.workprec(120):
        for v, a in zip(x[::50], approx[::50], strict=True):
            exact = mpmath.log(mpmath.mpf(float(v)))
            worst = max(worst, float(abs((mpmath.mpf(float(a)) - exact) / exact)))
    assert worst < 2.0**-50 < LOG_BAND, worst


def test_log_float32_rejects_non_positive() -> None:
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="finite positive"):
            log_float32(bad)
