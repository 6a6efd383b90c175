"""Relative-position buckets: T5 and DeBERTa-v2 reference agreement, properties, no warnings."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.buckets import deberta_log_bucket, t5_relative_bucket

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
]


def _t5_reference(r: np.ndarray, bidirectional: bool, nb: int, md: int) -> np.ndarray:
    from transformers.models.t5.modeling_t5 import T5Attention

    out = T5Attention._relative_position_bucket(torch.tensor(r), bidirectional, nb, md)
    return out.numpy()


def _deberta_reference(r: np.ndarray, bucket_size: int, max_position: int) -> np.ndarray:
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    # DeBERTa returns float buckets; build_relative_position then casts them .to(torch.long)
    return make_log_bucket_position(torch.tensor(r), bucket_size, max_position).long().numpy()


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), T5_CONFIGS)
def test_t5_matches_transformers(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    ours = t5_relative_bucket(RELATIVE, bidirectional, num_buckets, max_distance)
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(
        ours, _t5_reference(RELATIVE, bidirectional, num_buckets, max_distance)
    )


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
]


@pytest.mark.parametrize(("bucket_size", "max_position"), DEBERTA_CONFIGS)
def test_deberta_matches_transformers(bucket_size: int, max_position: int) -> None:
    ours = deberta_log_bucket(RELATIVE, bucket_size, max_position)
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours, _deberta_reference(RELATIVE, bucket_size, max_position))


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
