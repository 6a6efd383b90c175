"""The sets of RoPE frequencies a model holds, read from its standardized ``rope_parameters``.

One ``RopeKind`` per rotary module (``"rope"``), or per layer type where the family has one
module per layer type (``Family.rotary``): its type, base, the slots it turns (the head, GPT-J's
``rotary_dim``, MLA's ``qk_rope_head_dim``, Gemma 4's ``global_head_dim``), its pair layout,
MRoPE section, and the keys no rotary module reads. Nothing here computes frequencies
(``content/reading.py`` does, with ``posecards.encodings``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from posecards.encodings.rope_scaling import CONFIG_ROPE_TYPES, ROPE_REGISTRY, SCALING_KEYS
from posecards.model.checkpoint import CheckpointError
from posecards.model.families import ASSUMED
from posecards.model.layer_records import Note, RopeKind
from posecards.model.text_config import MAX_HEAD_DIM, TextConfig, finite

# keys of a rope_parameters dict that are not frequency scaling but are read elsewhere
_OTHER_ROPE_KEYS = ("mrope_section", "mrope_interleaved", "llama_4_scaling_beta")
_FREQ_KEYS = (*SCALING_KEYS, "mrope_section")


@dataclass(frozen=True)
class HeadShape:
    """The slots of one q/k head: MLA rotates qk_rope_head_dim after qk_nope_head_dim slots."""

    head_dim: int  # the slots a rotary module sees by default (MLA: qk_rope_head_dim)
    rope_dim: int
    nope_dim: int
    mla: bool


def pair_layout(t: TextConfig) -> str:
    """ "half" or "interleaved": the family's, or the config's rope_interleave where it decides."""
    fam = t.family
    if fam.layout == "rope_interleave":
        return "interleaved" if t.get("rope_interleave") else "half"
    if fam is ASSUMED and t.raw("rope_interleave") is True:
        return "interleaved"
    return fam.layout


def _head_dim(t: TextConfig, hidden: int | None, heads: int | None) -> int:
    value = t.get("head_dim") if t.family.head_dim in ("field", "gemma4") else None
    if value:
        return t.integer("head_dim", high=MAX_HEAD_DIM, value=value)
    if hidden is None or heads is None:
        raise CheckpointError(
            "config.json: RoPE needs head_dim or hidden_size and num_attention_heads"
        )
    d = hidden // heads
    if not 2 <= d <= MAX_HEAD_DIM:
        raise CheckpointError(
            f"config.json: hidden_size / num_attention_heads = {d} is not a head size"
        )
    return d


def head_shape(t: TextConfig, hidden: int | None, heads: int | None) -> HeadShape:
    if t.family.head_dim == "mla":
        rope_dim = t.integer("qk_rope_head_dim", high=MAX_HEAD_DIM)
        nope_dim = t.integer("qk_nope_head_dim", low=0, high=MAX_HEAD_DIM)
        return HeadShape(rope_dim, rope_dim, nope_dim, True)
    head_dim = _head_dim(t, hidden, heads)
    return HeadShape(head_dim, head_dim, 0, False)


def gemma4_head_dims(t: TextConfig, layer_types: Sequence[str], head_dim: int) -> dict[str, int]:
    """Gemma 4: full-attention layers use global_head_dim (per_layer_config overrides)."""
    per_layer = t.raw("per_layer_config")
    if per_layer is None:
        glob = t.raw("global_head_dim")
        if glob is None:
            glob = 512
            t.default("global_head_dim", 512)
        return {
            "full_attention": t.integer("global_head_dim", value=glob, high=MAX_HEAD_DIM),
            "sliding_attention": head_dim,
        }
    if not isinstance(per_layer, Mapping):
        raise CheckpointError("config.json: per_layer_config must be an object")
    out: dict[str, int] = {}
    for lt in set(layer_types):
        dims = set()
        for i, x in enumerate(layer_types):
            if x == lt:
                # transformers' save_pretrained writes zero-padded keys ("05")
                over: Any = (
                    next((v for k, v in per_layer.items() if str(k).isdigit() and int(k) == i), {})
                    or {}
                )
                dims.add(over.get("head_dim", head_dim) if isinstance(over, Mapping) else head_dim)
        if len(dims) != 1:
            raise CheckpointError(
                f"config.json: per_layer_config gives {lt} layers different head_dims"
            )
        out[lt] = t.integer("per_layer_config.head_dim", value=dims.pop(), high=MAX_HEAD_DIM)
    return out


# ---------------------------------------------------------------- one set of frequencies


def _split_params(
    t: TextConfig, params: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The frequency keys of one rope_parameters dict, and the keys no rotary module reads;
    the keys config.json itself holds are recorded as read."""
    freq = {k: v for k, v in params.items() if k in _FREQ_KEYS and k != "type"}
    if "rope_type" not in freq and "type" in params:
        freq["rope_type"] = params["type"]
    ignored = tuple(
        sorted(str(k) for k in params if k not in _FREQ_KEYS and k not in _OTHER_ROPE_KEYS)
    )
    paths = [where]
    if where.endswith(".full_attention") and t.family.rope in ("gemma3", "olmo3"):
        paths.append("rope_scaling")  # merged into the full-attention parameters
    for path in paths:
        for k in t.raw_at(path):
            if k not in ignored:
                t.note(f"{path}.{k}")
    return freq, ignored


