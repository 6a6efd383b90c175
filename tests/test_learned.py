"""Learned position tables: initialisation, lookup, the out-of-range error, memory."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from posecards.encodings.learned import (
    LearnedPositionTable,
    PositionOutOfRangeError,
    learned_pe,
    table_nbytes,
)


def test_weight_is_normal_draw_from_default_rng() -> None:
    table = learned_pe(512, 64, std=0.02, seed=3)
    assert isinstance(table, LearnedPositionTable)
    assert table.weight.shape == (512, 64) and table.weight.dtype == np.float64
    assert (table.n_positions, table.d_model) == (512, 64)
    expected = np.random.default_rng(3).normal(0.0, 0.02, size=(512, 64))
    np.testing.assert_array_equal(table.weight, expected)
    np.testing.assert_array_equal(learned_pe(512, 64, seed=3).weight, table.weight)
    assert not np.array_equal(learned_pe(512, 64, seed=4).weight, table.weight)


def test_sample_statistics_match_bert_init() -> None:
    w = learned_pe(512, 768).weight  # BERT-base: 512 positions × 768
    # 393216 draws: the sample std is within 1% of 0.02, the mean within 5 standard errors of 0
    assert w.std() == pytest.approx(0.02, rel=0.01)
    assert abs(w.mean()) < 5 * 0.02 / np.sqrt(w.size)


def test_bert_and_gpt2_use_std_002() -> None:
    from transformers import BertConfig, GPT2Config  # configs only: nothing is downloaded

    assert BertConfig().initializer_range == 0.02
    assert GPT2Config().initializer_range == 0.02
    assert BertConfig().max_position_embeddings == 512
    assert GPT2Config().n_positions == 1024


def test_table_is_frozen_and_read_only() -> None:
    table = learned_pe(8, 4)
    with pytest.raises(ValueError, match="read-only"):
        table.weight[0, 0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.weight = np.zeros((8, 4))  # type: ignore[misc]


def test_lookup_returns_rows() -> None:
    table = learned_pe(16, 4, seed=1)
    np.testing.assert_array_equal(table.lookup([3, 0, 15, 3]), table.weight[[3, 0, 15, 3]])
    np.testing.assert_array_equal(table.lookup(16), table.weight)  # int n means 0..n-1
    np.testing.assert_array_equal(table.lookup(np.array([2.0, 5.0])), table.weight[[2, 5]])
    assert table.lookup([7]).shape == (1, 4)


def test_lookup_beyond_the_table_raises_index_error() -> None:
    table = learned_pe(2048, 8)
    with pytest.raises(PositionOutOfRangeError) as info:
        table.lookup(np.arange(2049))
    assert str(info.value) == (
        "position 2048 is beyond the learned table (2048 rows: positions 0..2047); "
        "a learned table has no row to look up"
    )
    assert isinstance(info.value, IndexError)
    with pytest.raises(IndexError, match="position 5000 is beyond"):
        table.lookup([10, 5000, 6000])
    with pytest.raises(IndexError, match="position 2048 is beyond"):
        table.lookup(2050)  # int n means 0..n-1: 2048 is the first position without a row
    with pytest.raises(PositionOutOfRangeError, match=r"position -1 is before the start of"):
        table.lookup([0, -1])


def test_lookup_rejects_fractional_and_empty_positions() -> None:
    table = learned_pe(8, 4)
    with pytest.raises(ValueError, match="whole numbers"):
        table.lookup([1.5])
    with pytest.raises(ValueError, match="whole numbers"):
        table.lookup([np.nan])
    with pytest.raises(ValueError, match="must not be empty"):
        table.lookup([])
    with pytest.raises(ValueError, match="positions must be a positive integer"):
        table.lookup(0)


def test_nbytes() -> None:
    table = learned_pe(512, 768)
    assert table.nbytes() == 512 * 768 * 4 == 1_572_864  # BERT-base table in float32: 1.5 MiB
    assert table.nbytes("float16") == 786_432
    assert table.nbytes(np.float64) == table.weight.nbytes
    # GPT-3 scale without allocating: 2048 × 12288 float16 = 48 MiB
    assert table_nbytes(2048, 12288, "float16") == 50_331_648


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_positions": 0}, "n_positions must be a positive integer"),
        ({"d_model": -1}, "d_model must be a positive integer"),
        ({"d_model": 2.5}, "d_model must be a positive integer"),
        ({"std": 0.0}, "std must be a finite number > 0"),
        ({"std": float("nan")}, "std must be a finite number > 0"),
        ({"seed": 1.5}, "seed must be an integer"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"n_positions": 4, "d_model": 8, **kwargs}
    with pytest.raises(ValueError, match=match):
        learned_pe(**args)  # type: ignore[arg-type]
    if "n_positions" in kwargs or "d_model" in kwargs:
        with pytest.raises(ValueError, match=match):
            table_nbytes(args["n_positions"], args["d_model"])  # type: ignore[arg-type]
