"""Per-frame data of the deck's animations, every frame computed by the math layer.

This module plays the content role for the animations: it calls posecards.encodings and
returns arrays; posecards.deck.draw draws them and computes nothing. No plotting here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posecards.config import PEParams
from posecards.encodings.alibi import alibi_bias, alibi_slopes
from posecards.encodings.rope import apply_rope, rope_angles
from posecards.encodings.sinusoidal import pair_frequencies, sinusoidal_pe
from posecards.encodings.softmax import softmax

N_FRAMES = 48
# RoPE: one rotation pair (dim 2) with the angle per position of card 3's worked example.
ROPE_THETA = 0.5  # rad per position (card 3: θ = 0.5)
ROPE_OFFSET = 4  # n − m, fixed while both positions advance
# PE clocks: pairs of the card's d_model shown as clock hands (spread from fast to slow).
CLOCK_PAIRS = 4
# ALiBi: heads shown and the keys a query sees.
ALIBI_HEADS = 8
ALIBI_SHOWN = (0, 2, 4, 7)  # heads 1, 3, 5, 8 (1-based)
ALIBI_KEYS = 32


@dataclass(frozen=True)
class RopeFrames:
    """q at position m, k at position n = m + offset, rotated by one RoPE pair."""

    theta: float
    offset: int
    m: np.ndarray  # (frames,) query positions
    n: np.ndarray  # (frames,) key positions
    q: np.ndarray  # (2,) unrotated query
    k: np.ndarray  # (2,) unrotated key
    q_rot: np.ndarray  # (frames, 2) R(mθ) q
    k_rot: np.ndarray  # (frames, 2) R(nθ) k
    angle_q: np.ndarray  # (frames,) mθ
    angle_k: np.ndarray  # (frames,) nθ
    score: np.ndarray  # (frames,) <R(mθ) q, R(nθ) k>


def rope_frames(n_frames: int = N_FRAMES) -> RopeFrames:
    """RoPE turning q and k as the position advances; their relative angle stays (n − m)θ."""
    inv_freq = np.array([ROPE_THETA], dtype=np.float64)  # (1,) one pair
    m = np.arange(n_frames, dtype=np.float64)  # (F,)
    n = m + ROPE_OFFSET  # (F,)
    q = np.array([1.0, 0.0], dtype=np.float64)  # (2,)
    k = np.array([1.0, 0.0], dtype=np.float64)  # (2,) = q: the angle between them is (n − m)θ
    # one vector per frame, each at its own position: x (F, 2) at positions (F,)
    q_rot = apply_rope(np.tile(q, (n_frames, 1)), m, inv_freq, layout="interleaved")  # (F, 2)
    k_rot = apply_rope(np.tile(k, (n_frames, 1)), n, inv_freq, layout="interleaved")  # (F, 2)
    return RopeFrames(
        theta=ROPE_THETA,
        offset=ROPE_OFFSET,
        m=m,
        n=n,
        q=q,
        k=k,
        q_rot=q_rot,
        k_rot=k_rot,
        angle_q=rope_angles(m, inv_freq)[:, 0],  # (F,)
        angle_k=rope_angles(n, inv_freq)[:, 0],  # (F,)
        score=np.einsum("fi,fi->f", q_rot, k_rot),  # (F,)
    )


@dataclass(frozen=True)
class ClockFrames:
    """Sinusoidal PE pairs as clock hands: hand i points at (sin pω_i, cos pω_i)."""

    d_model: int
    base: float
    pairs: np.ndarray  # (C,) pair indices i
    omega: np.ndarray  # (C,) ω_i, rad per position
    positions: np.ndarray  # (frames,)
    hands: np.ndarray  # (frames, C, 2): (x, y) = (sin pω_i, cos pω_i), from sinusoidal_pe


def clock_pairs(d_model: int, count: int = CLOCK_PAIRS) -> np.ndarray:
    """``count`` pair indices from the fastest (0) towards the slower pairs: 0, h/16, h/8, h/4
    of the h = d_model/2 pairs (distinct; fewer if d_model is small)."""
    half = d_model // 2
    raw = [0] + [half >> s for s in range(count, 1, -1)][: count - 1]
    picked = sorted(set(min(half - 1, max(0, r)) for r in raw))
    return np.asarray(picked, dtype=np.int64)  # (C,)


def clock_frames(params: PEParams, n_frames: int = N_FRAMES) -> ClockFrames:
    pos = np.arange(n_frames, dtype=np.float64)  # (F,)
    pe = sinusoidal_pe(pos, params.d_model, params.base, layout="interleaved")  # (F, d)
    pairs = clock_pairs(params.d_model)
    hands = np.stack([pe[:, 2 * pairs], pe[:, 2 * pairs + 1]], axis=-1)  # (F, C, 2)
    return ClockFrames(
        d_model=params.d_model,
        base=params.base,
        pairs=pairs,
        omega=pair_frequencies(params.d_model, params.base)[pairs],
        positions=pos,
        hands=hands,
    )


@dataclass(frozen=True)
class AlibiFrames:
    """Attention of the query at position i over keys 0..i, with ALiBi bias only (equal
    content scores), per head: softmax_j(−m_h·(i − j))."""

    heads: np.ndarray  # (H,) 1-based head numbers shown
    slopes: np.ndarray  # (H,)
    query: np.ndarray  # (frames,) query position per frame
    weights: np.ndarray  # (frames, H, keys); 0 for future keys
    relative: np.ndarray  # (frames, H, keys): weight / weight of the query's own key = exp(−m(i−j))


def alibi_frames(n_frames: int = ALIBI_KEYS) -> AlibiFrames:
    shown = np.asarray(ALIBI_SHOWN, dtype=np.int64)
    bias = alibi_bias(ALIBI_HEADS, ALIBI_KEYS)[shown]  # (H, L, L), −inf for j > i
    query = np.minimum(np.arange(n_frames, dtype=np.int64), ALIBI_KEYS - 1)  # (F,)
    weights = np.transpose(softmax(bias[:, query, :], axis=-1), (1, 0, 2))  # (F, H, L)
    own = weights[np.arange(n_frames), :, query]  # (F, H): weight of key j = i
    return AlibiFrames(
        heads=shown + 1,
        slopes=alibi_slopes(ALIBI_HEADS)[shown],
        query=query,
        weights=weights,
        relative=weights / own[:, :, None],  # (F, H, L)
    )