def _rope_type(params: Mapping[str, Any], where: str) -> str:
    rope_type = params.get("rope_type")
    if not isinstance(rope_type, str) or rope_type not in CONFIG_ROPE_TYPES:
        raise CheckpointError(
            f"config.json: {where}: unknown rope_type {rope_type!r}; transformers 5.23.0 knows "
            f"{', '.join(CONFIG_ROPE_TYPES)}"
        )
    return rope_type


def _theta(params: Mapping[str, Any], where: str) -> float:
    theta = params.get("rope_theta")
    if not finite(theta) or theta <= 1.0:
        raise CheckpointError(
            f"config.json: {where}.rope_theta must be a number above 1, got {theta!r}"
        )
    return float(theta)


def _llama3_step(key: str, freq: Mapping[str, Any], where: str) -> Note | None:
    """llama3 with high_freq_factor <= low_freq_factor: transformers warns and steps."""
    lo, hi = freq.get("low_freq_factor"), freq.get("high_freq_factor")
    if not (finite(lo) and finite(hi) and hi <= lo):
        return None
    length = freq.get("original_max_position_embeddings")
    return Note(
        "llama3_step",
        {
            "key": key,
            "low": float(lo),
            "high": float(hi),
            "at": float(length) / float(lo) if finite(length) else 0.0,
            "factor": float(freq.get("factor") or 1.0),
        },
        f"{where}: high_freq_factor {hi:g} <= low_freq_factor {lo:g}: "
        "transformers warns and scales as a step (wavelengths beyond "
        f"original_max_position_embeddings / {lo:g} divided by factor, the "
        "others kept); so does this card",
    )


@dataclass
class KindReader:
    """Reads one RopeKind after another, collecting the notes and the keys nothing reads."""

    t: TextConfig
    model_type: str
    layout: str
    max_pos: int | None
    shape: HeadShape
    notes: list[Note] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def _mrope_section(
        self, params: Mapping[str, Any], where: str, head_dim: int
    ) -> tuple[int, int, int]:
        t, fam = self.t, self.t.family
        sec = params.get("mrope_section")
        if sec is None:
            sec = list(fam.mrope_default or ())
            t.default("mrope_section", sec)
        if (
            not isinstance(sec, list | tuple)
            or len(sec) != 3
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sec)
        ):
            raise CheckpointError(
                f"config.json: {where}.mrope_section must be three integers (t, h, w), got {sec!r}"
            )
        section = (int(sec[0]), int(sec[1]), int(sec[2]))
        if sum(section) != head_dim // 2:
            raise CheckpointError(
                f"config.json: {where}.mrope_section {list(section)} sums to "
                f"{sum(section)}, not head_dim/2 = {head_dim // 2}"
            )
        if "mrope_interleaved" in params:
            self.notes.append(
                Note(
                    "mrope_interleaved_unread",
                    {"layout": fam.mrope},
                    f"{where}.mrope_interleaved is not read by transformers: its "
                    f"{self.model_type} module is always {fam.mrope}",
                )
            )
        return section

    def _check_buildable(self, rope_type: str) -> None:
        """What transformers 5.23.0 (or posecards) cannot build for this type."""
        fam, declared = self.t.family, ROPE_REGISTRY[rope_type]
        if fam.head_dim_none and not self.t.data.get("head_dim"):
            if declared.head_dim_without_fallback:
                raise CheckpointError(
                    f"config.json: transformers 5.23.0 cannot build this {self.model_type} model: "
                    f"its config class leaves head_dim None and the {rope_type} RoPE reads it "
                    "without a fallback (add head_dim to config.json)"
                )
        if self.max_pos is None and declared.max_position:
            raise CheckpointError(
                f"config.json: rope_type {rope_type!r} needs max_position_embeddings"
            )

    def kind(
        self, key: str, params: Mapping[str, Any], where: str, head_dim: int, slots: int = 0
    ) -> RopeKind:
        t, fam = self.t, self.t.family
        freq, ignored = _split_params(t, params, where)
        rope_type = _rope_type(freq, where)
        theta = _theta(freq, where)
        mrope_section: tuple[int, int, int] | None = None
        if fam.mrope is not None:
            mrope_section = self._mrope_section(params, where, head_dim)
        else:
            extra = [k for k in ("mrope_section", "mrope_interleaved") if k in params]
            ignored = tuple(sorted({*ignored, *extra}))
        if fam.temperature != "ministral3" and "llama_4_scaling_beta" in params:
            ignored = tuple(sorted({*ignored, "llama_4_scaling_beta"}))
        freq.pop("mrope_section", None)
        step = _llama3_step(key, freq, where) if rope_type == "llama3" else None
        if step is not None:
            self.notes.append(step)
        self.ignored.extend(f"{where}.{k}" for k in ignored)
        self._check_buildable(rope_type)
        shape = self.shape
        return RopeKind(
            key=key,
            rope_type=rope_type,
            theta=theta,
            head_dim=head_dim,
            parameters=freq,
            partial_in_default=fam.partial_in_default,
            layout=self.layout,
            max_position_embeddings=self.max_pos or 0,
            head_slots=slots or (shape.nope_dim + head_dim if shape.mla else head_dim),
            first_slot=shape.nope_dim,
            mrope_section=mrope_section,
            mrope_layout=fam.mrope,
            ignored_keys=ignored,
        )


