"""Card 9 (position in images, across scales and in time): ids, text, and every number of its
panels recomputed with the transformers 5.23.0 module that computes it (or torch, for SE/CBAM
and zero padding, which transformers does not have). The math layer itself is checked in
tests/test_vision_position.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as T
from transformers.models.deformable_detr.modeling_deformable_detr import DeformableDetrEncoder
from transformers.models.detr.modeling_detr import DetrSinePositionEmbedding
from transformers.models.dinov3_vit.modeling_dinov3_vit import DINOv3ViTRopePositionEmbedding
from transformers.models.gemma4.modeling_gemma4 import Gemma4VisionRotaryEmbedding
from transformers.models.pixtral.modeling_pixtral import PixtralVisionRotaryEmbedding
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLVisionRotaryEmbedding
from transformers.models.swin.modeling_swin import SwinRelativePositionBias
from transformers.models.swinv2.modeling_swinv2 import Swinv2SelfAttention
from transformers.models.vit.modeling_vit import ViTEmbeddings

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card9 import EXTRA_IDS, PANEL_IDS, compute
from posecards.encodings.grid2d import sincos_2d_pe
from posecards.figures.card9 import DRAW
from posecards.render.text import fill_card, load_card_text

CONFIGS = Path(__file__).resolve().parent.parent / "posecards" / "data" / "configs"


@pytest.fixture(scope="module")
def card() -> CardContent:
    return compute(PEParams())


def test_ids_match_everywhere(card: CardContent) -> None:
    text = load_card_text(9)
    assert list(DRAW) == list(card.figures) == list(PANEL_IDS + EXTRA_IDS)
    assert [p.id for p in text.panels] == list(PANEL_IDS)
    assert [p.id for p in text.figures] == list(EXTRA_IDS)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_has_a_value(card: CardContent, lang: str) -> None:
    filled = fill_card(load_card_text(9), lang, card.numbers)
    assert len(filled.panels) == 6 and len(filled.takeaways) == 3 and len(filled.pitfalls) == 3
    blob = " ".join(
        [filled.title, filled.thesis, filled.formula_note]
        + [" ".join(p[1:]) for p in (*filled.panels, *filled.figures)]
        + [v for _, v in filled.takeaways + filled.pitfalls]
    )
    assert "{{" not in blob and "}}" not in blob
    for needle in ("169", "2,401", "2.14", "1.32", "62", "0.577", "30.8", "0.444", "0.208"):
        assert needle in blob, needle


def test_card_text_has_no_typed_numbers_outside_placeholders() -> None:
    text = load_card_text(9)
    entries = [text.thesis, text.formula_note, *(v for _, v in text.takeaways + text.pitfalls)]
    entries += [
        b for p in (*text.panels, *text.figures) for b in (p.alt, p.caption) if b is not None
    ]
    entries += list(text.labels.values())
    allowed = {"0", "1", "2", "3", "4", "5", "6"}  # panel numbers, "3 × 3", "[−1, 1]"
    names = (
        r"Qwen2(\.5)?(-VL)?|Gemma 4|DINOv3|Swin v2|2-D|align_corners=(False|True)|\(v2\)|v2|"
        r"strides 8, 16, 32 and 64|步长 8、16、32、64|0\.01|MLP|q/k|ERNIE 4\.5"
    )
    for entry in entries:
        for lang in ("en", "zh"):
            bare = re.sub(r"\{\{.*?\}\}", "", entry.get(lang))
            bare = re.sub(names, "", bare)
            found = set(re.findall(r"\d+(?:\.\d+)?", bare)) - allowed
            assert not found, (entry.en[:50], lang, found)


def test_every_computed_number_is_used() -> None:
    """No placeholder computed for nothing: the card and its slides use every number."""
    from posecards.deck.placeholders import placeholder_report

    report = placeholder_report(9, PEParams())
    assert "computed but not used" not in report, report.rsplit("\n\n", 1)[-1]


def test_formula_renders() -> None:
    from matplotlib.mathtext import MathTextParser

    MathTextParser("path").parse(load_card_text(9).formula_tex)


# --- panel 1: ViTEmbeddings.interpolate_pos_encoding ------------------------------------------


def test_vit_numbers_are_vits(card: CardContent) -> None:
    n = card.numbers
    d, a, b = n["vit_d"], n["vit_in"], n["vit_out"]
    emb = ViTEmbeddings(T.ViTConfig(image_size=a * 16, patch_size=16, hidden_size=d)).double()
    table = np.concatenate([np.zeros((1, d)), sincos_2d_pe(a, a, d, 10000.0)])
    with torch.no_grad():
        emb.position_embeddings.copy_(torch.tensor(table)[None])
    dummy = torch.zeros(1, 1 + b * b, d, dtype=torch.float64)
    off = emb.interpolate_pos_encoding(dummy, b * 16, b * 16)[0, 1:].detach()
    grid = torch.tensor(table[1:]).reshape(1, a, a, d).permute(0, 3, 1, 2)
    on = torch.nn.functional.interpolate(grid, size=(b, b), mode="bicubic", align_corners=True)
    on = on.permute(0, 2, 3, 1).reshape(-1, d)
    assert float((off - on).abs().max()) == pytest.approx(n["vit_corners_max"], rel=1e-9)
    # the fastest frequency's columns: sin and cos of x, sin and cos of y
    q = d // 4
    fresh = torch.tensor(sincos_2d_pe(b, b, d, 10000.0))
    assert float((off - fresh).pow(2).mean().sqrt()) == pytest.approx(n["vit_fresh_rms"], rel=1e-9)
    cols = [0, q, 2 * q, 3 * q]
    diff = (off - on)[:, cols]
    assert float(diff.pow(2).mean().sqrt()) == pytest.approx(n["vit_corners_fast"], rel=1e-9)
    assert n["vit_edge_shift"] == pytest.approx(0.5 * a / b - 0.5 + 0.5, abs=0.5)  # bounded
    assert n["vit_edge_shift"] == pytest.approx(abs(0.5 * a / b - 0.5))
    # the solid line: ViT's resized table against MAE's encoding written out at the coordinates
    # the resize reads, (i + 1/2) a / b - 1/2, frequency by frequency (sin, cos of x and of y)
    src = (np.arange(b) + 0.5) * a / b - 0.5  # (b,)
    rows, cols = np.divmod(np.arange(b * b), b)
    omega = 10000.0 ** (-np.arange(q) / q)  # (q,)
    x, y = src[cols][:, None] * omega, src[rows][:, None] * omega  # (b*b, q)
    exact = np.concatenate([np.sin(x), np.cos(x), np.sin(y), np.cos(y)], axis=1)  # (b*b, d)
    err = (off.numpy() - exact).reshape(b * b, 4, q)
    blur = np.sqrt(np.mean(err**2, axis=(0, 1)))  # (q,)
    assert blur[0] == pytest.approx(n["vit_blur_fast"], rel=1e-9)
    assert blur[-1] == pytest.approx(n["vit_blur_slow"], rel=1e-6)
    assert int(np.sum(blur < 0.01)) == n["vit_sharp_freqs"] and n["vit_freqs"] == q
    assert n["vit_fast_wavelength"] == pytest.approx(2 * np.pi)
    assert n["vit_first_off"] == pytest.approx(src[0]) and n["vit_step"] == a / b


# --- panel 2: Swin and Swin v2 -----------------------------------------------------------------


def test_swin_numbers_are_swins(card: CardContent) -> None:
    n = card.numbers
    m = n["swin_window"]
    bias = SwinRelativePositionBias(num_heads=2, window_size=(m, m))
    assert bias.relative_position_bias_table.shape[0] == n["swin_entries"] == 169
    assert bias.relative_position_index.numel() == n["swin_pairs"]
    cfg = T.Swinv2Config(embed_dim=8, num_heads=[2], depths=[1])
    small, large = n["swinv2_small"], n["swinv2_large"]
    ref_s = Swinv2SelfAttention(cfg, 8, 2, small).relative_coords_table.double().numpy()
    ref_l = Swinv2SelfAttention(cfg, 8, 2, large, [small, small]).relative_coords_table
    reach = float(ref_l.double().max()) / float(ref_s.max())
    assert reach == pytest.approx(n["swinv2_log_reach"], rel=1e-6)
    assert float(ref_s.max()) == pytest.approx(n["swinv2_log_max_small"], rel=1e-6)
    assert float(ref_l.max()) == pytest.approx(n["swinv2_log_max_large"], rel=1e-6)
    assert n["swin_side"] ** 2 == n["swin_entries"] and n["swin_tokens"] == m * m
    assert n["swinv2_lin_reach"] == pytest.approx((large - 1) / (small - 1))


# --- panel 3: the four rotary modules ------------------------------------------------------------


def _step_from_module(name: str, d: int, base: float, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """(angle per step down, per step right) of every slot, read from the module's cos/sin."""
    if name == "normalised":
        cfg = T.DINOv3ViTConfig(
            hidden_size=d * 2, num_attention_heads=2, patch_size=1, rope_theta=base
        )
        cos, sin = DINOv3ViTRopePositionEmbedding(cfg).eval()(torch.zeros(1, 3, grid, grid))
        ang = torch.atan2(sin, cos).double().numpy().reshape(grid, grid, d)
        wrap = lambda x: (x + np.pi) % (2 * np.pi) - np.pi  # noqa: E731
        return np.abs(wrap(ang[1, 0] - ang[0, 0])), np.abs(wrap(ang[0, 1] - ang[0, 0]))
    pos = torch.tensor([[1, 0], [0, 1]])
    if name == "axial":
        cfg = T.Qwen2_5_VLConfig().vision_config
        cfg.hidden_size, cfg.num_heads = d * 2, 2
        cfg.rope_parameters = {"rope_type": "axial", "rope_theta": base}
        cos, sin = Qwen2_5_VLVisionRotaryEmbedding(cfg)(torch.zeros(1), pos)
    elif name == "even_odd":
        cfg = T.PixtralVisionConfig(hidden_size=d * 2, num_attention_heads=2, head_dim=d)
        cfg.rope_parameters = {"rope_type": "axial", "rope_theta": base}
        cos, sin = PixtralVisionRotaryEmbedding(cfg)(torch.zeros(1), pos)
    else:
        cfg = T.Gemma4VisionConfig(hidden_size=d * 2, num_attention_heads=2, head_dim=d)
        cfg.rope_parameters = {"rope_type": "axial", "rope_theta": base}
        cos, sin = Gemma4VisionRotaryEmbedding(cfg)(torch.zeros(1), pos[None])
        cos, sin = cos[0], sin[0]
    ang = torch.atan2(sin, cos).double().numpy()  # angles below pi: one step of each
    return np.abs(ang[0]), np.abs(ang[1])


