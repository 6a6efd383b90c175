"""The probing pass's meta-op cache (posecards/model/probe/meta_ops.py) gives every op the
outputs torch's own meta kernel gives, remembers only what it may, and the probe reads the same
with it as without it; the probe runs torch on one thread and gives the caller's count back.

The zoo test (tests/test_inspect_zoo.py) holds every reading against transformers; this holds
the cache against torch's meta kernels and against the probe without it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from hypothesis import given
from hypothesis import strategies as st

from posecards.model import probe as P
from posecards.model.probe import meta_ops as MO
from posecards.model.probe import record as R

TYPES = ["llama", "gemma3_text", "deepseek_v3", "qwen2_5_vl_text", "qwen3_next", "gpt_neox"]


def _meta(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device="meta")


def _described(out: Any) -> list[tuple[Any, ...]]:
    outs = out if isinstance(out, tuple | list) else (out,)
    return [(o.shape, o.stride(), o.storage_offset(), o.dtype, o.device.type) for o in outs]


# ops as a model's forward runs them, on plain and on strided (transposed, sliced) inputs
OPS: dict[str, Callable[[torch.Tensor], Any]] = {
    "add broadcast": lambda x: x + x[..., :1],
    "mul transposed": lambda x: x.transpose(-1, -2) * 2.0,
    "linear": lambda x: torch.nn.functional.linear(x, _meta(5, x.shape[-1])),
    "matmul": lambda x: x @ x.transpose(-1, -2),
    "softmax float32": lambda x: torch.softmax(x, dim=-1, dtype=torch.float32),
    "cat": lambda x: torch.cat([x, x], dim=-1),
    "to bfloat16": lambda x: x.to(torch.bfloat16) + 1,
    "sum keepdim": lambda x: x.sum(-1, keepdim=True),
    "split then mul": lambda x: [t * t for t in torch.split(x, [1, x.shape[-1] - 1], dim=-1)],
    "int compare": lambda x: torch.arange(x.shape[-1], device="meta")[None, :] < 3,
}


@pytest.mark.parametrize("name", sorted(OPS))
@given(shape=st.lists(st.integers(2, 5), min_size=2, max_size=4))
def test_a_cached_op_gives_the_meta_kernels_outputs(name: str, shape: list[int]) -> None:
    op = OPS[name]
    x = _meta(*shape)
    want = _described(op(x))
    mode = MO.meta_ops()
    with mode:
        first = op(x)
        hits = mode.hits
        second = op(x)
    assert _described(first) == want and _described(second) == want
    assert mode.hits > hits  # the second time from the cache
    firsts = first if isinstance(first, list) else [first]
    seconds = second if isinstance(second, list) else [second]
    assert all(a is not b for a, b in zip(firsts, seconds, strict=True))  # fresh tensors


def test_views_writes_and_cpu_tensors_are_not_remembered() -> None:
    x = _meta(2, 3)
    mode = MO.meta_ops()
    with mode:
        assert x.add_(1) is x  # in place: the argument itself, as without the cache
        assert x.view(3, 2)._base is x
        y = x[:, 1:]
        assert y.storage_offset() == 1
        cpu = torch.arange(4) * 2  # real values on the CPU
        assert cpu.tolist() == [0, 2, 4, 6]
        again = torch.arange(4) * 2
    assert again.tolist() == [0, 2, 4, 6]
    assert mode.seen == {} and mode.hits == 0
    assert not MO.cacheable(torch.ops.aten.add_.Tensor)
    assert not MO.cacheable(torch.ops.aten.view.default)
    assert not MO.cacheable(torch.ops.aten.nonzero.default)  # its shape depends on the data
    assert not MO.cacheable(torch.ops.aten.rand.default)
    assert MO.cacheable(torch.ops.aten.add.Tensor)


def test_a_failing_op_fails_every_time_and_the_cache_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b = _meta(2, 3), _meta(2, 3)
    mode = MO.meta_ops()
    with mode:
        for _ in range(2):
            with pytest.raises(RuntimeError, match="same reduction dim"):
                a @ b
    assert mode.seen == {}
    monkeypatch.setattr(MO, "MAX_ENTRIES", 2)
    mode = MO.meta_ops()
    with mode:
        for n in range(2, 6):
            assert (_meta(n) + 1).shape == (n,)
    assert len(mode.seen) == 2


def test_the_key_holds_the_default_dtype() -> None:
    mode = MO.meta_ops()
    before = torch.get_default_dtype()
    try:
        with mode:
            a = torch.ones(3, device="meta")
            torch.set_default_dtype(torch.float64)
            b = torch.ones(3, device="meta")
    finally:
        torch.set_default_dtype(before)
    assert (a.dtype, b.dtype) == (torch.float32, torch.float64)


def _summary(p: P.ProbeReading) -> tuple[Any, ...]:
    rope = {
        k: (r.inv_freq.tolist(), r.attention_factor, r.pairs, r.layout, r.axes, r.head_slots)
        for k, r in sorted(p.rope.items())
    }
    return p.layers, rope, p.model_class, p.learned, p.relative, p.absolute


@pytest.mark.parametrize("model_type", TYPES)
def test_the_probe_reads_the_same_without_the_cache(
    model_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {"model_type": model_type, **T.AutoConfig.for_model(model_type).to_dict()}
    modes: list[Any] = []
    real = MO.meta_ops

    def counted() -> Any:
        modes.append(real())
        return modes[-1]

    monkeypatch.setattr(R, "meta_ops", counted)
    cached = P.probe(config)
    assert sum(m.hits for m in modes) > 0  # the cache was used
    monkeypatch.setattr(R, "meta_ops", contextlib.nullcontext)
    plain = P.probe(config)
    assert _summary(cached) == _summary(plain)
    assert any(la.rope for la in cached.layers)
    for key, r in cached.rope.items():
        np.testing.assert_array_equal(r.inv_freq, plain.rope[key].inv_freq)


def _during_forward_pass(monkeypatch: pytest.MonkeyPatch, read: Callable[[], Any]) -> list[Any]:
    """``read()`` of the process's state at each of the probe's forward passes (filled as the
    probes run)."""
    seen: list[Any] = []
    real = R.forward_pass

    def forward_pass(model: Any, text: Any) -> None:
        seen.append(read())
        real(model, text)

    monkeypatch.setattr(R, "forward_pass", forward_pass)
    return seen


def test_the_probe_runs_torch_on_one_thread_and_gives_the_count_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _during_forward_pass(monkeypatch, torch.get_num_threads)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        P.probe({"model_type": "llama", "num_hidden_layers": 2})
        after = torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}
    assert after == 2


def test_the_probe_runs_without_automatic_collection_and_gives_the_setting_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _during_forward_pass(monkeypatch, gc.isenabled)
    enabled = gc.isenabled()
    try:
        for setting in (True, False):
            (gc.enable if setting else gc.disable)()
            P.probe({"model_type": "llama", "num_hidden_layers": 2})
            assert gc.isenabled() is setting
    finally:
        (gc.enable if enabled else gc.disable)()
    assert seen == [False, False]