# ---------------------------------------------------------------- every set of a model


def _check_nesting(
    reader: KindReader, rp: Mapping[str, Any], nested: list[str], source: str
) -> None:
    """Per-layer-type dicts where the family has them, and only there."""
    t, fam = reader.t, reader.t.family
    if nested:  # mixed: flat keys beside the per-layer-type dicts are not read
        for k in rp:
            if k not in nested and k not in ("rope_theta", "partial_rotary_factor", "rope_type"):
                t.note(f"{source}.{k}")
    per_type = fam.rotary == "per_layer_type"
    if nested and not per_type:
        raise CheckpointError(
            f"config.json: {source} has one entry per layer type ({', '.join(nested)}), but "
            f"transformers' {reader.model_type} has one rotary module for every layer"
        )
    if per_type and not nested:
        raise CheckpointError(
            f"config.json: {reader.model_type} reads {source} per layer type; got one flat dict"
        )
    if fam.layer_types == "none" and fam is not ASSUMED and "layer_types" in t.data:
        reader.ignored.append("layer_types")  # set as a plain attribute, read by no module


def rope_kinds(
    reader: KindReader,
    rp: Mapping[str, Any],
    nested: list[str],
    source: str,
    layer_types: Sequence[str],
) -> dict[str, RopeKind]:
    """Every set of frequencies: one per layer type, or one ("rope") for every layer."""
    _check_nesting(reader, rp, nested, source)
    t, fam, head_dim = reader.t, reader.t.family, reader.shape.head_dim
    if fam.rotary == "per_layer_type":
        head_dims = gemma4_head_dims(t, layer_types, head_dim) if fam.head_dim == "gemma4" else {}
        kinds: dict[str, RopeKind] = {}
        for lt in sorted(set(layer_types)):
            if lt not in rp:
                raise CheckpointError(
                    f"config.json: rope_parameters has no entry for layer type {lt!r}"
                )
            if rp[lt] is None:
                raise CheckpointError(
                    f"config.json: rope_parameters.{lt} is null; transformers' "
                    f"{reader.model_type} rotary module needs frequencies for every layer type"
                )
            kinds[lt] = reader.kind(lt, rp[lt], f"{source}.{lt}", head_dims.get(lt, head_dim))
        return kinds
    # GPT-J (and an unknown config naming it): rotary_dim slots rotate, as a head of its own
    rotary = None
    if fam.head_dim == "rotary_dim":
        rotary = t.get("rotary_dim")
    elif fam is ASSUMED:
        rotary = t.raw("rotary_dim")
    if rotary:
        dim = t.integer("rotary_dim", high=head_dim, value=rotary)
        return {"rope": reader.kind("rope", rp, source, dim, slots=head_dim)}
    return {"rope": reader.kind("rope", rp, source, head_dim)}
