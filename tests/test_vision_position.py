"""Card 9's math layer against transformers 5.23.0 itself: ViT's ``interpolate_pos_encoding``,
Swin's relative position bias (SwinRelativePositionBias) and Swin v2's log-spaced coordinates, the 2-D RoPE of Qwen2.5-VL,
Pixtral, Gemma 4 vision and DINOv3, DETR's and Deformable DETR's normalised coordinates and
reference points, Qwen2.5-VL's video time ids, ERNIE 4.5 VL's time-last MRoPE axes and
Qwen3-VL's text timestamps; SE, CBAM and zero-padded convolutions against
small torch implementations (transformers has none).

Modules run in float64 where they take it (ViT, DETR); the rotary modules compute in float32:
angles up to 60 rad, so cos/sin are compared to 2e-6.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.models.deformable_detr.modeling_deformable_detr import (
    DeformableDetrEncoder,
    DeformableDetrSinePositionEmbedding,
)
from transformers.models.detr.modeling_detr import DetrSinePositionEmbedding
from transformers.models.dinov3_vit.modeling_dinov3_vit import DINOv3ViTRopePositionEmbedding
from transformers.models.gemma4.modeling_gemma4 import (
    Gemma4VisionRotaryEmbedding,
    apply_multidimensional_rope,
)
from transformers.models.pixtral.modeling_pixtral import PixtralVisionRotaryEmbedding
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLVisionRotaryEmbedding
from transformers.models.swin.modeling_swin import SwinRelativePositionBias
from transformers.models.swinv2.modeling_swinv2 import Swinv2SelfAttention
from transformers.models.vit.modeling_vit import ViTEmbeddings

from posecards.encodings.channel_gates import (
    cbam_spatial_gate,
    conv2d_zero_pad,
    padding_band,
    se_gates,
)
from posecards.encodings.grid2d import swin_relative_position_index
from posecards.encodings.mrope import mrope_axes, mrope_position_ids
from posecards.encodings.pyramid_coords import (
    cell_index,
    level_cells,
    normalised_cell_coordinate,
)
from posecards.encodings.rope_2d import (
    CONVENTIONS,
    patch_centre_coordinates,
    step_angles,
    vision_rope_angles,
    vision_rope_pairs,
)
from posecards.encodings.swin_v2 import (
    swinv2_coords_table,
    swinv2_linear_offsets,
    swinv2_log_offsets,
)
from posecards.encodings.table_resize import (
    interpolate_pos_encoding,
    resize_grid,
    resize_source_coordinates,
)
from posecards.encodings.video_time import (
    patch_timestamps,
    second_per_grid,
    video_time_interval,
)

# --- ViT: a learned table at another resolution ----------------------------------------------


def _vit(n: int, patch: int, dim: int, seed: int) -> Any:
    cfg = T.ViTConfig(image_size=n * patch, patch_size=patch, hidden_size=dim)
    emb = ViTEmbeddings(cfg).double().eval()
    torch.manual_seed(seed)
    with torch.no_grad():
        emb.position_embeddings.normal_()
    return emb


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 14), st.integers(1, 30), st.integers(1, 30), st.integers(0, 99))
def test_interpolate_pos_encoding_is_vits(n: int, out_h: int, out_w: int, seed: int) -> None:
    emb = _vit(n, 2, 6, seed)
    table = emb.position_embeddings[0].detach().numpy()  # (1 + n*n, 6)
    dummy = torch.zeros(1, 1 + out_h * out_w, 6, dtype=torch.float64)
    ref = emb.interpolate_pos_encoding(dummy, out_h * 2, out_w * 2)[0].detach().numpy()
    np.testing.assert_allclose(interpolate_pos_encoding(table, out_h, out_w), ref, atol=1e-13)


@pytest.mark.parametrize("align_corners", [False, True])
def test_resize_grid_is_torch_bicubic(align_corners: bool) -> None:
    g = np.random.default_rng(3).standard_normal((14, 11, 4))
    for size in ((24, 24), (7, 5), (1, 3), (14, 11)):
        ref = torch.nn.functional.interpolate(
            torch.tensor(g).permute(2, 0, 1)[None],
            size=size,
            mode="bicubic",
            align_corners=align_corners,
        )[0].permute(1, 2, 0)
        np.testing.assert_allclose(resize_grid(g, *size, align_corners), ref.numpy(), atol=1e-13)


def test_source_coordinates_of_both_conventions() -> None:
    """14 -> 24: align_corners=False starts 0.208 cells outside the table, True at its first
    centre; the two agree in the middle and differ most at the ends."""
    off = resize_source_coordinates(14, 24, False)
    on = resize_source_coordinates(14, 24, True)
    assert (
        off[0] == pytest.approx(0.5 * 14 / 24 - 0.5) and on[0] == 0 and on[-1] == pytest.approx(13)
    )
    gap = on - off
    assert gap.max() == pytest.approx(5 / 24) and gap.min() == pytest.approx(-5 / 24)
    assert np.abs(gap).argmax() in (0, 23)


def test_same_size_and_class_row() -> None:
    t = np.random.default_rng(1).standard_normal((1 + 49, 3))
    out = interpolate_pos_encoding(t, 7, 7)
    np.testing.assert_allclose(out, t, atol=1e-14)  # bicubic at the same size is the identity
    np.testing.assert_array_equal(interpolate_pos_encoding(t, 3, 9)[0], t[0])
    with pytest.raises(ValueError, match="class row"):
        interpolate_pos_encoding(t[1:], 3, 3)


# --- Swin: one bias per offset, and v2's log-spaced coordinates --------------------------------


def test_swin_index_is_swins() -> None:
    attn = SwinRelativePositionBias(num_heads=2, window_size=(7, 7))
    mine = swin_relative_position_index(7, 7)
    np.testing.assert_array_equal(mine.reshape(-1), attn.relative_position_index.numpy())
    assert attn.relative_position_bias_table.shape[0] == 169 == np.unique(mine).size


@pytest.mark.parametrize(("window", "pretrained"), [(8, 0), (16, 8), (12, 8), (7, 0), (24, 12)])
def test_swinv2_coords_are_swinv2s(window: int, pretrained: int) -> None:
    cfg = T.Swinv2Config(embed_dim=8, num_heads=[2], depths=[1])
    attn = Swinv2SelfAttention(cfg, 8, 2, window, pretrained_window_size=[pretrained, pretrained])
    ref = attn.relative_coords_table[0].double().numpy()
    np.testing.assert_allclose(swinv2_coords_table(window, pretrained), ref, atol=1e-6)


def test_swinv2_log_coordinates_extrapolate_less() -> None:
    """Pre-trained at window 8, used at 16: the linear coordinate reaches 15/7 = 2.14 times its
    trained range, the log-spaced one 1.32 times (log2(9)/3 = 1.057 -> log2(1 + 120/7)/3 = 1.392)."""
    trained, wider = swinv2_log_offsets(8).max(), swinv2_log_offsets(16, 8).max()
    assert trained == pytest.approx(np.log2(9) / 3)
    assert wider == pytest.approx(np.log2(1 + 8 * 15 / 7) / 3)
    assert wider / trained == pytest.approx(1.3191, abs=1e-4)
    assert swinv2_linear_offsets(16, 8).max() / swinv2_linear_offsets(8).max() == pytest.approx(
        15 / 7
    )


# --- 2-D RoPE in vision encoders ---------------------------------------------------------------


def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = np.divmod(np.arange(h * w), w)
    return rows, cols


def _hf_cos_sin(convention: str, d: int, base: float, h: int, w: int) -> tuple[np.ndarray, ...]:
    rows, cols = _grid(h, w)
    pos = torch.tensor(np.stack([rows, cols], -1))  # (N, 2)
    if convention == "axial":
        cfg = T.Qwen2_5_VLConfig().vision_config
        cfg.hidden_size, cfg.num_heads = d * 2, 2
        cfg.rope_parameters = {"rope_type": "axial", "rope_theta": base}
        cos, sin = Qwen2_5_VLVisionRotaryEmbedding(cfg)(torch.zeros(1), pos)
    elif convention == "even_odd":
        cfg = T.PixtralVisionConfig(hidden_size=d * 2, num_attention_heads=2, head_dim=d)
        cfg.rope_parameters = {"rope_type": "axial", "rope_theta": base}
        cos, sin = PixtralVisionRotaryEmbedding(cfg)(torch.zeros(1), pos)
    elif convention == "half_per_axis":
        cfg = T.Gemma4VisionConfig(hidden_size=d * 2, num_attention_heads=2, head_dim=d)
        cfg.rope_parameters = {"rope_type": "axial", "rope_theta": base}
        cos, sin = Gemma4VisionRotaryEmbedding(cfg)(torch.zeros(1), pos[None])
        cos, sin = cos[0], sin[0]
    else:
        cfg = T.DINOv3ViTConfig(
            hidden_size=d * 2, num_attention_heads=2, patch_size=4, rope_theta=base
        )
        rope = DINOv3ViTRopePositionEmbedding(cfg).eval()  # eval: no coordinate augmentation
        cos, sin = rope(torch.zeros(1, 3, h * 4, w * 4))
    return cos.double().numpy(), sin.double().numpy()


def _my_angles(convention: str, d: int, base: float, h: int, w: int) -> np.ndarray:
    rows, cols = _grid(h, w)
    if convention == "normalised":
        return vision_rope_angles(
            convention,
            d,
            base,
            patch_centre_coordinates(h)[rows],
            patch_centre_coordinates(w)[cols],
        )
    return vision_rope_angles(convention, d, base, rows, cols)


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from(CONVENTIONS),
    st.sampled_from([8, 16, 32, 64, 80]),
    st.sampled_from([100.0, 10000.0]),
    st.integers(1, 6),
    st.integers(1, 6),
)
def test_vision_rope_is_the_modules(convention: str, d: int, base: float, h: int, w: int) -> None:
    cos, sin = _hf_cos_sin(convention, d, base, h, w)
    ang = _my_angles(convention, d, base, h, w)
    np.testing.assert_allclose(np.cos(ang), cos, atol=2e-6)
    np.testing.assert_allclose(np.sin(ang), sin, atol=2e-6)


def test_half_per_axis_pairs_are_gemma4s_rotation() -> None:
    """Gemma 4 rotates each half of the head with its own rotate_half: the pair map's slots
    (first, second) reproduce apply_multidimensional_rope on a random head."""
    d, base, h, w = 16, 100.0, 3, 4
    rows, cols = _grid(h, w)
    pos = torch.tensor(np.stack([rows, cols], -1))[None]
    cfg = T.Gemma4VisionConfig(hidden_size=d * 2, num_attention_heads=2, head_dim=d)
    cos, sin = Gemma4VisionRotaryEmbedding(cfg)(torch.zeros(1), pos)
    x = np.random.default_rng(0).standard_normal((h * w, d))
    ref = apply_multidimensional_rope(
        torch.tensor(x)[None, :, None], cos.double(), sin.double(), pos
    )
    p = vision_rope_pairs("half_per_axis", d, base)
    a = vision_rope_angles("half_per_axis", d, base, rows, cols)[:, p.first]
    out = x.copy()
    out[:, p.first] = x[:, p.first] * np.cos(a) - x[:, p.second] * np.sin(a)
    out[:, p.second] = x[:, p.second] * np.cos(a) + x[:, p.first] * np.sin(a)
    np.testing.assert_allclose(out, ref[0, :, 0].numpy(), atol=1e-6)


def test_step_right_turns_only_the_w_pairs() -> None:
    for conv in CONVENTIONS:
        p = vision_rope_pairs(conv, 64, 100.0)
        right = step_angles(conv, 64, 100.0, axis=1, grid=16)
        down = step_angles(conv, 64, 100.0, axis=0, grid=16)
        assert np.all((right > 0) == (p.axis == 1)) and np.all((down > 0) == (p.axis == 0))
        assert sorted(np.unique(p.first + 0).tolist() + np.unique(p.second).tolist()) == list(
            range(64)
        )
    # DINOv3's step shrinks with the grid: 2 pi * 2/N * f_0
    assert step_angles("normalised", 64, 100.0, 1, 16).max() == pytest.approx(2 * np.pi * 2 / 16)
    assert step_angles("normalised", 64, 100.0, 1, 32).max() == pytest.approx(2 * np.pi * 2 / 32)


# --- DETR and Deformable DETR: normalised coordinates -----------------------------------------


def _sine(u: np.ndarray, feats: int, temperature: float = 10000.0) -> np.ndarray:
    k = np.arange(feats)
    dim_t = temperature ** (2 * (k // 2) / feats)
    p = u[:, None] / dim_t
    return np.stack([np.sin(p[:, 0::2]), np.cos(p[:, 1::2])], axis=2).reshape(len(u), feats)


@pytest.mark.parametrize(
    ("module", "anchor"),
    [(DetrSinePositionEmbedding, "end"), (DeformableDetrSinePositionEmbedding, "centre")],
)
@pytest.mark.parametrize(("h", "w"), [(13, 13), (25, 25), (4, 7)])
def test_detr_sine_normalises_to(module: Any, anchor: str, h: int, w: int) -> None:
    feats = 8
    pos = module(feats, normalize=True)((1, 3, h, w), "cpu", torch.float64)[0].numpy()  # (2F, h, w)
    ux = normalised_cell_coordinate(np.arange(w), w, anchor) * 2 * np.pi
    uy = normalised_cell_coordinate(np.arange(h), h, anchor) * 2 * np.pi
    np.testing.assert_allclose(pos[feats:, 0, :].T, _sine(ux, feats), atol=1e-5)  # x half
    np.testing.assert_allclose(pos[:feats, :, 0].T, _sine(uy, feats), atol=1e-5)  # y half


def test_deformable_reference_points_are_cell_centres() -> None:
    shapes = [(100, 100), (50, 50), (25, 25), (13, 13)]
    ref = DeformableDetrEncoder.get_reference_points(
        shapes, torch.ones(1, 4, 2, dtype=torch.float64), "cpu"
    )
    start = 0
    for h, w in shapes:
        pts = ref[0, start : start + h * w, 0].numpy()  # (h*w, 2) (x, y)
        rows, cols = _grid(h, w)
        np.testing.assert_allclose(
            pts[:, 0], normalised_cell_coordinate(cols, w, "centre"), atol=1e-15
        )
        np.testing.assert_allclose(
            pts[:, 1], normalised_cell_coordinate(rows, h, "centre"), atol=1e-15
        )
        start += h * w


def test_pyramid_levels_of_800_pixels() -> None:
    cells = [level_cells(800, s) for s in (8, 16, 32, 64)]
    assert cells == [100, 50, 25, 13]
    assert [int(cell_index(np.array([500.0]), s)[0]) for s in (8, 16, 32, 64)] == [62, 31, 15, 7]


# --- video time ids ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qwen25() -> Any:
    with torch.device("meta"):
        return T.AutoModel.from_config(T.AutoConfig.for_model("qwen2_5_vl"))


@pytest.mark.parametrize("fps", [0.5, 1.0, 2.0, 4.0])
def test_video_time_ids_are_get_rope_index(qwen25: Any, fps: float) -> None:
    vc = qwen25.config.vision_config
    grid = (4, 4, 6)
    n_video = 4 * 2 * 3
    types = [0] * 3 + [2] * n_video + [0] * 2
    ids = torch.zeros(1, len(types), dtype=torch.long)
    ref, _ = qwen25.get_rope_index(
        ids,
        torch.tensor([types]),
        video_grid_thw=torch.tensor([grid]),
        second_per_grid_ts=torch.tensor([second_per_grid(fps, vc.temporal_patch_size)]),
    )
    interval = video_time_interval(fps, vc.tokens_per_second, vc.temporal_patch_size)
    mine = mrope_position_ids(
        [("text", 3), ("video", grid, interval), ("text", 2)], vc.spatial_merge_size
    )
    np.testing.assert_array_equal(mine, ref[:, 0].numpy())
    assert vc.tokens_per_second == 4 and vc.temporal_patch_size == 2


@pytest.mark.parametrize("hwt", [(22, 22, 20), (6, 6, 4), (4, 4, 8)])
def test_time_last_axes_are_ernies_rotary_module(hwt: tuple[int, int, int]) -> None:
    """ERNIE 4.5 VL: drive its text rotary module with one axis at a time; its pairs are
    interleaved (slots 2j, 2j + 1), its config's section is [h, w, t]."""
    from transformers.models.ernie4_5_vl_moe.modeling_ernie4_5_vl_moe import (
        Ernie4_5_VLMoeTextRotaryEmbedding,
    )

    n_freq = sum(hwt)
    cfg = T.Ernie4_5_VLMoeTextConfig(
        hidden_size=4 * n_freq,
        num_attention_heads=2,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 500000.0,
            "mrope_section": list(hwt),
        },
    )
    module = Ernie4_5_VLMoeTextRotaryEmbedding(cfg)
    ref = np.full(n_freq, -1)
    for a in range(3):
        pos = torch.zeros(3, 1, 1, dtype=torch.long)
        pos[a] = 1
        _, sin = module(torch.zeros(1), pos)
        moved = sin[0, 0, 0::2].numpy() != 0  # (n_freq,) the first slot of each pair
        assert np.array_equal(moved, sin[0, 0, 1::2].numpy() != 0)
        ref[moved] = a
    h, w, t = hwt
    np.testing.assert_array_equal(mrope_axes((t, h, w), n_freq, "time_last"), ref)


