"""The synthetic language: each token depends only on the token two positions back.

Vocabulary of V symbols and a fixed permutation π of them. Tokens x_0, x_1 are uniform; then

    P(x_t = b | x_{t-2} = a) = f + (1 - f) / V   if b = π(a)
                               (1 - f) / V        otherwise

The table is doubly stochastic, so every token is uniform on its own and the best possible loss
(the entropy rate) is the entropy of one row, in closed form:

    H = -(A ln A + (V - 1) B ln B),   A = f + (1 - f) / V,  B = (1 - f) / V.

A model predicts x_{t+1} at position t: at t = 0 nothing helps (loss ln V); at t >= 1 it must find
the token one position before itself, i.e. it needs relative position 1 back from the query.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

TASK_SEED = 20210827  # the permutation; the same for every run and seed
TASK_NAME = "x[t] depends on x[t-2] only"


@functools.cache  # drawn once per process, not once per training batch
def permutation(vocab: int) -> I64:
    """π, the fixed permutation of the vocabulary, drawn from TASK_SEED (read-only)."""
    perm = np.random.default_rng(TASK_SEED).permutation(vocab).astype(np.int64)  # (V,)
    perm.setflags(write=False)
    return perm


def transition_table(vocab: int, follow: float) -> F64:
    """T[a, b] = P(x_t = b | x_{t-2} = a), shape (V, V), rows sum to 1."""
    if not 0.0 <= follow <= 1.0:
        raise ValueError(f"follow must be in [0, 1], got {follow}")
    table = np.full((vocab, vocab), (1.0 - follow) / vocab, dtype=np.float64)  # (V, V)
    table[np.arange(vocab), permutation(vocab)] += follow
    return table


def entropy_rate(vocab: int, follow: float) -> float:
    """H = -(A ln A + (V-1) B ln B) in nats: the loss of the true distribution at t >= 1."""
    a = follow + (1.0 - follow) / vocab
    b = (1.0 - follow) / vocab
    return -(a * math.log(a) + (vocab - 1) * (b * math.log(b) if b > 0 else 0.0))


def sample(rng: np.random.Generator, n: int, length: int, vocab: int, follow: float) -> I64:
    """``n`` sequences of ``length`` tokens, shape (n, length), int64."""
    perm = permutation(vocab)  # (V,)
    out = rng.integers(0, vocab, size=(n, length), dtype=np.int64)  # uniform draws
    keep = rng.random((n, length)) < follow  # (n, length): copy π(x_{t-2}) here
    for t in range(2, length):
        out[:, t] = np.where(keep[:, t], perm[out[:, t - 2]], out[:, t])
    return out
