"""One forward pass of the text model on meta tensors, with recorders in place: the rotary
modules run on the CPU and hand meta tensors on, ``apply_rotary*`` calls and the attention
kernel's arguments are kept per decoder layer, the masks are tagged with the window they read."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from posecards.model.probe.meta_ops import meta_ops
from posecards.model.probe.types import ProbeError

_SEQ = 6  # tokens of the probing forward pass

# one apply_rotary call: the function, its positional and keyword arguments
Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


@dataclass
class Recorder:
    layer: int | None = None
    calls: dict[int, list[Call]] = field(default_factory=dict)
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


_FEED_FORWARD = ("mlp", "moe", "expert", "feedforward", "feed_forward", "ffn")


@contextlib.contextmanager
def feed_forward_bypassed(decoder: list[Any], as_tuple: bool) -> Iterator[None]:
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


@contextlib.contextmanager
def norms_bypassed(model: Any) -> Iterator[None]:
    """Every layer norm and RMS norm of the model hands its input on unchanged. A norm keeps its
    input's shape and decides nothing about position, and on meta tensors its few elementwise
    ops cost most of the pass (torch's meta kernels for them are Python): the probe's first pass
    runs without them, and the full model only where that pass fails."""
    patched = []
    for m in model.modules():
        name = type(m).__name__
        if name.endswith(("RMSNorm", "LayerNorm")) and "forward" not in vars(m):

            def identity(*a: Any, **kw: Any) -> Any:
                return a[0] if a else next(iter(kw.values()))

            patched.append(m)
            m.forward = identity
    try:
        yield
    finally:
        for m in patched:
            vars(m).pop("forward", None)  # (a feed-forward bypass may have taken it first)


Patch = Callable[[Any, str, Any], None]  # patch(obj, name, new): undone when the pass ends


def _patch_rotary_modules(model: Any, rec: Recorder, patch: Patch) -> None:
    """Rotary modules: real frequencies on the CPU, meta tensors handed on, each tagged."""
    import torch

    for m in model.modules():
        if not any(n.endswith("inv_freq") for n, _ in m.named_buffers(recurse=False)):
            continue

        def rotary_forward(*a: Any, __fwd: Any = m.forward, __m: Any = m, **kw: Any) -> Any:
            key = _rope_key(__m, a, kw)
            shapes = tuple(x.shape for x in a if isinstance(x, torch.Tensor))
            rec.rotary_calls.append((__m, key, tuple(shapes[1]) if len(shapes) > 1 else ()))
            out = __fwd(*[_to_cpu(x) for x in a], **{k: _to_cpu(v) for k, v in kw.items()})
            meta = _to_meta(out)
            for t in _tensors(meta):
                rec.made[id(t)] = key
            return meta

        patch(m, "forward", rotary_forward)


def _patch_apply_rotary(mod: Any, rec: Recorder, patch: Patch) -> None:
    """apply_rotary*: recorded in the layer that calls it, q and k passed through."""
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


def _patch_kernel(mod: Any, rec: Recorder, patch: Patch) -> None:
    """The attention kernel: its mask, q's shape, the attention class and scale, kept."""
    import torch

    if not hasattr(mod, "eager_attention_forward"):
        return

    def eager(module: Any, query: Any, key: Any, value: Any, *a: Any, **kw: Any) -> Any:
        mask = a[0] if a else kw.pop("attention_mask", None)
        if rec.layer is not None:
            rec.kernels.setdefault(rec.layer, []).append(
                {"mask": mask, "query": tuple(query.shape), "module": type(module), **kw}
            )
        b, heads, seq, _ = query.shape
        return torch.empty(b, seq, heads, value.shape[-1], device="meta"), None

    patch(mod, "eager_attention_forward", eager)


_MASKS = (
    ("create_causal_mask", "full"),
    ("create_sliding_window_causal_mask", "sliding"),
    ("create_chunked_causal_mask", "chunked"),
    ("create_bidirectional_mask", "full"),
    ("create_bidirectional_sliding_window_mask", "sliding"),
)


def _patch_masks(mod: Any, rec: Recorder, patch: Patch) -> None:
    """The mask functions: a meta mask tagged with its kind and the window the config gives."""
    import torch

    for fname, kind in _MASKS:
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
            # a mask widened by another rule (unlimited OCR's sliding window that keeps every
            # prefill token) is neither of the kinds posecards draws
            widened = kw.get("or_mask_function") is not None
            rec.masks[id(m)] = ("widened" if widened else __kind, window)
            return m

        patch(mod, fname, mask_fn)


@contextlib.contextmanager
def recording(model: Any, decoder: list[Any], modules: list[Any], rec: Recorder) -> Iterator[None]:
    """Every recorder in place for one pass (and taken away after it): rotary modules, apply
    functions, the kernel and the masks of the modeling modules, and which layer is running."""
    undo: list[Callable[[], None]] = []

    def patch(obj: Any, name: str, new: Any) -> None:
        old = getattr(obj, name)
        setattr(obj, name, new)
        undo.append(lambda: setattr(obj, name, old))

    _patch_rotary_modules(model, rec, patch)
    for mod in modules:
        _patch_apply_rotary(mod, rec, patch)
        _patch_kernel(mod, rec, patch)
        _patch_masks(mod, rec, patch)
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


def forward_pass(model: Any, text: Any) -> None:
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
    with torch.no_grad(), meta_ops():  # each op's meta shapes computed once (meta_ops.py)
        model(**kw)
