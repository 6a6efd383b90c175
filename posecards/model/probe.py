"""What the installed transformers itself does with a config, read from its own objects.

``probe(config)`` loads the config with the installed transformers (``AutoConfig.for_model``:
local data only, never remote code), finds the text model's config wherever it is nested, builds
that model with every parameter on the ``meta`` device (no weights; a module whose ``__init__``
computes rotary frequencies runs on the CPU, with the arguments transformers gives it), and runs
the model's own ``forward`` once on meta tensors with recorders in place:

- each rotary module's ``forward`` runs on the CPU (its real frequencies), hands meta tensors on,
  and remembers which cos/sin tensors it made for which key (``rope`` or the layer type);
- every ``apply_rotary*`` function of the modeling modules is replaced by a recorder: the decoder
  layer it is called in rotates q and k, with the cos/sin of that key; its arguments are kept,
  and the real function is applied afterwards on the CPU (cos 0, sin 1: a quarter turn) to a
  random q to measure which slot turns with which (the pair layout, measured not named);
- the attention kernel (``eager_attention_forward``) records the softmax scale and the mask it
  is handed; the mask functions (``create_causal_mask``, ``create_sliding_window_causal_mask``,
  ``create_chunked_causal_mask``) tag the masks they return with the window they read.

MRoPE axes come from driving the rotary module with one position row at a time. Nothing here
guesses: whatever transformers cannot build or run, or this probe cannot follow, is a
``ProbeError`` with one line that says so.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# the keys under which composite configs nest the model that reads text, in the order tried
_NESTED = (
    "text_config",
    "language_config",
    "llm_config",
    "thinker_config",
    "decoder",
    "decoder_config",
    "vlm_config",
    "generator",
    "text_encoder",
)
_SEQ = 6  # tokens of the probing forward pass


class ProbeError(Exception):
    """transformers cannot build or run this config, or the probe cannot follow it (one line)."""


@dataclass(frozen=True)
class ProbedRope:
    key: str  # "rope" (one set of frequencies) or the layer type
    inv_freq: np.ndarray  # (rotated pairs,) the module's float32 buffer, as float64
    attention_factor: float  # what cos and sin are multiplied by
    parameters: Mapping[str, Any]  # the config's standardized rope_parameters for this key
    head_slots: int  # slots of one q head as the attention kernel gets it
    pairs: tuple[int, ...]  # (head_slots,) partner slot of each slot, -1 where nothing turns
    layout: str  # "half", "interleaved" or "other"
    axes: tuple[str, ...] | None = None  # MRoPE: the axis (t, h, w, ...) of every pair
    head_seen: bool = (
        True  # the head size is the kernel's (False: attention in the layer's own code)
    )


@dataclass(frozen=True)
class ProbedLayer:
    index: int
    attention: bool  # an attention kernel was called in this layer
    rope: str | None  # key of the frequencies it rotates q and k with; None: no rotation
    mask: str | None  # "full", "sliding", "chunked", or None (no mask function tagged it)
    window: int | None
    scaling: float | None  # the softmax scale the attention kernel was handed
    head_slots: int | None = None  # the last dimension of the q the kernel was handed
    prescale: str | None = None  # what q is multiplied by before the kernel, in the module's code


@dataclass(frozen=True)
class ProbeReading:
    transformers_version: str
    model_type: str  # the text model's
    text_path: tuple[str, ...]  # the keys leading to the text config ("text_config", ...)
    model_class: str
    layers: tuple[ProbedLayer, ...]
    rope: Mapping[str, ProbedRope]
    learned: tuple[str, ...] = ()  # position tables added to the input (module name: rows x width)
    relative: tuple[str, ...] = ()  # relative-position modules inside attention (bias tables, ...)
    absolute: tuple[str, ...] = ()  # other names outside the layers that speak of position
    config: Any = field(repr=False, default=None)  # the text config object


def transformers_available() -> bool:
    """Whether transformers can be imported (POSECARDS_NO_TRANSFORMERS=1: read by the table)."""
    import os

    if os.environ.get("POSECARDS_NO_TRANSFORMERS") == "1":
        return False
    try:
        importlib.import_module("transformers")
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------- finding the text model


def _model_class(text: Any) -> type | None:
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    found: Any
    try:
        found = MODEL_MAPPING[type(text)]
    except (KeyError, ValueError):
        found = None
    if isinstance(found, tuple | list):
        found = found[0]
    if found is not None:
        return found  # type: ignore[no-any-return]
    # a text model that AutoModel does not list (Qwen2.5-Omni's thinker): the class of its module
    # that takes this config class
    module_name = type(text).__module__.replace(".configuration_", ".modeling_")
    try:
        mod = importlib.import_module(module_name)
    except ImportError:
        return None
    from transformers import PreTrainedModel

    found = [
        obj
        for name, obj in vars(mod).items()
        if isinstance(obj, type)
        and issubclass(obj, PreTrainedModel)
        and getattr(obj, "config_class", None) is type(text)
        and name.endswith("Model")
        and "For" not in name
    ]
    found.sort(key=lambda c: (not c.__name__.endswith("TextModel"), c.__name__))
    return found[0] if found else None


def _text_config(cfg: Any) -> tuple[Any, tuple[str, ...]]:
    """The config of the model that reads text: the outer config, or one nested under a key."""
    from transformers import PreTrainedConfig

    path: tuple[str, ...] = ()
    node = cfg
    for _ in range(4):
        nested = [k for k in _NESTED if isinstance(getattr(node, k, None), PreTrainedConfig)]
        if not nested:
            break
        node, path = getattr(node, nested[0]), (*path, nested[0])
    return node, path


@contextlib.contextmanager
def _rotary_on_cpu(modules: list[Any]) -> Iterator[None]:
    """Every class of ``modules`` whose ``__init__`` computes ``inv_freq`` builds on the CPU."""
    import torch

    patched: list[tuple[type, Any]] = []
    for mod in modules:
        for obj in list(vars(mod).values()):
            if not isinstance(obj, type) or not issubclass(obj, torch.nn.Module):
                continue
            if obj.__module__ != mod.__name__ or "__init__" not in vars(obj):
                continue
            try:
                src = inspect.getsource(obj.__init__)
            except (OSError, TypeError):
                continue
            if "inv_freq" not in src:
                continue
            init = obj.__init__

            def cpu_init(self: Any, *a: Any, __init: Any = init, **kw: Any) -> None:
                with torch.device("cpu"):
                    __init(self, *a, **kw)

            patched.append((obj, init))
            obj.__init__ = cpu_init  # type: ignore[method-assign]
    try:
        yield
    finally:
        for obj, init in patched:
            obj.__init__ = init  # type: ignore[misc]


def _modeling_modules(cls: type) -> list[Any]:
    import sys

    names = {c.__module__ for c in cls.__mro__ if c.__module__.startswith("transformers.models.")}
    return [sys.modules[n] for n in sorted(names)]


# ---------------------------------------------------------------- the probing pass


def _pair_map(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[int, ...]:
    """Which slot of q turns with which: the real rotary function applied on the CPU to a q whose
    slot i holds i + 1, once with no turn (cos 1, sin 0: where each slot lands, since some
    functions also reorder slots) and once with a quarter turn (cos 0, sin 1: a slot that turns
    takes its partner's value, with a sign; one that does not keeps its own)."""
    import torch

    params = list(inspect.signature(fn).parameters)
    bound = dict(zip(params, args, strict=False))
    bound.update(kwargs)
    q_name = params[0]
    q_meta = bound[q_name]
    n = q_meta.shape[-1]
    q = (torch.arange(n, dtype=torch.float64) + 1).expand(q_meta.shape).to(q_meta.dtype)

    def fill(x: Any, c: float, s: float) -> Any:
        if not isinstance(x, torch.Tensor):
            return x
        if x.is_complex():
            return torch.full(x.shape, complex(c, s), dtype=x.dtype)
        return torch.full(x.shape, c, dtype=x.dtype)

    def run(c: float, s: float) -> Any:
        call: dict[str, Any] = {}
        for name, value in bound.items():
            if name == q_name:
                call[name] = q.contiguous()
            elif name == "cos":
                call[name] = fill(value, c, s)
            elif name == "sin":
                call[name] = fill(value, s, c)
            elif name in ("freqs_cis", "freqs", "position_embeddings", "rotary_pos_emb", "pos_emb"):
                if isinstance(value, tuple):
                    call[name] = (fill(value[0], c, s), fill(value[1], s, c))
                else:
                    call[name] = fill(value, c, s)
            elif isinstance(value, torch.Tensor):
                call[name] = torch.ones(value.shape, dtype=value.dtype)
            else:
                call[name] = value
        out = fn(**call)
        q_out = out[0] if isinstance(out, tuple | list) else out
        return q_out.reshape(-1, q_out.shape[-1]).double()[0].abs().round().long().tolist()

    lands = run(1.0, 0.0)  # output slot i holds input slot lands[i] - 1
    turned = run(0.0, 1.0)  # output slot i holds (±) input slot turned[i] - 1
    if sorted(lands) != list(range(1, n + 1)):
        raise ProbeError(f"the pair layout of {fn.__name__} could not be measured")
    pairs = [-1] * n
    for i in range(n):
        src, partner = lands[i] - 1, turned[i] - 1
        if not 0 <= partner < n:
            raise ProbeError(f"the pair layout of {fn.__name__} could not be measured")
        pairs[src] = -1 if partner == src else partner
    if any(p >= 0 and pairs[p] != i for i, p in enumerate(pairs)):
        raise ProbeError(f"the pair layout of {fn.__name__} could not be measured")
    return tuple(pairs)


def _layout(pairs: tuple[int, ...]) -> str:
    turning = [i for i, p in enumerate(pairs) if p >= 0]
    if not turning:
        return "other"
    lo, hi = turning[0], turning[-1] + 1
    if turning != list(range(lo, hi)):
        return "other"
    n = hi - lo
    if all(pairs[lo + k] == lo + (k + n // 2) % n for k in range(n)):
        return "half"
    if all(pairs[lo + k] == lo + (k ^ 1) for k in range(n)):
        return "interleaved"
    return "other"


@dataclass
class _Recorder:
    layer: int | None = None
    calls: dict[int, list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]] = field(
        default_factory=dict
    )
    kernels: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    made: dict[int, str] = field(default_factory=dict)  # id(cos/sin tensor) -> rope key
    masks: dict[int, tuple[str, int | None]] = field(default_factory=dict)
    rotary_calls: list[tuple[Any, str, tuple[int, ...]]] = field(default_factory=list)


def _to_meta(x: Any) -> Any:
    import torch

    if isinstance(x, torch.Tensor):
        return x.to("meta")
    if isinstance(x, tuple | list):
        return type(x)(_to_meta(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_meta(v) for k, v in x.items()}
    return x


def _to_cpu(x: Any) -> Any:
    import torch

    if isinstance(x, torch.Tensor) and x.device.type == "meta":
        if x.dtype in (torch.int64, torch.int32):
            # position ids: 0, 1, 2, ... along the last axis
            return torch.arange(x.shape[-1], dtype=x.dtype).expand(x.shape).contiguous()
        return torch.zeros(x.shape, dtype=x.dtype)
    return x


def _rope_key(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    lt = kwargs.get("layer_type")
    if lt is None and len(args) >= 3 and isinstance(args[2], str):
        lt = args[2]
    return str(lt) if lt is not None else "rope"


def _tensors(x: Any) -> Iterator[Any]:
    import torch

    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, tuple | list):
        for v in x:
            yield from _tensors(v)


def probe(config: Mapping[str, Any]) -> ProbeReading:
    """transformers' own reading of ``config`` (a config.json dict with its ``model_type``)."""
    stage = ["build"]
    try:
        return _probe(config, stage)
    except ProbeError:
        raise
    except Exception as exc:
        import transformers as T

        first = (str(exc).strip().splitlines() or [""])[0][:200]
        what = f"{type(exc).__name__}: {first}"
        if stage[0] == "build":  # transformers' own error: it cannot build this config
            raise ProbeError(
                f"transformers {T.__version__} cannot build this config ({what})"
            ) from exc
        raise ProbeError(  # the model was built; running it without weights failed
            f"transformers {T.__version__}'s {stage[0]} failed when run without weights "
            f"(on meta tensors: {what})"
        ) from exc


def _probe(config: Mapping[str, Any], stage: list[str]) -> ProbeReading:
    import torch
    import transformers as T
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    T.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    cfg_json = dict(config)
    model_type = cfg_json.pop("model_type", None)
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING:
        raise ProbeError(
            f"model_type {model_type!r} is not a model type of transformers {T.__version__}"
        )
    cfg = T.AutoConfig.for_model(model_type, **cfg_json)
    text, path = _text_config(cfg)
    cls = _model_class(text)
    if cls is None:
        raise ProbeError(
            f"transformers {T.__version__} has no model class for {type(text).__name__}"
        )
    text._attn_implementation = "eager"
    if hasattr(text, "_experts_implementation"):
        text._experts_implementation = "eager"
    modules = _modeling_modules(cls)
    with _rotary_on_cpu(modules), torch.device("meta"):
        model = cls(text)
    model.eval()
    stage[0] = type(model).__name__
    _no_rotary_position(model, modules)
    n_layers = getattr(text, "num_hidden_layers", None)
    decoder = _decoder_layers(model, n_layers)
    rec = _Recorder()
    try:
        with _recording(model, decoder, modules, rec):
            _forward(model, text)
    except Exception:
        # the feed-forward blocks (mixtures of experts route by data: no meta kernel) bypassed;
        # they decide nothing about position. Some return (hidden, router scores).
        for as_tuple in (False, True):
            rec = _Recorder()
            try:
                with (
                    _recording(model, decoder, modules, rec),
                    _feed_forward_bypassed(decoder, as_tuple),
                ):
                    _forward(model, text)
                break
            except Exception:
                if as_tuple:
                    raise
    return _reading(T.__version__, text, path, cls, model, decoder, rec)


_FEED_FORWARD = ("mlp", "moe", "expert", "feedforward", "feed_forward", "ffn")


@contextlib.contextmanager
def _feed_forward_bypassed(decoder: list[Any], as_tuple: bool) -> Iterator[None]:
    """Every feed-forward block of the decoder layers hands its input on unchanged."""
    patched = []
    for layer in decoder:
        for name, child in layer.named_children():
            label = f"{name} {type(child).__name__}".lower()
            if (
                any(w in label for w in _FEED_FORWARD)
                and "attn" not in label
                and "attention" not in label
            ):

                def identity(*a: Any, **kw: Any) -> Any:
                    x = a[0] if a else next(iter(kw.values()))
                    return (x, None) if as_tuple else x

                patched.append(child)
                child.forward = identity
    try:
        yield
    finally:
        for child in patched:
            del child.forward


def _no_rotary_position(model: Any, modules: list[Any]) -> None:
    """A model with no rotary code at all but a position table or bias: said before running it."""
    rotary = any(
        n.endswith("inv_freq") for m in model.modules() for n, _ in m.named_buffers(recurse=False)
    ) or any(name.startswith("apply_rotary") for mod in modules for name in vars(mod))
    if rotary:
        return
    relative = _relative_modules(model)
    if relative:
        raise ProbeError(
            f"{type(model).__name__} puts position inside attention through {relative[0]} "
            "(relative position): posecards inspect does not draw that yet"
        )
    learned = _learned_tables(model)
    if learned:
        raise ProbeError(
            f"{type(model).__name__} adds a learned position table ({learned[0]}): posecards "
            "draws it from the checkpoint's tensor, and this folder has none"
        )


def _decoder_layers(model: Any, n: int | None) -> list[Any]:
    import torch

    lists = [
        m
        for m in model.modules()
        if isinstance(m, torch.nn.ModuleList) and len(m) > 0 and (n is None or len(m) == n)
    ]
    if not lists:
        raise ProbeError(f"no list of {n} decoder layers in {type(model).__name__}")
    return list(lists[0])


@contextlib.contextmanager
def _recording(
    model: Any, decoder: list[Any], modules: list[Any], rec: _Recorder
) -> Iterator[None]:
    import torch

    undo: list[Callable[[], None]] = []

    def patch(obj: Any, name: str, new: Any) -> None:
        old = getattr(obj, name)
        setattr(obj, name, new)
        undo.append(lambda: setattr(obj, name, old))

    # rotary modules: real frequencies on the CPU, meta tensors handed on
    for m in model.modules():
        bufs = [n for n, _ in m.named_buffers(recurse=False) if n.endswith("inv_freq")]
        if not bufs:
            continue
        fwd = m.forward

        def rotary_forward(*a: Any, __fwd: Any = fwd, __m: Any = m, **kw: Any) -> Any:
            key = _rope_key(__m, a, kw)
            shapes = tuple(x.shape for x in a if isinstance(x, torch.Tensor))
            rec.rotary_calls.append((__m, key, tuple(shapes[1]) if len(shapes) > 1 else ()))
            out = __fwd(*[_to_cpu(x) for x in a], **{k: _to_cpu(v) for k, v in kw.items()})
            meta = _to_meta(out)
            for t in _tensors(meta):
                rec.made[id(t)] = key
            return meta

        patch(m, "forward", rotary_forward)

    # apply_rotary*: record and pass through
    for mod in modules:
        for name in list(vars(mod)):
            fn = vars(mod)[name]
            if not (name.startswith("apply_rotary") and callable(fn)) or "vision" in name:
                continue
            params = list(inspect.signature(fn).parameters)
            pair = len(params) > 1 and params[1] in ("k", "xk", "key", "key_states")

            def record(*a: Any, __fn: Any = fn, __pair: bool = pair, **kw: Any) -> Any:
                if rec.layer is not None:
                    rec.calls.setdefault(rec.layer, []).append((__fn, a, kw))
                return (a[0], a[1]) if __pair else a[0]

            patch(mod, name, record)

        if hasattr(mod, "eager_attention_forward"):

            def eager(module: Any, query: Any, key: Any, value: Any, *a: Any, **kw: Any) -> Any:
                mask = a[0] if a else kw.pop("attention_mask", None)
                if rec.layer is not None:
                    rec.kernels.setdefault(rec.layer, []).append(
                        {"mask": mask, "query": tuple(query.shape), "module": type(module), **kw}
                    )
                b, heads, seq, _ = query.shape
                return torch.empty(b, seq, heads, value.shape[-1], device="meta"), None

            patch(mod, "eager_attention_forward", eager)

        for fname, kind in (
            ("create_causal_mask", "full"),
            ("create_sliding_window_causal_mask", "sliding"),
            ("create_chunked_causal_mask", "chunked"),
            ("create_bidirectional_mask", "full"),
            ("create_bidirectional_sliding_window_mask", "sliding"),
        ):
            if not hasattr(mod, fname):
                continue

            def mask_fn(*a: Any, __kind: str = kind, **kw: Any) -> Any:
                cfg = kw.get("config", a[0] if a else None)
                window = {
                    "sliding": getattr(cfg, "sliding_window", None),
                    "chunked": getattr(cfg, "attention_chunk_size", None),
                }.get(__kind)
                emb = kw.get("inputs_embeds", kw.get("input_embeds"))
                seq = emb.shape[1] if emb is not None else _SEQ
                m = torch.empty(1, 1, seq, seq, device="meta")
                rec.masks[id(m)] = (__kind, window)
                return m

            patch(mod, fname, mask_fn)

    handles = []
    for i, layer in enumerate(decoder):

        def pre(_m: Any, _a: Any, __i: int = i) -> None:
            rec.layer = __i

        def post(_m: Any, _a: Any, _o: Any) -> None:
            rec.layer = None

        handles.append(layer.register_forward_pre_hook(pre))
        handles.append(layer.register_forward_hook(post))
    try:
        yield
    finally:
        for h in handles:
            h.remove()
        for u in reversed(undo):
            u()


def _forward(model: Any, text: Any) -> None:
    import torch.fx.experimental._config as fx_config

    # a mixture of experts asks which tokens each expert got (nonzero): on meta tensors, all
    before = fx_config.meta_nonzero_assume_all_nonzero
    fx_config.meta_nonzero_assume_all_nonzero = True
    try:
        _call(model, text)
    finally:
        fx_config.meta_nonzero_assume_all_nonzero = before


def _call(model: Any, text: Any) -> None:
    import torch

    sig = inspect.signature(model.forward).parameters
    hidden = getattr(text, "hidden_size", None)
    kw: dict[str, Any] = {}
    if "input_ids" in sig:
        kw["input_ids"] = torch.zeros(1, _SEQ, dtype=torch.long, device="meta")
    elif "inputs_embeds" in sig and hidden:
        kw["inputs_embeds"] = torch.empty(1, _SEQ, hidden, device="meta")
    else:
        raise ProbeError(
            f"{type(model).__name__} is not a text model (its forward takes no input_ids)"
        )
    if "use_cache" in sig:
        kw["use_cache"] = False
    with torch.no_grad():
        model(**kw)


# ---------------------------------------------------------------- from the records to a reading


def _reading(
    version: str,
    text: Any,
    path: tuple[str, ...],
    cls: type,
    model: Any,
    decoder: list[Any],
    rec: _Recorder,
) -> ProbeReading:
    layers: list[ProbedLayer] = []
    first_call: dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = {}
    keys_seen = {key for _, key, _ in rec.rotary_calls}
    for i in range(len(decoder)):
        calls = rec.calls.get(i, [])
        key: str | None = None
        for fn, a, kw in calls:
            found = {rec.made[id(t)] for t in [*a, *kw.values()] if id(t) in rec.made}
            for v in [*a, *kw.values()]:
                if isinstance(v, tuple | list):
                    found |= {rec.made[id(t)] for t in v if id(t) in rec.made}
            if not found and len(keys_seen) == 1:
                found = set(keys_seen)
            if not found and not keys_seen:
                found = {"rope"}  # no rotary module: the attention builds its own table
            if len(found) != 1:
                raise ProbeError(
                    f"layer {i}: which frequencies it rotates with could not be followed"
                )
            k = found.pop()
            if key is not None and key != k:
                raise ProbeError(f"layer {i} rotates with two sets of frequencies ({key}, {k})")
            key = k
            first_call.setdefault(k, (fn, a, kw))
        kernels = rec.kernels.get(i, [])
        mask = window = scaling = None
        if kernels:
            scales = {kk.get("scaling") for kk in kernels}
            if len(scales) != 1:
                raise ProbeError(f"layer {i} calls attention with several softmax scales")
            scaling = scales.pop()
            tags = {rec.masks.get(id(kk["mask"])) for kk in kernels}
            if len(tags) == 1:
                tag = tags.pop()
                if tag is not None:
                    mask, window = tag
                    if mask != "full" and not window:
                        mask, window = "full", None  # no window: the plain causal mask
                    if mask != "full" and window is None:
                        mask = "full"  # a sliding or chunked mask with no window: causal
            handed = kernels[0].get("sliding_window")
            if handed and mask is None:
                mask, window = "sliding", int(handed)
        layers.append(
            ProbedLayer(
                i,
                bool(kernels),
                key,
                mask,
                window,
                None if scaling is None else float(scaling),
                kernels[0]["query"][-1] if kernels else None,
                _prescale(kernels[0]["module"]) if kernels else None,
            )
        )
    rope: dict[str, ProbedRope] = {}
    for key, (fn, a, kw) in first_call.items():
        module = next((m for m, k, _ in rec.rotary_calls if k == key), None)
        if module is None:  # GPT-J, CodeGen: a sin/cos table built inside the attention
            inv, factor = _attention_table_frequencies(decoder, sys_modules(fn))
        else:
            inv, factor = _frequencies(module, key)
        pairs = _head_pairs(_pair_map(fn, a, kw), a, kw, fn, key, rec)
        layer = next(i for i, calls in rec.calls.items() if any(c[1] is a for c in calls))
        params = _parameters(text, key)
        rope[key] = ProbedRope(
            key=key,
            inv_freq=inv,
            attention_factor=factor,
            parameters=params,
            head_slots=len(pairs),
            pairs=pairs,
            layout=_layout(pairs),
            axes=_axes(module, key, inv.size, rec) if module is not None else None,
            head_seen=bool(rec.kernels.get(layer)),
        )
    return ProbeReading(
        transformers_version=version,
        model_type=str(getattr(text, "model_type", "")),
        text_path=path,
        model_class=cls.__name__,
        layers=tuple(layers),
        rope=rope,
        learned=_learned_tables(model),
        relative=_relative_modules(model),
        absolute=_absolute_positions(model, decoder),
        config=text,
    )


_PRESCALE = re.compile(
    r"^\s*(?:query_states|query|q|xq)\s*(?:\*=\s*(.+)|=\s*.*\b(?:query_states|query|q|xq)\b\)?\s*\*\s*(.+))$",
    re.M,
)


@functools.cache
def _prescale(cls: type) -> str | None:
    """What the attention module's own code multiplies q by before the kernel, if anything."""
    try:
        src = inspect.getsource(cls.forward)  # type: ignore[attr-defined]
    except (OSError, TypeError):
        return None
    m = _PRESCALE.search(src)
    if m is None:
        return None
    return (m.group(1) or m.group(2)).strip()


_RELATIVE = (
    "relative_attention_bias",
    "rel_embeddings",
    "relative_position",
    "rel_pos",
    "pos_bias",
)


def _learned_tables(model: Any) -> tuple[str, ...]:
    """Embedding tables indexed by position (``position_embeddings``, ``wpe``, ``embed_positions``)."""
    import torch

    out = []
    for name, m in model.named_modules():
        leaf = name.rsplit(".", 1)[-1].lower()
        if (
            type(m) is torch.nn.Embedding
            and (  # not a subclass (RoFormer's sinusoid table)
                "position" in leaf or leaf in ("wpe", "pos_emb", "embed_positions")
            )
            and not any(r in name.lower() for r in _RELATIVE)
        ):
            out.append(f"{name} ({m.num_embeddings} x {m.embedding_dim})")
    return tuple(out)


def _absolute_positions(model: Any, decoder: list[Any]) -> tuple[str, ...]:
    """Other places position may enter outside the decoder layers: modules, buffers or
    parameters whose name speaks of position (a sinusoid table, a learned table, ...)."""
    inside = {id(m) for layer in decoder for m in layer.modules()}
    out = []
    for name, m in model.named_modules():
        if id(m) in inside or any(
            n.endswith("inv_freq") for n, _ in m.named_buffers(recurse=False)
        ):
            continue
        leaf = name.rsplit(".", 1)[-1].lower()
        if "pos" in leaf and "rotary" not in leaf and "rope" not in leaf:
            out.append(name)
        for b, _ in [*m.named_buffers(recurse=False), *m.named_parameters(recurse=False)]:
            if "pos" in b.lower() and not b.endswith("inv_freq") and "position_ids" not in b:
                out.append(f"{name}.{b}" if name else b)
    return tuple(out)


def _relative_modules(model: Any) -> tuple[str, ...]:
    return tuple(
        name for name, _ in model.named_modules() if any(r in name.lower() for r in _RELATIVE)
    )


def _head_pairs(
    pairs: tuple[int, ...],
    a: tuple[Any, ...],
    kw: dict[str, Any],
    fn: Any,
    key: str,
    rec: _Recorder,
) -> tuple[int, ...]:
    """The pair map over a whole head: where the q handed to apply_rotary is a slice of the head
    (partial rotary, MLA), its place in the head is the slice's offset (meta tensors keep it)."""
    q = a[0] if a else kw[next(iter(inspect.signature(fn).parameters))]
    layer = next(
        i for i, calls in rec.calls.items() if any(c[0] is fn and c[1] is a for c in calls)
    )
    kernels = rec.kernels.get(layer, [])
    if not kernels:
        return pairs
    head = kernels[0]["query"][-1]
    n = len(pairs)
    if head == n:
        return pairs
    if head < n:
        raise ProbeError(f"layer {layer}: the rotated q has more slots than the attention's head")
    first = q.storage_offset() % head
    if first + n > head:
        raise ProbeError(
            f"layer {layer}: where the rotated slots sit in the head could not be followed"
        )
    if q.storage_offset() == 0 and q.is_contiguous():  # a tensor of its own: no place in the head
        raise ProbeError(
            f"layer {layer}: where the rotated slots sit in the head could not be followed"
        )
    out = [-1] * head
    for i, p in enumerate(pairs):
        out[first + i] = -1 if p < 0 else first + p
    return tuple(out)


def sys_modules(fn: Any) -> Any:
    import sys

    return sys.modules[fn.__module__]


def _attention_table_frequencies(decoder: list[Any], mod: Any) -> tuple[np.ndarray, float]:
    """GPT-J and CodeGen: each attention holds ``embed_positions``, [sin | cos] of p * inv_freq,
    made by the modeling module's ``create_sinusoidal_positions``: built here on the CPU for
    positions 0 and 1, inv_freq = atan2(sin, cos) at position 1."""
    import torch

    make = getattr(mod, "create_sinusoidal_positions", None)
    table = next(
        (
            m.embed_positions
            for layer in decoder
            for m in layer.modules()
            if hasattr(m, "embed_positions")
        ),
        None,
    )
    if make is None or table is None:
        raise ProbeError("the rotary frequencies could not be followed to a module or a table")
    dim = int(table.shape[-1])
    with torch.device("cpu"):
        sincos = make(2, dim).double()  # (2, dim): [sin | cos]
    sin, cos = sincos[1, : dim // 2], sincos[1, dim // 2 :]
    return torch.atan2(sin, cos).numpy().copy(), 1.0


def _frequencies(module: Any, key: str) -> tuple[np.ndarray, float]:
    name = (
        "inv_freq" if key == "rope" or not hasattr(module, f"{key}_inv_freq") else f"{key}_inv_freq"
    )
    buf = getattr(module, name)
    factor_name = "attention_scaling" if name == "inv_freq" else f"{key}_attention_scaling"
    factor = getattr(module, factor_name, 1.0)
    if isinstance(factor, dict):
        factor = factor[key]
    return buf.detach().double().numpy().copy(), float(factor)


def _parameters(text: Any, key: str) -> dict[str, Any]:
    rp = getattr(text, "rope_parameters", None)
    if not isinstance(rp, Mapping):
        # GPT-J, CodeGen: create_sinusoidal_positions' own base (checked against its table)
        return {"rope_type": "default", "rope_theta": 10000.0}
    if key in rp and isinstance(rp[key], Mapping):
        return dict(rp[key])
    return dict(rp)


def _axes(module: Any, key: str, n: int, rec: _Recorder) -> tuple[str, ...] | None:
    """MRoPE: drive the rotary module with one position row (t, h, w, ...) at a time."""
    import torch

    shapes = [s for m, k, s in rec.rotary_calls if m is module and k == key]
    if shapes and len(shapes[0]) == 3:
        rows = shapes[0][0]
    elif hasattr(module, "mrope_section"):
        rows = 3  # a text-only pass hands it one row, which it repeats for t, h and w
    else:
        return None
    letters = "thw" if rows == 3 else "".join(f"{r}" for r in range(rows))
    got = ["?"] * n
    fwd = type(module).forward
    for a in range(rows):
        pos = torch.zeros(rows, 1, 1, dtype=torch.long)
        pos[a] = 1
        args: tuple[Any, ...] = (module, torch.zeros(1), pos)
        if key != "rope":
            args = (*args, key)
        _, sin = fwd(*args)
        for j in np.flatnonzero(sin[0, 0, :n].numpy() != 0):
            got[j] = letters[a]
    if "?" in got:
        raise ProbeError("an MRoPE pair follows no position axis")
    return tuple(got)


@functools.cache
def version() -> str:
    import transformers as T

    return str(T.__version__)


def finite(x: float) -> bool:
    return math.isfinite(x)
