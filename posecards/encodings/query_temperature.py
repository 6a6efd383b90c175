"""Query temperature: a position-dependent factor on the queries (Llama 4, Ministral 3).

Both multiply the query at position ``p`` (0-based) by a step function of ``p`` that grows like the
log of the length, so that attention does not flatten out as a context grows ("scalable softmax",
arXiv 2501.19399):

    tau(p) = 1 + scale * ln(1 + floor((p + shift) / floor_len))

- Llama 4 (``Llama4TextAttention``, NoPE layers only, when ``attn_temperature_tuning``):
  ``scale = attn_scale`` (0.1), ``floor_len = floor_scale`` (8192), ``shift = 1``;
- Ministral 3 (``get_llama_4_attn_scale``, every layer): ``scale = llama_4_scaling_beta``,
  ``floor_len = rope_parameters['original_max_position_embeddings']``, ``shift = 0``.

``tau = 1`` up to ``p = floor_len - 1 - shift``; it changes only at multiples of ``floor_len``.
Since ``q`` is multiplied, the logits ``q . k`` are multiplied by ``tau(p)`` too (the softmax scale
is separate).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, as_positions


def query_temperature(
    positions: int | npt.ArrayLike, scale: float, floor_len: float, shift: float = 0.0
) -> F64:
    """``tau(p) = 1 + scale * ln(1 + floor((p + shift) / floor_len))``, shape ``(n,)``.

    An int ``positions`` means ``0..n-1``. ``floor_len > 0``; positions must be >= 0.
    """
    pos = as_positions(positions)  # (n,)
    if np.any(pos < 0):
        raise ValueError("positions must be >= 0")
    s, f, sh = float(scale), float(floor_len), float(shift)
    if not math.isfinite(s):
        raise ValueError(f"scale must be a finite number, got {scale!r}")
    if not math.isfinite(f) or f <= 0:
        raise ValueError(f"floor_len must be a finite number > 0, got {floor_len!r}")
    if not math.isfinite(sh) or sh < 0:
        raise ValueError(f"shift must be a finite number >= 0, got {shift!r}")
    steps = np.floor((pos + sh) / f)  # (n,) whole multiples of floor_len passed
    return 1.0 + s * np.log1p(steps)  # (n,)


def query_temperature_steps(floor_len: float, shift: float, upto: float) -> F64:
    """The positions where ``tau`` changes, ``p_j = j * floor_len - shift`` for ``j = 1, 2, ...``
    up to ``upto`` (inclusive), shape ``(m,)``; ``tau`` is constant between two of them."""
    f, sh = float(floor_len), float(shift)
    if not math.isfinite(f) or f <= 0:
        raise ValueError(f"floor_len must be a finite number > 0, got {floor_len!r}")
    n = int(math.floor((float(upto) + sh) / f))
    return np.arange(1, max(n, 0) + 1, dtype=np.float64) * f - sh  # (m,)
