"""Train one model (one scheme, one seed) and measure its loss by position (torch, CPU).

Reproducible: one thread, deterministic algorithms, torch.manual_seed(seed) for the weights and
numpy Generator([seed, 1]) for the training batches. The evaluation sequences come from a fixed
generator, the same for every scheme and seed, so all models are scored on identical text.
"""

from __future__ import annotations

import ctypes
import functools
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from posecards.config import MeasureSetup
from posecards.experiment import task
from posecards.experiment.model import PositionModel, rope_tables
from posecards.experiment.positions import SCALINGS

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
    rng = np.random.default_rng([EVAL_SEED, length])
    return task.sample(rng, s.eval_sequences, length + 1, s.vocab, s.follow)


def lr_at(step: int, steps: int, s: MeasureSetup) -> float:
    """Linear warm-up over s.warmup steps, then cosine decay to 10 % of s.lr."""
    if step < s.warmup:
        return s.lr * (step + 1) / s.warmup
    frac = (step - s.warmup) / max(1, steps - s.warmup)
    return s.lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac)))


def train_model(
    scheme: str, seed: int, steps: int, s: MeasureSetup, progress: Progress | None = None
) -> tuple[PositionModel, float]:
    """The trained model and the mean training loss over its last 10 % of steps."""
    torch.manual_seed(seed)
    model = PositionModel(scheme, s, max_length=max(eval_lengths(s)))
    rope = rope_tables(s, s.train_length) if scheme == "rope" else None
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    rng = np.random.default_rng([seed, 1])
    tail: list[float] = []
    model.train()
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, steps, s)
        batch = torch.from_numpy(task.sample(rng, s.batch, s.train_length + 1, s.vocab, s.follow))
        logits = model(batch[:, :-1], rope)  # (B, L, V)
        loss = F.cross_entropy(logits.reshape(-1, s.vocab), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step >= steps - max(1, steps // 10):
            tail.append(loss.item())
        if progress is not None:
            progress(step + 1, steps)
    return model, float(np.mean(tail))


@torch.no_grad()
def loss_by_position(
    model: PositionModel, s: MeasureSetup, length: int, scaling: str | None = None
) -> np.ndarray:
    """Mean cross-entropy (nats) at each position 0..length-1 over the evaluation text, float64."""
    model.eval()
    tokens = torch.from_numpy(eval_batch(s, length))  # (N, length + 1)
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


def measure_run(
    scheme: str, seed: int, steps: int, s: MeasureSetup, progress: Progress | None = None
) -> dict[str, Any]:
    """Train one model and evaluate it at every eval length (and every RoPE scaling)."""
    keep_freed_memory()
    threads = torch.get_num_threads()
    deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        t0 = time.perf_counter()
        model, train_loss = train_model(scheme, seed, steps, s, progress)
        rows: list[dict[str, Any]] = []
        scalings: tuple[str | None, ...] = (None, *SCALINGS) if scheme == "rope" else (None,)
        for scaling in scalings:
            for length in eval_lengths(s):
                curve = loss_by_position(model, s, length, scaling)
                rows.append(result_row(scheme, scaling, seed, length, curve, s.train_length))
        return {
            "scheme": scheme,
            "seed": seed,
            "train_loss": round(train_loss, 6),
            "rows": rows,
            "seconds": time.perf_counter() - t0,
        }
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def result_row(
    scheme: str, scaling: str | None, seed: int, length: int, curve: np.ndarray, train_length: int
) -> dict[str, Any]:
    """One entry of the results file: loss = mean over all positions; loss_beyond = mean over
    positions >= train_length (None at 1x)."""
    beyond = curve[train_length:]
    return {
        "scheme": scheme,
        "inference_scaling": scaling,
        "seed": seed,
        "eval_length": length,
        "loss": round(float(curve.mean()), 6),
        "loss_beyond": round(float(beyond.mean()), 6) if beyond.size else None,
        "loss_by_position": [round(float(v), 5) for v in curve],
    }
