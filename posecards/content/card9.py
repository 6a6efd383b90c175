"""Card 9 -- position in images, across scales and in time.

Panels (``PANEL_IDS``):
- c9-vit-resize: a 14 x 14 sin-cos table (MAE's, standing for a learned one) resized to 24 x 24 as
  transformers' ViT ``interpolate_pos_encoding`` does; what bicubic resampling blurs, per
  frequency, and how far the other ``align_corners`` convention moves it.
- c9-swin: Swin's one bias per offset inside a 7 x 7 window (169 rows) and Swin v2's log-spaced
  coordinates, which reach less far beyond their training range in a larger window.
- c9-rope-2d: four 2-D RoPE conventions (Qwen2.5-VL, Pixtral, Gemma 4 vision, DINOv3) as a map
  pair -> axis and wavelength.
- c9-fpn: one pixel of an 800-pixel image on pyramid levels of stride 8..64: integer cells
  disagree, normalised coordinates agree; DETR anchors them at cell ends, Deformable DETR at
  centres.
- c9-video: Qwen2.5-VL's time ids follow seconds (``tokens_per_second``), Qwen2-VL's follow frames.
- c9-channel: SE's gates ignore a pixel shuffle exactly, CBAM's spatial gate does not; zero
  padding marks the border of a constant image.
Figure page only (``EXTRA_IDS``): c9-align-corners, where each resized patch reads the table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders, Scalar
from posecards.content.figdata.card9 import (
    Channel,
    Pyramid,
    Rope2d,
    SourceCoords,
    Swin,
    VideoTime,
    VitResize,
)
from posecards.encodings.channel_gates import cbam_spatial_gate, padding_band, se_gates
from posecards.encodings.grid2d import sincos_2d_pe, swin_relative_position_index
from posecards.encodings.mrope import mrope_axes, mrope_position_ids
from posecards.encodings.pyramid_coords import cell_index, level_cells, normalised_cell_coordinate
from posecards.encodings.rope_2d import CONVENTIONS, step_angles, vision_rope_pairs
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.sinusoidal import sinusoidal_pe
from posecards.encodings.swin_v2 import swinv2_linear_offsets, swinv2_log_offsets
from posecards.encodings.table_resize import interpolate_pos_encoding, resize_source_coordinates
from posecards.encodings.video_time import (
    grid_step_seconds,
    patch_timestamps,
    video_time_interval,
)

CARD = 9
PANEL_IDS = ("c9-vit-resize", "c9-swin", "c9-rope-2d", "c9-fpn", "c9-video", "c9-channel")
EXTRA_IDS = ("c9-align-corners",)  # figure page only

SEED = 9

# --- 1 ViT table ------------------------------------------------------------------------------
VIT_IN, VIT_OUT = 14, 24  # 224 px at patch 16, then 384 px

# --- 2 Swin -----------------------------------------------------------------------------------
SWIN_WINDOW = 7  # Swin v1's window M
SWINV2_WINDOWS = (
    8,
    16,
)  # Swin v2 pre-trained at 8 (256 px), fine-tuned at 16 (pretrained_window_size 8)

# --- 3 2-D RoPE (the bases of the transformers 5.23 config classes; one head size for all) ----
ROPE_HEAD_DIM = 64  # Pixtral, Gemma 4 vision, DINOv3 ViT-S: 64
ROPE_BASE: dict[str, float | None] = {  # None: the card's --base (10000 by default)
    "axial": None,  # Qwen2.5-VL vision, rope_theta 10000
    "even_odd": None,  # Pixtral, rope_theta 10000
    "half_per_axis": 100.0,  # Gemma 4 vision, rope_theta 100
    "normalised": 100.0,  # DINOv3, rope_theta 100
}
ROPE_GRID = 14  # patches per side (DINOv3's step depends on it)

# --- 4 feature pyramid --------------------------------------------------------------------------
FPN_IMAGE = 800  # pixels (DETR's shorter side)
FPN_STRIDES = (8, 16, 32, 64)  # Deformable DETR's four levels
FPN_PIXEL = 500.0

# --- 5 video ------------------------------------------------------------------------------------
VIDEO_FPS = (1.0, 2.0, 4.0)
VIDEO_SECONDS = 8.0
TOKENS_PER_SECOND = 4  # Qwen2_5_VLVisionConfig.tokens_per_second
TEMPORAL_PATCH = 2  # temporal_patch_size (ERNIE 4.5 VL: temporal_merge_size, also 2)
# Which pairs time drives, per model: (mrope_section as (t, h, w), layout, rope_theta), head 128.
VIDEO_HEAD_DIM = 128
VIDEO_MODELS: dict[str, tuple[tuple[int, int, int], str, float]] = {
    "q25": ((16, 24, 24), "chunked", 1_000_000.0),  # qwen2.5-vl-7b.json
    "q3": ((24, 20, 20), "interleaved", 5_000_000.0),  # qwen3-vl-8b.json
    # transformers' Ernie4_5_VLMoe defaults: the config writes [h, w, t] = [22, 22, 20]
    "ernie": ((20, 22, 22), "time_last", 500_000.0),
}

# --- 6 channel attention ------------------------------------------------------------------------
CH_CHANNELS, CH_SIDE, CH_REDUCTION = 16, 8, 4
CBAM_KERNEL = 7
BAND_SIDE, BAND_LAYERS = 16, 3


def _vit(params: PEParams, numbers: dict[str, Scalar]) -> tuple[VitResize, SourceCoords]:
    """A 14 x 14 sin-cos table (class row 0, as MAE's) resized to 24 x 24: error per frequency
    against the encoding at the coordinates the resize reads, and the other convention."""
    d, base = params.d_model, params.base
    table = np.concatenate([np.zeros((1, d)), sincos_2d_pe(VIT_IN, VIT_IN, d, base)])  # (197, d)
    off = interpolate_pos_encoding(table, VIT_OUT, VIT_OUT, align_corners=False)[1:]  # (576, d)
    on = interpolate_pos_encoding(table, VIT_OUT, VIT_OUT, align_corners=True)[1:]  # (576, d)
    src = resize_source_coordinates(VIT_IN, VIT_OUT, False)  # (24,) where patch i reads
    rows, cols = np.divmod(np.arange(VIT_OUT * VIT_OUT), VIT_OUT)  # (576,), (576,)
    exact = np.concatenate(  # (576, d) MAE's encoding at the fractional coordinates read
        [
            sinusoidal_pe(src[cols], d // 2, base, "half"),
            sinusoidal_pe(src[rows], d // 2, base, "half"),
        ],
        axis=1,
    )
    fresh = sincos_2d_pe(VIT_OUT, VIT_OUT, d, base)  # (576, d) computed afresh at 24 x 24
    q = d // 4
    cols_of = [np.array([i, q + i, 2 * q + i, 3 * q + i]) for i in range(q)]  # sin, cos of x, y

    def per_freq(a: np.ndarray) -> np.ndarray:
        return np.array([np.sqrt(np.mean(a[:, c] ** 2)) for c in cols_of])  # (q,)

    blur = per_freq(off - exact)
    corners = per_freq(off - on)
    omega = base ** (-np.arange(q, dtype=np.float64) / q)  # (q,) base^(-4i/d)
    wavelength = 2 * np.pi / omega
    on_src = resize_source_coordinates(VIT_IN, VIT_OUT, True)
    numbers.update(
        vit_in=VIT_IN,
        vit_out=VIT_OUT,
        vit_d=d,
        vit_freqs=q,
        vit_blur_fast=float(blur[0]),
        vit_fast_wavelength=float(wavelength[0]),
        vit_blur_slow=float(blur[-1]),
        vit_sharp_freqs=int(np.sum(blur < 0.01)),
        vit_corners_max=float(np.max(np.abs(off - on))),
        vit_corners_fast=float(corners[0]),
        vit_edge_shift=float(np.max(np.abs(on_src - src))),
        vit_first_off=float(src[0]),
        vit_fresh_rms=float(np.sqrt(np.mean((off - fresh) ** 2))),
        vit_step=float(VIT_IN / VIT_OUT),
    )
    panel = VitResize(wavelength, blur, corners, VIT_IN, VIT_OUT, d)
    coords = SourceCoords(
        patch=np.arange(VIT_OUT, dtype=np.float64), off=src, on=on_src, n_in=VIT_IN, n_out=VIT_OUT
    )
    return panel, coords


def _swin(numbers: dict[str, Scalar]) -> Swin:
    """Swin's index for a 7 x 7 window; Swin v2's linear and log-spaced coordinates of the
    offsets of a window of 8 and of 16 (pre-trained at 8)."""
    m = SWIN_WINDOW
    index = swin_relative_position_index(m, m)  # (49, 49)
    small, large = SWINV2_WINDOWS
    lin_s, lin_l = swinv2_linear_offsets(small), swinv2_linear_offsets(large, small)
    log_s, log_l = swinv2_log_offsets(small), swinv2_log_offsets(large, small)
    numbers.update(
        swin_window=m,
        swin_tokens=m * m,
        swin_pairs=(m * m) ** 2,
        swin_entries=int(np.unique(index).size),
        swin_side=2 * m - 1,
        swinv2_small=small,
        swinv2_large=large,
        swinv2_lin_reach=float(lin_l.max() / lin_s.max()),
        swinv2_log_reach=float(log_l.max() / log_s.max()),
        swinv2_log_max_small=float(log_s.max()),
        swinv2_log_max_large=float(log_l.max()),
    )
    return Swin(
        index=index,
        window=m,
        entries=int(np.unique(index).size),
        offsets_small=np.arange(-(small - 1), small, dtype=np.float64),
        offsets_large=np.arange(-(large - 1), large, dtype=np.float64),
        linear_small=lin_s,
        linear_large=lin_l,
        log_small=log_s,
        log_large=log_l,
        window_small=small,
        window_large=large,
    )


def _rope_2d(params: PEParams, numbers: dict[str, Scalar]) -> Rope2d:
    """Each convention's pair -> (axis, wavelength in patches of a step along that axis)."""
    d = ROPE_HEAD_DIM
    out: dict[str, Any] = {}
    for conv in CONVENTIONS:
        base = ROPE_BASE[conv] or params.base
        pairs = vision_rope_pairs(conv, d, base)
        step = np.maximum(  # (d/2,) angle per step along the pair's own axis
            step_angles(conv, d, base, 0, ROPE_GRID), step_angles(conv, d, base, 1, ROPE_GRID)
        )
        wl = 2 * np.pi / step
        out[f"axis_{conv}"] = pairs.axis
        out[f"wavelength_{conv}"] = wl
        out[f"first_{conv}"] = pairs.first
        numbers.update(
            {
                f"rope_{conv}_base": float(base),
                f"rope_{conv}_fast": float(wl.min()),
                f"rope_{conv}_slow": float(wl.max()),
            }
        )
    # porting weights between two conventions: slots whose pair (axis, frequency) differs
    ax, eo = (
        vision_rope_pairs("axial", d, params.base),
        vision_rope_pairs("even_odd", d, params.base),
    )
    hp = vision_rope_pairs("half_per_axis", d, params.base)
    slot_axis = {}
    for name, p in (("axial", ax), ("even_odd", eo), ("half_per_axis", hp)):
        a = np.zeros(d, dtype=np.int64)  # (d,) the axis each slot follows
        a[p.first], a[p.second] = p.axis, p.axis
        slot_axis[name] = a
    numbers.update(
        rope_head_dim=d,
        rope_pairs=d // 2,
        rope_grid=ROPE_GRID,
        rope_slots_moved=int(np.sum(slot_axis["axial"] != slot_axis["half_per_axis"])),
        rope_freqs_moved=int(np.sum(np.abs(ax.freq - eo.freq) > 1e-12 * ax.freq)),
        rope_dino_step_14=float(step_angles("normalised", d, 100.0, 1, ROPE_GRID).max()),
        rope_dino_step_28=float(step_angles("normalised", d, 100.0, 1, 2 * ROPE_GRID).max()),
    )
    return Rope2d(
        conventions=list(CONVENTIONS),
        pair=np.arange(d // 2, dtype=np.float64),
        **out,
        head_dim=d,
        grid=ROPE_GRID,
    )


def _fpn(numbers: dict[str, Scalar]) -> Pyramid:
    """Pixel 500 of an 800-pixel image on the levels of stride 8, 16, 32, 64."""
    cells = np.array([level_cells(FPN_IMAGE, s) for s in FPN_STRIDES], dtype=np.float64)  # (4,)
    index = np.array([cell_index(np.array([FPN_PIXEL]), s)[0] for s in FPN_STRIDES])  # (4,)
    centre = np.array(
        [normalised_cell_coordinate(j, int(n), "centre") for j, n in zip(index, cells, strict=True)]
    )
    end = np.array(
        [normalised_cell_coordinate(j, int(n), "end") for j, n in zip(index, cells, strict=True)]
    )
    offset_px = FPN_IMAGE * (end - centre)  # (4,) half a cell of each level, in image pixels
    for s, j, c, e, o in zip(FPN_STRIDES, index, centre, end, offset_px, strict=True):
        numbers.update(
            {
                f"fpn_index_{s}": int(j),
                f"fpn_centre_{s}": float(c),
                f"fpn_end_{s}": float(e),
                f"fpn_offset_{s}": float(o),
            }
        )
    numbers.update(
        fpn_image=FPN_IMAGE,
        fpn_pixel=float(FPN_PIXEL),
        fpn_true=float(FPN_PIXEL / FPN_IMAGE),
        fpn_cells_64=int(cells[-1]),
        fpn_covered_64=int(cells[-1]) * FPN_STRIDES[-1],
        fpn_spread_index=int(index.max() - index.min()),
        fpn_spread_centre=float(centre.max() - centre.min()),
    )
    return Pyramid(
        strides=np.asarray(FPN_STRIDES, dtype=np.float64),
        cells=cells,
        index=index.astype(np.float64),
        centre=centre,
        end=end,
        pixel=FPN_PIXEL,
        image=FPN_IMAGE,
    )


def _video(numbers: dict[str, Scalar]) -> VideoTime:
    """An 8-second clip at 1, 2 and 4 frames per second: the time id of each temporal grid step
    in Qwen2.5-VL (tokens_per_second 4) and Qwen2-VL / ERNIE 4.5 VL (one id per step); the
    timestamps Qwen3-VL writes as text instead; which pairs time drives in each head."""
    out: dict[str, Any] = {}
    for k, fps in enumerate(VIDEO_FPS, start=1):
        steps = int(VIDEO_SECONDS * fps) // TEMPORAL_PATCH  # temporal grid steps of the clip
        grid = (steps, 2, 2)  # (T, H, W) as video_grid_thw: one token per step after the merge
        interval = video_time_interval(fps, TOKENS_PER_SECOND, TEMPORAL_PATCH)
        ids25 = mrope_position_ids([("video", grid, interval)], 2)[0]  # (T,) time ids
        ids2 = mrope_position_ids([("video", grid, 1.0)], 2)[0]  # (T,)
        out[f"seconds_{k}"] = grid_step_seconds(steps, fps, TEMPORAL_PATCH)
        out[f"ids_qwen25_{k}"] = ids25.astype(np.float64)
        out[f"ids_qwen2_{k}"] = ids2.astype(np.float64)
        numbers.update(
            {
                f"video_fps_{k}": float(fps),
                f"video_steps_{k}": steps,
                f"video_interval_{k}": float(interval),
                f"video_last25_{k}": int(ids25[-1]),
                f"video_last2_{k}": int(ids2[-1]),
            }
        )
    # Qwen3-VL at the first frame rate: the seconds it writes before each step
    frames = np.arange(int(VIDEO_SECONDS * VIDEO_FPS[0]))  # (8,) frame indices of the clip
    stamps = patch_timestamps(frames, VIDEO_FPS[0], TEMPORAL_PATCH)  # (4,)
    pairs = VIDEO_HEAD_DIM // 2
    for key, (section, layout, theta) in VIDEO_MODELS.items():
        inv, _ = rope_inv_freq(VIDEO_HEAD_DIM, theta)  # (64,) theta^(-2j/128)
        axes = mrope_axes(list(section), pairs, layout)  # (64,) 0 t, 1 h, 2 w
        wl = 2 * np.pi / inv  # (64,) position ids per turn
        out[f"axes_{key}"] = axes
        out[f"wavelength_{key}"] = wl
        numbers.update(
            {
                f"video_{key}_time_pairs": int(np.sum(axes == 0)),
                f"video_{key}_theta": theta,
                f"video_{key}_wl_fast": float(wl[axes == 0].min()),
                f"video_{key}_wl_slow": float(wl[axes == 0].max()),
            }
        )
    t25 = out["axes_q25"] == 0
    numbers.update(
        video_seconds=float(VIDEO_SECONDS),
        video_tps=TOKENS_PER_SECOND,
        video_patch=TEMPORAL_PATCH,
        video_pairs=pairs,
        video_wl_fast_s=float(out["wavelength_q25"][t25].min() / TOKENS_PER_SECOND),
        video_wl_slow_s=float(out["wavelength_q25"][t25].max() / TOKENS_PER_SECOND),
        video_stamp_1=float(stamps[0]),
        video_stamp_2=float(stamps[1]),
        # Qwen3-VL: the slowest pairs past the h and w slices, all left to t
        video_q3_tail=int(np.argmax(out["axes_q3"][::-1] != 0)),
    )
    return VideoTime(
        fps=np.asarray(VIDEO_FPS, dtype=np.float64),
        **out,
        tokens_per_second=float(TOKENS_PER_SECOND),
        clip_seconds=float(VIDEO_SECONDS),
        models=list(VIDEO_MODELS),
    )


def _channel(numbers: dict[str, Scalar]) -> Channel:
    """SE and CBAM gates of a random feature map before and after one pixel shuffle; a constant
    image through three zero-padded 3 x 3 box filters."""
    rng = np.random.default_rng(SEED)
    c, s = CH_CHANNELS, CH_SIDE
    # values on a 1/16 grid: every sum is exact in float64, whatever order the pixels come in
    x = rng.integers(-64, 64, size=(c, s, s)) / 16.0  # (C, S, S)
    w1 = rng.standard_normal((c // CH_REDUCTION, c))  # (C/r, C)
    w2 = rng.standard_normal((c, c // CH_REDUCTION))  # (C, C/r)
    k = rng.standard_normal((1, 2, CBAM_KERNEL, CBAM_KERNEL)) / CBAM_KERNEL  # (1, 2, 7, 7)
    perm = rng.permutation(s * s)  # (S*S,) pixel j of the shuffled map is pixel perm[j]
    shuffled = x.reshape(c, -1)[:, perm].reshape(c, s, s)
    se0, se1 = se_gates(x, w1, w2), se_gates(shuffled, w1, w2)
    cb0 = cbam_spatial_gate(x, k).reshape(-1)[perm]  # (S*S,) each pixel's gate, moved along
    cb1 = cbam_spatial_gate(shuffled, k).reshape(-1)  # (S*S,) the gate the shuffled map gets
    band = padding_band(BAND_SIDE, BAND_SIDE, BAND_LAYERS)  # (16, 16)
    one = padding_band(5, 5, 1)  # (5, 5) one layer
    numbers.update(
        ch_channels=c,
        ch_side=s,
        ch_se_diff=float(np.max(np.abs(se1 - se0))),
        ch_cbam_diff=float(np.max(np.abs(cb1 - cb0))),
        ch_kernel=CBAM_KERNEL,
        band_layers=BAND_LAYERS,
        band_side=BAND_SIDE,
        band_corner=float(one[0, 0]),
        band_edge=float(one[0, 2]),
        band_inside=float(one[2, 2]),
        band_width=int(np.sum(np.abs(band[BAND_SIDE // 2] - 1.0) > 1e-12) // 2),
        band_corner_3=float(band[0, 0]),
    )
    return Channel(se0, se1, cb0, cb1, band, BAND_LAYERS)


EX_VIT_IN, EX_VIT_OUT = 16, 40  # the exercise's table and grid
EX_FPS = 3.0
EX_SLOT = 20  # a slot of Qwen2.5-VL's axial vision head, ported to Gemma 4's layout


def _port_slot(numbers: dict[str, Scalar]) -> None:
    """Slot 20 of an axial head of 64 (Qwen2.5-VL vision): its axis, its frequency among that
    axis's pairs, its partner; the slots of the same axis and frequency in Gemma 4's layout."""
    d = ROPE_HEAD_DIM
    axial = vision_rope_pairs("axial", d, 10_000.0)  # Qwen2.5-VL vision's base
    half = vision_rope_pairs("half_per_axis", d, 100.0)  # Gemma 4 vision's
    j = int(np.flatnonzero((axial.first == EX_SLOT) | (axial.second == EX_SLOT))[0])
    axis = int(axial.axis[j])
    mine = axial.axis == axis
    rank = int(np.sum(axial.freq[mine] > axial.freq[j]))  # 0 = its axis's fastest
    w_pairs = np.flatnonzero(axial.axis == 1)
    theirs = np.flatnonzero(half.axis == axis)  # (d/4,) the same axis in Gemma 4's layout
    k = int(theirs[np.argsort(-half.freq[theirs], kind="stable")[rank]])
    numbers.update(
        drill_slot=EX_SLOT,
        drill_slot_freq=rank,
        drill_slot_partner=int(axial.second[j] if axial.first[j] == EX_SLOT else axial.first[j]),
        drill_slot_w_start=int(axial.first[w_pairs].min()),
        drill_slot_w_end=int(axial.first[w_pairs].max()),
        drill_gemma_first=int(half.first[k]),
        drill_gemma_second=int(half.second[k]),
    )


def _exercises(numbers: dict[str, Scalar]) -> None:
    """Where the first resized patch reads a 16-patch table at 40 patches; the time interval of
    Qwen2.5-VL at 3 frames per second; a slot ported between two 2-D RoPE layouts."""
    _port_slot(numbers)
    numbers.update(
        drill_vit_in=EX_VIT_IN,
        drill_vit_out=EX_VIT_OUT,
        drill_vit_first=float(resize_source_coordinates(EX_VIT_IN, EX_VIT_OUT, False)[0]),
        drill_vit_first_on=float(resize_source_coordinates(EX_VIT_IN, EX_VIT_OUT, True)[0]),
        drill_fps=EX_FPS,
        drill_interval=float(video_time_interval(EX_FPS, TOKENS_PER_SECOND, TEMPORAL_PATCH)),
        drill_fourth=int(
            mrope_position_ids(
                [
                    (
                        "video",
                        (4, 2, 2),
                        video_time_interval(EX_FPS, TOKENS_PER_SECOND, TEMPORAL_PATCH),
                    )
                ],
                2,
            )[0, 3]
        ),
    )


def compute(params: PEParams) -> CardContent:
    numbers: dict[str, Scalar] = Placeholders()
    _exercises(numbers)
    vit, coords = _vit(params, numbers)
    figures: dict[str, Any] = {
        "c9-vit-resize": vit,
        "c9-swin": _swin(numbers),
        "c9-rope-2d": _rope_2d(params, numbers),
        "c9-fpn": _fpn(numbers),
        "c9-video": _video(numbers),
        "c9-channel": _channel(numbers),
        "c9-align-corners": coords,
    }
    assert tuple(figures) == PANEL_IDS + EXTRA_IDS
    return CardContent(card=CARD, figures=figures, numbers=numbers)
