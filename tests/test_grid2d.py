"""2-D grid encodings: MAE sin-cos, the wrong summed-angle scheme, Swin's relative index."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.grid2d import sincos_2d_pe, sum_angle_2d_pe, swin_relative_position_index
from posecards.encodings.sinusoidal import sinusoidal_pe

SETTINGS = settings(max_examples=50, deadline=None)


@pytest.mark.parametrize(("h", "w", "d"), [(1, 1, 4), (3, 5, 24), (14, 14, 768), (7, 2, 16)])
def test_matches_transformers_builder_after_the_mae_half_swap(h: int, w: int, d: int) -> None:
    from transformers.models.vit_mae.modeling_vit_mae import (
        build_2d_sinusoidal_position_embedding,
    )

    # transformers 5.x builds [sin_h | cos_h | sin_w | cos_w] in float64; ViTMAE then swaps the
    # halves to the MAE layout [w | h] of the pretrained weights. Computed in float64: tight atol.
    ref = build_2d_sinusoidal_position_embedding(h, w, embed_dim=d, dtype=torch.float64).numpy()
    ref_mae = np.concatenate([ref[:, d // 2 :], ref[:, : d // 2]], axis=1)
    ours = sincos_2d_pe(h, w, d)
    assert ours.shape == (h * w, d) and ours.dtype == np.float64
    np.testing.assert_allclose(ours, ref_mae, rtol=0, atol=1e-13)
    if h != w or h > 1:
        assert np.abs(ours - ref).max() > 0.1  # the unswapped layout is different


def test_matches_vit_mae_embeddings_with_cls_row() -> None:
    from transformers import ViTMAEConfig
    from transformers.models.vit_mae.modeling_vit_mae import ViTMAEEmbeddings

    config = ViTMAEConfig(image_size=8, patch_size=2, hidden_size=16, num_channels=3)
    emb = ViTMAEEmbeddings(config)  # a 4×4 patch grid; nothing is downloaded
    emb.initialize_weights()
    table = emb.position_embeddings[0].double().numpy()  # (1 + 16, 16): cls row first
    np.testing.assert_array_equal(table[0], 0.0)  # the cls token gets a zero row
    # the parameter is float32: one rounding of values in [-1, 1], |Δ| <= 2^-24
    np.testing.assert_allclose(table[1:], sincos_2d_pe(4, 4, 16), rtol=0, atol=1e-7)


def test_first_half_is_the_column_second_half_the_row() -> None:
    h, w, d = 3, 5, 16
    pe = sincos_2d_pe(h, w, d)
    for token in range(h * w):
        row, col = divmod(token, w)  # row-major
        np.testing.assert_allclose(
            pe[token, : d // 2], sinusoidal_pe([col], d // 2, layout="half")[0]
        )
        np.testing.assert_allclose(
            pe[token, d // 2 :], sinusoidal_pe([row], d // 2, layout="half")[0]
        )
    # token 1 is (row 0, col 1): column half moved, row half is PE(0) = [0, 0, 0, 0, 1, 1, 1, 1]
    np.testing.assert_allclose(pe[1, d // 2 :], [0, 0, 0, 0, 1, 1, 1, 1], atol=0)
    np.testing.assert_allclose(pe[1, 0], np.sin(1.0), rtol=1e-15)
    # ω_i = 1/base^(2i/(d/2)) = 1/base^(i/4) for d = 16: pair 1 of the column half at col 1
    np.testing.assert_allclose(pe[1, 1], np.sin(10000.0**-0.25), rtol=1e-15)


@SETTINGS
@given(
    h=st.integers(1, 8),
    w=st.integers(1, 8),
    quarter=st.integers(1, 16),
    base=st.sampled_from([10000.0, 100.0]),
)
def test_sincos_2d_distinguishes_transposed_patches_and_pairs_are_unit(
    h: int, w: int, quarter: int, base: float
) -> None:
    d = 4 * quarter
    pe = sincos_2d_pe(h, w, d, base)
    # each (sin, cos) pair of each half has unit norm: ‖PE‖² = d/2
    np.testing.assert_allclose(np.sum(pe**2, axis=1), d / 2, rtol=1e-14)
    # squared distance = Σ over both axes of (2 - 2cos(Δ·ω_i))
    rows, cols = np.divmod(np.arange(h * w), w)
    omega = 1.0 / base ** (np.arange(quarter) / quarter)
    a, b = 0, h * w - 1
    expected = np.sum(2 - 2 * np.cos((cols[b] - cols[a]) * omega)) + np.sum(
        2 - 2 * np.cos((rows[b] - rows[a]) * omega)
    )
    assert np.sum((pe[a] - pe[b]) ** 2) == pytest.approx(expected, abs=1e-12)
    if h > 1 and w > 1:  # (row 0, col 1) vs (row 1, col 0): different vectors
        assert np.abs(pe[1] - pe[w]).max() > 1e-3


def test_sum_angle_scheme_collides_on_transposed_patches() -> None:
    h = w = 6
    pe = sum_angle_2d_pe(h, w, 32)
    assert pe.shape == (36, 32)
    for y in range(h):
        for x in range(w):
            np.testing.assert_array_equal(pe[y * w + x], pe[x * w + y])  # (x, y) == (y, x)
    # every anti-diagonal x + y = s is one vector: only 2·6 - 1 = 11 distinct rows of 36
    assert len(np.unique(pe.round(12), axis=0)) == 11
    assert len(np.unique(sincos_2d_pe(h, w, 32).round(12), axis=0)) == 36
    np.testing.assert_allclose(pe[1 * w + 2], sinusoidal_pe([3], 32, layout="half")[0])


@pytest.mark.parametrize(("wh", "ww"), [(1, 1), (2, 2), (3, 4), (7, 7), (5, 2)])
def test_swin_index_matches_transformers(wh: int, ww: int) -> None:
    from transformers.models.swin.modeling_swin import SwinRelativePositionBias

    bias = SwinRelativePositionBias(num_heads=2, window_size=(wh, ww))
    ref = bias.relative_position_index.view(wh * ww, wh * ww).numpy()
    ours = swin_relative_position_index(wh, ww)
    assert ours.dtype == np.int64 and ours.shape == (wh * ww, wh * ww)
    np.testing.assert_array_equal(ours, ref)
    # one bias-table row per distinct 2-D offset, all (2Wh-1)(2Ww-1) of them used
    assert set(np.unique(ours).tolist()) == set(range((2 * wh - 1) * (2 * ww - 1)))


def test_swin_index_known_values() -> None:
    idx = swin_relative_position_index(2, 2)
    # tokens (0,0),(0,1),(1,0),(1,1); index = (dy + 1)·3 + (dx + 1)
    np.testing.assert_array_equal(idx, [[4, 3, 1, 0], [5, 4, 2, 1], [7, 6, 4, 3], [8, 7, 5, 4]])
    assert np.all(np.diagonal(swin_relative_position_index(7, 7)) == 6 * 13 + 6)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: sincos_2d_pe(4, 4, 18), "d_model must be divisible by 4"),
        (lambda: sincos_2d_pe(4, 4, 7), "d_model must be even"),
        (lambda: sincos_2d_pe(0, 4, 16), "grid_h must be a positive integer"),
        (lambda: sincos_2d_pe(4, -1, 16), "grid_w must be a positive integer"),
        (lambda: sincos_2d_pe(4, 4, 16, base=1.0), "base must be a finite number > 1"),
        (lambda: sum_angle_2d_pe(4, 4, 15), "d_model must be even"),
        (lambda: swin_relative_position_index(0, 7), "window_h must be a positive integer"),
        (
            lambda: swin_relative_position_index(7, 2.0),  # type: ignore[arg-type]
            "window_w must be a positive integer",
        ),
    ],
)
def test_bad_arguments(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]