def test_rope_wavelengths_are_the_modules(card: CardContent) -> None:
    data, n = card.figures["c9-rope-2d"], card.numbers
    d, grid = n["rope_head_dim"], n["rope_grid"]
    for conv in data.conventions:
        down, right = _step_from_module(conv, d, n[f"rope_{conv}_base"], grid)
        first = np.asarray(getattr(data, f"first_{conv}"))
        axis = np.asarray(getattr(data, f"axis_{conv}"))
        step = np.where(axis == 0, down[first], right[first])  # (d/2,) along the pair's axis
        other = np.where(axis == 0, right[first], down[first])
        np.testing.assert_allclose(2 * np.pi / step, getattr(data, f"wavelength_{conv}"), rtol=1e-5)
        assert np.all(other < 1e-6), conv  # the other axis does not turn the pair
    assert n["rope_slots_moved"] == 32 and n["rope_freqs_moved"] == 16
    for conv in data.conventions:
        wl = np.asarray(getattr(data, f"wavelength_{conv}"))
        assert (n[f"rope_{conv}_fast"], n[f"rope_{conv}_slow"]) == (wl.min(), wl.max())
    for grid_size, key in ((grid, "rope_dino_step_14"), (2 * grid, "rope_dino_step_28")):
        down, right = _step_from_module("normalised", d, 100.0, grid_size)
        assert max(down.max(), right.max()) == pytest.approx(n[key], rel=1e-5)
    # the bases: transformers' config classes' defaults
    assert n["rope_normalised_base"] == T.DINOv3ViTConfig().rope_theta
    assert n["rope_half_per_axis_base"] == T.Gemma4VisionConfig().rope_parameters["rope_theta"]
    assert n["rope_even_odd_base"] == T.PixtralVisionConfig().rope_parameters["rope_theta"]
    qwen_vision = T.Qwen2_5_VLConfig().vision_config
    assert n["rope_axial_base"] == qwen_vision.rope_parameters["rope_theta"]


