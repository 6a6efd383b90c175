"""Which slot of q turns with which, measured by applying the model's own rotary function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from posecards.model.probe.record import Recorder
from posecards.model.probe.types import ProbeError


def pair_map(
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


def layout(pairs: tuple[int, ...]) -> str:
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


def head_pairs(
    pairs: tuple[int, ...],
    a: tuple[Any, ...],
    kw: dict[str, Any],
    fn: Any,
    rec: Recorder,
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