def test_time_last_needs_as_many_h_as_w_pairs() -> None:
    with pytest.raises(ValueError, match="s_h must equal s_w"):
        mrope_axes((4, 5, 3), 12, "time_last")
    with pytest.raises(ValueError, match="chunked, interleaved, time_last"):
        mrope_axes((4, 4, 4), 12, "ernie")


@settings(max_examples=40, deadline=None)
@given(
    first=st.integers(0, 50),
    gaps=st.lists(st.integers(1, 4), min_size=0, max_size=12),
    fps=st.sampled_from([0.5, 1.0, 2.0, 24.0, 29.97]),
    patch=st.sampled_from([1, 2, 3]),
)
def test_patch_timestamps_are_qwen3_vls_processor(
    first: int, gaps: list[int], fps: float, patch: int
) -> None:
    """Any sampled frames (odd counts are padded with the last frame): the times Qwen3-VL's
    processor writes before each temporal step."""
    from transformers.models.qwen3_vl.processing_qwen3_vl import Qwen3VLProcessor

    indices = list(np.cumsum([first, *gaps]))
    ref = Qwen3VLProcessor._calculate_timestamps(None, list(indices), fps, patch)  # type: ignore[arg-type]
    np.testing.assert_allclose(patch_timestamps(indices, fps, patch), ref, rtol=1e-15)