# --- panel 4: DETR, Deformable DETR ---------------------------------------------------------------


def test_fpn_numbers_are_detrs(card: CardContent) -> None:
    data, n = card.figures["c9-fpn"], card.numbers
    cells = [int(c) for c in data.cells]
    assert cells == [100, 50, 25, 13]
    ref = DeformableDetrEncoder.get_reference_points(
        [(c, c) for c in cells], torch.ones(1, 4, 2, dtype=torch.float64), "cpu"
    )
    start = 0
    for c, j, centre, end in zip(cells, data.index, data.centre, data.end, strict=True):
        assert ref[0, start + int(j), 0, 0].item() == pytest.approx(centre, abs=1e-15)
        pos = DetrSinePositionEmbedding(2, normalize=True)((1, 3, 1, c), "cpu", torch.float64)
        u = torch.atan2(pos[0, 2, 0], pos[0, 3, 0]).numpy() % (2 * np.pi) / (2 * np.pi)
        assert u[int(j)] == pytest.approx(end % 1.0, abs=1e-6)
        start += c * c
    assert [n[f"fpn_index_{s}"] for s in (8, 16, 32, 64)] == [62, 31, 15, 7]
    for s, c in zip((8, 16, 32, 64), cells, strict=True):  # half a cell, in image pixels
        assert n[f"fpn_offset_{s}"] == pytest.approx(0.5 * n["fpn_image"] / c)
    assert n["fpn_spread_centre"] == pytest.approx(data.centre.max() - data.centre.min())


