"""The long-range task: associative recall at a random, possibly far, distance (a passkey).

Why this task. Card 5's first task (``task.py``) makes every token depend on the token two back,
so a scheme that favours near tokens (ALiBi) wins by construction. Here the answer sits at a
random distance from the question, and at the test lengths most distances are longer than any
seen in training; a scheme is rewarded for letting a query find a matching key wherever it is.

Why this form of recall. Multi-query associative recall (Arora et al. 2023, "Zoology") writes a
key and its value as two tokens, so a model needs two layers that cooperate (an induction head:
one head copies the key into the value's position, a second finds it); our 2-layer, 300-step
model did not form that circuit (measured while choosing: loss 2.40 against guessing 2.77 at
the training length, RoPE, seed 0). Writing the key and its value as ONE token, as a passkey
sentence does ("the pass key of k is v"), leaves one thing to learn: attend from the question
to the token that holds its key, at whatever distance, and read its value. That is exactly what
a position code can help or hinder, and the model learns it within the first task's budget.

Vocabulary (``values`` V, ``keys`` K):

- filler and values: symbols 0..V-1;
- facts "key k has value v": symbol V + k V + v (K V of them);
- questions "value of key k?": symbol V + K V + k.

A sequence of n tokens (plus the one after it) is uniform filler with ``pairs`` facts of
distinct keys at random positions in its first half and one question for each of those keys at
random positions of even offset in its second half (so a question never lands on another
question's answer), each question followed by its answer v. The loss is scored
at the questions only (predicting the answer); at any other position nothing is predictable
beyond the uniform filler. The distance from a question back to its fact is then between 1 and
n - 1: at the training length L all distances are below L, at 8L most are far beyond it.
Chance loss: ln V (the answer is one of V values, uniform).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

TASK_NAME = "recall the value of a key written at a random earlier position"


def vocabulary(keys: int, values: int) -> int:
    """Symbols the model reads and predicts: V filler/values + K V facts + K questions."""
    return values + keys * values + keys


def chance_loss(values: int) -> float:
    """ln V nats: the loss of a uniform guess over the V values."""
    return math.log(values)


def sample(
    rng: np.random.Generator, n: int, length: int, keys: int, values: int, pairs: int
) -> tuple[I64, I64]:
    """``n`` sequences of ``length + 1`` tokens and, for each of the first ``length`` positions,
    the distance from a question there back to its fact (0 where nothing is scored).

    Returns tokens (n, length + 1) and distance (n, length), both int64.
    """
    half = length // 2
    most = min(keys, half, (length - half + 1) // 2)
    if not 1 <= pairs <= most:
        raise ValueError(f"pairs must be from 1 to {most} at length {length}, got {pairs}")
    tokens = rng.integers(0, values, size=(n, length + 1), dtype=np.int64)  # uniform filler
    distance = np.zeros((n, length), dtype=np.int64)  # (n, length)
    for i in range(n):
        chosen = rng.permutation(keys)[:pairs]  # (pairs,) distinct keys
        facts = rng.choice(half, size=pairs, replace=False)  # (pairs,) in [0, half)
        slots = (length - half + 1) // 2  # even offsets from half: half, half + 2, ...
        asks = half + 2 * rng.choice(slots, size=pairs, replace=False)  # in [half, length)
        answers = rng.integers(0, values, size=pairs, dtype=np.int64)  # (pairs,)
        tokens[i, facts] = values + chosen * values + answers  # the fact "k has value v"
        tokens[i, asks] = values + keys * values + chosen  # the question "k?"
        tokens[i, asks + 1] = answers  # the answer, predicted at the question
        distance[i, asks] = asks - facts
    return tokens, distance
