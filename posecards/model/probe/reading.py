"""From the records of one probing pass to a ``ProbeReading``."""

from __future__ import annotations

import sys
from typing import Any

from posecards.model.probe.frequencies import (
    attention_table_frequencies,
    driven_axes,
    module_frequencies,
    prescale,
    rope_parameters,
)
from posecards.model.probe.model import absolute_positions, learned_tables, relative_modules
from posecards.model.probe.pairs import head_pairs, layout, pair_map
from posecards.model.probe.record import Call, Recorder
from posecards.model.probe.types import ProbedLayer, ProbedRope, ProbeError, ProbeReading


def _rotated_key(i: int, a: tuple[Any, ...], kw: dict[str, Any], rec: Recorder) -> str:
    """Which rotary module's cos/sin one apply_rotary call in layer ``i`` was handed."""
    keys_seen = {key for _, key, _ in rec.rotary_calls}
    found = {rec.made[id(t)] for t in [*a, *kw.values()] if id(t) in rec.made}
    for v in [*a, *kw.values()]:
        if isinstance(v, tuple | list):
            found |= {rec.made[id(t)] for t in v if id(t) in rec.made}
    if not found and len(keys_seen) == 1:
        found = set(keys_seen)
    if not found and not keys_seen:
        found = {"rope"}  # no rotary module: the attention builds its own table
    if len(found) != 1:
        raise ProbeError(f"layer {i}: which frequencies it rotates with could not be followed")
    return found.pop()


def _layer(i: int, rec: Recorder, first_call: dict[str, Call]) -> ProbedLayer:
    """One decoder layer: the frequencies it rotates with, the kernel's mask, window and scale."""
    key: str | None = None
    for fn, a, kw in rec.calls.get(i, []):
        k = _rotated_key(i, a, kw, rec)
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
                    mask, window = "full", None  # a sliding or chunked mask with no window
        handed = kernels[0].get("sliding_window")
        if handed and mask is None:
            mask, window = "sliding", int(handed)
    return ProbedLayer(
        i,
        bool(kernels),
        key,
        mask,
        window,
        None if scaling is None else float(scaling),
        kernels[0]["query"][-1] if kernels else None,
        prescale(kernels[0]["module"]) if kernels else None,
    )


def _rope(text: Any, decoder: list[Any], key: str, call: Call, rec: Recorder) -> ProbedRope:
    """One set of frequencies: the module's buffer, the measured pairs, the MRoPE axes."""
    fn, a, kw = call
    module = next((m for m, k, _ in rec.rotary_calls if k == key), None)
    if module is None:  # GPT-J, CodeGen: a sin/cos table built inside the attention
        inv, factor = attention_table_frequencies(decoder, sys.modules[fn.__module__])
    else:
        inv, factor = module_frequencies(module, key)
    pairs = head_pairs(pair_map(fn, a, kw), a, kw, fn, rec)
    layer = next(i for i, calls in rec.calls.items() if any(c[1] is a for c in calls))
    return ProbedRope(
        key=key,
        inv_freq=inv,
        attention_factor=factor,
        parameters=rope_parameters(text, key),
        head_slots=len(pairs),
        pairs=pairs,
        layout=layout(pairs),
        axes=driven_axes(module, key, inv.size, rec) if module is not None else None,
        head_seen=bool(rec.kernels.get(layer)),
    )


def reading(
    version: str,
    text: Any,
    path: tuple[str, ...],
    cls: type,
    model: Any,
    decoder: list[Any],
    rec: Recorder,
) -> ProbeReading:
    """From the records of one pass to what transformers does, layer by layer."""
    first_call: dict[str, Call] = {}
    layers = tuple(_layer(i, rec, first_call) for i in range(len(decoder)))
    return ProbeReading(
        transformers_version=version,
        model_type=str(getattr(text, "model_type", "")),
        text_path=path,
        model_class=cls.__name__,
        layers=layers,
        rope={key: _rope(text, decoder, key, call, rec) for key, call in first_call.items()},
        learned=learned_tables(model),
        relative=relative_modules(model),
        absolute=absolute_positions(model, decoder),
        config=text,
    )
