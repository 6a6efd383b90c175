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
from typing import Any

from posecards.model.checkpoint import Checkpoint, CheckpointError
from posecards.model.layer_records import ModelLayers
from posecards.model.probed import TablesReading, read_model, transformers_knows
from posecards.model.rope_positions import MAX_CONTEXT, is_plain, plain_rope
from posecards.model.rope_positions import RopePositions as RopePositions
from posecards.model.text_config import finite, has_rope_keys

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

LOOKED_FOR = (
    "learned tables (wpe.weight, embeddings.position_embeddings.weight, embed_positions.weight), "
    "RoPE keys in config.json (rope_parameters, rope_scaling, rope_theta, rotary_*) or a RoPE "
    "model_type (llama, mistral, qwen2, ...), ALiBi (BLOOM, MPT attn_config.alibi)"
)


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
        if not finite(v) or v != int(v) or not low <= int(v) <= high:
            raise CheckpointError(
                f"config.json: {key} must be an integer from {low} to {high:,}, got {v!r}"
            )
        return int(v)

    def real(self, *keys: str, low: float = 0.0, high: float = math.inf) -> float | None:
        """The first present key as a finite number with low < value <= high."""
        key, v = self.first(*keys)
        if key is None:
            return None
        if not finite(v) or not low < float(v) <= high:
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
    return plain_rope(reading)


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
