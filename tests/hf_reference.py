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

import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import transformers as T

from posecards.garbage import no_automatic_collection
from posecards.torch_threads import one_torch_thread

T.logging.set_verbosity_error()


def _one_thread(reference: Callable[..., Any]) -> Callable[..., Any]:
    """The reference with torch on one thread (posecards.torch_threads: small tensors, where a
    second thread spins waiting for work); its numbers are elementwise or integer, the same on
    any count. Without automatic garbage collection, as the probe (no_automatic_collection: the
    model's objects made the collector scan the whole process again and again)."""

    @functools.wraps(reference)
    def run(*args: Any, **kwargs: Any) -> Any:
        with one_torch_thread(), no_automatic_collection():
            return reference(*args, **kwargs)

    return run


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
    # RecurrentGemma: the temporal block is an attention or a recurrent block, by layer type
    mod = getattr(layer, "temporal_block", None)
    if mod is not None and "Attention" in type(mod).__name__:
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


def text_model_class(text: Any) -> Any:
    """AutoModel's class for a text config or, where AutoModel lists none (CLIP's text config,
    Qwen2.5-Omni's thinker), the class of its modeling module that takes this config class."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        found_cls = MODEL_MAPPING[type(text)]
        return found_cls[0] if isinstance(found_cls, tuple | list) else found_cls
    except (KeyError, ValueError):
        pass
    mod = importlib.import_module(type(text).__module__.replace(".configuration_", ".modeling_"))
    found = sorted(
        (
            obj
            for name, obj in vars(mod).items()
            if isinstance(obj, type)
            and issubclass(obj, T.PreTrainedModel)
            and getattr(obj, "config_class", None) is type(text)
            and name.endswith("Model")
            and "For" not in name
        ),
        key=lambda c: (not c.__name__.endswith("TextModel"), c.__name__),
    )
    if not found:
        raise ValueError(f"no model class takes {type(text).__name__}")
    return found[0]


@_one_thread
def hf_reading(config: Mapping[str, Any]) -> HFReading:
    cfg_json = dict(config)
    model_type = cfg_json.pop("model_type")
    cfg = T.AutoConfig.for_model(model_type, **cfg_json)
    text = cfg.get_text_config()
    text._attn_implementation = "eager"
    from transformers.initialization import no_init_weights

    # no initialisation of the meta parameters (torch's init on meta tensors is Python, and the
    # values are not there); the frequencies come from the rotary module built again below
    with torch.device("meta"), no_init_weights():
        model = text_model_class(text)(text)
    mod = importlib.import_module(type(model).__module__)
    # the model's rotary module (model.rotary_emb, or wherever one holds an inv_freq buffer),
    # built again on the CPU: real frequencies
    held = getattr(model, "rotary_emb", None) or next(
        (
            m
            for m in model.modules()
            if any(n.endswith("inv_freq") for n, _ in m.named_buffers(recurse=False))
        ),
        None,
    )
    if held is None:
        raise AttributeError(f"{type(model).__name__} holds no rotary module")
    rotary = type(held)(config=text)
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

    def eager(
        module: Any, query: torch.Tensor, key: Any, value: Any, mask: Any = None, **kw: Any
    ) -> Any:
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
                # no self-attention module: linear attention where layer_types says so, else no
                # attention over the text (Mamba layers, Mllama's cross-attention layers)
                kind = "linear" if lt == "linear_attention" else "none"
                layers.append(HFLayer(kind, None, False, None, None))
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


@dataclass
class HFTable:
    name: str  # the module's name in the text model
    rows: int
    width: int
    offset: int  # the row read for position 0


class _Looked(Exception):
    pass


@_one_thread
def hf_tables(config: Mapping[str, Any]) -> list[HFTable]:
    """The learned position tables of a text model without RoPE, found by what they do: the
    model is built on the CPU (transformers' ``no_init_weights``: buffers computed as its
    ``__init__`` computes them, parameters left uninitialised), and every trainable
    ``nn.Embedding`` is looked up once through the nearest module that takes ``input_ids``
    (six equal, non-special token ids); a table whose rows for the six tokens are consecutive
    is a position table, its first row the offset (a token table reads the token id six times,
    a token-type table one row). Each pass stops at the table's lookup or at the first
    attention's softmax (``softmax``, ``scaled_dot_product_attention``): input tables are looked
    up before the first layer attends, and a table the pass does not reach is not listed, so a
    position table looked up later would make the zoo test fail, never pass. A table its owner
    never looks up (BART's ``shared``, untied from ``embed_tokens`` without weights) so costs one
    layer, not the whole model run on the CPU."""
    from transformers.initialization import no_init_weights

    cfg_json = dict(config)
    model_type = cfg_json.pop("model_type")
    cfg = T.AutoConfig.for_model(model_type, **cfg_json)
    text = cfg.get_text_config()
    with torch.device("cpu"), no_init_weights():
        model = text_model_class(text)(text)
    model.eval()
    special = {
        getattr(text, k, None)
        for k in ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id")
    }
    token = next(t for t in range(3, 64) if t not in special)
    real = torch.nn.functional.embedding
    F = torch.nn.functional
    attends = {"softmax": (F, torch), "scaled_dot_product_attention": (F,)}
    real_attends = {(mod, n): getattr(mod, n) for n, mods in attends.items() for mod in mods}

    def stop(*a: Any, **kw: Any) -> Any:
        raise _Looked

    out = []
    for name, m in model.named_modules():
        if not isinstance(m, torch.nn.Embedding) or not m.weight.requires_grad:
            continue
        parts = name.split(".")
        owner = None
        for k in range(len(parts) - 1, -1, -1):
            path = ".".join(parts[:k])
            mod = model.get_submodule(path) if path else model
            if "input_ids" in inspect.signature(mod.forward).parameters:
                owner = mod
                break
        if owner is None:
            continue
        seen: list[torch.Tensor] = []

        def look(
            ids: Any, weight: Any, *a: Any, __w: Any = m.weight, __s: Any = seen, **kw: Any
        ) -> Any:
            if weight is __w:
                __s.append(ids)
                raise _Looked
            return real(ids, weight, *a, **kw)

        sig = inspect.signature(owner.forward).parameters
        ids = torch.full((1, 6), token, dtype=torch.long)
        kw: dict[str, Any] = {"input_ids": ids}
        if "decoder_input_ids" in sig:
            kw["decoder_input_ids"] = ids
        torch.nn.functional.embedding = look
        for mod, n in real_attends:
            setattr(mod, n, stop)
        try:
            with torch.no_grad():
                owner(**kw)
        except _Looked:
            pass
        except Exception:  # noqa: BLE001 -- not reached from token ids alone (bbox, pixels)
            continue
        finally:
            torch.nn.functional.embedding = real
            for (mod, n), fn in real_attends.items():
                setattr(mod, n, fn)
        if not seen:
            continue
        rows = seen[0].reshape(-1, seen[0].shape[-1])[0].tolist()
        if rows == list(range(rows[0], rows[0] + 6)):
            out.append(HFTable(name, *(int(s) for s in m.weight.shape), int(rows[0])))
    return out


@dataclass
class HFBias:
    name: str  # the attention module holding the table
    heads: int
    buckets: np.ndarray  # (300, 300): the bucket of every (query, key) pair


@_one_thread
def hf_biases(config: Mapping[str, Any]) -> list[HFBias]:
    """T5-style relative position biases of a text model: the model built on the CPU
    (``no_init_weights``), every module holding a ``relative_attention_bias`` table asked for
    ``compute_bias(300, 300)``, and the rows its table is looked up at recorded: transformers'
    own bucket of every (query, key) pair."""
    from transformers.initialization import no_init_weights

    cfg_json = dict(config)
    model_type = cfg_json.pop("model_type")
    cfg = T.AutoConfig.for_model(model_type, **cfg_json)
    text = cfg.get_text_config()
    with torch.device("cpu"), no_init_weights():
        model = text_model_class(text)(text)
    real = torch.nn.functional.embedding
    out = []
    for name, m in model.named_modules():
        table = getattr(m, "relative_attention_bias", None)
        if not isinstance(table, torch.nn.Embedding):
            continue
        seen: list[torch.Tensor] = []

        def look(
            ids: Any, weight: Any, *a: Any, __w: Any = table.weight, __s: Any = seen, **kw: Any
        ) -> Any:
            if weight is __w:
                __s.append(ids)
            return real(ids, weight, *a, **kw)

        torch.nn.functional.embedding = look
        try:
            with torch.no_grad():
                m.compute_bias(300, 300)
        finally:
            torch.nn.functional.embedding = real
        out.append(HFBias(name, int(table.weight.shape[1]), seen[0].numpy().copy()))
    return out


@dataclass
class HFAlibi:
    slopes: np.ndarray  # (heads,) what each head's bias grows by per token of distance
    layers: int
    scaling: float  # what q·k is multiplied by in the first layer


@_one_thread
def hf_alibi(config: Mapping[str, Any]) -> HFAlibi:
    """BLOOM and MPT: the ALiBi tensor as the model builds it in its forward (BLOOM's
    ``build_alibi_tensor`` over an all-ones mask; MPT's ``build_mpt_alibi_tensor`` with the
    arguments its forward passes), its slope per head read at distance 1, and the scale each
    attention module multiplies q·k by (the model built on the meta device)."""
    cfg_json = dict(config)
    model_type = cfg_json.pop("model_type")
    cfg = T.AutoConfig.for_model(model_type, **cfg_json)
    with torch.device("meta"):
        model = text_model_class(cfg)(cfg)
    if model_type == "bloom":
        heads = cfg.n_head
        ones = torch.ones(1, 4, dtype=torch.long)
        alibi = model.build_alibi_tensor(ones, heads, torch.float32).reshape(heads, 4)
        slopes = (alibi[:, 1] - alibi[:, 0]).double().numpy()
        layers = list(model.h)
        scaling = float(layers[0].self_attention.inv_norm_factor)
    elif model_type == "mpt":
        heads = cfg.n_heads
        alibi = model.build_mpt_alibi_tensor(heads, 4, device="cpu").reshape(heads, 4)
        slopes = (alibi[:, 1] - alibi[:, 0]).double().numpy()
        layers = list(model.blocks)
        scaling = float(layers[0].attn.softmax_scale)
    else:
        raise ValueError(f"no ALiBi reference for {model_type}")
    return HFAlibi(slopes, len(layers), scaling)
