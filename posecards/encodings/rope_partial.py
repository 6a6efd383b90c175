"""Which part of a head rotates: partial rotary and Gemma 4's proportional RoPE, in float64.

A head of ``D = head_dim`` slots holds ``D/2`` pairs. transformers rotates only some of them:

- partial rotary (GPT-NeoX ``rotary_pct``, Phi ``partial_rotary_factor``, GLM, Qwen3-Next): the
  first ``d = int(D * p)`` slots rotate with ``theta_k = b^(-2k/d)``, ``k < d/2`` (the exponent's
  denominator is the *rotated* width ``d``); slots ``d..D-1`` pass through. The rotary module holds
  ``d/2`` frequencies.
- ``proportional`` (Gemma 4's full-attention layers): every pair is "rotated", but only the first
  ``r = int(p * D // 2)`` pairs turn, with ``theta_k = b^(-2k/D) / s`` (the denominator is the
  *whole* head); the other ``D/2 - r`` pairs get frequency 0, i.e. angle 0 at every position. The
  rotary module holds ``D/2`` frequencies, zeros at the end. Because of the ``half`` layout
  (``rotate_half``), the zero pairs are slots ``r..D/2-1`` and ``D/2+r..D-1``: the middle and the
  end of the head, not one block.

So with ``p = 0.25``: partial rotary's slowest wavelength is ``2 pi b^((d-2)/d)`` (almost ``2 pi b``),
proportional's is ``2 pi b^((2r-2)/D)`` (about ``2 pi b^(p)``): the same ``p`` and ``b`` give very
different longest wavelengths.

``head_inv_freq`` is the one entry point: it returns what a transformers 5.23.0 rotary module holds
for one ``rope_parameters`` dict (``rope_inv_freq`` for every scaling type, on the rotated width).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from posecards.encodings._checks import F64, check_positive_int
from posecards.encodings.rope_scaling import ROPE_REGISTRY, rope_inv_freq

# rope_type values head_inv_freq accepts: every declared type (rope_inv_freq's and Gemma 4's
# proportional)
HEAD_ROPE_TYPES: tuple[str, ...] = tuple(ROPE_REGISTRY)
# the rope_parameters keys Gemma 4's proportional RoPE reads (besides partial_rotary_factor)
PROPORTIONAL_KEYS: tuple[str, ...] = ("rope_type", "type", "rope_theta", "factor")


def _fraction(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}") from None
    if not math.isfinite(v) or not 0.0 < v <= 1.0:
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return v


def rotary_dim(head_dim: int, partial_rotary_factor: float = 1.0) -> int:
    """Rotated slots of a head: ``d = int(head_dim * partial_rotary_factor)`` (transformers).

    Must be even and at least 2 (transformers would rotate ``ceil(d/2)`` pairs of an odd ``d``
    with exponents ``2k/d``; no published model does, and posecards refuses it).
    """
    head_dim = check_positive_int("head_dim", head_dim)
    p = _fraction("partial_rotary_factor", partial_rotary_factor)
    d = int(head_dim * p)
    if d < 2 or d % 2:
        raise ValueError(
            f"rotary dim int(head_dim * partial_rotary_factor) = int({head_dim} * {p:g}) = {d}; "
            "it must be an even number >= 2"
        )
    return d


def proportional_pairs(head_dim: int, partial_rotary_factor: float) -> int:
    """Turning pairs of Gemma 4's proportional RoPE: ``r = int(p * head_dim // 2)``."""
    head_dim = check_positive_int("head_dim", head_dim)
    p = _fraction("partial_rotary_factor", partial_rotary_factor)
    r = int(p * head_dim // 2)  # HF: int(rope_proportion * head_dim // 2)
    if r < 1:
        raise ValueError(
            f"proportional RoPE with head_dim {head_dim} and partial_rotary_factor {p:g} "
            "turns no pair"
        )
    return r


def proportional_inv_freq(
    head_dim: int, base: float, partial_rotary_factor: float = 1.0, factor: float = 1.0
) -> F64:
    """Gemma 4 ``proportional``: shape ``(head_dim/2,)``.

    ``theta_k = base^(-2k/head_dim) / factor`` for ``k < r = int(p * head_dim // 2)``, and 0 for
    ``r <= k < head_dim/2`` (HF ``_compute_proportional_rope_parameters``).
    """
    r = proportional_pairs(head_dim, partial_rotary_factor)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even for proportional RoPE, got {head_dim}")
    # the first r entries of the whole-head frequencies, divided by s: rope_inv_freq's linear type
    turning, _ = rope_inv_freq(head_dim, base, {"rope_type": "linear", "factor": factor})
    inv_freq = np.zeros(head_dim // 2, dtype=np.float64)  # (head_dim/2,)
    inv_freq[:r] = turning[:r]
    return inv_freq


def head_inv_freq(
    head_dim: int,
    parameters: Mapping[str, Any],
    *,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    partial_in_default: bool = True,
) -> tuple[F64, float]:
    """The frequencies a transformers rotary module holds for one head, and the cos/sin factor.

    ``parameters`` is one standardized ``rope_parameters`` dict (``rope_type``, ``rope_theta``,
    optional ``partial_rotary_factor`` and the scaling keys of ``rope_inv_freq``). Returns
    ``(inv_freq, attention_factor)``:

    - ``proportional``: ``proportional_inv_freq`` (``head_dim/2`` entries, zeros at the end), 1;
    - every other type: ``rope_inv_freq(rotary_dim(head_dim, p), rope_theta, scaling)``
      (``d/2`` entries). ``partial_in_default=False`` is for the rotary modules whose own
      ``compute_default_rope_parameters`` ignores ``partial_rotary_factor`` (Llama, Qwen2,
      Gemma, ...): with ``rope_type`` default they rotate the whole head.

    ``seq_len`` None is the module as built (dynamic: the base frequencies; longrope: the short
    factors).
    """
    head_dim = check_positive_int("head_dim", head_dim)
    params = dict(parameters)
    rope_type = params.get("rope_type") or params.get("type") or "default"
    if rope_type not in HEAD_ROPE_TYPES:
        raise ValueError(
            f"unknown rope_type {rope_type!r}; choose one of: {', '.join(HEAD_ROPE_TYPES)}"
        )
    partial = params.pop("partial_rotary_factor", None)
    partial = 1.0 if partial is None else _fraction("partial_rotary_factor", partial)
    if "rope_theta" not in params or params["rope_theta"] is None:
        raise ValueError("parameters['rope_theta'] is required")
    if rope_type == "proportional":
        unknown = sorted(set(params) - set(PROPORTIONAL_KEYS))
        if unknown:
            raise ValueError(
                f"unknown key(s) {', '.join(map(repr, unknown))} for rope_type 'proportional'"
            )
        factor = params.get("factor")
        inv_freq = proportional_inv_freq(
            head_dim, float(params["rope_theta"]), partial, 1.0 if factor is None else factor
        )
        return inv_freq, 1.0
    if rope_type == "default" and not partial_in_default:
        partial = 1.0
    dim = rotary_dim(head_dim, partial)
    return rope_inv_freq(
        dim,
        scaling=params,
        seq_len=seq_len,
        max_position_embeddings=max_position_embeddings,
    )
