"""Tiny transformers models for the inspect tests (random weights, built offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
import transformers as T

T.logging.set_verbosity_error()


def gpt2_model(seed: int = 0, **kw: Any) -> T.GPT2Model:
    torch.manual_seed(seed)
    cfg = dict(n_positions=64, n_embd=32, n_layer=1, n_head=2, vocab_size=50)
    return T.GPT2Model(T.GPT2Config(**{**cfg, **kw}))


def save_bin(model: Any, folder: Path, shards: int = 1) -> None:
    """What older save_pretrained wrote: config.json + pytorch_model.bin (or shards + index)."""
    folder.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(folder)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    if shards == 1:
        torch.save(state, folder / "pytorch_model.bin")
        return
    names = sorted(state)
    weight_map = {}
    for i in range(shards):
        part = names[i::shards]
        fname = f"pytorch_model-{i + 1:05d}-of-{shards:05d}.bin"
        torch.save({k: state[k] for k in part}, folder / fname)
        weight_map.update(dict.fromkeys(part, fname))
    (folder / "pytorch_model.bin.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": weight_map})
    )


# Llama 3.1's published RoPE settings (config.json "rope_scaling"), as rope_parameters
LLAMA3_ROPE: dict[str, Any] = {
    "rope_type": "llama3",
    "rope_theta": 500000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
