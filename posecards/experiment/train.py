"""Train one model (one task, scheme and seed) and measure its loss (torch, CPU).

Reproducible: one thread, deterministic algorithms, torch.manual_seed(seed) for the weights and
numpy Generator([seed, *stream]) for the training batches (the stream is the task's). The
evaluation sequences come from a fixed generator per task and length, the same for every scheme
and seed, so all models are scored on identical text. The first task (``local``) is scored by
position; the long-range task (``recall``) at its questions, by distance back to the fact.
"""

from __future__ import annotations

import ctypes
import functools
import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from posecards.config import MeasureSetup
from posecards.experiment.model import PositionModel, rope_tables
from posecards.experiment.positions import SCALINGS
from posecards.experiment.tasks import TASKS
from posecards.torch_threads import one_torch_thread

EVAL_SEED = 4242
EVAL_CHUNK = 16  # sequences per forward pass at evaluation (bounds memory at 8x length)

Progress = Callable[[int, int], None]  # (steps done, steps)


# glibc's mallopt parameters (malloc.h) and the values measure_run sets
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_KEEP = ((_M_MMAP_THRESHOLD, 1 << 30), (_M_TRIM_THRESHOLD, 1 << 30), (_M_TOP_PAD, 64 << 20))


@functools.cache  # once per process
def keep_freed_memory() -> bool:
    """Keep the memory torch frees in this process for its next tensors (glibc; elsewhere
    nothing happens). True where the allocator took the settings.

    At 8x the training length one evaluation chunk's attention scores are 16 x 4 x 512 x 512
    float32 (64 MiB). glibc serves a block that large with its own mmap and unmaps it on free,
    and trims the heap top as soon as 128 KiB are free, so every forward pass faulted in fresh
    zeroed pages: in the worker processes of `posecards measure --quick --jobs 2` the kernel's
    page faults were 40 % of the CPU, and as much in a plain process calling measure_run (the
    command's own process, --jobs 1, did not fault so: the same time either way there, peak
    memory 0.82 -> 0.91 GB). Blocks up to 1 GiB now come from the heap, which keeps up to
    1 GiB free before trimming. The numbers are the same: only where memory comes from changes.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError, TypeError):  # no mallopt (macOS), no CDLL(None) (Windows)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return all(mallopt(param, value) == 1 for param, value in _KEEP)  # musl's mallopt: 0


def eval_lengths(s: MeasureSetup) -> list[int]:
    return [s.train_length * m for m in s.eval_multiples]


def eval_batch(s: MeasureSetup, length: int) -> np.ndarray:
    """The evaluation text at one length, (eval_sequences, length + 1) tokens."""
    tokens, _ = task_batch(s, "local", length)
    return tokens


@functools.lru_cache(maxsize=16)  # a RoPE model reads each length's text once per scaling
def task_batch(s: MeasureSetup, task_id: str, length: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A task's evaluation text at one length: tokens (eval_sequences, length + 1) and the
    distances of its scored positions (None: every position); read-only arrays."""
    t = TASKS[task_id]
    rng = np.random.default_rng([EVAL_SEED, length, *t.eval_stream])
    tokens, distance = t.sample(rng, s.eval_sequences, length, s)
    for a in (tokens, distance):
        if a is not None:
            a.setflags(write=False)
    return tokens, distance


def task_setup(s: MeasureSetup, task_id: str) -> MeasureSetup:
    """The setup a task's model is built from: the same but for its vocabulary."""
    vocab = TASKS[task_id].vocab(s)
    return s if vocab == s.vocab else replace(s, vocab=vocab)


def lr_at(step: int, steps: int, s: MeasureSetup) -> float:
    """Linear warm-up over s.warmup steps, then cosine decay to 10 % of s.lr."""
    if step < s.warmup:
        return s.lr * (step + 1) / s.warmup
    frac = (step - s.warmup) / max(1, steps - s.warmup)
    return s.lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac)))


