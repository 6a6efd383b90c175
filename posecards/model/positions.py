"""What a checkpoint uses for position, read from its config.json and tensor names.

Three kinds, tried in this order:

- ALiBi: BLOOM (always) and MPT (``attn_config.alibi``): no tensor, only the head count.
- a learned absolute table: a ``--tensor`` given by the user, else the first known name
  (GPT-2 ``wpe``, BERT/RoBERTa ``embeddings.position_embeddings``, OPT/BART ``embed_positions``).
  Some tables start with rows that no position uses: RoBERTa-style models number positions from
  ``pad_token_id + 1``; OPT, BART and BioGPT add 2 to every position id.
- RoPE: the rotary keys of config.json (HF 5 ``rope_parameters``; HF 4 ``rope_theta`` and
  ``rope_scaling``; GPT-NeoX ``rotary_pct``/``rotary_emb_base``; GPT-J ``rotary_dim``), or a
  model type known to use RoPE, with Hugging Face's defaults for absent keys.

Every config key read is recorded, and every default filled in, so the card can say where each
number came from. Config values of the wrong type or out of range are CheckpointErrors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from posecards.encodings.rope_partial import rotary_dim
from posecards.encodings.rope_scaling import ROPE_REGISTRY
from posecards.model.checkpoint import Checkpoint, CheckpointError
from posecards.model.layers import ModelLayers, has_rope_keys
from posecards.model.probed import TablesReading, read_model, transformers_knows

# Known learned position tables (name patterns): GPT-2 wpe, BERT/RoBERTa position_embeddings,
# OPT/BART embed_positions.
LEARNED_TABLES: tuple[str, ...] = (
    r"(.+\.)?wpe\.weight",
    r"(.+\.)?embeddings\.position_embeddings\.weight",
    r"(.+\.)?embed_positions\.weight",
)
# model_type -> rows before position 0, because position ids start at padding_idx + 1
PADDING_OFFSET_TYPES = frozenset(
    {
        "roberta",
        "xlm-roberta",
        "xlm-roberta-xl",
        "camembert",
        "roberta-prelayernorm",
        "longformer",
        "data2vec-text",
        "ibert",
        "luke",
        "xmod",
        "esm",
        "markuplm",
        "layoutlmv3",
        "lilt",
    }
)
# MPNet numbers positions from padding_idx + 1 with padding_idx fixed at 1 (not pad_token_id)
FIXED_PADDING_IDX = {"mpnet": 1}
# model_type -> fixed offset added to every position id (OPTLearnedPositionalEmbedding & co.)
FIXED_OFFSET_TYPES: dict[str, int] = {
    "opt": 2,
    "bart": 2,
    "mbart": 2,
    "biogpt": 2,
    "plbart": 2,
    "mvp": 2,
    "trocr": 2,
}
# Model types whose attention uses RoPE even when config.json names no rotary key (HF defaults).
ROPE_MODEL_TYPES = frozenset(
    {
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "gemma",
        "gemma2",
        "gemma3_text",
        "phi",
        "phi3",
        "gpt_neox",
        "gptj",
        "codegen",
        "falcon",
        "stablelm",
        "olmo",
        "olmo2",
        "starcoder2",
        "cohere",
        "granite",
        "persimmon",
        "internlm2",
        "deepseek_v2",
        "deepseek_v3",
    }
)
# Largest position table read (as float64: 1 GiB). Real ones are far smaller: GPT-2 XL has
# 1024 × 1600 values, OPT-175B 2050 × 12288.
MAX_TABLE_VALUES = 1 << 27
MAX_HEADS = 4096
MAX_HEAD_DIM = 65536
MAX_CONTEXT = 1 << 31  # tokens

LOOKED_FOR = (
    "learned tables (wpe.weight, embeddings.position_embeddings.weight, embed_positions.weight), "
    "RoPE keys in config.json (rope_parameters, rope_scaling, rope_theta, rotary_*) or a RoPE "
    "model_type (llama, mistral, qwen2, ...), ALiBi (BLOOM, MPT attn_config.alibi)"
)


def _finite(v: Any) -> TypeGuard[int | float]:
    """A real, finite JSON number (not a bool, string, list or null)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class _Config:
    """config.json with a record of the keys read (dotted for nested keys) and typed getters."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.used: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node or node[part] is None:
                return default
            node = node[part]
        if key not in self.used:
            self.used.append(key)
        return node

    def first(self, *keys: str) -> tuple[str, Any] | tuple[None, None]:
        for k in keys:
            v = self.get(k)
            if v is not None:
                return k, v
        return None, None

    def integer(self, *keys: str, low: int = 1, high: int = MAX_CONTEXT) -> int | None:
        """The first present key as an integer in [low, high] (a float like 2048.0 is fine)."""
        key, v = self.first(*keys)
        if key is None:
            return None
        if not _finite(v) or v != int(v) or not low <= int(v) <= high:
            raise CheckpointError(
                f"config.json: {key} must be an integer from {low} to {high:,}, got {v!r}"
            )
        return int(v)

    def real(self, *keys: str, low: float = 0.0, high: float = math.inf) -> float | None:
        """The first present key as a finite number with low < value <= high."""
        key, v = self.first(*keys)
        if key is None:
            return None
        if not _finite(v) or not low < float(v) <= high:
            bound = "" if high == math.inf else f" and at most {high:g}"
            raise CheckpointError(
                f"config.json: {key} must be a finite number above {low:g}{bound}, got {v!r}"
            )
        return float(v)

    def text(self, key: str) -> str:
        v = self.data.get(key)
        if v is None:
            return ""
        if not isinstance(v, str):
            raise CheckpointError(f"config.json: {key} must be a string, got {v!r}")
        return v


@dataclass(frozen=True)
class LearnedPositions:
    tensor: str
    shape: tuple[int, int]
    dtype: str
    offset: int  # table rows before the row of position 0
    offset_rule: str  # "none", "padding" (pad_token_id + 1), "fixed" (OPT: 2), "option",
    # "measured" (the rows transformers' code reads, from a folder without the table)
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()
    kind: str = "learned"
    # read through transformers from config.json alone: every table, no values (None: the
    # table's tensor is in the folder and is drawn)
    measured: TablesReading | None = None


@dataclass(frozen=True)
class RopePositions:
    head_dim: int
    rotary_dim: int  # head_dim * partial_rotary_factor, or rotary_dim
    base: float
    scaling: Mapping[str, Any]  # the rope_parameters passed to rope_inv_freq (no theta)
    rope_type: str
    ignored_keys: tuple[str, ...]  # scaling keys posecards does not use
    trained_context: int
    scaled_context: int
    context_rule: str  # how the two contexts were found: "original", "linear", "extend", "none"
    max_position_embeddings: int | None
    layout: str  # "half" or "interleaved"
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()  # "rope_theta = 10000": values HF assumes when a key is absent
    reading: ModelLayers | None = None  # the layer-by-layer reading it was made from
    kind: str = "rope"


@dataclass(frozen=True)
class LayeredPositions:
    """A RoPE model whose layers differ, or that rotates in a way today's RoPE card does not
    show (MRoPE, proportional, MLA, query temperature): the layer-by-layer card."""

    reading: ModelLayers
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()
    kind: str = "layers"


@dataclass(frozen=True)
class AlibiPositions:
    n_heads: int
    family: str  # "bloom" or "mpt"
    max_bias: float  # B in m_h = 2^(-B h / N): MPT's alibi_bias_max; BLOOM: 8
    context: int | None
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()
    kind: str = "alibi"


@dataclass(frozen=True)
class RelativePositions:
    """T5-style relative position biases read through transformers from config.json: each
    attention's buckets (``measured.biases``); the bias values are the checkpoint's."""

    measured: TablesReading
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()
    kind: str = "relative"


Found = LearnedPositions | RopePositions | LayeredPositions | AlibiPositions | RelativePositions


@dataclass(frozen=True)
class InspectOptions:
    """What the user chose: ``--tensor NAME`` and ``--offset N`` (None: detect)."""

    tensor: str | None = None
    offset: int | None = None


def _learned(ckpt: Checkpoint, cfg: _Config, opts: InspectOptions) -> LearnedPositions | None:
    if opts.tensor is not None:
        name = opts.tensor
        if name not in ckpt.tensors:
            close = sorted(n for n in ckpt.tensors if "pos" in n or "wpe" in n)[:5]
            hint = f"; tensors with 'pos' in their name: {', '.join(close)}" if close else ""
            raise CheckpointError(f"--tensor {name!r} is not in {ckpt.name}{hint}")
    else:
        hits = [
            n for n in ckpt.tensors for pat in LEARNED_TABLES if re.fullmatch(pat, n) is not None
        ]
        if not hits:
            return None
        name = sorted(hits, key=lambda n: (n.count("."), n))[0]
    entry = ckpt.tensors[name]
    if len(entry.shape) != 2:
        raise CheckpointError(
            f"tensor {name!r} has shape {entry.shape}; a position table is 2-D (positions, width)"
        )
    rows, width = entry.shape
    if rows * width > MAX_TABLE_VALUES:
        raise CheckpointError(
            f"tensor {name!r} has {rows} × {width} values; posecards reads position tables of "
            f"at most {MAX_TABLE_VALUES:,} values"
        )
    model_type = cfg.text("model_type")
    if model_type:
        cfg.get("model_type")
    defaults: list[str] = []
    if opts.offset is not None:
        offset, rule = opts.offset, "option"
    elif opts.tensor is not None:
        offset, rule = 0, "none"
    elif model_type in FIXED_OFFSET_TYPES:
        offset, rule = FIXED_OFFSET_TYPES[model_type], "fixed"
    elif model_type in FIXED_PADDING_IDX:
        offset, rule = FIXED_PADDING_IDX[model_type] + 1, "padding"
        defaults.append(f"padding_idx = {FIXED_PADDING_IDX[model_type]}")
    elif model_type in PADDING_OFFSET_TYPES:
        pad = cfg.integer("pad_token_id", low=0, high=rows)
        if pad is None:
            pad = 1
            defaults.append("pad_token_id = 1")
        offset, rule = pad + 1, "padding"
    else:
        offset, rule = 0, "none"
    if rows - offset < 2 or width < 2:
        raise CheckpointError(
            f"tensor {name!r} has shape {entry.shape}: with offset {offset} that leaves fewer "
            "than 2 positions or a width below 2"
        )
    return LearnedPositions(
        tensor=name,
        shape=(rows, width),
        dtype=entry.dtype,
        offset=offset,
        offset_rule=rule,
        config_keys=tuple(cfg.used),
        defaults=tuple(defaults),
    )


def is_plain(reading: ModelLayers) -> bool:
    """One RoPE on every layer, full attention everywhere, the standard softmax scale and nothing
    else (no MRoPE, proportional pairs, MLA split or query temperature): today's RoPE card."""
    if len(reading.rope) != 1:
        return False  # two RoPEs, or none on any layer
    kind = next(iter(reading.rope.values()))
    s = reading.softmax
    standard = s.rule == "head_dim" or (
        s.rule == "query_pre_attn_scalar" and s.value_key == s.head_dim
    )
    return (
        all(la.position == "rope" and la.attention == "full" for la in reading.layers)
        and kind.rope_type != "proportional"
        and kind.mrope_section is None
        and kind.first_slot == 0
        and standard
        and reading.temperature is None
    )


