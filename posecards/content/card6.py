"""Card 6 -- position in today's models: what nine published configs do with RoPE.

Every number comes from a published ``config.json`` (``posecards/content/configs.py``: the files
in ``posecards/data/configs/``) and the modern-RoPE math layer (``head_inv_freq``,
``proportional_pairs``, ``mla_softmax_scale``, ``query_temperature``, ``mrope_axes``,
``mrope_position_ids``, ``rope_pair_slots``). This module reads the config keys each panel names;
a key the published file leaves out gets the default of transformers' config class, named where
it is used (``DEFAULTS``). ``tests/test_card6.py`` checks every reading, frequency, factor and
position id against transformers 5.23.0 itself.

Panels (one idea each): part of the head rotates (partial vs proportional), two RoPEs in one model
(Gemma 3), layers without position (Llama 4 Scout, SmolLM3), MLA's decoupled RoPE (DeepSeek-V3),
MRoPE's axes per pair (Qwen2.5-VL vs Qwen3-VL) and MRoPE's position ids. A table of all nine
configs is a figure page only.
Card 6 does not depend on ``PEParams``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders, Scalar
from posecards.content.configs import SHORT_NAMES, model_id, published, text_config
from posecards.content.figdata.card6 import (
    Mla,
    Models,
    MropeAxes,
    MropeIds,
    MropeModel,
    Nope,
    Partial,
    TwoRopes,
)
from posecards.encodings.mla import mla_softmax_scale
from posecards.encodings.mrope import MROPE_AXES, mrope_axes, mrope_position_ids
from posecards.encodings.query_temperature import query_temperature, query_temperature_steps
from posecards.encodings.rope import rope_pair_slots
from posecards.encodings.rope_partial import head_inv_freq, proportional_pairs, rotary_dim
from posecards.encodings.rope_scaling import yarn_mscale

F64 = npt.NDArray[np.float64]

PANEL_IDS = (
    "c6-partial",
    "c6-two-ropes",
    "c6-nope",
    "c6-mla",
    "c6-mrope-axes",
    "c6-mrope-ids",
)
EXTRA_IDS = ("c6-models",)  # figure page only

# Defaults of transformers 5.23.0's config classes for keys the published files leave out
# (tests/test_card6.py checks each against the class).
DEFAULTS: dict[str, dict[str, Any]] = {
    # Gemma3TextConfig: default_theta, sliding_window_pattern (kwargs default 6),
    # max_position_embeddings
    "gemma3_text": {
        "rope_theta": 1_000_000.0,
        "rope_local_base_freq": 10_000.0,
        "sliding_window_pattern": 6,
        "max_position_embeddings": 131_072,
        "query_pre_attn_scalar": 256,
    },
    # Gemma4TextConfig: the 5:1 pattern (sliding_window_pattern = 6, last layer full)
    "gemma4_text": {"sliding_window_pattern": 6},
}

# The keys panel 2 reads from Gemma 3's text config that may fall back to the class's defaults.
GEMMA3_READ_DEFAULTS = (
    "rope_theta",
    "rope_local_base_freq",
    "sliding_window_pattern",
    "max_position_embeddings",
)

# The short sequence of panel 6: 3 text tokens, an image of 1 x 4 x 6 patches (T, H, W as
# image_grid_thw gives it: 2 x 3 tokens after the 2 x 2 merge), 2 text tokens.
MROPE_SEQUENCE: tuple[tuple[Any, ...], ...] = (("text", 3), ("image", (1, 4, 6)), ("text", 2))
# Panel 5: how far the w axis turns across an image this many tokens wide.
IMAGE_WIDTH_TOKENS = 32


def _wavelength_of(inv_freq: npt.ArrayLike) -> F64:
    """``2 pi / theta_k`` per frequency, ``(n,)``; a zero frequency never turns: ``inf``."""
    theta = np.asarray(inv_freq, dtype=np.float64)  # (n,)
    safe = np.where(theta > 0, theta, 1.0)
    return np.where(theta > 0, 2.0 * np.pi / safe, np.inf)  # (n,)


def _turning(inv_freq: F64) -> F64:
    """Wavelengths of the frequencies that turn (drops the zeros of proportional RoPE)."""
    wl = _wavelength_of(inv_freq)
    return wl[np.isfinite(wl)]


def _rope_params(text: Mapping[str, Any]) -> dict[str, Any]:
    """One ``rope_parameters`` dict from a flat published config: ``rope_scaling`` (4.x name,
    legacy ``type``), ``rope_theta`` and ``partial_rotary_factor``, as transformers'
    ``standardize_rope_params`` merges them. MRoPE's ``mrope_section``/``mrope_interleaved`` are
    not frequency keys and stay out."""
    scaling = dict(text.get("rope_scaling") or {})
    rope_type = scaling.pop("rope_type", None) or scaling.pop("type", None) or "default"
    scaling.pop("type", None)
    if rope_type == "mrope":  # Qwen2-VL / Qwen2.5-VL legacy: default frequencies, 3 axes
        rope_type = "default"
    for key in ("mrope_section", "mrope_interleaved"):
        scaling.pop(key, None)
    params: dict[str, Any] = {"rope_type": rope_type, "rope_theta": float(text["rope_theta"])}
    if "partial_rotary_factor" in text:
        params["partial_rotary_factor"] = float(text["partial_rotary_factor"])
    params.update(scaling)
    return params


def _head_dim(text: Mapping[str, Any]) -> int:
    """``head_dim``, else ``hidden_size // num_attention_heads`` (every config class here)."""
    if text.get("head_dim"):
        return int(text["head_dim"])
    return int(text["hidden_size"]) // int(text["num_attention_heads"])


