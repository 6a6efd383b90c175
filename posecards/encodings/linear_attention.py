"""Linear (kernelised) attention (Katharopoulos et al. 2020) and RoPE inside it (Su et al. 2021,
RoFormer section 3.3).

Softmax attention weighs key j by exp(q_iᵀk_j / √d); linear attention replaces that kernel by a
dot product of feature maps, φ(q_i)ᵀφ(k_j), with φ(x) = elu(x) + 1 > 0 (fast-transformers'
``elu_feature_map``):

    out_i = Σ_j φ(q_i)ᵀφ(k_j) v_j / Σ_j φ(q_i)ᵀφ(k_j)
          = φ(q_i)ᵀ [Σ_j φ(k_j) v_jᵀ] / φ(q_i)ᵀ [Σ_j φ(k_j)]           O(n·d²), not O(n²·d)

RoFormer rotates the features in the numerator only (R_m: RoPE at position m):

    out_i = Σ_j (R_i φ(q_i))ᵀ(R_j φ(k_j)) v_j / Σ_j φ(q_i)ᵀφ(k_j)

The denominator keeps the unrotated features: rotated products can be negative, and a sum of
them could come near zero. The weights of a row then no longer sum to 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64
from posecards.encodings.rope import apply_rope


def elu_feature_map(x: npt.ArrayLike) -> F64:
    """φ(x) = elu(x) + 1: x + 1 for x > 0, exp(x) for x <= 0; always > 0. Same shape."""
    a = np.asarray(x, dtype=np.float64)
    return np.where(a > 0, a + 1.0, np.exp(np.minimum(a, 0.0)))


@dataclass(frozen=True)
class LinearAttention:
    numerator: F64  # (n, n) the weight of key j in row i before dividing (rotated if RoPE)
    denominator: F64  # (n,) Σ_j φ(q_i)ᵀφ(k_j), never rotated
    outputs: F64  # (n, d_v)

    @property
    def weights(self) -> F64:
        return np.asarray(self.numerator / self.denominator[:, None], dtype=np.float64)  # (n, n)


def linear_attention(
    q: npt.ArrayLike,
    k: npt.ArrayLike,
    v: npt.ArrayLike,
    inv_freq: npt.ArrayLike | None = None,
    layout: str = "half",
    causal: bool = False,
) -> LinearAttention:
    """Linear attention of q, k (n, d) and v (n, d_v) with φ = elu + 1, in the quadratic form
    (the weights shown on the card); RoPE with ``inv_freq`` (d/2,) rotates the numerator's
    features at positions 0..n-1; ``causal`` keeps j <= i."""
    fq, fk = elu_feature_map(q), elu_feature_map(k)  # (n, d) each, > 0
    vv = np.asarray(v, dtype=np.float64)  # (n, d_v)
    n = fq.shape[0]
    keep = np.tril(np.ones((n, n))) if causal else np.ones((n, n))  # (n, n)
    denominator = (fq @ fk.T * keep).sum(axis=-1)  # (n,)
    if inv_freq is None:
        numerator = fq @ fk.T * keep  # (n, n)
    else:
        rq = apply_rope(fq, n, inv_freq, layout)  # (n, d) R_i φ(q_i)
        rk = apply_rope(fk, n, inv_freq, layout)  # (n, d) R_j φ(k_j)
        numerator = rq @ rk.T * keep  # (n, n)
    return LinearAttention(numerator, denominator, numerator @ vv / denominator[:, None])


def linear_attention_linear_time(
    q: npt.ArrayLike,
    k: npt.ArrayLike,
    v: npt.ArrayLike,
    inv_freq: npt.ArrayLike | None = None,
    layout: str = "half",
) -> F64:
    """The same outputs (non-causal) without an (n, n) matrix: φ(q_i)ᵀ S / φ(q_i)ᵀ z with
    S = Σ_j φ(k_j) v_jᵀ (d, d_v) and z = Σ_j φ(k_j) (d,); rotated features in S's numerator."""
    fq, fk = elu_feature_map(q), elu_feature_map(k)  # (n, d)
    vv = np.asarray(v, dtype=np.float64)  # (n, d_v)
    n = fq.shape[0]
    z = fk.sum(axis=0)  # (d,)
    if inv_freq is not None:
        fq_num = apply_rope(fq, n, inv_freq, layout)  # (n, d)
        fk_num = apply_rope(fk, n, inv_freq, layout)  # (n, d)
    else:
        fq_num, fk_num = fq, fk
    s = fk_num.T @ vv  # (d, d_v)
    return np.asarray((fq_num @ s) / (fq @ z)[:, None], dtype=np.float64)  # (n, d_v)