def _measured(
    reading: TablesReading, config: Mapping[str, Any]
) -> LearnedPositions | RelativePositions:
    """A learned table or relative bias read through transformers from config.json alone: its
    values are the checkpoint's, which this folder does not hold."""
    if reading.biases:
        return RelativePositions(reading, ("model_type",) if "model_type" in config else ())
    first = reading.tables[0]
    return LearnedPositions(
        tensor=f"{first.name}.weight",  # in the text model (model_class), as transformers names it
        shape=(first.rows, first.width),
        dtype="",
        offset=first.offset,
        offset_rule="measured",
        config_keys=("model_type",) if "model_type" in config else (),
        measured=reading,
    )


def _rope(
    config: Mapping[str, Any],
) -> RopePositions | LayeredPositions | LearnedPositions | RelativePositions | None:
    model_type = config.get("model_type")
    if (
        not has_rope_keys(config)
        and model_type not in ROPE_MODEL_TYPES
        and not transformers_knows(model_type)
    ):
        return None
    reading = read_model(config)
    if isinstance(reading, TablesReading):
        return _measured(reading, config)
    if not is_plain(reading):
        return LayeredPositions(
            reading=reading,
            config_keys=reading.config_keys,
            defaults=(*reading.defaults, *(f"assumed: {a}" for a in reading.assumed)),
        )
    kind = next(iter(reading.rope.values()))
    params = dict(kind.parameters)
    rope_type = kind.rope_type
    partial = params.get("partial_rotary_factor")
    if partial is None or (rope_type == "default" and not kind.partial_in_default):
        partial = 1.0
    try:
        rotary = rotary_dim(kind.head_dim, partial)
    except ValueError as exc:
        raise CheckpointError(f"config.json: {exc}") from None
    scaling = {
        k: v
        for k, v in params.items()
        if k not in ("type", "rope_theta", "partial_rotary_factor") and v is not None
    }
    scaling["rope_type"] = rope_type
    factor = params.get("factor") if rope_type != "default" else None
    if factor is not None and (not _finite(factor) or not 0 < factor <= 65536):
        raise CheckpointError(
            f"config.json: rope factor must be a finite number above 0 and at most 65536, "
            f"got {factor!r}"
        )
    max_pos = reading.max_position_embeddings
    orig = params.get("original_max_position_embeddings")
    in_dict = ROPE_REGISTRY[rope_type].original_length  # the dict holds it (standardized)
    if not in_dict:
        orig = reading.original_max_position_embeddings
    if orig is not None and (not _finite(orig) or orig != int(orig) or orig < 1):
        raise CheckpointError(
            f"config.json: original_max_position_embeddings must be a positive integer, "
            f"got {orig!r}"
        )
    if orig is not None and (in_dict or rope_type in ("default", "dynamic")):
        orig = int(orig)
        if in_dict:
            scaling["original_max_position_embeddings"] = orig
        # e.g. Llama 3.1: trained on 8192, max_position_embeddings 131072
        trained, rule = orig, "original"
        scaled = max(max_pos or 0, round(orig * factor) if factor else 0, orig)
    elif max_pos is None:
        raise CheckpointError("config.json: RoPE needs max_position_embeddings")
    elif rope_type == "linear" and factor:
        # position interpolation: max_position_embeddings is the stretched length
        trained, scaled, rule = max(1, round(max_pos / factor)), max_pos, "linear"
    elif factor and rope_type != "default":
        # dynamic, yarn, ntk: HF treats max_position_embeddings as the original length
        trained, scaled, rule = max_pos, round(max_pos * factor), "extend"
    else:
        trained, scaled, rule = max_pos, max_pos, "none"
    if not 1 <= trained <= MAX_CONTEXT or not 1 <= scaled <= MAX_CONTEXT:
        raise CheckpointError(f"config.json: a context of {scaled:g} tokens is out of range")
    return RopePositions(
        head_dim=kind.head_slots,
        rotary_dim=rotary,
        base=kind.theta,
        scaling=scaling,
        rope_type=rope_type,
        ignored_keys=tuple(k.rsplit(".", 1)[-1] for k in reading.ignored_keys),
        trained_context=int(trained),
        scaled_context=int(max(scaled, trained)),
        context_rule=rule,
        max_position_embeddings=max_pos,
        layout=kind.layout,
        config_keys=reading.config_keys,
        defaults=(*reading.defaults, *(f"assumed: {a}" for a in reading.assumed)),
        reading=reading,
    )


