"""Card 6's MRoPE panels (5 and 6): which axis (t, h, w) drives each frequency of Qwen2.5-VL's
and Qwen3-VL's heads, and the (t, h, w) position ids of text, an image, text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from posecards.content import Scalar
from posecards.content.card6_reading import (
    head_dim_of,
    rope_params_of,
    wavelength_of,
)
from posecards.content.figdata.card6 import MropeAxes, MropeIds, MropeModel
from posecards.encodings.mrope import MROPE_AXES, mrope_axes, mrope_position_ids
from posecards.encodings.rope_partial import head_inv_freq

# The short sequence of panel 6: 3 text tokens, an image of 1 x 4 x 6 patches (T, H, W as
# image_grid_thw gives it: 2 x 3 tokens after the 2 x 2 merge), 2 text tokens.
MROPE_SEQUENCE: tuple[tuple[Any, ...], ...] = (("text", 3), ("image", (1, 4, 6)), ("text", 2))
# Panel 5: how far the w axis turns across an image this many tokens wide.
IMAGE_WIDTH_TOKENS = 32


def mrope_model(t: Mapping[str, Any], layout: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One MRoPE text config: wavelengths and the axis of each frequency."""
    section = [int(s) for s in t["rope_scaling"]["mrope_section"]]
    head = head_dim_of(t)
    inv, _ = head_inv_freq(head, rope_params_of(t))  # (head_dim/2,)
    axes = mrope_axes(section, head // 2, layout)  # (head_dim/2,) 0 t, 1 h, 2 w
    wl = wavelength_of(inv)
    ranges = {
        MROPE_AXES[a]: (float(wl[axes == a].min()), float(wl[axes == a].max())) for a in range(3)
    }
    return {"wavelength": wl, "axes": axes, "section": section, "theta": float(t["rope_theta"])}, {
        "ranges": ranges,
        "head": head,
    }


def mrope_axes_panel(
    q25: Mapping[str, Any], q3: Mapping[str, Any]
) -> tuple[MropeAxes, dict[str, Scalar]]:
    """Panel 5 from Qwen2.5-VL's (chunked) and Qwen3-VL's (interleaved) text configs."""
    models = {"q25": mrope_model(q25, "chunked"), "q3": mrope_model(q3, "interleaved")}
    numbers: dict[str, Scalar] = {}
    for key, (d, info) in models.items():
        numbers[f"{key}_theta"] = d["theta"]
        numbers[f"{key}_head"] = info["head"]
        numbers[f"{key}_pairs"] = info["head"] // 2
        for a, (lo, hi) in info["ranges"].items():
            numbers[f"{key}_{a}_fast"] = lo
            numbers[f"{key}_{a}_slow"] = hi
        for a, s in zip(MROPE_AXES, d["section"], strict=True):
            numbers[f"{key}_s{a}"] = s
            numbers[f"{key}_n{a}"] = int(np.sum(d["axes"] == MROPE_AXES.index(a)))
        # across an image W tokens wide, w goes 0 .. W - 1: turns of the fastest w-driven pair
        numbers[f"{key}_w_turns"] = (IMAGE_WIDTH_TOKENS - 1) / info["ranges"]["w"][0]
    numbers["image_width"] = IMAGE_WIDTH_TOKENS
    numbers["q25_last"] = int(models["q25"][1]["head"]) // 2 - 1
    q25_section = models["q25"][0]["section"]
    numbers["q25_w_start"] = int(q25_section[0] + q25_section[1])  # where the w block starts
    # wavelengths marked under each model's map: where Qwen2.5-VL's blocks start, and the last pair
    first = models["q25"][0]
    n = first["axes"].size
    st, sh = first["section"][0], first["section"][1]
    marks = np.array([0, st, st + sh, n - 1], dtype=np.int64)
    shown = {
        k: MropeModel(
            **d,
            tick_j=marks,
            tick_wavelength=d["wavelength"][marks],  # (4,)
            count=np.bincount(d["axes"], minlength=3),  # (3,) frequencies per axis
        )
        for k, (d, _) in models.items()
    }
    fig = MropeAxes(models=list(models), image_width=IMAGE_WIDTH_TOKENS, **shown)
    return fig, numbers


def mrope_ids_panel(
    segments: Sequence[tuple[Any, ...]], merge: int
) -> tuple[MropeIds, dict[str, Scalar]]:
    """Panel 6: the (t, h, w) ids of ``("text", n), ("image", (T, H, W)), ("text", m)`` with
    ``spatial_merge_size`` ``merge``, as ``get_rope_index`` builds them."""
    (_, before), (_, (img_t, img_h, img_w)), (_, after) = segments
    ids = mrope_position_ids(list(segments), merge)  # (3, L) t, h, w
    image_tokens = img_t * (img_h // merge) * (img_w // merge)
    kinds = ["text"] * before + ["image"] * image_tokens + ["text"] * after
    first_after = before + image_tokens
    fig = MropeIds(
        ids=ids,
        kinds=kinds,
        merge=merge,
        grid=[img_t, img_h, img_w],  # patches (image_grid_thw)
        token_grid=[img_h // merge, img_w // merge],  # rows x columns of image tokens
    )
    numbers: dict[str, Scalar] = {
        "ids_len": int(ids.shape[1]),
        "ids_text_before": int(before),
        "ids_text_after": int(after),
        "ids_grid_t": int(img_t),
        "ids_grid_h": int(img_h),
        "ids_grid_w": int(img_w),
        "ids_rows": img_h // merge,
        "ids_cols": img_w // merge,
        "ids_image_len": image_tokens,
        "ids_merge": merge,
        "ids_image_t": int(ids[0, before]),
        "ids_next": int(ids[0, first_after]),
        "ids_last": int(ids[0, -1]),
        "ids_advance": int(ids[0, first_after] - ids[0, before]),  # what the image moves on
        # numbered one by one as if it were text, the image would end and the text start here:
        "ids_as_text_last": int(before + image_tokens - 1),
        "ids_as_text_next": int(before + image_tokens),
    }
    return fig, numbers
