"""The probe's cheap pass (posecards/model/probe/record.norms_bypassed: every layer norm hands its
input on) reads exactly what the pass through the whole model reads, and is the pass taken.

The zoo test (tests/test_inspect_zoo.py) holds every reading against transformers; this holds
the shortcut against the model as it is, for a plain decoder, per-layer-type RoPE, MLA with a
mixture of experts (the feed-forward bypass after the cheap pass), MRoPE and a hybrid with
linear-attention layers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import transformers as T

from posecards.model import probe as P
from posecards.model.probe import record as R

TYPES = ["llama", "gemma3_text", "deepseek_v3", "qwen2_5_vl_text", "qwen3_next"]


def _summary(p: P.ProbeReading) -> tuple[Any, ...]:
    rope = {
        k: (r.inv_freq.tolist(), r.attention_factor, r.pairs, r.layout, r.axes, r.head_slots)
        for k, r in sorted(p.rope.items())
    }
    return p.layers, rope, p.model_class


def _norm_calls(model_type: str) -> tuple[type, list[int]]:
    """The text model's RMS-norm class and a counter of its (class-level) forward calls."""
    import importlib

    module = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    cls = next(
        obj
        for name, obj in vars(module).items()
        if name.endswith("RMSNorm") and isinstance(obj, type) and obj.__module__ == module.__name__
    )
    return cls, [0]


@contextlib.contextmanager
def _counted(cls: type, calls: list[int]) -> Iterator[None]:
    real = cls.forward  # type: ignore[attr-defined]

    def forward(self: Any, *a: Any, **kw: Any) -> Any:
        calls[0] += 1
        return real(self, *a, **kw)

    cls.forward = forward  # type: ignore[attr-defined]
    try:
        yield
    finally:
        cls.forward = real  # type: ignore[attr-defined]


@pytest.mark.parametrize("model_type", TYPES)
def test_the_pass_without_norms_reads_what_the_whole_model_reads(
    model_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {"model_type": model_type, **T.AutoConfig.for_model(model_type).to_dict()}
    module = model_type.removesuffix("_text")
    cls, calls = _norm_calls(module)
    with _counted(cls, calls):
        fast = P.probe(config)
    assert calls[0] == 0  # the cheap pass was the one taken: no norm ran

    @contextlib.contextmanager
    def refused(model: Any) -> Iterator[None]:
        raise RuntimeError("no shortcut")
        yield

    monkeypatch.setattr(R, "norms_bypassed", refused)
    with _counted(cls, calls):
        whole = P.probe(config)
    assert calls[0] > 0  # the whole model ran, norms included
    assert _summary(fast) == _summary(whole)
    assert any(la.rope for la in fast.layers)
    for key, r in fast.rope.items():
        np.testing.assert_array_equal(r.inv_freq, whole.rope[key].inv_freq)