def _alibi(cfg: _Config) -> AlibiPositions | None:
    model_type = cfg.text("model_type")
    if model_type == "bloom":
        cfg.get("model_type")
        heads = cfg.integer("n_head", "num_attention_heads", high=MAX_HEADS)
        if heads is None:
            raise CheckpointError("config.json: a BLOOM config needs n_head")
        return AlibiPositions(heads, "bloom", 8.0, None, tuple(cfg.used))  # BLOOM: B = 8
    if model_type == "mpt":
        attn = cfg.data.get("attn_config")
        if attn is not None and not isinstance(attn, Mapping):
            raise CheckpointError(f"config.json: attn_config must be an object, got {attn!r}")
        if attn is not None and attn.get("alibi") is False:
            return None
        cfg.get("model_type")
        cfg.get("attn_config.alibi")
        heads = cfg.integer("n_heads", "num_attention_heads", high=MAX_HEADS)
        if heads is None:
            raise CheckpointError("config.json: an MPT config needs n_heads")
        max_bias = cfg.real("attn_config.alibi_bias_max", high=1024.0)
        defaults = () if max_bias is not None else ("alibi_bias_max = 8",)
        return AlibiPositions(
            heads,
            "mpt",
            8.0 if max_bias is None else max_bias,
            cfg.integer("max_seq_len"),
            tuple(cfg.used),
            defaults,
        )
    if cfg.data.get("alibi") is True:
        raise CheckpointError(
            f"config.json sets alibi for model_type {model_type!r}; posecards reads ALiBi "
            "from BLOOM and MPT configs only (Falcon rounds its ALiBi bias to bfloat16)"
        )
    return None


def find_positions(ckpt: Checkpoint, opts: InspectOptions | None = None) -> Found:
    """The position scheme of ``ckpt``, or CheckpointError listing what was looked for."""
    opts = opts or InspectOptions()
    if opts.tensor is None:
        alibi = _alibi(_Config(ckpt.config))
        if alibi is not None:
            return alibi
    learned = _learned(ckpt, _Config(ckpt.config), opts)
    if learned is not None:
        return learned
    rope = _rope(ckpt.config)
    if rope is not None:
        return rope
    what = "config.json and " if ckpt.config_file else "no config.json; "
    raise CheckpointError(
        f"{ckpt.name}: no position encoding found ({what}{len(ckpt.tensors)} tensors read); "
        f"looked for {LOOKED_FOR}; name a table with --tensor NAME"
    )
