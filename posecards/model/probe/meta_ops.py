"""The probing pass's meta tensors, each op's output shapes computed once per pass.

On the ``meta`` device torch computes no values, only each output's shape, strides and dtype;
for most ops (add, mul, linear's matmul, softmax, ...) that takes a Python function of torch
(``torch/_meta_registrations.py``, ``torch/_refs``), which costs most of a probing pass. A model
repeats the same ops on the same shapes in every layer: ``MetaOps`` remembers what each op gave
for one exact set of inputs, and gives a fresh tensor of the same shape, strides and dtype the
next time. It does what torch's own fake tensors cache (``FakeTensorMode``'s dispatch cache) on
the plain meta tensors of the probe:

- the key is everything a meta kernel's output depends on: the op (one overload), every argument
  (a tensor by its shape, strides, storage offset, dtype, layout and conjugate/negative bits;
  numbers, strings, dtypes, devices, memory formats by value; lists and tuples of them) and torch's
  default dtype; an argument of any other type is not cached;
- only ops whose outputs are new tensors are remembered: no op that writes into an argument or
  returns a view of one (its schema's alias annotations), no op whose output shape depends on the
  data (``nonzero``, boolean indexing) or that draws random numbers, no op that is not torch's
  own; every tensor argument and every output on the ``meta`` device (the rotary modules' real
  frequencies on the CPU never meet the cache), every output a plain tensor with its own storage;
- an op that fails is not remembered (it fails again, as before); the cache lives for one pass
  and holds at most ``MAX_ENTRIES`` outputs (then it stops adding).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_ENTRIES = 4096  # outputs remembered per pass (a large model's pass needs a few hundred)

_PLAIN = (int, float, bool, str, type(None))  # described by value


class _NotCached(Exception):
    """An argument the key cannot describe."""


def call_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What one call's outputs depend on, or None where it is not cached: a tensor by its shape,
    strides, storage offset, dtype and conjugate/negative bits (every one on the meta device),
    numbers, strings, dtypes, devices, layouts and memory formats by value (with their type),
    lists and tuples of them; a call with no tensor is cached only with an explicit meta device
    (a factory op; without one it makes its tensor on the default device)."""
    import torch

    tensor = (torch.Tensor, torch.nn.Parameter)
    by_value = (*_PLAIN, torch.dtype, torch.device, torch.layout, torch.memory_format)
    strided = torch.strided
    tensors = [0]

    def key(x: Any) -> Any:
        t = type(x)
        if t in tensor:
            if x.device.type != "meta" or x.layout != strided:
                raise _NotCached
            tensors[0] += 1
            return (
                tuple(x.shape),
                x.stride(),
                x.storage_offset(),
                x.dtype,
                x.is_conj(),
                x.is_neg(),
            )
        if t is list or t is tuple:
            return (t, tuple(key(v) for v in x))
        if t in by_value:
            return (t, x)
        raise _NotCached

    try:
        described = (key(args), key(tuple(sorted(kwargs.items()))))
    except _NotCached:
        return None
    if not tensors[0] and str(kwargs.get("device")) != "meta":
        return None
    return described


_CACHEABLE: dict[Any, bool] = {}  # op overload -> whether its outputs may be remembered


def cacheable(func: Any) -> bool:
    """Whether an op's outputs are new tensors whose shapes follow from its inputs' alone."""
    found = _CACHEABLE.get(func)
    if found is None:
        import torch
        from torch._library.utils import is_builtin

        skip = (
            torch.Tag.data_dependent_output,
            torch.Tag.dynamic_output_shape,
            torch.Tag.inplace_view,
            torch.Tag.nondeterministic_seeded,
        )
        found = (
            isinstance(func, torch._ops.OpOverload)
            and is_builtin(func)
            and func is not torch.ops.aten._unsafe_view.default  # a view without an annotation
            and not func._schema.is_mutable
            and all(r.alias_info is None for r in func._schema.returns)
            and not any(t in func.tags for t in skip)
        )
        _CACHEABLE[func] = found
    return found


def _outputs(out: Any) -> tuple[Any, ...] | None:
    """The outputs of an op as (shape, strides, dtype), or None where one cannot be remade."""
    import torch

    outs = out if isinstance(out, tuple) else (out,)
    made = []
    for o in outs:
        if type(o) is not torch.Tensor or o.device.type != "meta" or o.layout != torch.strided:
            return None
        if o.storage_offset() != 0 or o.is_conj() or o.is_neg() or o.requires_grad:
            return None
        made.append((tuple(o.shape), o.stride(), o.dtype))
    return tuple(made)


def meta_ops() -> Any:
    """A dispatch mode (``with meta_ops():``) that computes each meta op's outputs once."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class MetaOps(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.seen: dict[Any, tuple[bool, tuple[Any, ...]]] = {}
            self.hits = 0

        def __torch_dispatch__(
            self,
            func: Callable[..., Any],
            types: Any,
            args: tuple[Any, ...] = (),
            kwargs: dict[str, Any] | None = None,
        ) -> Any:
            kwargs = kwargs or {}
            described = call_key(args, kwargs) if cacheable(func) else None
            if described is None:
                return func(*args, **kwargs)
            key = (func, described, torch.get_default_dtype())
            known = self.seen.get(key)
            if known is not None:
                self.hits += 1
                many, remembered = known
                made = [
                    torch.empty_strided(s, st, dtype=d, device="meta") for s, st, d in remembered
                ]
                return tuple(made) if many else made[0]
            out = func(*args, **kwargs)
            outs = _outputs(out)
            if outs is not None and len(self.seen) < MAX_ENTRIES:
                self.seen[key] = (isinstance(out, tuple), outs)
            return out

    return MetaOps()
