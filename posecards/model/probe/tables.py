"""Learned position tables: which rows transformers' own code reads for positions 0, 1, 2, ...

A table's rows and width are the module's; which row position p reads (p + offset: RoBERTa's
``padding_idx + 1``, BART's and OPT's 2, GPT-2's 0) is measured, not named: the text model is
built again with its parameters on the ``meta`` device and no initialisation, but every small
tensor its ``__init__`` computes (the ``position_ids`` buffers, the position tables themselves)
on the CPU, so the code that turns token ids into position ids runs for real. The module that
owns the table (the nearest one whose ``forward`` takes ``input_ids``) is called with six token
ids that are no special token; ``torch.nn.functional.embedding`` is watched, and the pass stops
at the table's lookup (the table's values are not needed: only the rows it is asked for).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

from posecards.model.probe.types import ProbedBias, ProbedTable, ProbeError

_SEQ = 6  # tokens of the measuring pass
_SMALL = 1 << 23  # elements: tensors made at __init__ up to this size are made on the CPU


class _Found(Exception):
    """The table was looked up: the pass stops here."""


def _numel(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    import torch

    if func is torch.arange:
        nums = [a for a in args if isinstance(a, int | float)]
        if not nums:
            return None
        start, end = (0, nums[0]) if len(nums) == 1 else (nums[0], nums[1])
        step = nums[2] if len(nums) > 2 else 1
        return max(0, int((end - start) / step))
    size = kwargs.get("size")
    if size is None:
        if args and isinstance(args[0], tuple | list | torch.Size):
            size = args[0]
        else:
            size = [a for a in args if isinstance(a, int)]
    n = 1
    for s in size:
        if not isinstance(s, int):
            return None
        n *= s
    return n


@contextlib.contextmanager
def _small_on_cpu() -> Iterator[None]:
    """Factory functions without a device make small tensors on the CPU, the rest on meta."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._device import _device_constructors

    class Mixed(TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = dict(kwargs or {})
            if func in _device_constructors() and kwargs.get("device") is None:
                n = _numel(func, tuple(args), kwargs)
                kwargs["device"] = "cpu" if n is not None and n <= _SMALL else "meta"
            return func(*args, **kwargs)

    with Mixed():
        yield


@contextlib.contextmanager
def _first_lookup(weight: Any, *, meta_zeros: bool = False) -> Iterator[list[Any]]:
    """While open, torch's ``embedding`` records the ids of the first lookup into ``weight`` and
    stops the pass there (``_Found``, swallowed on leaving); every other lookup runs as usual
    (with ``meta_zeros``, a lookup on the meta device gives zeros on the CPU). Yields the
    recorded ids: empty when ``weight`` was never looked up."""
    import torch

    real = torch.nn.functional.embedding
    seen: list[Any] = []

    def embedding(ids: Any, w: Any, *a: Any, **kw: Any) -> Any:
        if w is weight:
            seen.append(ids)
            raise _Found
        if meta_zeros and (w.device.type == "meta" or ids.device.type == "meta"):
            return torch.zeros(*ids.shape, w.shape[-1])
        return real(ids, w, *a, **kw)

    torch.nn.functional.embedding = embedding  # type: ignore[assignment]
    try:
        yield seen
    except _Found:
        pass
    finally:
        torch.nn.functional.embedding = real


def learned_modules(model: Any) -> list[tuple[str, Any]]:
    """Trainable embedding tables indexed by position (``position_embeddings``, ``wpe``,
    ``embed_positions``; BART's and OPT's subclasses too). Frozen ones (sinusoid tables kept
    as an embedding) are not learned."""
    import torch

    out = []
    for name, m in model.named_modules():
        leaf = name.rsplit(".", 1)[-1].lower()
        if (
            isinstance(m, torch.nn.Embedding)
            and ("position" in leaf or leaf in ("wpe", "pos_emb", "embed_positions"))
            and m.weight.requires_grad
        ):
            out.append((name, m))
    return out


def _token(text: Any) -> int:
    """A token id that is no special token (position ids may skip padding)."""
    special = set()
    for key in ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id"):
        v = getattr(text, key, None)
        if isinstance(v, int):
            special.add(v)
    return next(t for t in range(3, 64) if t not in special)


def _owner(model: Any, name: str) -> tuple[str, Any]:
    """The nearest module holding ``name`` whose forward takes ``input_ids``."""
    parts = name.split(".")
    for k in range(len(parts) - 1, -1, -1):
        path = ".".join(parts[:k])
        mod = model.get_submodule(path) if path else model
        if "input_ids" in inspect.signature(mod.forward).parameters:
            return path, mod
    raise ProbeError(f"the rows {name} reads could not be followed (no module hands it token ids)")


def measure_tables(cls: type, text: Any) -> tuple[ProbedTable, ...]:
    """Every learned position table of the text model: its rows, width and offset."""
    import torch
    from transformers.initialization import no_init_weights

    with _small_on_cpu(), no_init_weights():
        model = cls(text)
    model.eval()
    tables = learned_modules(model)
    token = _token(text)
    out = []
    for name, table in tables:
        rows, width = (int(s) for s in table.weight.shape)
        path, owner = _owner(model, name)
        sig = inspect.signature(owner.forward).parameters
        ids = torch.full((1, _SEQ), token, dtype=torch.long)
        kw: dict[str, Any] = {"input_ids": ids}
        if "decoder_input_ids" in sig:
            kw["decoder_input_ids"] = ids
        if "use_cache" in sig:
            kw["use_cache"] = False
        with _first_lookup(table.weight, meta_zeros=True) as seen:
            try:
                with torch.no_grad():
                    owner(**kw)
            except _Found:
                raise
            except Exception as exc:
                first = (str(exc).strip().splitlines() or [""])[0][:120]
                raise ProbeError(
                    f"the rows {name} reads could not be followed ({type(owner).__name__} "
                    f"failed when handed only token ids, without weights: "
                    f"{type(exc).__name__}: {first})"
                ) from exc
        if not seen or seen[0].device.type != "cpu":
            raise ProbeError(f"the rows {name} reads could not be followed")
        got = seen[0].reshape(-1, seen[0].shape[-1])[0].tolist()
        offset = int(got[0])
        if got != list(range(offset, offset + _SEQ)):
            raise ProbeError(
                f"{name} is read at rows {got} for positions 0-{_SEQ - 1}: not one row per "
                "position from a fixed offset"
            )
        out.append(ProbedTable(name, rows, width, offset, type(table).__name__, path))
    return tuple(out)


_SPAN = 300  # query and key positions of the measured bucket grid (past every max_distance)


def bias_modules(model: Any) -> list[tuple[str, Any]]:
    """T5-style relative position biases: attention modules that hold a
    ``relative_attention_bias`` table and compute it with ``compute_bias(q_len, k_len)``."""
    import torch

    return [
        (name, m)
        for name, m in model.named_modules()
        if isinstance(getattr(m, "relative_attention_bias", None), torch.nn.Embedding)
        and callable(getattr(m, "compute_bias", None))
        and list(inspect.signature(m.compute_bias).parameters)[:2] == ["query_length", "key_length"]
    ]


def measure_biases(cls: type, text: Any) -> tuple[ProbedBias, ...]:
    """Every T5-style bias table: its buckets and heads, and the bucket transformers' own
    ``compute_bias`` looks up for every (query, key) pair of a 300 x 300 grid (measured on the
    CPU; the table's values are not needed). The parameters are the module's; they are kept
    only if posecards' ``t5_relative_bucket`` gives the same grid."""
    import numpy as np
    import torch
    from transformers.initialization import no_init_weights

    from posecards.encodings.buckets import t5_relative_bucket

    with _small_on_cpu(), no_init_weights():
        model = cls(text)
    model.eval()
    out = []
    for name, attn in bias_modules(model):
        table = attn.relative_attention_bias
        with _first_lookup(table.weight) as seen, torch.no_grad():
            attn.compute_bias(_SPAN, _SPAN)
        if not seen or seen[0].device.type != "cpu":
            raise ProbeError(
                f"the buckets {name}.relative_attention_bias reads could not be followed"
            )
        got = seen[0].numpy()  # (queries, keys)
        buckets = int(attn.relative_attention_num_buckets)
        distance = int(attn.relative_attention_max_distance)
        q = np.arange(_SPAN)
        # bidirectional (an encoder) or not (a decoder): the one whose grid transformers makes
        fits = [
            bi
            for bi in (True, False)
            if got.shape == (_SPAN, _SPAN)
            and np.array_equal(
                got, t5_relative_bucket(q[None, :] - q[:, None], bi, buckets, distance)
            )
        ]
        if len(fits) == 1:
            bidirectional = fits[0]
        else:
            raise ProbeError(
                f"{name}: transformers' relative position buckets are not T5's "
                f"(num_buckets {buckets}, max_distance {distance}) as posecards computes them"
            )
        heads, rows = int(table.weight.shape[1]), int(table.weight.shape[0])
        out.append(ProbedBias(name, buckets, distance, bidirectional, heads, rows))
    return tuple(out)
