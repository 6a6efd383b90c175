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
Card 6 does not depend on ``PEParams``. Panels 5 and 6 (MRoPE) live in ``card6_mrope``, the table in
``card6_models``, what every panel reads from a config (defaults, head size, wavelengths) in
``card6_reading``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders, Scalar
from posecards.content.card6_models import models_table
from posecards.content.card6_mrope import MROPE_SEQUENCE, mrope_axes_panel, mrope_ids_panel
from posecards.content.card6_reading import (
    DEFAULTS,
    head_dim_of,
    pattern_layers,
    rope_params_of,
    turning_wavelengths,
    wavelength_of,
)
from posecards.content.configs import published, text_config
from posecards.content.figdata.card6 import (
    Mla,
    Nope,
    Partial,
    TwoRopes,
)
from posecards.encodings.mla import mla_softmax_scale
from posecards.encodings.query_temperature import query_temperature, query_temperature_steps
from posecards.encodings.rope import rope_pair_slots
from posecards.encodings.rope_partial import head_inv_freq, proportional_pairs, rotary_dim
from posecards.encodings.rope_scaling import yarn_mscale

PANEL_IDS = (
    "c6-partial",
    "c6-two-ropes",
    "c6-nope",
    "c6-mla",
    "c6-mrope-axes",
    "c6-mrope-ids",
)
EXTRA_IDS = ("c6-models",)  # figure page only

# The keys panel 2 reads from Gemma 3's text config that may fall back to the class's defaults.
GEMMA3_READ_DEFAULTS = (
    "rope_theta",
    "rope_local_base_freq",
    "sliding_window_pattern",
    "max_position_embeddings",
)

# ---------------------------------------------------------------- panel 1: part of the head


def _partial_heads(
    phi: Mapping[str, Any], qn: Mapping[str, Any], g4: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Panel 1's three heads: key, head_dim, p, theta, rotated slots, inv_freq, context."""
    rows: list[dict[str, Any]] = []
    for key, cfg, head in (
        ("phi", phi, head_dim_of(phi)),  # PhiConfig: hidden_size // num_attention_heads
        ("qn", qn, head_dim_of(qn)),
    ):
        params = rope_params_of(cfg)
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
    return rows


def partial_panel(
    phi: Mapping[str, Any], qn: Mapping[str, Any], g4: Mapping[str, Any]
) -> tuple[Partial, dict[str, Scalar]]:
    """Panel 1 from Phi-2's and Qwen3-Next's configs and Gemma 4's text config."""
    rows = _partial_heads(phi, qn, g4)
    full = g4["rope_parameters"]["full_attention"]
    g4_head = int(g4["global_head_dim"])  # Gemma4TextConfig: full layers use global_head_dim
    g4_inv = rows[-1]["inv_freq"]
    numbers: dict[str, Scalar] = {}
    data: dict[str, Any] = {"models": [r["key"] for r in rows]}
    for r in rows:
        k, inv = r["key"], r["inv_freq"]
        pairs = r["head_dim"] // 2
        wl = wavelength_of(inv)  # (rotary pairs,) partial; (head_dim/2,) proportional
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
    numbers["g4_as_partial"] = float(turning_wavelengths(wrong).max())
    numbers["g4_zero"] = int(np.sum(g4_inv == 0.0))
    # Gemma 4's sliding-window layers: a default RoPE over head_dim, their own theta
    sliding = g4["rope_parameters"]["sliding_attention"]
    g4_sliding, _ = head_inv_freq(int(g4["head_dim"]), sliding)
    numbers["g4_sliding_slowest"] = float(turning_wavelengths(g4_sliding).max())
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
    full = pattern_layers(n, every)  # Gemma3TextConfig.layer_types
    head = head_dim_of(t)
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
    wl_local, wl_glob = wavelength_of(local_inv), wavelength_of(glob_inv)
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
    params = rope_params_of(ds)
    mpe = int(ds["max_position_embeddings"])
    inv, cos_sin = head_inv_freq(rope, params, max_position_embeddings=mpe)  # (rope/2,)
    scale = mla_softmax_scale(nope, rope, params)
    m = yarn_mscale(float(params["factor"]), float(params["mscale_all_dim"]))
    plain = (nope + rope) ** -0.5
    # DeepseekV3Config.rope_interleave defaults to True: pairs (2k, 2k + 1) of the rope slice
    slots = rope_pair_slots(nope + rope, rope, "interleaved", first=nope)  # (qk_head_dim,)
    wl = wavelength_of(inv)
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


EX_L4_POSITION = 1_000_000  # the exercise's position for Llama 4 Scout's temperature


def _exercises(numbers: dict[str, Scalar]) -> None:
    """The page's exercises: DeepSeek-V3's cache per token and layer against full keys and
    values, and Llama 4 Scout's NoPE-layer temperature at one position."""
    ds = published("deepseek-v3")
    heads, rank = int(ds["num_attention_heads"]), int(ds["kv_lora_rank"])
    rope, nope, v = (int(ds[k]) for k in ("qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"))
    mla = rank + rope  # the compressed c_KV and the one shared rotated key
    full = heads * (nope + rope + v)  # every head's key and value
    l4 = text_config("llama-4-scout")
    floor, scale = int(l4["floor_scale"]), float(l4["attn_scale"])
    # Llama4TextAttention: tau(p) = 1 + attn_scale * ln(floor((p + 1) / floor_scale) + 1)
    tau = float(query_temperature([EX_L4_POSITION], scale, floor, shift=1.0)[0])
    numbers.update(
        drill_ds_v=v,
        drill_ds_mla=mla,
        drill_ds_full=full,
        drill_ds_ratio=full / mla,
        drill_l4_pos=EX_L4_POSITION,
        drill_l4_steps=(EX_L4_POSITION + 1) // floor,  # floor((p + 1) / floor_scale)
        drill_l4_tau=tau,
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
    models = models_table(figures["c6-two-ropes"])
    figures["c6-models"] = models
    qn = published("qwen3-next-80b-a3b")
    numbers["qn_layers"] = int(qn["num_hidden_layers"])
    # Qwen3NextConfig.layer_types: full attention (with RoPE) every full_attention_interval-th
    numbers["qn_layers_rope"] = sum(
        pattern_layers(int(qn["num_hidden_layers"]), int(qn["full_attention_interval"]))
    )
    _exercises(numbers)
    numbers["n_configs"] = len(set(models.model))
    assert all(not isinstance(v, float) or math.isfinite(v) for v in numbers.values())
    return CardContent(card=6, figures=figures, numbers=numbers)
