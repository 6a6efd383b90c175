"""A model's positions layer by layer, as the installed transformers runs it (``read_model``).

Where transformers is installed the reading comes from its own objects (``model/probe/``):
which layers rotate q and k and with which frequencies, the attention mask each layer gets, the
pair layout (measured), the softmax scale the attention kernel is handed, the MRoPE axis of every
pair. posecards' own float64 frequencies (``encodings.rope_partial.head_inv_freq``, from the
``rope_parameters`` the config class standardized) must equal the rotary module's float32 buffer
to 2e-6 relative, or the model is refused: nothing is drawn that transformers does not compute.

The family table (``model/families.py``, ``model/layers.read_layers``) is the explanation: which
keys were read, which defaults filled, the notes where transformers only warns; the card's text
draws on it, and a test fails wherever the table and the probe disagree. Without transformers,
``read_model`` reads by the table alone, for the families it lists, and refuses the others.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from posecards.encodings.rope_partial import head_inv_freq
from posecards.encodings.rope_scaling import SCALING_KEYS
from posecards.model.checkpoint import CheckpointError
from posecards.model.families import COMPOSITE, FAMILIES, TRANSFORMERS_VERSION
from posecards.model.layers import (
    Layer,
    ModelLayers,
    RopeKind,
    SoftmaxScale,
    read_layers,
    softmax_value,
)
from posecards.model.probe.types import ProbedBias, ProbedTable

_FREQUENCY_KEYS = (*SCALING_KEYS, "rope_type", "type", "rope_theta", "partial_rotary_factor")
INV_FREQ_RTOL = 2e-6  # posecards' float64 against transformers' float32 buffer
SCALE_RTOL = 1e-9  # softmax scale and cos/sin factor
# rope_parameters keys that are not frequencies (read elsewhere, or by nothing)
_NOT_FREQUENCY = (
    "mrope_section",
    "mrope_interleaved",
    "llama_4_scaling_beta",
    "max_position_embeddings",  # Ministral 3's class copies it in; its yarn reads the model's
)


@dataclass(frozen=True)
class TablesReading:
    """A text model with no RoPE that adds learned position tables to its input (each table's
    rows, width and offset as transformers' own code reads it), or T5-style relative position
    biases inside its attention (each bias's buckets); the tables' values are the checkpoint's."""

    model_class: str
    tables: tuple[ProbedTable, ...]  # in the order the model holds them (encoder first)
    transformers_version: str
    text_prefix: str  # "text_config." where the text model is nested
    biases: tuple[ProbedBias, ...] = ()


def _text_type(config: Mapping[str, Any]) -> str | None:
    text = config.get("text_config")
    if isinstance(text, Mapping) and isinstance(text.get("model_type"), str):
        return str(text["model_type"])
    mt = config.get("model_type")
    return COMPOSITE.get(mt, mt) if isinstance(mt, str) else None


def transformers_knows(model_type: Any) -> bool:
    """Whether the installed transformers (if any) has this model type."""
    from posecards.model import probe as P

    if not isinstance(model_type, str) or not P.transformers_available():
        return False
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return model_type in CONFIG_MAPPING


def read_model(config: Mapping[str, Any]) -> ModelLayers | TablesReading:
    """Every layer of the text model of ``config`` (a config.json dict), as transformers runs it."""
    from posecards.model import probe as P

    if not P.transformers_available():
        model_type = _text_type(config)
        if model_type not in FAMILIES:
            raise CheckpointError(
                f"model_type {config.get('model_type')!r} is not in posecards' family table "
                f"(checked against transformers {TRANSFORMERS_VERSION}); install transformers "
                "(pip install 'posecards[inspect]') to read it through transformers' own code"
            )
        return read_layers(config)
    table_error: CheckpointError | None = None
    try:
        table: ModelLayers | None = read_layers(config)
    except CheckpointError as exc:
        table, table_error = None, exc
    try:
        probed = P.probe(_coerced(config, table))
    except P.ProbeError as exc:
        if table_error is not None and _text_type(config) in FAMILIES:
            raise table_error from None  # the table names what is wrong with the file itself
        raise CheckpointError(f"config.json: {exc}") from None
    return from_probe(probed, table)


def _coerced(config: Mapping[str, Any], table: ModelLayers | None) -> Mapping[str, Any]:
    """The config as the attention code reads it, where transformers' strict config class would
    refuse a value its modeling code accepts and the table notes it: Llama 4 Scout's published
    ``attn_temperature_tuning: 4`` (the attention tests it for truth) is given as true."""
    if table is None or not any(n.key == "tuning_not_bool" for n in table.notes):
        return config
    out = json.loads(json.dumps(config))
    text = out.get("text_config", out) if isinstance(out.get("text_config"), dict) else out
    text["attn_temperature_tuning"] = bool(text.get("attn_temperature_tuning"))
    return out  # type: ignore[no-any-return]


def _kind(key: str, p: Any, table_kind: RopeKind | None, max_pos: int | None) -> RopeKind:
    """A RoPE kind whose float64 frequencies equal the rotary module's buffer, or a refusal."""
    # keys transformers' rotary module does not read (a future key, per-layer-type dicts on a
    # class with one module) are left out: the frequencies below must still equal its buffer
    params = {k: v for k, v in p.parameters.items() if k in _FREQUENCY_KEYS}
    rope_type = str(params.get("rope_type") or params.get("type") or "default")
    want = p.inv_freq
    rotated = [i for i, q in enumerate(p.pairs) if q >= 0]
    if not rotated:
        raise CheckpointError(f"config.json ({key}): transformers' rotary function turns no slot")
    first, n_rot = rotated[0], len(rotated)
    if p.layout not in ("half", "interleaved"):
        raise CheckpointError(
            f"config.json ({key}): the rotary function pairs slots in a layout posecards does "
            "not draw (neither rotate_half nor interleaved pairs)"
        )
    candidates: list[tuple[int, dict[str, Any], bool]] = []
    for head in dict.fromkeys((p.head_slots, n_rot, 2 * want.size)):
        for pid in (False, True):
            candidates.append((head, params, pid))
            bare = {k: v for k, v in params.items() if k != "partial_rotary_factor"}
            candidates.append((head, bare, pid))
    got_err = ""
    gap = math.inf  # the closest candidate's largest ratio to the buffer
    for head, cand, pid in candidates:
        try:
            inv, factor = head_inv_freq(
                head, cand, max_position_embeddings=max_pos, partial_in_default=pid
            )
        except ValueError as exc:
            got_err = str(exc)
            continue
        if inv.shape != want.shape or int((inv == 0).sum()) != int((want == 0).sum()):
            continue
        if not np.allclose(inv, want, rtol=INV_FREQ_RTOL, atol=0):
            nz = want != 0
            ratio = inv[nz] / want[nz]
            off = float(np.max(np.maximum(ratio, 1 / ratio))) if nz.any() else math.inf
            gap = min(gap, off)
            continue
        if not math.isclose(factor, p.attention_factor, rel_tol=SCALE_RTOL, abs_tol=0):
            continue
        return RopeKind(
            key=key,
            rope_type=rope_type,
            theta=float(cand["rope_theta"]),
            head_dim=head,
            parameters={
                k: v for k, v in cand.items() if k not in ("rope_type", "type", "rope_theta")
            }
            | {"rope_type": rope_type, "rope_theta": cand["rope_theta"]},
            partial_in_default=pid,
            layout=p.layout,
            max_position_embeddings=max_pos or 0,
            head_slots=_head_slots(p, table_kind, key),
            first_slot=first,
            mrope_section=table_kind.mrope_section if table_kind else None,
            mrope_layout=table_kind.mrope_layout if table_kind else None,
            ignored_keys=table_kind.ignored_keys if table_kind else (),
            axes=p.axes,
        )
    why = f" ({got_err})" if got_err else ""
    if math.isfinite(gap):
        why = f" (transformers' inv_freq and posecards' differ by a factor of up to {gap:.4g})"
    raise CheckpointError(
        f"config.json ({key}): transformers' rope_type {rope_type!r} frequencies are not ones "
        f"posecards computes{why}"
    )


def _head_slots(p: Any, table_kind: RopeKind | None, key: str) -> int:
    if p.head_seen:
        return int(p.head_slots)
    if table_kind is None:
        raise CheckpointError(
            f"config.json ({key}): the attention runs in the layer's own code; its head size is "
            "not read"
        )
    return table_kind.head_slots


def _probed_layers(p: Any, table: ModelLayers | None, text: Any) -> list[Layer]:
    """Every layer of a probe: its attention (mask) kind, window and RoPE; a layer computing
    attention in its own code keeps the family table's reading."""
    layers: list[Layer] = []
    for la in p.layers:
        if not la.attention and la.rope is not None and table is not None:
            mine = table.layers[la.index] if la.index < len(table.layers) else None
            if mine is None or mine.rope != la.rope:
                raise CheckpointError(
                    f"layer {la.index}: posecards' table and transformers {p.transformers_version} "
                    "disagree on its RoPE"
                )
            layers.append(mine)
            continue
        if not la.attention:
            types = getattr(text, "layer_types", None) or ()
            linear = la.index < len(types) and types[la.index] == "linear_attention"
            layers.append(Layer(la.index, "linear" if linear else "none", None, "none", None))
            continue
        if la.mask == "widened":
            raise CheckpointError(
                f"layer {la.index}: transformers {p.transformers_version}'s {p.model_class} "
                "widens its attention mask by a rule of its own (an or_mask_function beside the "
                f"{'sliding-window' if la.window else 'causal'} mask): posecards does not draw "
                "that mask"
            )
        kind = la.mask or _unmasked(text, la.index)
        layers.append(Layer(la.index, kind, la.window, "rope" if la.rope else "none", la.rope))
    return layers


def from_probe(p: Any, table: ModelLayers | None) -> ModelLayers | TablesReading:
    """The reading of a probe: the layers, frequencies and softmax scale transformers uses."""
    text = p.config
    if (p.tables or p.biases) and not p.rope:
        return TablesReading(
            p.model_class,
            tuple(p.tables),
            p.transformers_version,
            "".join(f"{k}." for k in p.text_path),
            tuple(p.biases),
        )
    if p.learned and not p.rope:
        raise CheckpointError(
            f"{p.model_class} adds a learned position table ({p.learned[0]}): posecards draws "
            "it from the checkpoint's tensor, and this folder has none"
        )
    others = [a for a in p.absolute if not any(a.startswith(x.split(" ")[0]) for x in p.learned)]
    if others and not p.rope:
        raise CheckpointError(
            f"{p.model_class} adds position outside its attention layers ({others[0]}), not by "
            "RoPE: posecards inspect does not draw that yet"
        )
    if p.relative:
        raise CheckpointError(
            f"{p.model_class} puts position inside attention through {p.relative[0]} "
            "(relative position): posecards inspect does not draw that yet"
        )
    max_pos = getattr(text, "max_position_embeddings", None)
    max_pos = int(max_pos) if isinstance(max_pos, int) and not isinstance(max_pos, bool) else None
    kinds: dict[str, RopeKind] = {}
    for key, pr in p.rope.items():
        tk = table.rope.get(key) if table is not None else None
        kinds[key] = _kind(key, pr, tk, max_pos)
    own_code = [la.index for la in p.layers if not la.attention and la.rope is not None]
    if own_code and table is None:
        raise CheckpointError(
            f"{p.model_class}: layer {own_code[0]} computes attention in its own code (no "
            "attention kernel to read), and its family is not in posecards' table: its softmax "
            "scale is not read"
        )
    scaled = next((la for la in p.layers if la.prescale), None)
    if scaled is not None and (table is None or table.temperature is None):
        raise CheckpointError(
            f"{p.model_class}: layer {scaled.index} multiplies q by {scaled.prescale} before the "
            "attention kernel; posecards does not fold that into the softmax scale yet"
        )
    layers = _probed_layers(p, table, text)
    scales = [la.scaling for la in p.layers if la.attention]
    if any(s is None for s in scales):
        raise CheckpointError("the softmax scale of an attention layer could not be read")
    known = table is not None and table.family != "unknown"
    if not kinds and not known:  # (a family of the table keeps its reading: no layer rotates)
        raise CheckpointError(
            f"no position encoding found: transformers {p.transformers_version}'s "
            f"{p.model_class} rotates q and k in no layer and adds no position table or bias "
            "outside its layers"
        )
    head = next((la.head_slots for la in p.layers if la.head_slots), 0)
    softmax = _softmax(scales[0] if scales else None, head, table)
    base = table if table is not None else _empty(p)
    return replace(
        base,
        model_type=p.model_type,
        num_layers=len(layers),
        layers=tuple(layers),
        rope=kinds,
        softmax=softmax,
        assumed=(),
        transformers_version=p.transformers_version,
        text_prefix="".join(f"{k}." for k in p.text_path),
        max_position_embeddings=max_pos,
    )


def _unmasked(text: Any, index: int) -> str:
    window = getattr(text, "sliding_window", None)
    chunk = getattr(text, "attention_chunk_size", None)
    if not window and not chunk:
        return "full"
    raise CheckpointError(f"layer {index}: which attention mask it gets could not be followed")


def _softmax(scale: float | None, head: int, table: ModelLayers | None) -> SoftmaxScale:
    if scale is None:
        return SoftmaxScale("head_dim", head) if table is None else table.softmax
    if table is not None and math.isclose(_table_scale(table), scale, rel_tol=SCALE_RTOL):
        return table.softmax
    return SoftmaxScale("measured", head, value_key=float(scale))


def _table_scale(table: ModelLayers) -> float:
    try:
        return softmax_value(table.softmax)
    except (TypeError, ValueError):
        return math.nan


def _empty(p: Any) -> ModelLayers:
    return ModelLayers(
        model_type=p.model_type,
        family="unknown",
        modeling=p.model_class,
        num_layers=0,
        layers=(),
        rope={},
        softmax=SoftmaxScale("head_dim", 0),
        temperature=None,
        config_keys=(),
        defaults=(),
    )
