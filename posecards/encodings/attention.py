"""Self-attention is permutation-equivariant: without position information it cannot see order.

For a permutation matrix P, single-head attention without positions satisfies

    Attn(P X) = P Attn(X),   Attn(X) = softmax(X Wq (X Wk)^T / sqrt(d_k)) X Wv

so a reordered sentence gives the same output rows, only reordered. Adding a positional
encoding (X + PE) breaks this, because PE is not permuted with the tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posecards.encodings._checks import F64, check_even_dim, check_positive_int
from posecards.encodings.sinusoidal import sinusoidal_pe


@dataclass(frozen=True)
class PermutationDemo:
    """Everything the permutation panel shows; arrays are float64."""

    tokens: tuple[str, ...]
    order: tuple[int, ...]  # the reordered sentence is tokens[order]
    weights_plain: F64  # (n, n) attention weights, original order, no PE
    weights_plain_reordered: F64  # (n, n) same, reordered input
    weights_pe: F64  # (n, n) with sinusoidal PE added
    weights_pe_reordered: F64  # (n, n)
    outputs_plain: F64  # (n, d_model)
    outputs_plain_reordered: F64  # (n, d_model)
    outputs_pe: F64  # (n, d_model)
    outputs_pe_reordered: F64  # (n, d_model)
    deviation_without_pe: float  # max |Attn(PX) - P Attn(X)|   (rounding only, ~1e-16)
    deviation_with_pe: float  # max |Attn(PX + PE) - P Attn(X + PE)|  (order is visible)


def attention_permutation_demo(
    tokens: tuple[str, ...] = ("I", "eat", "apples"),
    order: tuple[int, ...] | None = None,
    d_model: int = 16,
    seed: int = 0,
) -> PermutationDemo:
    """Run one attention head (torch, float64, fixed seed) on a sentence and a reordering of it.

    ``order`` defaults to the reversal. Token embeddings and Wq, Wk, Wv are N(0, 1/d_model)
    draws from ``torch.Generator().manual_seed(seed)``; the same token always gets the same
    embedding, wherever it stands. Embedding rows are handed out in order of first appearance, so
    a translation of the sentence with the same pattern of repeated words (the English and
    Chinese cards) gives the same numbers.
    """
    import torch  # heavy: imported only when the demo runs

    n = check_positive_int("number of tokens", len(tokens))
    d_model = check_even_dim("d_model", d_model)
    perm = tuple(range(n))[::-1] if order is None else tuple(int(i) for i in order)
    if sorted(perm) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}, got {perm}")

    gen = torch.Generator().manual_seed(seed)
    scale = d_model**-0.5

    def draw(*shape: int) -> torch.Tensor:
        weights: torch.Tensor = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale
        return weights

    vocab = list(dict.fromkeys(tokens))  # distinct tokens, in order of first appearance
    table = draw(len(vocab), d_model)  # (vocab, d_model)
    wq, wk, wv = draw(d_model, d_model), draw(d_model, d_model), draw(d_model, d_model)
    x = table[[vocab.index(t) for t in tokens]]  # (n, d_model)
    p = torch.tensor(perm)
    pe = torch.from_numpy(sinusoidal_pe(n, d_model))  # (n, d_model), float64

    def attend(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = h @ wq, h @ wk, h @ wv  # (n, d_model) each
        w = torch.softmax(q @ k.T / d_model**0.5, dim=-1)  # (n, n)
        return w, w @ v  # (n, n), (n, d_model)

    w0, y0 = attend(x)
    w1, y1 = attend(x[p])
    w2, y2 = attend(x + pe)
    w3, y3 = attend(x[p] + pe)

    def as_np(t: torch.Tensor) -> F64:
        return np.asarray(t.numpy(), dtype=np.float64)

    return PermutationDemo(
        tokens=tuple(tokens),
        order=perm,
        weights_plain=as_np(w0),
        weights_plain_reordered=as_np(w1),
        weights_pe=as_np(w2),
        weights_pe_reordered=as_np(w3),
        outputs_plain=as_np(y0),
        outputs_plain_reordered=as_np(y1),
        outputs_pe=as_np(y2),
        outputs_pe_reordered=as_np(y3),
        deviation_without_pe=float((y1 - y0[p]).abs().max()),
        deviation_with_pe=float((y3 - y2[p]).abs().max()),
    )
