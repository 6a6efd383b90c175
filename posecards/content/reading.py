"""The numbers of a layer-by-layer reading (``posecards.model.layers``), and its JSON document.

``kind_frequencies`` gives the frequencies transformers' rotary module holds for one RoPE kind
(``head_inv_freq``), ``softmax_scale`` what the first attention layer multiplies ``q . k`` by, and
``reading_json`` the ``--format json`` document (schema: docs/inspect-json.md), as bytes:
deterministic (sorted keys where the schema leaves the order free, floats as Python's shortest
round-trip repr, a final newline).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from posecards.encodings._checks import F64
from posecards.encodings.mrope import MROPE_AXES, mrope_axes
from posecards.encodings.rope_partial import head_inv_freq
from posecards.model.checkpoint import CheckpointError
from posecards.model.families import TRANSFORMERS_VERSION
from posecards.model.layer_records import ModelLayers, RopeKind, softmax_value

JSON_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class KindNumbers:
    """One RoPE kind as transformers' rotary module holds it."""

    inv_freq: F64  # (n,) float64, same length and order as the module's buffer
    attention_factor: float  # multiplies cos and sin
    rotated_pairs: int  # pairs with a non-zero frequency
    axes: tuple[str, ...] | None  # MRoPE: 't'/'h'/'w' per entry of inv_freq


def kind_frequencies(kind: RopeKind) -> KindNumbers:
    """``head_inv_freq`` for one kind; a bad value is a CheckpointError naming the config."""
    try:
        inv_freq, factor = head_inv_freq(
            kind.head_dim,
            kind.parameters,
            max_position_embeddings=kind.max_position_embeddings or None,
            partial_in_default=kind.partial_in_default,
        )
    except ValueError as exc:
        raise CheckpointError(f"config.json ({kind.key}): {exc}") from None
    axes = kind.axes
    if axes is None and kind.mrope_section is not None and kind.mrope_layout is not None:
        try:
            idx = mrope_axes(kind.mrope_section, inv_freq.size, kind.mrope_layout)
        except ValueError as exc:
            raise CheckpointError(f"config.json ({kind.key}): {exc}") from None
        axes = tuple(MROPE_AXES[int(a)] for a in idx)
    return KindNumbers(inv_freq, float(factor), int(np.count_nonzero(inv_freq)), axes)


def softmax_scale(reading: ModelLayers) -> float:
    """What transformers multiplies q . k by in the first attention layer."""
    try:
        return softmax_value(reading.softmax)
    except ValueError as exc:
        raise CheckpointError(f"config.json: {exc}") from None


def _float(x: float) -> float | str:
    return float(x) if math.isfinite(x) else str(x)


def reading_document(name: str, reading: ModelLayers) -> dict[str, Any]:
    """The JSON document of a RoPE model's reading (see docs/inspect-json.md)."""
    rope: dict[str, Any] = {}
    for key, kind in reading.rope.items():
        nums = kind_frequencies(kind)
        rope[key] = {
            "rope_type": kind.rope_type,
            "theta": kind.theta,
            "head_dim": kind.head_dim,
            "rotated_pairs": nums.rotated_pairs,
            "layout": kind.layout,
            "inv_freq": [_float(v) for v in nums.inv_freq.tolist()],
            "attention_factor": nums.attention_factor,
            "mrope_axes": list(nums.axes) if nums.axes is not None else None,
            "head_slots": kind.head_slots,
            "first_rotated_slot": kind.first_slot,
            "mrope_section": list(kind.mrope_section) if kind.mrope_section else None,
            "parameters": {k: kind.parameters[k] for k in sorted(kind.parameters)},
        }
    t = reading.temperature
    query_scale = None
    if t is not None:
        query_scale = {
            "kind": t.kind,
            "formula": "1 + scale * ln(1 + floor((position + shift) / floor))",
            "scale": t.scale,
            "floor": t.floor_len,
            "shift": t.shift,
            "layers": list(t.layers),
            "config_keys": list(t.keys),
        }
    return {
        "model": name,
        "model_type": reading.model_type,
        "num_layers": reading.num_layers,
        "layers": [
            {
                "index": la.index,
                "attention": la.attention,
                "window": la.window,
                "position": la.position,
                "rope": la.rope,
            }
            for la in reading.layers
        ],
        "rope": rope,
        "softmax_scale": softmax_scale(reading),
        "softmax_rule": reading.softmax.rule,
        "query_scale": query_scale,
        "family": reading.family,
        "read_from": reading.modeling or None,
        "assumed": list(reading.assumed),
        "notes": [n.text for n in reading.notes],
        "config_keys": list(reading.config_keys),
        "defaults": list(reading.defaults),
        "ignored_keys": list(reading.ignored_keys),
        # the transformers whose own code gave this reading; the family table's version (checked
        # against it) where transformers is not installed
        "transformers": reading.transformers_version or TRANSFORMERS_VERSION,
        "read_by": "transformers" if reading.transformers_version else "table",
        "schema": JSON_SCHEMA_VERSION,
    }


