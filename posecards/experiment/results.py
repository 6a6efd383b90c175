"""Read and check a results file (no torch): the schema card 5 and the tests rely on.

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

CONFIG_KEYS = ("task", "train_length", "eval_lengths", "seeds", "steps", "source_entropy", "model")
ENVIRONMENT_KEYS = ("torch", "cpu", "threads", "seconds")
RESULT_KEYS = ("scheme", "inference_scaling", "seed", "eval_length", "loss", "loss_by_position")


class MeasurementsError(PosecardsError):
    """A results file that card 5 cannot use (one line, names the file)."""


def load(path: Path | None = None) -> dict[str, Any]:
    """The checked results document from ``path`` (default: ``measurements_path()``)."""
    path = measurements_path() if path is None else path
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
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
    seen: set[tuple[Any, ...]] = set()
    for r in doc["results"]:
        if not isinstance(r, dict) or any(k not in r for k in RESULT_KEYS):
            return f"a result lacks one of {', '.join(RESULT_KEYS)}"
        if r["scheme"] not in SCHEMES:
            return f"unknown scheme {r['scheme']!r}"
        if r["inference_scaling"] not in (None, *SCALINGS) or (
            r["inference_scaling"] is not None and r["scheme"] != "rope"
        ):
            return f"bad inference_scaling {r['inference_scaling']!r} for {r['scheme']}"
        curve = r["loss_by_position"]
        if not isinstance(curve, list) or len(curve) != r["eval_length"]:
            return f"{r['scheme']} at {r['eval_length']}: loss_by_position must have one value per position"
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in [r["loss"], *curve]):
            return f"{r['scheme']} at {r['eval_length']}: losses must be finite numbers"
        seen.add((r["scheme"], r["inference_scaling"], r["seed"], r["eval_length"]))
    for scheme in SCHEMES:
        for scaling in (None, *SCALINGS) if scheme == "rope" else (None,):
            for seed in seeds:
                for length in lengths:
                    if (scheme, scaling, seed, length) not in seen:
                        return f"missing {scheme} {scaling or ''} seed {seed} at length {length}"
    return None
