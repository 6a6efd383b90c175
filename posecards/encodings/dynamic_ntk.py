"""Dynamic NTK scaling: the base a sequence is rotated with depends on its length, and on what
transformers 5.23.0's rotary module cached from earlier calls (card 7's pitfall).

``ntk_base`` is the NTK-aware base change both ``ntk`` and ``dynamic`` use
(``rope_scaling.rope_inv_freq`` computes their frequencies from it).
"""

from __future__ import annotations

from posecards.encodings._checks import (
    check_base,
    check_even_dim,
    check_positive,
    check_positive_int,
)


def ntk_base(dim: int, base: float, alpha: float, rope_type: str) -> float:
    """NTK-aware base change: base' = base * alpha^(d/(d-2)) (needs d > 2)."""
    if dim <= 2:
        raise ValueError(f"dim must be an even number > 2 for rope_type {rope_type!r}, got {dim}")
    return float(base * alpha ** (dim / (dim - 2)))


def dynamic_ntk_base(
    dim: int, base: float, factor: float, seq_len: int, max_position_embeddings: int
) -> float:
    """The base dynamic NTK scaling rotates a sequence of ``seq_len`` tokens with (HF 5.23.0
    ``_compute_dynamic_ntk_parameters``)::

        alpha = s * max(seq_len, M) / M - (s - 1),   M = max_position_embeddings, s = factor
        base' = base * alpha^(d/(d-2))

    ``seq_len <= M`` gives alpha = 1, the base itself. The base belongs to the sequence being
    rotated: a cache that keeps the base of an earlier, longer call (the pitfall of card 7) rotates
    a short prompt as if it were that long.
    """
    dim = check_even_dim("dim", dim)
    base = check_base(base)
    s = check_positive("factor", factor)
    n = check_positive_int("seq_len", seq_len)
    m = check_positive_int("max_position_embeddings", max_position_embeddings)
    alpha = s * max(n, m) / m - (s - 1)  # 1 when seq_len <= M
    return ntk_base(dim, base, alpha, "dynamic")  # base * alpha^(d/(d-2))


def dynamic_ntk_call_lengths(calls: tuple[int, ...], max_position_embeddings: int) -> list[int]:
    """The length each call of a series is rotated as by transformers 5.23.0's
    ``dynamic_rope_update`` (its ``dynamic_frequency_update``): one rotary module called in turn
    with sequences of ``calls[i]`` tokens (positions ``0 .. calls[i] - 1``)::

        cached = M                          # max_seq_len_cached at init, M = max_position_embeddings
        for n in calls:
            before = cached
            if n > before:                  grow: inv_freq for seq_len n, cached = n
            if n < M and before > M:        reset: the original inv_freq, cached = M
            the call is rotated with dynamic_ntk_base(..., cached, M)   (cached = M: the base)

    So a grown base stays for every later call of at least M tokens: after 16,384 tokens
    (M = 4,096) calls of 8,000 and 5,000 are rotated as if they were 16,384 long; only a call
    shorter than M gets the original base back. Rotating each sequence with the base of its own
    length is ``dynamic_ntk_base`` of ``calls[i]`` itself. Returns ``cached`` after each call."""
    m = check_positive_int("max_position_embeddings", max_position_embeddings)
    cached = m
    out: list[int] = []
    for i, call in enumerate(calls):
        n = check_positive_int(f"calls[{i}]", call)
        before = cached  # HF tests both rules against the cache length from before the call
        if n > before:  # growth: inv_freq recomputed for seq_len = n
            cached = n
        if n < m and before > m:  # reset: the original inv_freq, max_seq_len_cached = M
            cached = m
        out.append(cached)
    return out
