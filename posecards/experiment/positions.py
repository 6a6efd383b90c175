"""The position code of every scheme, computed by posecards' math layer (numpy, float64).

The torch model (``model.py``) only adds, rotates or biases with these arrays, so the experiment
runs the same functions the other cards show. Beyond the training length L each scheme does:

- ``nope``: nothing; only the causal mask carries order.
- ``learned``: a table of L trained rows; positions >= L read rows that are never trained: they keep
  their random initial values N(0, 0.02²) (a buffer, not a parameter: see ``model.py``).
- ``sinusoidal``: ``sinusoidal_pe`` is defined for every position; the model never saw p >= L.
- ``rope``: ``apply_rope`` rotates by any angle p·θ_k; angles past (L-1)·θ_k were never seen.
  With inference scaling, θ_k comes from ``rope_inv_freq`` with factor s = eval length / L
  (original length L): ``linear`` (position interpolation), ``ntk`` (NTK-aware), ``yarn``; YaRN's
  attention factor multiplies cos and sin as Hugging Face does (scores grow by its square).
- ``alibi``: ``alibi_bias``: -m_h·(i - j) for any distance.
- ``t5``: one learned scalar per head and bucket, ``t5_relative_bucket`` unidirectional with
  max_distance = L: every distance >= L shares the last bucket, which distances below L already
  reach, so no bucket is untrained.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.encodings.alibi import alibi_bias
from posecards.encodings.buckets import t5_relative_bucket
from posecards.encodings.rope import rope_angles
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.sinusoidal import sinusoidal_pe

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

SCHEMES: tuple[str, ...] = ("nope", "learned", "sinusoidal", "rope", "alibi", "t5")
SCALINGS: tuple[str, ...] = ("linear", "ntk", "yarn")  # RoPE at inference only

BEYOND: dict[str, str] = {
    "nope": "no position code; only the causal mask",
    "learned": "rows for positions >= train_length are never trained (kept at their N(0, 0.02^2) init)",
    "sinusoidal": "sinusoidal_pe at every position (never seen past train_length)",
    "rope": "apply_rope at every position; with scaling, rope_inv_freq factor = eval_length / train_length",
    "alibi": "alibi_bias -m_h (i - j) at every distance",
    "t5": "t5_relative_bucket (unidirectional, max_distance = train_length): far distances share the last, trained bucket",
}


def sinusoid_table(length: int, d_model: int) -> F64:
    """PE(p) for p = 0..length-1, shape (length, d_model), interleaved layout (Vaswani)."""
    return sinusoidal_pe(length, d_model, base=10000.0, layout="interleaved")


def rope_scaling_dict(
    scaling: str | None, factor: float, train_length: int
) -> dict[str, Any] | None:
    """The Hugging Face ``rope_parameters`` for an inference-time scaling (None: plain RoPE)."""
    if scaling is None:
        return None
    rope_type = {"linear": "linear", "ntk": "ntk", "yarn": "yarn"}[scaling]
    out: dict[str, Any] = {"rope_type": rope_type, "factor": float(factor)}
    if rope_type == "yarn":
        out["original_max_position_embeddings"] = int(train_length)
    return out


def rope_cos_sin(
    length: int,
    head_dim: int,
    base: float,
    scaling: str | None = None,
    factor: float = 1.0,
    train_length: int = 0,
) -> tuple[F64, F64]:
    """cos and sin of the angles p·θ_k (times the attention factor), each (length, head_dim/2)."""
    params = rope_scaling_dict(scaling, factor, train_length)
    inv_freq, attention = rope_inv_freq(head_dim, base, params)  # (head_dim/2,), scalar
    angles = rope_angles(length, inv_freq)  # (length, head_dim/2)
    return np.cos(angles) * attention, np.sin(angles) * attention


def alibi_mask(heads: int, length: int) -> F64:
    """ALiBi bias with the causal mask (-inf above the diagonal), shape (heads, length, length)."""
    return alibi_bias(heads, length, causal=True)


def t5_buckets(length: int, num_buckets: int, max_distance: int) -> I64:
    """Bucket of key j for query i, shape (length, length); relative position = j - i."""
    pos = np.arange(length, dtype=np.int64)  # (L,)
    rel = pos[None, :] - pos[:, None]  # (L, L): key - query
    return t5_relative_bucket(
        rel, bidirectional=False, num_buckets=num_buckets, max_distance=max_distance
    )
