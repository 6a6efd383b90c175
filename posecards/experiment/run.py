"""`posecards measure`: every (task, scheme, seed) run in its own process, then one results file.

Runs are independent and each uses one thread, so ``jobs`` processes (spawned, not forked) run
them in parallel and the numbers do not depend on ``jobs``. Timing lives under "environment";
everything else in the file is the same for the same command on the same machine.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import platform
import queue as queue_mod
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict
from typing import Any

from posecards.config import MeasureConfig, MeasureSetup
from posecards.experiment.positions import BEYOND, SCALINGS, SCHEMES
from posecards.experiment.recall import TASK_NAME as RECALL_NAME
from posecards.experiment.recall import chance_loss, vocabulary
from posecards.experiment.task import TASK_NAME, entropy_rate
from posecards.experiment.tasks import TASK_IDS

Echo = Callable[[str], None]
BAR = 20


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bar(label: str, done: int, steps: int) -> str:
    k = BAR * done // max(1, steps)
    return f"{label:<18} [{'#' * k}{'.' * (BAR - k)}] {done:>6}/{steps} steps"


def _label(task: str, scheme: str, seed: int) -> str:
    return f"{task} {scheme} seed {seed}"


def _quarters(steps: int) -> set[int]:
    return {max(1, steps * q // 4) for q in (1, 2, 3, 4)}


def _worker(
    task: str, scheme: str, seed: int, steps: int, setup: MeasureSetup, q: Any
) -> dict[str, Any]:
    from posecards.experiment.train import measure_run

    marks = _quarters(steps)

    def progress(done: int, total: int) -> None:
        if q is not None and done in marks:
            q.put(bar(_label(task, scheme, seed), done, total))

    return measure_run(scheme, seed, steps, setup, progress, task)


def run_all(cfg: MeasureConfig, echo: Echo | None = None) -> dict[str, Any]:
    """Train and evaluate every (task, scheme, seed); return the results document."""
    t0 = time.perf_counter()
    tasks = [t for t in TASK_IDS if t in cfg.tasks]
    specs = [(t, scheme, seed) for t in tasks for seed in range(cfg.seeds) for scheme in SCHEMES]
    runs: list[dict[str, Any]] = []
    if cfg.jobs == 1:
        from posecards.experiment.train import measure_run

        marks = _quarters(cfg.steps)
        for task, scheme, seed in specs:

            def progress(
                done: int,
                total: int,
                label: str = _label(task, scheme, seed),
                marks: set[int] = marks,
            ) -> None:
                if echo is not None and done in marks:
                    echo(bar(label, done, total))

            runs.append(measure_run(scheme, seed, cfg.steps, cfg.setup, progress, task))
    else:
        ctx = mp.get_context("spawn")
        with ctx.Manager() as manager:
            q = manager.Queue() if echo is not None else None
            with ProcessPoolExecutor(max_workers=min(cfg.jobs, len(specs)), mp_context=ctx) as ex:
                futures: list[Future[dict[str, Any]]] = [
                    ex.submit(_worker, task, scheme, seed, cfg.steps, cfg.setup, q)
                    for task, scheme, seed in specs
                ]
                while not all(f.done() for f in futures):
                    _drain(q, echo, timeout=0.2)
                _drain(q, echo, timeout=0.0)
                runs = [f.result() for f in futures]
    return document(cfg, runs, time.perf_counter() - t0)


def _drain(q: Any, echo: Echo | None, timeout: float) -> None:
    if q is None or echo is None:
        if timeout:
            time.sleep(timeout)
        return
    try:
        echo(q.get(timeout=timeout) if timeout else q.get_nowait())
        while True:
            echo(q.get_nowait())
    except queue_mod.Empty:
        pass


_SCHEME_ORDER = {name: i for i, name in enumerate(SCHEMES)}
_TASK_ORDER = {name: i for i, name in enumerate(TASK_IDS)}
_SCALING_ORDER = {name: i for i, name in enumerate((None, *SCALINGS))}


def document(cfg: MeasureConfig, runs: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """The results file: config, environment (timing and machine), training losses, results."""
    runs = sorted(
        runs, key=lambda r: (_TASK_ORDER[r["task"]], _SCHEME_ORDER[r["scheme"]], r["seed"])
    )
    return {
        "config": config_part(cfg),
        "environment": environment_part(cfg, runs, seconds),
        "training": [{k: r[k] for k in ("task", "scheme", "seed", "train_loss")} for r in runs],
        "results": sorted_rows(runs),
    }


def sorted_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every run's result rows, by task, scheme, inference scaling, seed and length: the same
    order whatever order the runs finished in."""
    rows = [row for run in runs for row in run["rows"]]
    return sorted(
        rows,
        key=lambda r: (
            _TASK_ORDER[r["task"]],
            _SCHEME_ORDER[r["scheme"]],
            _SCALING_ORDER[r["inference_scaling"]],
            r["seed"],
            r["eval_length"],
        ),
    )


