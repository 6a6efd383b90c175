"""A small causal transformer whose only position code is one of ``positions.SCHEMES`` (torch).

Pre-norm decoder: x = tok(x) [+ position table]; per layer x += attn(LN(x)), x += mlp(LN(x));
logits = head(LN(x)). Attention scores: s_ij = q_i·k_j / sqrt(d_head) + bias_ij, j <= i. Every
position array comes from ``positions`` (posecards' numpy math), converted to float32 once.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from posecards.config import MeasureSetup
from posecards.experiment import positions as P


def rotate_half(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``apply_rope`` in the "half" layout, in torch: x (..., n, d), cos/sin (n, d/2).

    x_a' = x_a cos - x_b sin, x_b' = x_b cos + x_a sin, pairs (k, k + d/2).
    """
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]  # (..., n, d/2)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)  # (..., n, d)


class Block(nn.Module):
    def __init__(self, s: MeasureSetup) -> None:
        super().__init__()
        self.heads = s.heads
        self.ln1 = nn.LayerNorm(s.d_model)
        self.qkv = nn.Linear(s.d_model, 3 * s.d_model)
        self.proj = nn.Linear(s.d_model, s.d_model)
        self.ln2 = nn.LayerNorm(s.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(s.d_model, s.d_ff), nn.GELU(), nn.Linear(s.d_ff, s.d_model)
        )

    def forward(
        self,
        x: torch.Tensor,  # (B, n, d)
        bias: torch.Tensor,  # (H or 1, n, n), -inf above the diagonal
        rope: tuple[torch.Tensor, torch.Tensor] | None,  # cos, sin (n, d_head/2)
    ) -> torch.Tensor:
        b, n, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
        if rope is not None:  # (B, H, n, d_head)
            q, k = rotate_half(q, *rope), rotate_half(k, *rope)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h) + bias  # (B, H, n, n)
        att = torch.softmax(scores, dim=-1) @ v  # (B, H, n, d_head)
        x = x + self.proj(att.transpose(1, 2).reshape(b, n, d))
        out: torch.Tensor = x + self.mlp(self.ln2(x))  # (B, n, d)
        return out


class PositionModel(nn.Module):
    """The transformer for one scheme. ``max_length``: the longest sequence it will be shown."""

    # buffers (position code that is not trained)
    untrained_rows: torch.Tensor  # learned: rows train_length..max_length-1, (max - L, d)
    buckets: torch.Tensor  # t5: bucket of (query, key), (max, max)
    pe: torch.Tensor  # sinusoidal: (max, d)
    alibi: torch.Tensor  # alibi: bias with the causal mask, (H, max, max)
    causal: torch.Tensor  # (1, max, max): 0 on and below the diagonal, -inf above

    def __init__(self, scheme: str, s: MeasureSetup, max_length: int) -> None:
        super().__init__()
        if scheme not in P.SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}; choose one of: {', '.join(P.SCHEMES)}")
        self.scheme, self.setup, self.max_length = scheme, s, max_length
        self.tok = nn.Embedding(s.vocab, s.d_model)
        nn.init.normal_(self.tok.weight, std=0.02)
        L = s.train_length
        if scheme == "learned":
            # rows 0..L-1 are trained; rows L..max_length-1 exist only to be read at evaluation:
            # a buffer keeps them at their initial values (no gradient, no weight decay)
            table = torch.randn(max_length, s.d_model) * 0.02  # (max_length, d)
            self.pos = nn.Parameter(table[:L].clone())
            self.register_buffer("untrained_rows", table[L:].clone())
        self.blocks = nn.ModuleList(Block(s) for _ in range(s.layers))
        self.ln_f = nn.LayerNorm(s.d_model)
        self.head = nn.Linear(s.d_model, s.vocab)
        if scheme == "t5":  # one scalar per bucket and head, shared by the layers (as in T5)
            self.t5 = nn.Parameter(torch.zeros(s.t5_buckets, s.heads))
            buckets = P.t5_buckets(max_length, s.t5_buckets, max_distance=L)  # (max, max)
            self.register_buffer("buckets", torch.from_numpy(buckets), persistent=False)
        if scheme == "sinusoidal":
            pe = P.sinusoid_table(max_length, s.d_model)  # (max_length, d)
            self.register_buffer("pe", torch.from_numpy(pe).float(), persistent=False)
        if scheme == "alibi":
            bias = P.alibi_mask(s.heads, max_length)  # (H, max, max)
            self.register_buffer("alibi", torch.from_numpy(bias).float(), persistent=False)
        causal = np.triu(np.full((max_length, max_length), -np.inf), k=1)  # (max, max)
        self.register_buffer("causal", torch.from_numpy(causal).float()[None], persistent=False)

    def position_rows(self, n: int) -> torch.Tensor:
        """The learned table for positions 0..n-1: trained rows, then untrained ones (n, d)."""
        return torch.cat((self.pos, self.untrained_rows), dim=0)[:n]

    def forward(
        self, tokens: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> torch.Tensor:
        """Logits (B, n, V) for tokens (B, n). ``rope``: cos, sin (n, d_head/2) for scheme rope."""
        n = tokens.shape[1]
        if n > self.max_length:
            raise ValueError(f"sequence of {n} tokens is longer than max_length {self.max_length}")
        x = self.tok(tokens)  # (B, n, d)
        if self.scheme == "learned":
            x = x + self.position_rows(n)
        elif self.scheme == "sinusoidal":
            x = x + self.pe[:n]
        if self.scheme == "alibi":
            bias = self.alibi[:, :n, :n]  # (H, n, n), masked
        elif self.scheme == "t5":
            rel = self.t5[self.buckets[:n, :n]].permute(2, 0, 1)  # (H, n, n)
            bias = rel + self.causal[:, :n, :n]
        else:
            bias = self.causal[:, :n, :n]  # (1, n, n)
        if self.scheme == "rope" and rope is None:
            raise ValueError("scheme rope needs the cos/sin tables")
        rope = rope if self.scheme == "rope" else None
        for block in self.blocks:
            x = block(x, bias, rope)
        logits: torch.Tensor = self.head(self.ln_f(x))  # (B, n, V)
        return logits


def rope_tables(
    s: MeasureSetup, length: int, scaling: str | None = None, factor: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin (length, d_head/2) as float32 tensors, from ``positions.rope_cos_sin``."""
    cos, sin = P.rope_cos_sin(
        length, s.d_model // s.heads, s.rope_base, scaling, factor, s.train_length
    )
    return torch.from_numpy(cos).float(), torch.from_numpy(sin).float()
