"""Multi-head latent attention (MLA, DeepSeek-V2/V3): the decoupled RoPE slice and its two scales.

Each query/key head of MLA is ``[nope | rope]``: ``qk_nope_head_dim`` content slots that never
rotate, then ``qk_rope_head_dim`` slots that RoPE rotates (one rotated key per token, shared by all
heads). Scores are ``q . k = q_nope . k_nope + q_rope . R(n - m) k_rope``, over
``qk_head_dim = qk_nope_head_dim + qk_rope_head_dim`` slots.

YaRN moves its magnitude in two places, and transformers 5.23.0 keeps them apart:

- cos and sin (the rotary module) are multiplied by ``m(s, mscale) / m(s, mscale_all_dim)``
  (``rope_inv_freq``'s attention factor): 1 when ``mscale == mscale_all_dim`` (DeepSeek-V3);
- the softmax scale (the attention module) is ``qk_head_dim^(-1/2) * m(s, mscale_all_dim)^2``
  (DeepSeek ``yarn_apply_mscale``) whenever ``rope_type`` is not default and ``mscale_all_dim`` is
  truthy, where ``m(s, x) = 0.1 x ln s + 1`` (``yarn_mscale``).

Pair slots of the rotated part: ``rope_pair_slots(qk_head_dim, qk_rope_head_dim, layout,
first=qk_nope_head_dim)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from posecards.encodings._checks import check_positive_int
from posecards.encodings.rope_scaling import yarn_mscale


def mla_softmax_scale(
    qk_nope_head_dim: int, qk_rope_head_dim: int, parameters: Mapping[str, Any]
) -> float:
    """What MLA multiplies ``q . k`` by: ``(d_nope + d_rope)^(-1/2) * m^2``.

    ``m = yarn_mscale(factor, mscale_all_dim)`` if ``parameters['rope_type']`` is not default and
    ``mscale_all_dim`` is truthy, else 1 (HF ``yarn_apply_mscale``: it reads ``factor`` as given,
    so DeepSeek's ``factor`` must be in the dict).
    """
    nope = int(qk_nope_head_dim)
    if isinstance(qk_nope_head_dim, bool) or nope != qk_nope_head_dim or nope < 0:
        raise ValueError(f"qk_nope_head_dim must be an integer >= 0, got {qk_nope_head_dim!r}")
    rope = check_positive_int("qk_rope_head_dim", qk_rope_head_dim)
    scale = (nope + rope) ** -0.5  # qk_head_dim^(-1/2)
    rope_type = parameters.get("rope_type", "default")
    mscale_all_dim = parameters.get("mscale_all_dim", 0)
    if rope_type != "default" and mscale_all_dim:
        factor = parameters.get("factor")
        if factor is None:
            raise ValueError("parameters['factor'] is required for the MLA mscale")
        f = float(factor)
        if not math.isfinite(f) or f <= 0:
            raise ValueError(f"parameters['factor'] must be a finite number > 0, got {factor!r}")
        m = yarn_mscale(f, float(mscale_all_dim))
        scale = scale * m * m  # HF: scaling * mscale * mscale
    return float(scale)