# --- panel 5: get_rope_index ------------------------------------------------------------------------


def test_video_ids_are_get_rope_index(card: CardContent) -> None:
    data = card.figures["c9-video"]
    with torch.device("meta"):
        model = T.AutoModel.from_config(T.AutoConfig.for_model("qwen2_5_vl"))
    vc = model.config.vision_config
    for k, fps in enumerate(data.fps, start=1):
        steps = len(getattr(data, f"seconds_{k}"))
        ids, _ = model.get_rope_index(
            torch.zeros(1, steps, dtype=torch.long),
            torch.tensor([[2] * steps]),
            video_grid_thw=torch.tensor([[steps, 2, 2]]),
            second_per_grid_ts=torch.tensor([vc.temporal_patch_size / float(fps)]),
        )
        np.testing.assert_array_equal(ids[0, 0].numpy(), getattr(data, f"ids_qwen25_{k}"))
    assert card.numbers["video_tps"] == vc.tokens_per_second
    published = json.loads((CONFIGS / "qwen2.5-vl-7b.json").read_text(encoding="utf-8"))
    text = published.get("text_config", published)
    section = (text.get("rope_scaling") or text.get("rope_parameters"))["mrope_section"]
    assert card.numbers["video_q25_time_pairs"] == section[0]
    assert card.numbers["video_q25_theta"] == text["rope_theta"]


def _ernie_config() -> T.Ernie4_5_VLMoeConfig:
    """transformers' ERNIE 4.5 VL defaults (its rotary section and base), one tiny layer."""
    return T.Ernie4_5_VLMoeConfig(
        text_config={
            "hidden_size": 256,  # head_dim 128, as the default config's 2560 / 20
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "num_hidden_layers": 1,
            "intermediate_size": 16,
            "moe_num_experts": 2,
            "moe_intermediate_size": [16, 16],
            "vocab_size": 64,
        },
        vision_config={"depth": 1, "hidden_size": 32, "num_heads": 2, "intermediate_size": 16},
    )