def config_part(cfg: MeasureConfig) -> dict[str, Any]:
    """What was run: both tasks, the model, training and evaluation settings."""
    import numpy as np

    s = cfg.setup
    return {
        "task": TASK_NAME,
        "vocab": s.vocab,
        "follow": s.follow,
        "source_entropy": round(entropy_rate(s.vocab, s.follow), 6),
        "uniform_loss": round(float(np.log(s.vocab)), 6),
        "train_length": s.train_length,
        "eval_lengths": [s.train_length * m for m in s.eval_multiples],
        "seeds": list(range(cfg.seeds)),
        "steps": cfg.steps,
        "batch": s.batch,
        "lr": s.lr,
        "warmup": s.warmup,
        "weight_decay": s.weight_decay,
        "eval_sequences": s.eval_sequences,
        "model": {"layers": s.layers, "d_model": s.d_model, "heads": s.heads, "d_ff": s.d_ff},
        "schemes": list(SCHEMES),
        "inference_scaling": list(SCALINGS),
        "scaling_factor": "eval_length / train_length",
        "rope_base": s.rope_base,
        "t5": {"num_buckets": s.t5_buckets, "max_distance": s.train_length},
        "positions_beyond_training": dict(BEYOND),
        "tasks": [t for t in TASK_IDS if t in cfg.tasks],
        "recall": {
            "task": RECALL_NAME,
            "keys": s.recall_keys,
            "values": s.recall_values,
            "pairs": s.recall_pairs,
            "vocab": vocabulary(s.recall_keys, s.recall_values),
            "chance_loss": round(chance_loss(s.recall_values), 6),
            "scored": "the answer after each question; beyond = fact >= train_length back",
        },
        "setup": asdict(s),
    }


def environment_part(
    cfg: MeasureConfig, runs: list[dict[str, Any]], seconds: float
) -> dict[str, Any]:
    """Where and how long: versions, machine, wall and CPU seconds, the command."""
    import numpy as np
    import torch

    return {
        "posecards": _version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "threads": 1,
        "jobs": cfg.jobs,
        "seconds": round(seconds, 1),
        "run_seconds": [
            {
                "task": r["task"],
                "scheme": r["scheme"],
                "seed": r["seed"],
                "seconds": round(r["seconds"], 1),
                "cpu_seconds": round(r["cpu_seconds"], 1),
            }
            for r in runs
        ],
        "cpu_seconds": round(sum(r["cpu_seconds"] for r in runs), 1),
        "command": command(cfg),
    }


def command(cfg: MeasureConfig) -> str | None:
    """The command that makes the same results, wherever it writes them: only the options the
    numbers depend on (--seeds, --steps; --quick is written as the two). None: a configuration
    the command line cannot ask for (other tasks or setup)."""
    default = MeasureConfig()
    if cfg.tasks != default.tasks or cfg.setup != default.setup:
        return None
    words = ["posecards", "measure"]
    if cfg.seeds != default.seeds:
        words += ["--seeds", str(cfg.seeds)]
    if cfg.steps != default.steps:
        words += ["--steps", str(cfg.steps)]
    return " ".join(words)


def _version() -> str:
    from posecards._version import __version__

    return __version__


def to_json(doc: dict[str, Any]) -> bytes:
    """Readable and diffable: the header indented, one line per result."""
    head = {k: v for k, v in doc.items() if k != "results"}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]  # drop the closing "\n}"
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in doc["results"]]
    body = ",\n  ".join(lines)
    return f'{text},\n "results": [\n  {body}\n ]\n}}\n'.encode()
