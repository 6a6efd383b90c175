"""The census: what the models of transformers 5.23.0 (their default configs) and the published
configs posecards ships chose for position, from posecards' own readings of them.

``posecards/data/census.json`` is written by ``python -m posecards.content.census_make`` (which
needs transformers; ``posecards build`` does not: it reads the file). A record per text model
read (``classify``: what the ``posecards inspect --format json`` document of its default config
says), the model types posecards does not read with the reason (``refusal_reason``: the first
words of posecards' own one-line refusal), and the model types behind every count (``counts``).
Plain Python (json, pathlib): the build cache hashes the file without numpy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data"
CENSUS_FILE = DATA / "census.json"

ATTENTION = ("full", "sliding", "chunked")  # layers with a q·k softmax (inspect-json.md)

# why a model type is not read, from posecards' own one-line refusal (model/positions.py,
# model/probe/): the first pattern the line contains
REFUSALS: tuple[tuple[str, str], ...] = (
    ("is not a text model", "not_text"),
    ("no position encoding found", "no_position"),
    ("(relative position)", "relative_other"),
    ("adds position outside its attention layers", "absolute_other"),
    ("adds a learned position table", "absolute_other"),
    ("reads could not be followed", "absolute_other"),
    ("is read at rows", "absolute_other"),
)


def refusal_reason(line: str) -> str:
    """``not_text``, ``no_position`` (no rotation, table or bias anywhere: state-space and
    recurrent models), ``relative_other`` (a relative scheme other than T5's buckets),
    ``absolute_other`` (a position table or sinusoid posecards does not follow), or ``other``
    (transformers cannot build or run the default config without weights, or no model class)."""
    return next((reason for pattern, reason in REFUSALS if pattern in line), "other")


def _main_key(rope: Mapping[str, Any]) -> str:
    """The frequencies of the model's full-attention layers: ``rope`` or ``full_attention``."""
    for key in ("rope", "full_attention"):
        if key in rope:
            return key
    return sorted(rope)[0]


def classify(doc: Mapping[str, Any], max_pos: int | None, original: int | None) -> dict[str, Any]:
    """One record of the census from a ``--format json`` document (docs/inspect-json.md) and the
    text config's ``max_position_embeddings`` (and a scaling's ``original_...``)."""
    rope: Mapping[str, Any] = doc.get("rope") or {}
    layers = doc.get("layers") or []
    if rope:
        position = "rope"
    elif "alibi" in doc:
        position = "alibi"
    elif "relative_bias" in doc:
        position = "relative"
    else:
        position = "learned"
    rec: dict[str, Any] = {
        "text_model_type": doc.get("model_type") or "",
        "position": position,
        "layers": len(layers),
        "nope_layers": sum(
            la["attention"] in ATTENTION and la["position"] == "none" for la in layers
        ),
        "other_layers": sum(la["attention"] not in ATTENTION for la in layers),
        "max_position_embeddings": max_pos,
        "original_max_position_embeddings": original,
    }
    if rope:
        main = rope[_main_key(rope)]
        rec.update(
            layouts=sorted({r["layout"] for r in rope.values()}),
            partial=any(2 * r["rotated_pairs"] < r["head_slots"] for r in rope.values()),
            rope_keys=sorted(rope),
            rope_types=sorted({r["rope_type"] for r in rope.values()}),
            mrope=any(r.get("mrope_axes") for r in rope.values()),
            theta=float(main["theta"]),
            head_dim=int(main["head_dim"]),
            rotated_pairs=int(main["rotated_pairs"]),
            factor=main.get("parameters", {}).get("factor"),
        )
    return rec


def counts(models: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each count's model types (sorted): the position each uses, and among the RoPE ones the
    layout, full or partial rotation, per-layer-type frequencies, layers without position, layers
    without attention, MRoPE, and each scaling type (``scaling:<rope_type>``)."""
    out: dict[str, list[str]] = {k: [] for k in CATEGORIES}
    for name, rec in sorted(models.items()):
        out[rec["position"]].append(name)
        if rec["position"] != "rope":
            continue
        for layout in rec["layouts"]:
            out[f"layout:{layout}"].append(name)
        out["partial" if rec["partial"] else "full_rotation"].append(name)
        if len(rec["rope_keys"]) > 1:
            out["per_layer_type"].append(name)
        if rec["nope_layers"]:
            out["nope_layers"].append(name)
        if rec["other_layers"]:
            out["other_layers"].append(name)
        if rec["mrope"]:
            out["mrope"].append(name)
        for t in rec["rope_types"]:
            if t != "default":
                out.setdefault(f"scaling:{t}", []).append(name)
    return out


CATEGORIES = (
    "rope",
    "alibi",
    "learned",
    "relative",
    "layout:half",
    "layout:interleaved",
    "full_rotation",
    "partial",
    "per_layer_type",
    "nope_layers",
    "other_layers",
    "mrope",
)


@dataclass(frozen=True)
class RopeModel:
    """One RoPE model of the census: its base, head and trained context (default config)."""

    name: str
    theta: float
    head_dim: int
    max_position_embeddings: int | None
    original_max_position_embeddings: int | None
    rope_types: tuple[str, ...]


@dataclass(frozen=True)
class Census:
    transformers: str
    model_types: int  # every model type of CONFIG_MAPPING
    models: Mapping[str, Mapping[str, Any]]  # text model -> record (the default config read)
    not_read: Mapping[str, tuple[str, ...]]  # reason -> model types posecards does not read
    shipped: Mapping[str, Mapping[str, Any]]  # docs/examples folder -> record
    counts: Mapping[str, tuple[str, ...]]
    shipped_counts: Mapping[str, tuple[str, ...]]

    def n(self, category: str) -> int:
        return len(self.counts.get(category, ()))

    def rope_models(self, shipped: bool = False) -> tuple[RopeModel, ...]:
        recs = self.shipped if shipped else self.models
        return tuple(
            RopeModel(
                name,
                float(r["theta"]),
                int(r["head_dim"]),
                r["max_position_embeddings"],
                r["original_max_position_embeddings"],
                tuple(r["rope_types"]),
            )
            for name, r in sorted(recs.items())
            if r["position"] == "rope"
        )

    def scalings(self, shipped: bool = False) -> dict[str, tuple[str, ...]]:
        """rope_type -> model types using it, every type other than ``default``."""
        src = self.shipped_counts if shipped else self.counts
        return {k.split(":", 1)[1]: v for k, v in sorted(src.items()) if k.startswith("scaling:")}


@cache
def census(path: Path = CENSUS_FILE) -> Census:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return Census(
        transformers=doc["transformers"],
        model_types=int(doc["model_types"]),
        models=doc["models"],
        not_read={k: tuple(v) for k, v in doc["not_read"].items()},
        shipped=doc["shipped"],
        counts={k: tuple(v) for k, v in doc["counts"].items()},
        shipped_counts={k: tuple(v) for k, v in doc["shipped_counts"].items()},
    )


def census_version(path: Path = CENSUS_FILE) -> str:
    """The transformers version the census counted (the footers)."""
    return str(census(path).transformers)
