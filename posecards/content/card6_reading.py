"""How card 6 reads a published config: the defaults of transformers' config classes for keys a
file leaves out, ``rope_parameters`` from the flat keys, the head dimension, layer patterns, and
the wavelength of each frequency."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


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


def wavelength_of(inv_freq: npt.ArrayLike) -> F64:
    """``2 pi / theta_k`` per frequency, ``(n,)``; a zero frequency never turns: ``inf``."""
    theta = np.asarray(inv_freq, dtype=np.float64)  # (n,)
    safe = np.where(theta > 0, theta, 1.0)
    return np.where(theta > 0, 2.0 * np.pi / safe, np.inf)  # (n,)


def turning_wavelengths(inv_freq: F64) -> F64:
    """Wavelengths of the frequencies that turn (drops the zeros of proportional RoPE)."""
    wl = wavelength_of(inv_freq)
    return wl[np.isfinite(wl)]


def rope_params_of(text: Mapping[str, Any]) -> dict[str, Any]:
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


def head_dim_of(text: Mapping[str, Any]) -> int:
    """``head_dim``, else ``hidden_size // num_attention_heads`` (every config class here)."""
    if text.get("head_dim"):
        return int(text["head_dim"])
    return int(text["hidden_size"]) // int(text["num_attention_heads"])


def pattern_layers(n: int, every: int, last_full: bool = False) -> list[bool]:
    """``True`` where layer ``i`` is the odd one out of a repeating pattern: ``(i + 1) % every
    == 0`` (Gemma 3/4's full layers, Llama 4's and SmolLM3's NoPE layers); Gemma 4 forces its last
    layer to be full."""
    out = [(i + 1) % every == 0 for i in range(n)]
    if last_full and out:
        out[-1] = True
    return out