def _pattern_layers(n: int, every: int, last_full: bool = False) -> list[bool]:
    """``True`` where layer ``i`` is the odd one out of a repeating pattern: ``(i + 1) % every
    == 0`` (Gemma 3/4's full layers, Llama 4's and SmolLM3's NoPE layers); Gemma 4 forces its last
    layer to be full."""
    out = [(i + 1) % every == 0 for i in range(n)]
    if last_full and out:
        out[-1] = True
    return out


# ---------------------------------------------------------------- panel 1: part of the head


def partial_panel(
    phi: Mapping[str, Any], qn: Mapping[str, Any], g4: Mapping[str, Any]
) -> tuple[Partial, dict[str, Scalar]]:
    """Panel 1 from Phi-2's and Qwen3-Next's configs and Gemma 4's text config."""
    rows: list[dict[str, Any]] = []
    for key, cfg, head in (
        ("phi", phi, _head_dim(phi)),  # PhiConfig: hidden_size // num_attention_heads
        ("qn", qn, _head_dim(qn)),
    ):
        params = _rope_params(cfg)
        inv, _ = head_inv_freq(head, params)  # Phi / Qwen3-Next honour the factor in default
        rows.append(
            {
                "key": key,
                "head_dim": head,
                "p": float(cfg["partial_rotary_factor"]),
                "theta": float(cfg["rope_theta"]),
                "rotated": rotary_dim(head, float(cfg["partial_rotary_factor"])),
                "inv_freq": inv,
                "context": int(cfg["max_position_embeddings"]),
            }
        )
    full = g4["rope_parameters"]["full_attention"]
    g4_head = int(g4["global_head_dim"])  # Gemma4TextConfig: full layers use global_head_dim
    g4_inv, _ = head_inv_freq(g4_head, full)
    rows.append(
        {
            "key": "g4",
            "head_dim": g4_head,
            "p": float(full["partial_rotary_factor"]),
            "theta": float(full["rope_theta"]),
            "rotated": 2 * proportional_pairs(g4_head, float(full["partial_rotary_factor"])),
            "inv_freq": g4_inv,
            "context": int(g4["max_position_embeddings"]),
        }
    )
    numbers: dict[str, Scalar] = {}
    data: dict[str, Any] = {"models": [r["key"] for r in rows]}
    for r in rows:
        k, inv = r["key"], r["inv_freq"]
        pairs = r["head_dim"] // 2
        wl = _wavelength_of(inv)  # (rotary pairs,) partial; (head_dim/2,) proportional
        turning = wl[np.isfinite(wl)]
        # the head's pairs from 0 to head_dim/2 - 1: pairs past the rotated block do not turn
        full_wl = np.full(pairs, np.inf)
        full_wl[: wl.size] = wl
        data[f"{k}_wavelength"] = full_wl  # (head_dim/2,)
        data[f"{k}_fraction"] = np.arange(pairs, dtype=np.float64) / pairs  # (head_dim/2,)
        data[f"{k}_context"] = r["context"]
        data[f"{k}_p"] = r["p"]
        data[f"{k}_head"] = r["head_dim"]
        data[f"{k}_theta"] = r["theta"]
        numbers.update(
            {
                f"{k}_head": r["head_dim"],
                f"{k}_p": r["p"],
                f"{k}_theta": r["theta"],
                f"{k}_rotated": r["rotated"],
                f"{k}_pairs": int(turning.size),
                f"{k}_head_pairs": pairs,
                f"{k}_still": pairs - int(turning.size),
                f"{k}_slowest": float(turning.max()),
                f"{k}_ctx": r["context"],
                f"{k}_beyond": int(np.sum(turning > r["context"])),
                f"{k}_turns": r["context"] / float(turning.max()),
            }
        )
    # the same p and theta read as partial rotary instead: d = p D slots, exponent 2k/d
    wrong, _ = head_inv_freq(
        g4_head, {**full, "rope_type": "default"}
    )  # what a reader who ignores "proportional" computes
    numbers["g4_as_partial"] = float(_turning(wrong).max())
    numbers["g4_zero"] = int(np.sum(g4_inv == 0.0))
    # Gemma 4's sliding-window layers: a default RoPE over head_dim, their own theta
    sliding = g4["rope_parameters"]["sliding_attention"]
    g4_sliding, _ = head_inv_freq(int(g4["head_dim"]), sliding)
    numbers["g4_sliding_slowest"] = float(_turning(g4_sliding).max())
    data["slowest"] = {r["key"]: numbers[f"{r['key']}_slowest"] for r in rows}
    data["context"] = max(r["context"] for r in rows)  # Qwen3-Next's and Gemma 4's
    # where the pairs that never turn begin, for the two models with p = 0.25 (Qwen3-Next, Gemma 4)
    data["still_from"] = min(float(numbers[f"{r['key']}_pairs"]) / r["head_dim"] * 2 for r in rows)
    return Partial(**data), numbers


