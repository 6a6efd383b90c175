"""The frequencies transformers' rotary code holds, the rope_parameters they come from, the MRoPE
axis of every pair, and what the attention code multiplies q by before the kernel."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from posecards.model.probe.record import Recorder
from posecards.model.probe.types import ProbeError


def attention_table_frequencies(decoder: list[Any], mod: Any) -> tuple[np.ndarray, float]:
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


def module_frequencies(module: Any, key: str) -> tuple[np.ndarray, float]:
    name = (
        "inv_freq" if key == "rope" or not hasattr(module, f"{key}_inv_freq") else f"{key}_inv_freq"
    )
    buf = getattr(module, name)
    factor_name = "attention_scaling" if name == "inv_freq" else f"{key}_attention_scaling"
    factor = getattr(module, factor_name, 1.0)
    if isinstance(factor, dict):
        factor = factor[key]
    return buf.detach().double().numpy().copy(), float(factor)


def rope_parameters(text: Any, key: str) -> dict[str, Any]:
    rp = getattr(text, "rope_parameters", None)
    if not isinstance(rp, Mapping):
        # GPT-J, CodeGen: create_sinusoidal_positions' own base (checked against its table)
        return {"rope_type": "default", "rope_theta": 10000.0}
    if key in rp and isinstance(rp[key], Mapping):
        return dict(rp[key])
    return dict(rp)


def driven_axes(module: Any, key: str, n: int, rec: Recorder) -> tuple[str, ...] | None:
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


_PRESCALE = re.compile(
    r"^\s*(?:query_states|query|q|xq)\s*(?:\*=\s*(.+)|=\s*.*\b(?:query_states|query|q|xq)\b\)?\s*\*\s*(.+))$",
    re.M,
)


@functools.cache
def prescale(cls: type) -> str | None:
    """What the attention module's own code multiplies q by before the kernel, if anything."""
    try:
        src = inspect.getsource(cls.forward)  # type: ignore[attr-defined]
    except (OSError, TypeError):
        return None
    m = _PRESCALE.search(src)
    if m is None:
        return None
    return (m.group(1) or m.group(2)).strip()