def plain_document(
    name: str, model_type: str, num_layers: int, position: str, extra: dict[str, Any]
) -> dict[str, Any]:
    """The JSON document of a model without RoPE (a learned table or ALiBi): every layer full
    attention, ``rope`` empty, the standard softmax scale when the head size is known."""
    return {
        "model": name,
        "model_type": model_type,
        "num_layers": num_layers,
        "layers": [
            {"index": i, "attention": "full", "window": None, "position": position, "rope": None}
            for i in range(num_layers)
        ],
        "rope": {},
        "softmax_scale": extra.pop("softmax_scale", None),
        "query_scale": None,
        **extra,
        "transformers": "5.23.0",
        "schema": JSON_SCHEMA_VERSION,
    }


def _plain_layers(config: Mapping[str, Any]) -> tuple[int | None, float | None]:
    """Layer count and 1/sqrt(head_dim) of a model without RoPE, from its config (if given)."""
    text = config.get("text_config") if isinstance(config.get("text_config"), Mapping) else config
    assert isinstance(text, Mapping)

    def first(*keys: str) -> Any:
        for k in keys:
            v = text.get(k)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return v
        return None

    layers = first("num_hidden_layers", "n_layer", "n_layers", "num_layers")
    hidden = first("hidden_size", "n_embd", "d_model")
    heads = first("num_attention_heads", "n_head", "n_heads")
    head_dim = first("head_dim") or (hidden // heads if hidden and heads else None)
    return layers, (float(head_dim**-0.5) if head_dim else None)


def inspection_json(name: str, config: Mapping[str, Any], found: Any) -> bytes:
    """``--format json``: the reading of any kind of model (schema: docs/inspect-json.md)."""
    reading = getattr(found, "reading", None)
    if reading is not None:
        return document_bytes(reading_document(name, reading))
    layers, scale = _plain_layers(config)
    position = {"alibi": "alibi", "relative": "relative"}.get(found.kind, "learned")
    model_type = config.get("model_type")
    extra: dict[str, Any] = {
        "softmax_scale": scale,
        "family": None,
        "config_keys": list(found.config_keys),
        "defaults": list(found.defaults),
    }
    measured = getattr(found, "measured", None)
    if found.kind == "relative" and measured is not None:
        # T5-style biases read through transformers from config.json alone: each attention
        # module holding a bias table, its buckets (checked against encodings.t5_relative_bucket)
        extra.update(
            softmax_scale=None,
            relative_bias=[
                {
                    "module": b.name,
                    "num_buckets": b.num_buckets,
                    "max_distance": b.max_distance,
                    "bidirectional": b.bidirectional,
                    "heads": b.heads,
                    "values_read": False,
                }
                for b in measured.biases
            ],
            model_class=measured.model_class,
            text_config=measured.text_prefix.rstrip(".") or None,
            read_by="transformers",
        )
        layers = None
    elif found.kind == "learned" and measured is not None:
        # read through transformers from config.json alone (model/probe/tables.py): the tables'
        # rows, widths and offsets; their values, the layers and the softmax scale are not read
        tables = [
            {
                "tensor": f"{t.name}.weight",
                "shape": [t.rows, t.width],
                "offset": t.offset,
                "module": t.module,
                "added_by": t.owner or None,
                "values_read": False,
            }
            for t in measured.tables
        ]
        extra.update(
            softmax_scale=None,
            position_table=tables[0],
            position_tables=tables,
            model_class=measured.model_class,
            text_config=measured.text_prefix.rstrip(".") or None,
            read_by="transformers",
        )
        layers = None
    elif found.kind == "learned":
        extra["position_table"] = {
            "tensor": found.tensor,
            "shape": list(found.shape),
            "offset": found.offset,
            "values_read": True,
        }
    elif found.kind == "alibi":
        extra["alibi"] = {"heads": found.n_heads, "max_bias": found.max_bias}
    version = measured.transformers_version if measured is not None else "5.23.0"
    doc = plain_document(
        name, model_type if isinstance(model_type, str) else "", layers or 0, position, extra
    )
    doc["transformers"] = version
    if layers is None:
        doc["num_layers"] = None  # config.json names no layer count (or they are not read)
    return document_bytes(doc)


def document_bytes(doc: dict[str, Any]) -> bytes:
    """Deterministic JSON: two-space indent, UTF-8, final newline (no NaN: strings instead)."""
    return (json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()
