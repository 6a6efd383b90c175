"""The tasks `posecards measure` trains every scheme on: one registry, one entry per task.

- ``local``: ``task.py``, each token depends on the token two back (every position scored);
- ``recall``: ``recall.py``, the value of a key written at a random earlier position (scored at
  the questions only, by the distance back to the fact).

A task gives the model's vocabulary, a batch of sequences and which positions are scored.
Training batches come from numpy ``Generator([seed, stream])`` and the evaluation text from
``Generator([EVAL_SEED, length, *eval_stream])``: ``local`` keeps the streams it always had, so
its numbers do not change when another task is added.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.config import MeasureSetup
from posecards.experiment import recall, task

I64 = npt.NDArray[np.int64]
Sampler = Callable[[np.random.Generator, int, int, MeasureSetup], tuple[I64, I64 | None]]


@dataclass(frozen=True)
class Task:
    """One task: ``sample(rng, n, length, s)`` -> tokens (n, length + 1) and the distance back
    from each scored position to what it needs (n, length), 0 where not scored; None: every
    position is scored (by position, not by distance)."""

    id: str
    name: str
    vocab: Callable[[MeasureSetup], int]
    chance: Callable[[MeasureSetup], float]  # loss of a uniform guess, nats
    sample: Sampler
    train_stream: tuple[int, ...]
    eval_stream: tuple[int, ...]


def _local(rng: np.random.Generator, n: int, length: int, s: MeasureSetup) -> tuple[I64, None]:
    return task.sample(rng, n, length + 1, s.vocab, s.follow), None


def _recall(rng: np.random.Generator, n: int, length: int, s: MeasureSetup) -> tuple[I64, I64]:
    return recall.sample(rng, n, length, s.recall_keys, s.recall_values, s.recall_pairs)


TASKS: dict[str, Task] = {
    "local": Task(
        id="local",
        name=task.TASK_NAME,
        vocab=lambda s: s.vocab,
        chance=lambda s: math.log(s.vocab),
        sample=_local,
        train_stream=(1,),
        eval_stream=(),
    ),
    "recall": Task(
        id="recall",
        name=recall.TASK_NAME,
        vocab=lambda s: recall.vocabulary(s.recall_keys, s.recall_values),
        chance=lambda s: recall.chance_loss(s.recall_values),
        sample=_recall,
        train_stream=(2,),
        eval_stream=(2,),
    ),
}
TASK_IDS: tuple[str, ...] = tuple(TASKS)