def train_model(
    scheme: str,
    seed: int,
    steps: int,
    s: MeasureSetup,
    progress: Progress | None = None,
    task_id: str = "local",
) -> tuple[PositionModel, float]:
    """The trained model and the mean training loss over its last 10 % of steps (at the scored
    positions of the task)."""
    t = TASKS[task_id]
    s = task_setup(s, task_id)
    torch.manual_seed(seed)
    model = PositionModel(scheme, s, max_length=max(eval_lengths(s)))
    rope = rope_tables(s, s.train_length) if scheme == "rope" else None
    # foreach: one kernel per operation over all the parameters instead of one per tensor
    # (the same arithmetic per element: the same weights, bit for bit, on torch 2.13)
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=s.weight_decay, foreach=True)
    rng = np.random.default_rng([seed, *t.train_stream])
    tail: list[float] = []
    model.train()
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, steps, s)
        tokens, distance = t.sample(rng, s.batch, s.train_length, s)
        batch = torch.from_numpy(tokens)  # (B, L + 1)
        logits = model(batch[:, :-1], rope)  # (B, L, V)
        if distance is None:  # every position scored
            loss = F.cross_entropy(logits.reshape(-1, s.vocab), batch[:, 1:].reshape(-1))
        else:  # the questions only
            scored = torch.from_numpy(distance > 0)  # (B, L)
            loss = F.cross_entropy(logits[scored], batch[:, 1:][scored])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step >= steps - max(1, steps // 10):
            tail.append(loss.item())
        if progress is not None:
            progress(step + 1, steps)
    return model, float(np.mean(tail))


@torch.inference_mode()
def loss_by_position(
    model: PositionModel, s: MeasureSetup, length: int, scaling: str | None = None
) -> np.ndarray:
    """Mean cross-entropy (nats) at each position 0..length-1 over the evaluation text, float64."""
    model.eval()
    tokens = torch.tensor(eval_batch(s, length))  # (N, length + 1)
    rope = None
    if model.scheme == "rope":
        rope = rope_tables(s, length, scaling, factor=length / s.train_length)
    total = torch.zeros(length, dtype=torch.float64)
    for start in range(0, tokens.shape[0], EVAL_CHUNK):
        chunk = tokens[start : start + EVAL_CHUNK]
        logits = model(chunk[:, :-1], rope)  # (b, length, V)
        nll = F.cross_entropy(logits.transpose(1, 2), chunk[:, 1:], reduction="none")  # (b, length)
        total += nll.double().sum(dim=0)
    return (total / tokens.shape[0]).numpy()


@torch.inference_mode()
def recall_answers(
    model: PositionModel, s: MeasureSetup, length: int, scaling: str | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At every question of the recall task's evaluation text: the loss of the answer (nats,
    float64), whether the most likely symbol is the answer (bool) and the distance back to the
    fact (int64); each (eval_sequences * pairs,), questions in text order."""
    model.eval()
    tokens_np, distance = task_batch(s, "recall", length)
    assert distance is not None
    tokens = torch.tensor(tokens_np)  # (N, length + 1)
    rope = None
    if model.scheme == "rope":
        rope = rope_tables(s, length, scaling, factor=length / s.train_length)
    nll: list[np.ndarray] = []
    hit: list[np.ndarray] = []
    for start in range(0, tokens.shape[0], EVAL_CHUNK):
        chunk = tokens[start : start + EVAL_CHUNK]
        scored = torch.from_numpy(distance[start : start + EVAL_CHUNK] > 0)  # (b, length)
        logits = model(chunk[:, :-1], rope)[scored]  # (questions, V)
        target = chunk[:, 1:][scored]  # (questions,)
        nll.append(F.cross_entropy(logits, target, reduction="none").double().numpy())
        hit.append((logits.argmax(dim=-1) == target).numpy())
    return np.concatenate(nll), np.concatenate(hit), distance[distance > 0]


def measure_run(
    scheme: str,
    seed: int,
    steps: int,
    s: MeasureSetup,
    progress: Progress | None = None,
    task_id: str = "local",
) -> dict[str, Any]:
    """Train one model on one task and evaluate it at every eval length (and RoPE scaling)."""
    keep_freed_memory()
    with one_torch_thread():  # measure trains on one thread
        deterministic = torch.are_deterministic_algorithms_enabled()
        fill = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]
        torch.use_deterministic_algorithms(True)
        # deterministic mode also fills every new tensor with NaN before its kernel writes it (a
        # guard for kernels that read uninitialized memory; none here): 4660 fills in 20 training
        # steps, 5 % of their CPU, and a 64 MiB fill per attention block at 8x. Off: same numbers.
        torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            model, train_loss = train_model(scheme, seed, steps, s, progress, task_id)
            rows: list[dict[str, Any]] = []
            scalings: tuple[str | None, ...] = (None, *SCALINGS) if scheme == "rope" else (None,)
            for scaling in scalings:
                for length in eval_lengths(s):
                    if task_id == "recall":
                        nll, hit, dist = recall_answers(
                            model, task_setup(s, task_id), length, scaling
                        )
                        row = recall_row(scheme, scaling, seed, length, (nll, hit, dist), s)
                    else:
                        curve = loss_by_position(model, s, length, scaling)
                        row = result_row(scheme, scaling, seed, length, curve, s.train_length)
                    rows.append(row)
            return {
                "task": task_id,
                "scheme": scheme,
                "seed": seed,
                "train_loss": round(train_loss, 6),
                "rows": rows,
                "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0,  # this process's CPU time: load-proof
            }
        finally:
            torch.use_deterministic_algorithms(deterministic)
            torch.utils.deterministic.fill_uninitialized_memory = fill  # type: ignore[attr-defined]


def result_row(
    scheme: str, scaling: str | None, seed: int, length: int, curve: np.ndarray, train_length: int
) -> dict[str, Any]:
    """One entry of the results file: loss = mean over all positions; loss_beyond = mean over
    positions >= train_length (None at 1x)."""
    beyond = curve[train_length:]
    return {
        "task": "local",
        "scheme": scheme,
        "inference_scaling": scaling,
        "seed": seed,
        "eval_length": length,
        "loss": round(float(curve.mean()), 6),
        "loss_beyond": round(float(beyond.mean()), 6) if beyond.size else None,
        "loss_by_position": [round(float(v), 5) for v in curve],
    }


def distance_bins(s: MeasureSetup) -> list[tuple[int, int]]:
    """The recall task's distance bins [lo, hi): [1, L), [L, 2L), [2L, 4L), ... up to 8L."""
    edges = [1, *eval_lengths(s)]
    return list(zip(edges[:-1], edges[1:], strict=True))


def recall_row(
    scheme: str,
    scaling: str | None,
    seed: int,
    length: int,
    answers: tuple[np.ndarray, np.ndarray, np.ndarray],
    s: MeasureSetup,
) -> dict[str, Any]:
    """One entry of the results file for the recall task: loss and accuracy over every question,
    over the questions whose fact is at least train_length back (None where there are none: at
    1x), and per distance bin (bins the length reaches)."""
    nll, hit, dist = answers  # (questions,) each
    far = dist >= s.train_length

    def mean(x: np.ndarray, digits: int) -> float | None:
        return round(float(x.mean()), digits) if x.size else None

    bins = []
    for lo, hi in distance_bins(s):
        inside = (dist >= lo) & (dist < hi)
        if inside.any():
            bins.append(
                {
                    "from": lo,
                    "to": hi,
                    "questions": int(inside.sum()),
                    "loss": mean(nll[inside], 6),
                    "accuracy": mean(hit[inside].astype(np.float64), 6),
                }
            )
    return {
        "task": "recall",
        "scheme": scheme,
        "inference_scaling": scaling,
        "seed": seed,
        "eval_length": length,
        "questions": int(nll.size),
        "loss": mean(nll, 6),
        "loss_beyond": mean(nll[far], 6),
        "accuracy": mean(hit.astype(np.float64), 6),
        "accuracy_beyond": mean(hit[far].astype(np.float64), 6),
        "by_distance": bins,
    }
