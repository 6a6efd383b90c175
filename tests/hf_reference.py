"""What transformers 5.23.0 itself does with a config.json, layer by layer (the reference for the
inspect tests).

``hf_reading(config)`` builds the config with ``AutoConfig.for_model``, the text model on the
``meta`` device (no weights), and transformers' own rotary module on the CPU. For every decoder
layer it calls the attention module's ``forward`` on meta tensors with the modeling module's
``apply_rotary_*`` functions replaced by recorders and ``eager_attention_forward`` by a probe:
so whether a layer rotates q and k, the ``sliding_window`` and the ``scaling`` it hands to the
attention kernel all come from transformers' code, not from a re-reading of it. Where the model
picks a mask by ``layer_types[i]``, the window is what that mask reads (``config.sliding_window``,
``config.attention_chunk_size`` after the config class's own ``__post_init__``). MRoPE axes come
from driving the rotary module with one position row (t, h or w) at a time.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import transformers as T

T.logging.set_verbosity_error()


@dataclass
class HFLayer:
    attention: str  # full / sliding / chunked / linear
    window: int | None
    rope: bool
    scaling: float | None
    kind: str | None  # "rope" or the layer type whose frequencies it gets


@dataclass
class HFReading:
    model_type: str
    layers: list[HFLayer]
    inv_freq: dict[str, np.ndarray]  # kind -> float32 buffer as float64
    attention_factor: dict[str, float]
    mrope_axes: dict[str, list[str]] = field(default_factory=dict)
    config: Any = None


def _attention_module(layer: Any) -> Any:
    for name in ("self_attn", "attention", "self_attention", "attn"):
        mod = getattr(layer, name, None)
        if mod is not None:
            return mod
    return None


def _recorder(fn: Callable[..., Any], calls: list[str]) -> Callable[..., Any]:
    params = list(inspect.signature(fn).parameters)
    pair = len(params) > 1 and params[1] in ("k", "xk", "key", "key_states")

    def record(*args: Any, **kw: Any) -> Any:
        calls.append(fn.__name__)
        return (args[0], args[1]) if pair else args[0]

    return record


def _call_attention(attn: Any, hidden: int, seq: int, lt: str | None) -> None:
    h = torch.empty(1, seq, hidden, device="meta")
    pe: Any = (torch.empty(1, seq, 8, device="meta"), torch.empty(1, seq, 8, device="meta"))
    if (
        type(attn).__module__.endswith("llama4.modeling_llama4")
        or "DeepseekV2" in type(attn).__name__
    ):
        pe = torch.empty(1, seq, 4, dtype=torch.complex64, device="meta")
    values = {
        "hidden_states": h,
        "position_embeddings": pe,
        "attention_mask": torch.zeros(1, 1, seq, seq, device="meta"),
        "position_ids": torch.zeros(1, seq, dtype=torch.long, device="meta"),
        "alibi": None,
        "shared_kv_states": {},
        "layer_past": None,
        "past_key_values": None,
    }
    sig = inspect.signature(attn.forward).parameters
    kwargs = {k: v for k, v in values.items() if k in sig}
    attn(**kwargs)


def hf_reading(config: Mapping[str, Any]) -> HFReading:
    cfg_json = dict(config)
    model_type = cfg_json.pop("model_type")
    cfg = T.AutoConfig.for_model(model_type, **cfg_json)
    text = cfg.get_text_config()
    text._attn_implementation = "eager"
    with torch.device("meta"):
        model = T.AutoModel.from_config(text)
    mod = importlib.import_module(type(model).__module__)
    rotary = type(model.rotary_emb)(config=text)  # on the CPU: real frequencies
    layer_types = getattr(text, "layer_types", None)
    per_type = hasattr(rotary, "layer_types") and not hasattr(rotary, "inv_freq")
    inv: dict[str, np.ndarray] = {}
    fac: dict[str, float] = {}
    if per_type:
        for lt in sorted(set(layer_types)):
            inv[lt] = getattr(rotary, f"{lt}_inv_freq").double().numpy()
            fac[lt] = float(getattr(rotary, f"{lt}_attention_scaling"))
    else:
        inv["rope"] = rotary.inv_freq.double().numpy()
        fac["rope"] = float(rotary.attention_scaling)
    axes: dict[str, list[str]] = {}
    if hasattr(rotary, "mrope_section"):
        n = inv["rope"].size
        got = ["?"] * n
        for a, letter in enumerate("thw"):
            pos = torch.zeros(3, 1, 1, dtype=torch.long)
            pos[a] = 1
            _, sin = rotary(torch.zeros(1), pos)
            for j in np.flatnonzero(sin[0, 0, :n].numpy() != 0):
                got[j] = letter
        axes["rope"] = got

    calls: list[str] = []
    probe: dict[str, Any] = {}
    originals = {}
    for name in dir(mod):
        if name.startswith("apply_rotary") and "vision" not in name:
            originals[name] = getattr(mod, name)
            setattr(mod, name, _recorder(originals[name], calls))

    def eager(module: Any, query: torch.Tensor, key: Any, value: Any, mask: Any, **kw: Any) -> Any:
        probe.update(kw)
        b, heads, seq, _ = query.shape
        return torch.empty(b, seq, heads, value.shape[-1], device="meta"), None

    if hasattr(mod, "eager_attention_forward"):  # Falcon has its own attention code
        originals["eager_attention_forward"] = mod.eager_attention_forward
        mod.eager_attention_forward = eager
    layers: list[HFLayer] = []
    try:
        decoder = getattr(model, "layers", None) or model.h  # Falcon: h
        for i, layer in enumerate(decoder):
            attn = _attention_module(layer)
            lt = layer_types[i] if layer_types is not None else None
            if attn is None or lt == "linear_attention":
                layers.append(HFLayer("linear", None, False, None, None))
                continue
            calls.clear()
            probe.clear()
            _call_attention(attn, text.hidden_size, 4, lt)
            rope = bool(calls)
            if lt is not None:
                # the model picks the mask by layer_types[i]; the sliding and chunked masks read
                # config.sliding_window / config.attention_chunk_size (masking_utils)
                window = {
                    "sliding_attention": getattr(text, "sliding_window", None),
                    "chunked_attention": getattr(text, "attention_chunk_size", None),
                }.get(lt)
                kind = {"sliding_attention": "sliding", "chunked_attention": "chunked"}.get(lt)
                kind = kind if window else "full"
                window = window or None
            else:  # one mask for every layer: the window the attention module is handed
                window = probe.get("sliding_window") or None
                kind = "sliding" if window else "full"
            which = (lt if per_type else "rope") if rope else None
            # Falcon computes attention itself, with inv_norm_factor
            scaling = probe.get("scaling", getattr(attn, "inv_norm_factor", None))
            layers.append(HFLayer(kind, window, rope, scaling, which))
    finally:
        for name, fn in originals.items():
            setattr(mod, name, fn)
    return HFReading(model_type, layers, inv, fac, axes, text)