def test_patch_timestamps_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="frame_indices"):
        patch_timestamps([], 1.0)
    with pytest.raises(ValueError, match="fps"):
        patch_timestamps([0, 1], 0.0)


# --- channel attention, spatial gates, zero padding ---------------------------------------------


def _dyadic(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-64, 64, size=shape) / 16.0  # exact sums in float64, whatever the order


def test_conv_is_torch_conv2d() -> None:
    rng = np.random.default_rng(2)
    x, k = rng.standard_normal((3, 6, 7)), rng.standard_normal((2, 3, 3, 3))
    ref = torch.nn.functional.conv2d(torch.tensor(x)[None], torch.tensor(k), padding=1)[0]
    np.testing.assert_allclose(conv2d_zero_pad(x, k), ref.numpy(), atol=1e-13)
    k7 = rng.standard_normal((1, 2, 7, 7))
    ref7 = torch.nn.functional.conv2d(torch.tensor(x[:2])[None], torch.tensor(k7), padding=3)[0]
    np.testing.assert_allclose(conv2d_zero_pad(x[:2], k7), ref7.numpy(), atol=1e-13)


def test_se_gates_are_torch_se_and_blind_to_shuffles() -> None:
    rng = np.random.default_rng(4)
    c, r = 8, 2
    x = _dyadic(rng, (c, 6, 6))
    w1, w2 = rng.standard_normal((c // r, c)), rng.standard_normal((c, c // r))
    se = torch.nn.Sequential(
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(c, c // r, bias=False),
        torch.nn.ReLU(),
        torch.nn.Linear(c // r, c, bias=False),
        torch.nn.Sigmoid(),
    ).double()
    with torch.no_grad():
        se[2].weight.copy_(torch.tensor(w1))
        se[4].weight.copy_(torch.tensor(w2))
    g = se_gates(x, w1, w2)
    np.testing.assert_allclose(g, se(torch.tensor(x)[None])[0].detach().numpy(), atol=1e-14)
    perm = rng.permutation(36)
    shuffled = x.reshape(c, 36)[:, perm].reshape(c, 6, 6)
    np.testing.assert_array_equal(se_gates(shuffled, w1, w2), g)  # exactly


def test_cbam_gate_moves_and_sees_the_border() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8, 8))
    k = rng.standard_normal((1, 2, 7, 7))
    a = cbam_spatial_gate(x, k)
    pooled = torch.tensor(np.stack([x.mean(0), x.max(0)]))[None]
    ref = torch.sigmoid(torch.nn.functional.conv2d(pooled, torch.tensor(k), padding=3))[0, 0]
    np.testing.assert_allclose(a, ref.numpy(), atol=1e-14)
    perm = rng.permutation(64)
    shuffled = x.reshape(4, 64)[:, perm].reshape(4, 8, 8)
    moved = cbam_spatial_gate(shuffled, k).reshape(-1)
    assert np.abs(moved - a.reshape(-1)[perm]).max() > 0.01  # the gate does not just move along
    const = cbam_spatial_gate(np.ones((4, 8, 8)), k)
    assert np.unique(np.round(const, 12)).size > 1  # a constant image, a gate that is not


@pytest.mark.parametrize("layers", [1, 2, 3, 5])
def test_padding_band_is_layers_wide(layers: int) -> None:
    band = padding_band(16, 16, layers)
    inside = band[layers:-layers, layers:-layers]
    np.testing.assert_allclose(inside, 1.0, atol=1e-14)
    assert band[layers - 1, 8] < 1 - 1e-3 and band[8, layers - 1] < 1 - 1e-3
    one = padding_band(5, 5, 1)
    assert (one[0, 0], one[0, 2], one[2, 2]) == pytest.approx((4 / 9, 6 / 9, 1.0))