def test_video_patch_ids_are_qwen2_vl_and_ernie_get_rope_index(card: CardContent) -> None:
    """The open markers: one id per temporal patch in Qwen2-VL (second_per_grid_ts not read)
    and in ERNIE 4.5 VL (T frames merged temporal_merge_size at a time)."""
    data = card.figures["c9-video"]
    with torch.device("meta"):
        qwen2 = T.AutoModel.from_config(T.AutoConfig.for_model("qwen2_vl"))
        ernie = T.AutoModel.from_config(_ernie_config())
    merge = ernie.config.vision_config.temporal_merge_size
    assert merge == card.numbers["video_patch"]
    for k in range(1, len(data.fps) + 1):
        steps = len(getattr(data, f"seconds_{k}"))
        ids, _ = qwen2.get_rope_index(
            torch.zeros(1, steps, dtype=torch.long),
            torch.tensor([[2] * steps]),
            video_grid_thw=torch.tensor([[steps, 2, 2]]),
        )
        np.testing.assert_array_equal(ids[0, 0].numpy(), getattr(data, f"ids_qwen2_{k}"))
        ids, _ = ernie.get_rope_index(
            torch.zeros(1, steps, dtype=torch.long),
            torch.tensor([[2] * steps]),
            video_grid_thw=torch.tensor([[steps * merge, 2, 2]]),  # frames, before the merge
        )
        np.testing.assert_array_equal(ids[0, 0].numpy(), getattr(data, f"ids_qwen2_{k}"))


def _time_pairs(module: torch.nn.Module, n_freq: int, layout: str) -> tuple[np.ndarray, ...]:
    """(pairs whose angle moves when only t moves, their inv_freq) from a text rotary module:
    t = 1, h = w = 0. ``layout`` is where pair j's slot is: "half" (j) or "interleaved" (2j)."""
    pos = torch.zeros(3, 1, 1, dtype=torch.long)
    pos[0] = 1
    cos, sin = module(torch.zeros(1, dtype=torch.float32), pos)
    slots = np.arange(n_freq) if layout == "half" else 2 * np.arange(n_freq)
    angle = torch.atan2(sin, cos)[0, 0].double().numpy()[slots]  # (n_freq,)
    return np.flatnonzero(angle != 0), angle


def test_video_time_pairs_are_the_rotary_modules(card: CardContent) -> None:
    """Which pairs the time id turns, and their wavelengths, from each model's own text rotary
    module: Qwen2.5-VL and Qwen3-VL from the published configs, ERNIE from transformers'
    defaults (the card's rows)."""
    from transformers.models.ernie4_5_vl_moe.modeling_ernie4_5_vl_moe import (
        Ernie4_5_VLMoeTextRotaryEmbedding,
    )
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
        Qwen2_5_VLRotaryEmbedding,
    )
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    data, n = card.figures["c9-video"], card.numbers

    def published(name: str) -> T.PretrainedConfig:
        raw = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
        return T.AutoConfig.for_model(raw.pop("model_type"), **raw).get_text_config()

    modules = {
        "q25": (Qwen2_5_VLRotaryEmbedding(published("qwen2.5-vl-7b.json")), "half"),
        "q3": (Qwen3VLTextRotaryEmbedding(published("qwen3-vl-8b.json")), "half"),
        "ernie": (Ernie4_5_VLMoeTextRotaryEmbedding(_ernie_config().text_config), "interleaved"),
    }
    assert list(modules) == data.models
    for key, (module, layout) in modules.items():
        pairs, angle = _time_pairs(module, n["video_pairs"], layout)
        axes = np.asarray(getattr(data, f"axes_{key}"))
        np.testing.assert_array_equal(np.flatnonzero(axes == 0), pairs, err_msg=key)
        wl = np.asarray(getattr(data, f"wavelength_{key}"))
        np.testing.assert_allclose(2 * np.pi / angle[pairs], wl[pairs], rtol=1e-6, err_msg=key)
        assert n[f"video_{key}_time_pairs"] == pairs.size
        assert n[f"video_{key}_wl_fast"] == pytest.approx(wl[pairs].min())
        assert n[f"video_{key}_wl_slow"] == pytest.approx(wl[pairs].max())
        assert n[f"video_{key}_theta"] == module.config.rope_parameters["rope_theta"]
    # the fastest pairs (Qwen2.5-VL), every speed (Qwen3-VL), the slowest (ERNIE)
    assert n["video_q25_time_pairs"] == 16 and n["video_ernie_time_pairs"] == 20
    assert np.flatnonzero(data.axes_ernie == 0).tolist() == list(range(44, 64))
    assert np.flatnonzero(data.axes_q3 == 0)[-n["video_q3_tail"] - 1 :].tolist() == [
        57,
        60,
        61,
        62,
        63,
    ]
    assert n["video_wl_slow_s"] == pytest.approx(n["video_q25_wl_slow"] / n["video_tps"])