# ---------------------------------------------------------------- panel 2: two RoPEs, Gemma 3


def two_ropes_panel(t: Mapping[str, Any]) -> tuple[TwoRopes, dict[str, Scalar]]:
    """Panel 2 from a Gemma 3 text config (keys it leaves out: ``DEFAULTS["gemma3_text"]``)."""
    d = DEFAULTS["gemma3_text"]
    n = int(t["num_hidden_layers"])
    every = int(t.get("sliding_window_pattern", d["sliding_window_pattern"]))
    full = _pattern_layers(n, every)  # Gemma3TextConfig.layer_types
    head = _head_dim(t)
    local_theta = float(t.get("rope_local_base_freq", d["rope_local_base_freq"]))
    full_theta = float(t.get("rope_theta", d["rope_theta"]))
    local: dict[str, Any] = {"rope_type": "default", "rope_theta": local_theta}
    glob: dict[str, Any] = {"rope_type": "default", "rope_theta": full_theta}
    scaling = dict(t.get("rope_scaling") or {})
    if scaling:  # Gemma3TextConfig: rope_scaling goes to the full-attention layers only
        glob["rope_type"] = scaling.pop("rope_type", None) or scaling.pop("type")
        glob.update(scaling)
    local_inv, _ = head_inv_freq(head, local)
    glob_inv, glob_att = head_inv_freq(head, glob)
    window = int(t["sliding_window"])
    context = int(t.get("max_position_embeddings", d["max_position_embeddings"]))
    wl_local, wl_glob = _wavelength_of(local_inv), _wavelength_of(glob_inv)
    full_idx = [i for i, f in enumerate(full) if f]
    # the keys these panels read that the published file leaves out: the config class's defaults
    defaulted = [k for k in GEMMA3_READ_DEFAULTS if k not in t]
    data = TwoRopes(
        full=np.array(full, dtype=bool),  # (layers,)
        pair=np.arange(head // 2, dtype=np.float64),
        local_inv_freq=local_inv,  # (head_dim/2,) sliding layers
        full_inv_freq=glob_inv,  # (head_dim/2,) full layers
        local_wavelength=wl_local,  # (head_dim/2,)
        full_wavelength=wl_glob,
        window=window,
        context=context,
        local_theta=local_theta,
        full_theta=full_theta,
        factor=float(glob.get("factor", 1.0)),
    )
    numbers: dict[str, Scalar] = {
        "g3_layers": n,
        "g3_full": len(full_idx),
        "g3_sliding": n - len(full_idx),
        "g3_every": every,
        "g3_first_full": full_idx[0],
        "g3_second_full": full_idx[min(1, len(full_idx) - 1)],
        "g3_last_full": full_idx[-1],
        "g3_head": head,
        "g3_pairs": head // 2,
        "g3_window": window,
        "g3_ctx": context,
        "g3_local_theta": local_theta,
        "g3_theta": full_theta,
        "g3_factor": float(glob.get("factor", 1.0)),
        "g3_attention": float(glob_att),
        "g3_local_fastest": float(wl_local.min()),
        "g3_local_slowest": float(wl_local.max()),
        "g3_full_fastest": float(wl_glob.min()),
        "g3_full_slowest": float(wl_glob.max()),
        "g3_local_in_window": int(np.sum(wl_local <= window)),
        "g3_full_in_window": int(np.sum(wl_glob <= window)),
        "g3_full_in_ctx": int(np.sum(wl_glob <= context)),
        "g3_scalar": int(t.get("query_pre_attn_scalar", d["query_pre_attn_scalar"])),
        "g3_n_defaults": len(defaulted),
        "g3_defaults": ", ".join(defaulted),
    }
    return data, numbers


# ---------------------------------------------------------------- panel 3: layers without RoPE


def nope_panel(l4: Mapping[str, Any], smol: Mapping[str, Any]) -> tuple[Nope, dict[str, Scalar]]:
    """Panel 3 from Llama 4 Scout's text config and SmolLM3's config."""
    # no_rope_layers: 1 = the layer applies RoPE, 0 = NoPE (Llama4TextConfig, SmolLM3Config)
    l4_rope = [bool(v) for v in l4["no_rope_layers"]][: int(l4["num_hidden_layers"])]
    smol_rope = [bool(v) for v in smol["no_rope_layers"]][: int(smol["num_hidden_layers"])]
    chunk = int(l4["attention_chunk_size"])
    floor_len, scale = float(l4["floor_scale"]), float(l4["attn_scale"])
    context = int(l4["max_position_embeddings"])
    # Llama4TextAttention: tau(p) = 1 + attn_scale ln(1 + floor((p + 1) / floor_scale)) on NoPE
    # layers when attn_temperature_tuning is truthy (the published file has an integer there)
    tuned = bool(l4["attn_temperature_tuning"])
    steps = query_temperature_steps(floor_len, 1.0, context - 1)  # (m,) where tau steps up
    positions = np.concatenate([[0.0], steps])  # (m + 1,) tau is constant from each to the next
    tau = query_temperature(positions, scale if tuned else 0.0, floor_len, shift=1.0)
    probe = np.array([steps[0] - 1, steps[0], 131_071, context - 1], dtype=np.float64)
    tau_probe = query_temperature(probe, scale if tuned else 0.0, floor_len, shift=1.0)
    l4_nope_idx = [i for i, r in enumerate(l4_rope) if not r]
    # the spacing of the NoPE layers (no_rope_layer_interval when the list follows it)
    nope_every = l4_nope_idx[1] - l4_nope_idx[0] if len(l4_nope_idx) > 1 else len(l4_rope)
    smol_nope_idx = [i for i, r in enumerate(smol_rope) if not r]
    data = Nope(
        l4_rope=np.array(l4_rope, dtype=bool),  # (48,)
        smol_rope=np.array(smol_rope, dtype=bool),  # (36,)
        position=positions,  # (m + 1,)
        tau=tau,  # (m + 1,)
        context=context,
        chunk=chunk,
        floor=floor_len,
        scale=scale,
        tau_end=float(tau_probe[-1]),
    )
    numbers: dict[str, Scalar] = {
        "l4_layers": len(l4_rope),
        "l4_nope": len(l4_nope_idx),
        "l4_rope": len(l4_rope) - len(l4_nope_idx),
        "l4_first_nope": l4_nope_idx[0],
        "l4_nope_every": nope_every,
        "l4_second_nope": l4_nope_idx[1],
        "l4_last_nope": l4_nope_idx[-1],
        "l4_chunk": chunk,
        "l4_floor": int(floor_len),
        "l4_scale": scale,
        "l4_ctx": context,
        "l4_step": int(steps[0]),  # first position with tau > 1
        "l4_before_step": int(probe[0]),
        "l4_tau_step": float(tau_probe[1]),
        "l4_tau_128k": float(tau_probe[2]),
        "l4_pos_128k": int(probe[2]),
        "l4_tau_end": float(tau_probe[-1]),
        "l4_pos_end": int(probe[-1]),
        # the published value (an integer, 4), which Llama4TextConfig refuses (expected bool)
        "l4_tuning": int(l4["attn_temperature_tuning"]),
        "l4_steps": int(steps.size),
        "smol_layers": len(smol_rope),
        "smol_nope": len(smol_nope_idx),
        "smol_rope": len(smol_rope) - len(smol_nope_idx),
        "smol_first_nope": smol_nope_idx[0],
        "smol_theta": float(smol["rope_theta"]),
    }
    return data, numbers


# ---------------------------------------------------------------- panel 4: MLA, DeepSeek-V3


def mla_panel(ds: Mapping[str, Any]) -> tuple[Mla, dict[str, Scalar]]:
    """Panel 4 from DeepSeek-V3's config."""
    nope, rope = int(ds["qk_nope_head_dim"]), int(ds["qk_rope_head_dim"])
    params = _rope_params(ds)
    mpe = int(ds["max_position_embeddings"])
    inv, cos_sin = head_inv_freq(rope, params, max_position_embeddings=mpe)  # (rope/2,)
    scale = mla_softmax_scale(nope, rope, params)
    m = yarn_mscale(float(params["factor"]), float(params["mscale_all_dim"]))
    plain = (nope + rope) ** -0.5
    # DeepseekV3Config.rope_interleave defaults to True: pairs (2k, 2k + 1) of the rope slice
    slots = rope_pair_slots(nope + rope, rope, "interleaved", first=nope)  # (qk_head_dim,)
    wl = _wavelength_of(inv)
    data = Mla(
        slots=slots,  # (192,) pair index, -1 for the content (nope) slots
        nope=nope,
        rope=rope,
        heads=int(ds["num_attention_heads"]),
        kv_rank=int(ds["kv_lora_rank"]),
        cos_sin=float(cos_sin),
        softmax_scale=float(scale),
        plain_scale=float(plain),
        mscale=float(m),
        factor=float(params["factor"]),
    )
    numbers: dict[str, Scalar] = {
        "ds_nope": nope,
        "ds_rope": rope,
        "ds_qk": nope + rope,
        "ds_rope_pairs": rope // 2,
        "ds_heads": int(ds["num_attention_heads"]),
        "ds_kv_rank": int(ds["kv_lora_rank"]),
        "ds_factor": float(params["factor"]),
        "ds_mscale": float(params["mscale"]),
        "ds_mscale_all": float(params["mscale_all_dim"]),
        "ds_orig": int(params["original_max_position_embeddings"]),
        "ds_ctx": mpe,
        "ds_m": float(m),
        "ds_m2": float(m * m),
        "ds_cos_sin": float(cos_sin),
        "ds_scale": float(scale),
        "ds_plain": float(plain),
        "ds_slowest": float(wl.max()),
    }
    return data, numbers


# ---------------------------------------------------------------- panels 5 and 6: MRoPE


def mrope_model(t: Mapping[str, Any], layout: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One MRoPE text config: wavelengths and the axis of each frequency."""
    section = [int(s) for s in t["rope_scaling"]["mrope_section"]]
    head = _head_dim(t)
    inv, _ = head_inv_freq(head, _rope_params(t))  # (head_dim/2,)
    axes = mrope_axes(section, head // 2, layout)  # (head_dim/2,) 0 t, 1 h, 2 w
    wl = _wavelength_of(inv)
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


# ---------------------------------------------------------------- figure page: the nine configs


def models_table() -> Models:
    """One row per (model, RoPE kind): layers of that kind, head dim, theta, turning pairs of the
    head's pairs, slowest turning wavelength, context."""
    rows: list[dict[str, Any]] = []

    def row(
        slug: str,
        kind: str,
        layers: int,
        total: int,
        head: int,
        inv: F64,
        theta: float,
        context: int,
    ) -> None:
        wl = _turning(inv)
        rows.append(
            {
                "model": model_id(slug),
                "name": SHORT_NAMES[slug],
                "kind": kind,
                "layers": layers,
                "total": total,
                "head": head,
                "turning": int(wl.size),
                "pairs": head // 2,
                "theta": theta,
                "slowest": float(wl.max()),
                "context": context,
            }
        )

    phi = published("phi-2")
    h = _head_dim(phi)
    n = int(phi["num_hidden_layers"])
    row(
        "phi-2",
        "partial",
        n,
        n,
        h,
        head_inv_freq(h, _rope_params(phi))[0],
        float(phi["rope_theta"]),
        int(phi["max_position_embeddings"]),
    )
    qn = published("qwen3-next-80b-a3b")
    h, n = _head_dim(qn), int(qn["num_hidden_layers"])
    full = sum(_pattern_layers(n, int(qn["full_attention_interval"])))  # Qwen3NextConfig
    row(
        "qwen3-next-80b-a3b",
        "partial",
        full,
        n,
        h,
        head_inv_freq(h, _rope_params(qn))[0],
        float(qn["rope_theta"]),
        int(qn["max_position_embeddings"]),
    )
    g4 = text_config("gemma-4-26b-a4b")
    n = int(g4["num_hidden_layers"])
    full_l = sum(
        _pattern_layers(n, DEFAULTS["gemma4_text"]["sliding_window_pattern"], last_full=True)
    )
    for kind, params, head, count in (
        ("sliding", g4["rope_parameters"]["sliding_attention"], int(g4["head_dim"]), n - full_l),
        (
            "proportional",
            g4["rope_parameters"]["full_attention"],
            int(g4["global_head_dim"]),
            full_l,
        ),
    ):
        row(
            "gemma-4-26b-a4b",
            kind,
            count,
            n,
            head,
            head_inv_freq(head, params)[0],
            float(params["rope_theta"]),
            int(g4["max_position_embeddings"]),
        )
    two, _ = two_ropes_panel(text_config("gemma-3-27b"))
    g3 = text_config("gemma-3-27b")
    n, h = int(g3["num_hidden_layers"]), _head_dim(g3)
    nf = int(np.sum(two.full))
    ctx = int(two.context)
    row(
        "gemma-3-27b",
        "sliding",
        n - nf,
        n,
        h,
        two.local_inv_freq,
        float(two.local_theta),
        ctx,
    )
    row("gemma-3-27b", "linear", nf, n, h, two.full_inv_freq, float(two.full_theta), ctx)
    l4 = text_config("llama-4-scout")
    h, n = _head_dim(l4), int(l4["num_hidden_layers"])
    row(
        "llama-4-scout",
        "llama3",
        sum(bool(v) for v in l4["no_rope_layers"][:n]),
        n,
        h,
        head_inv_freq(h, _rope_params(l4))[0],
        float(l4["rope_theta"]),
        int(l4["max_position_embeddings"]),
    )
    sm = published("smollm3-3b")
    h, n = _head_dim(sm), int(sm["num_hidden_layers"])
    row(
        "smollm3-3b",
        "default",
        sum(bool(v) for v in sm["no_rope_layers"][:n]),
        n,
        h,
        head_inv_freq(h, _rope_params(sm))[0],
        float(sm["rope_theta"]),
        int(sm["max_position_embeddings"]),
    )
    ds = published("deepseek-v3")
    qk = int(ds["qk_nope_head_dim"]) + int(ds["qk_rope_head_dim"])
    n = int(ds["num_hidden_layers"])
    inv = head_inv_freq(
        int(ds["qk_rope_head_dim"]),
        _rope_params(ds),
        max_position_embeddings=int(ds["max_position_embeddings"]),
    )[0]
    row(
        "deepseek-v3",
        "yarn",
        n,
        n,
        qk,
        inv,
        float(ds["rope_theta"]),
        int(ds["max_position_embeddings"]),
    )
    for slug in ("qwen2.5-vl-7b", "qwen3-vl-8b"):
        t = text_config(slug)
        h, n = _head_dim(t), int(t["num_hidden_layers"])
        row(
            slug,
            "mrope",
            n,
            n,
            h,
            head_inv_freq(h, _rope_params(t))[0],
            float(t["rope_theta"]),
            int(t["max_position_embeddings"]),
        )
    return Models(
        model=[r["model"] for r in rows],
        name=[r["name"] for r in rows],
        kind=[r["kind"] for r in rows],
        layers=np.array([r["layers"] for r in rows], dtype=np.float64),
        total=np.array([r["total"] for r in rows], dtype=np.float64),
        head=np.array([r["head"] for r in rows], dtype=np.float64),
        turning=np.array([r["turning"] for r in rows], dtype=np.float64),
        pairs=np.array([r["pairs"] for r in rows], dtype=np.float64),
        theta=np.array([r["theta"] for r in rows], dtype=np.float64),
        slowest=np.array([r["slowest"] for r in rows], dtype=np.float64),
        context=np.array([r["context"] for r in rows], dtype=np.float64),
    )


def compute(params: PEParams) -> CardContent:
    del params  # card 6 reads published configs only
    numbers: dict[str, Scalar] = Placeholders()
    figures: dict[str, Any] = {}
    merge = int(published("qwen2.5-vl-7b")["vision_config"]["spatial_merge_size"])
    parts: tuple[tuple[str, Callable[[], tuple[Any, dict[str, Scalar]]]], ...] = (
        (
            "c6-partial",
            lambda: partial_panel(
                published("phi-2"), published("qwen3-next-80b-a3b"), text_config("gemma-4-26b-a4b")
            ),
        ),
        ("c6-two-ropes", lambda: two_ropes_panel(text_config("gemma-3-27b"))),
        ("c6-nope", lambda: nope_panel(text_config("llama-4-scout"), published("smollm3-3b"))),
        ("c6-mla", lambda: mla_panel(published("deepseek-v3"))),
        (
            "c6-mrope-axes",
            lambda: mrope_axes_panel(text_config("qwen2.5-vl-7b"), text_config("qwen3-vl-8b")),
        ),
        ("c6-mrope-ids", lambda: mrope_ids_panel(MROPE_SEQUENCE, merge)),
    )
    for fid, part in parts:
        data, nums = part()
        figures[fid] = data
        numbers.update(nums)
    models = models_table()
    figures["c6-models"] = models
    qn = published("qwen3-next-80b-a3b")
    numbers["qn_layers"] = int(qn["num_hidden_layers"])
    # Qwen3NextConfig.layer_types: full attention (with RoPE) every full_attention_interval-th
    numbers["qn_layers_rope"] = sum(
        _pattern_layers(int(qn["num_hidden_layers"]), int(qn["full_attention_interval"]))
    )
    numbers["n_configs"] = len(set(models.model))
    assert all(not isinstance(v, float) or math.isfinite(v) for v in numbers.values())
    return CardContent(card=6, figures=figures, numbers=numbers)
