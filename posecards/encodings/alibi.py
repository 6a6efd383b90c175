"""ALiBi: attention with linear biases (Press, Smith & Lewis, 2022).

No vector is added to the tokens. Instead each head h adds a penalty proportional to distance
to its attention scores, with a fixed head-specific slope m_h:

    score[h, i, j] = q_i·k_j / sqrt(d_head) - m_h·(i - j)      (query i, key j <= i)

The slopes are a geometric sequence, so different heads see different distance ranges.
"""

from __future__ import annotations

import math

import numpy as np

from posecards.encodings._checks import F64, check_positive_int


def _check_max_bias(max_bias: float) -> float:
    if not (math.isfinite(max_bias) and max_bias > 0):
        raise ValueError(f"max_bias must be a positive finite number, got {max_bias!r}")
    return float(max_bias)


def alibi_geometric_slopes(n_heads: int, max_bias: float = 8.0) -> F64:
    """The geometric sequence m_h = 2^(-B·h/n), h = 1..n (B = max_bias), shape (n_heads,).

    This is the paper's sentence ("the geometric sequence that starts at 2^(-8/n) and uses that
    same value as its ratio") applied to any n. For n a power of two it is :func:`alibi_slopes`;
    for other n it is NOT the rule the ALiBi models were trained with (Press et al.'s
    ``get_slopes``, BLOOM, MPT, Baichuan): a port that uses it for 12 or 40 heads gives every head
    a different slope from the checkpoint's (the pitfall of card 7).
    """
    n = check_positive_int("n_heads", n_heads)
    b = _check_max_bias(max_bias)
    h = np.arange(1, n + 1, dtype=np.float64)  # (n,)
    return np.asarray(2.0 ** (-b * h / n), dtype=np.float64)  # (n_heads,)


def alibi_slopes(n_heads: int, max_bias: float = 8.0) -> F64:
    """The head slopes m_h, shape (n_heads,).

    For n a power of two: m_h = 2^(-B·h/n), h = 1..n (B = max_bias; B = 8, n = 8 gives
    1/2, 1/4, ..., 1/256). Otherwise, with N the next power of two: the N slopes of N heads at
    even h (these are exactly the slopes of N/2 heads), then those at odd h, cut to n. This is
    MPT's ``gen_slopes`` (``concat([s[1::2], s[::2]])[:n]``, any B); for B = 8 it is also Press
    et al.'s and BLOOM's rule (the N/2-head slopes, then ``get_slopes(N)[0::2]``), so the two
    families agree. Slopes are positive; they are not sorted when n is not a power of two.
    """
    n = check_positive_int("n_heads", n_heads)
    big = 2 ** math.ceil(math.log2(n))
    s = alibi_geometric_slopes(big, max_bias)  # (N,)
    if big != n:
        s = np.concatenate([s[1::2], s[0::2]])[:n]  # even h (= the N/2-head slopes), then odd h
    return np.asarray(s, dtype=np.float64)  # (n_heads,)


def alibi_bias(n_heads: int, length: int, causal: bool = True, max_bias: float = 8.0) -> F64:
    """The bias added to the scores, shape (n_heads, length, length), queries i by keys j.

    causal=True:  bias[h, i, j] = -m_h·(i - j) for j <= i, and -inf for j > i (masked).
    causal=False: bias[h, i, j] = -m_h·|i - j| (the symmetric form used by encoders).
    Slopes as :func:`alibi_slopes` (``max_bias``).
    """
    m = alibi_slopes(n_heads, max_bias)  # (H,)
    n = check_positive_int("length", length)
    pos = np.arange(n, dtype=np.float64)  # (L,)
    dist = pos[:, None] - pos[None, :]  # (L, L): i - j
    if not causal:
        return -m[:, None, None] * np.abs(dist)[None, :, :]  # (H, L, L)
    bias = -m[:, None, None] * dist[None, :, :]  # (H, L, L)
    bias[:, dist < 0] = -np.inf  # future keys j > i
    return bias


def alibi_bias_key_only(n_heads: int, length: int) -> F64:
    """The form real implementations add (Bloom, fairseq ALiBi): +m_h·j, shape (n_heads, 1, length).

    Row i of the causal bias is -m_h·(i - j) = m_h·j - m_h·i: the key-only bias plus the
    constant -m_h·i. Softmax ignores a constant added to a whole row, so after the causal mask
    both give the same attention weights, and the key-only form needs no (L, L) tensor.
    """
    m = alibi_slopes(n_heads)  # (H,)
    n = check_positive_int("length", length)
    j = np.arange(n, dtype=np.float64)  # (L,)
    return (m[:, None] * j[None, :])[:, None, :]  # (H, 1, L)
