"""A model's positions layer by layer, read from config.json as transformers 5.23.0 reads it.

``read_layers(config)`` finds the text model and reads its keys with the class defaults
(``text_config.py``), fills ``layer_types`` as the class does (``layer_types.py``), standardizes
``rope_parameters`` (``rope_parameters.py``), reads its sets of RoPE frequencies
(``rope_kinds.py``), gives every layer its attention kind, window and RoPE
(``layer_types.assign_layers``), and the softmax-scale rule and query temperature
(``scales.py``). What it returns is a ``ModelLayers`` (``layer_records.py``). Nothing here
computes frequencies (``content/reading.py`` does, with ``posecards.encodings``).

Which keys were read, which defaults were filled and what was assumed (an unknown model_type) are
recorded, so the card can name them. A config transformers would reject or crash on is a
``CheckpointError`` with one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posecards.encodings.rope_scaling import CONFIG_ROPE_TYPES
from posecards.model.families import ASSUMED, FAMILIES
from posecards.model.layer_records import (
    Layer,
    ModelLayers,
    Note,
    QueryTemperature,
    RopeKind,
    SoftmaxScale,
    softmax_value,
)
from posecards.model.layer_types import ATTENTION_KINDS, assign_layers, layer_types
from posecards.model.rope_kinds import KindReader, head_shape, pair_layout, rope_kinds
from posecards.model.rope_parameters import rope_parameters
from posecards.model.scales import read_query_temperature, read_softmax_scale
from posecards.model.text_config import MAX_LAYERS, TextConfig, has_rope_keys, text_config

__all__ = [
    "ATTENTION_KINDS",
    "CONFIG_ROPE_TYPES",
    "Layer",
    "ModelLayers",
    "Note",
    "QueryTemperature",
    "RopeKind",
    "SoftmaxScale",
    "has_rope_keys",
    "read_layers",
    "softmax_value",
]


def _num_layers(t: TextConfig, assumed: list[str]) -> int:
    n_raw = t.get("num_hidden_layers")
    if n_raw is None:
        assumed.append("one layer (num_hidden_layers missing)")
        return 1
    return t.integer("num_hidden_layers", high=MAX_LAYERS, value=n_raw)


def read_layers(config: Mapping[str, Any]) -> ModelLayers:
    """Every layer of the text model of ``config`` (a config.json dict), as transformers runs it."""
    text, prefix, model_type = text_config(config)
    fam = FAMILIES.get(model_type, ASSUMED)
    t = TextConfig(text, prefix, fam)
    if prefix:
        t.used.append("text_config")
    if "model_type" in text:
        t.note("model_type")
    assumed: list[str] = []
    if fam is ASSUMED:
        assumed.append(f"model_type {model_type or '(none)'!r} is not in posecards' family table")
    n = _num_layers(t, assumed)
    hidden = t.optional_int("hidden_size", high=1 << 24)
    heads = t.optional_int("num_attention_heads", high=4096)
    max_pos = t.optional_int("max_position_embeddings")
    types = layer_types(t, n)

    rp, nested, source = rope_parameters(t, types, max_pos)
    layout = pair_layout(t)
    shape = head_shape(t, hidden, heads)
    reader = KindReader(t, model_type, layout, max_pos, shape)
    kinds = rope_kinds(reader, rp, nested, source, types)
    layers = assign_layers(t, types, n, per_type=fam.rotary == "per_layer_type")
    used_kinds = {la.rope for la in layers if la.rope is not None}
    kinds = {k: v for k, v in kinds.items() if k in used_kinds}  # empty: no layer rotates

    softmax = read_softmax_scale(t, layers, kinds, types, shape, rp)
    temperature = read_query_temperature(t, layers, rp, reader.notes)
    if fam is ASSUMED:
        assumed += [
            f"{layout} pair layout",
            "RoPE on every layer",
            "softmax scale 1/sqrt(head_dim)",
        ]
    return ModelLayers(
        model_type=model_type,
        family=fam.model_type,
        modeling=fam.modeling if fam is not ASSUMED else "",
        num_layers=n,
        layers=tuple(layers),
        rope=kinds,
        softmax=softmax,
        temperature=temperature,
        config_keys=tuple(t.used),
        defaults=tuple(t.defaults),
        assumed=tuple(assumed),
        notes=tuple(reader.notes),
        ignored_keys=tuple(dict.fromkeys(reader.ignored)),
        text_prefix=prefix,
        max_position_embeddings=max_pos,
        original_max_position_embeddings=(
            t.optional_int("original_max_position_embeddings")
            if t.has("original_max_position_embeddings")
            or "original_max_position_embeddings" in fam.defaults
            else None
        ),
    )
