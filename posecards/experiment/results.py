"""Read and check a results file (no torch): the schema card 5 and the tests rely on.

A file lists its tasks in ``config.tasks`` (``experiment.tasks``) and each result its ``task``;
a file written before the recall task existed has neither and holds the ``local`` task only.

The shipped file is ``posecards/data/measurements.json`` (made by `posecards measure` with the
defaults); ``POSECARDS_MEASUREMENTS=FILE`` makes card 5 draw from another file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from posecards.errors import PosecardsError
from posecards.experiment.files import measurements_path
from posecards.experiment.positions import SCALINGS, SCHEMES
from posecards.experiment.tasks import TASK_IDS

CONFIG_KEYS = ("task", "train_length", "eval_lengths", "seeds", "steps", "source_entropy", "model")
ENVIRONMENT_KEYS = ("torch", "cpu", "threads", "seconds")
RESULT_KEYS = ("scheme", "inference_scaling", "seed", "eval_length", "loss")
TASK_KEYS = {"local": ("loss_by_position",), "recall": ("loss_beyond", "accuracy", "by_distance")}


class MeasurementsError(PosecardsError):
    """A results file that card 5 cannot use (one line, names the file)."""


def load(path: Path | None = None) -> dict[str, Any]:
    """The checked results document from ``path`` (default: ``measurements_path()``)."""
    path = measurements_path() if path is None else path
    try:
        doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MeasurementsError(f"cannot read measurements {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise MeasurementsError(f"measurements {path} is not JSON: {exc.msg}") from None
    problem = check(doc)
    if problem:
        raise MeasurementsError(f"measurements {path}: {problem}")
    return doc


def check(doc: Any) -> str | None:
    """What is wrong with a results document, or None."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    for part, keys in (("config", CONFIG_KEYS), ("environment", ENVIRONMENT_KEYS)):
        if not isinstance(doc.get(part), dict):
            return f"missing {part!r}"
        missing = [k for k in keys if k not in doc[part]]
        if missing:
            return f"{part} lacks {', '.join(missing)}"
    cfg = doc["config"]
    if not isinstance(doc.get("results"), list) or not doc["results"]:
        return "no results"
    lengths, seeds = cfg["eval_lengths"], cfg["seeds"]
    if not (isinstance(cfg["train_length"], int) and cfg["train_length"] in lengths):
        return "train_length must be one of the eval_lengths"
    tasks = cfg.get("tasks", ["local"])
    if not isinstance(tasks, list) or not tasks or any(t not in TASK_IDS for t in tasks):
        return f"config tasks must be some of {', '.join(TASK_IDS)}"
    seen: set[tuple[Any, ...]] = set()
    for r in doc["results"]:
        if not isinstance(r, dict) or any(k not in r for k in RESULT_KEYS):
            return f"a result lacks one of {', '.join(RESULT_KEYS)}"
        r = {"task": "local", **r}  # files from before the recall task: every row is local
        if r["task"] not in tasks:
            return f"a result of task {r['task']!r}, not one of the config's tasks"
        if any(k not in r for k in TASK_KEYS[r["task"]]):
            return f"a {r['task']} result lacks one of {', '.join(TASK_KEYS[r['task']])}"
        if r["scheme"] not in SCHEMES:
            return f"unknown scheme {r['scheme']!r}"
        if r["inference_scaling"] not in (None, *SCALINGS) or (
            r["inference_scaling"] is not None and r["scheme"] != "rope"
        ):
            return f"bad inference_scaling {r['inference_scaling']!r} for {r['scheme']}"
        if r["task"] == "local":
            values = r["loss_by_position"]
            if not isinstance(values, list) or len(values) != r["eval_length"]:
                return f"{r['scheme']} at {r['eval_length']}: loss_by_position must have one value per position"
        else:
            bins = r["by_distance"]
            if not isinstance(bins, list) or not all(
                isinstance(b, dict) and "loss" in b and "accuracy" in b for b in bins
            ):
                return f"recall {r['scheme']} at {r['eval_length']}: by_distance must list bins"
            values = [r["accuracy"], *(v for b in bins for v in (b["loss"], b["accuracy"]))]
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in [r["loss"], *values]):
            return f"{r['scheme']} at {r['eval_length']}: losses must be finite numbers"
        seen.add((r["task"], r["scheme"], r["inference_scaling"], r["seed"], r["eval_length"]))
    for task in tasks:
        for scheme in SCHEMES:
            for scaling in (None, *SCALINGS) if scheme == "rope" else (None,):
                for seed in seeds:
                    for length in lengths:
                        if (task, scheme, scaling, seed, length) not in seen:
                            return (
                                f"missing {task} {scheme} {scaling or ''} seed {seed}"
                                f" at length {length}"
                            )
    return None