def test_qwen3_vl_writes_the_time_as_text(card: CardContent) -> None:
    """Qwen3-VL's processor writes each temporal step's time before it (the card's
    <0.5 seconds>, <2.5 seconds> at 1 fps); get_rope_index's t ids of the steps then follow the
    tokens in between, and no frame rate enters them."""
    from transformers.models.qwen3_vl.processing_qwen3_vl import Qwen3VLProcessor

    from posecards.encodings.mrope import mrope_position_ids
    from posecards.encodings.video_time import patch_timestamps, timestamped_video_segments

    n = card.numbers
    fps, frames = n["video_fps_1"], int(n["video_seconds"] * n["video_fps_1"])
    ref = Qwen3VLProcessor._calculate_timestamps(None, list(range(frames)), fps, 2)  # type: ignore[arg-type]
    assert (n["video_stamp_1"], n["video_stamp_2"]) == (ref[0], ref[1])
    np.testing.assert_array_equal(patch_timestamps(np.arange(frames), fps, 2), ref)
    assert f"<{ref[0]:.1f} seconds>" == "<0.5 seconds>"
    with torch.device("meta"):
        model = T.AutoModel.from_config(T.AutoConfig.for_model("qwen3_vl"))
    merge = model.config.vision_config.spatial_merge_size
    for stamp_tokens, grid in ((5, (4, 2, 2)), (7, (3, 4, 6))):
        segments = timestamped_video_segments(grid, stamp_tokens)
        mine = mrope_position_ids(segments, merge)  # (3, L)
        types = np.concatenate(
            [
                np.full(
                    s[1] if s[0] == "text" else s[1][1] * s[1][2] // merge**2, 2 * (s[0] != "text")
                )
                for s in segments
            ]
        )
        ids, _ = model.get_rope_index(
            torch.zeros(1, types.size, dtype=torch.long),
            torch.tensor(types)[None],
            video_grid_thw=torch.tensor([list(grid)]),
        )
        np.testing.assert_array_equal(ids[:, 0].numpy(), mine)
        t_of_step = mine[0][types == 2].reshape(grid[0], -1)[:, 0]
        step = stamp_tokens + 2 + max(grid[1], grid[2]) // merge  # text + start/end + the grid
        assert np.all(np.diff(t_of_step) == step)


# --- panel 6: SE / CBAM / zero padding with torch ----------------------------------------------------


def test_channel_numbers_with_torch(card: CardContent) -> None:
    data, n = card.figures["c9-channel"], card.numbers
    assert n["ch_se_diff"] == 0.0 and np.array_equal(data.se_before, data.se_after)
    assert n["ch_cbam_diff"] > 0.1
    x = torch.ones(1, 1, 16, 16, dtype=torch.float64)
    box = torch.full((1, 1, 3, 3), 1 / 9, dtype=torch.float64)
    for _ in range(n["band_layers"]):
        x = torch.nn.functional.conv2d(x, box, padding=1)
    np.testing.assert_allclose(data.band, x[0, 0].numpy(), atol=1e-15)
    one = torch.nn.functional.conv2d(torch.ones(1, 1, 5, 5, dtype=torch.float64), box, padding=1)
    assert (n["band_corner"], n["band_edge"]) == pytest.approx(
        (one[0, 0, 0, 0].item(), one[0, 0, 0, 2].item())
    )
