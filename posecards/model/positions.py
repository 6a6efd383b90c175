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

from posecards.encodings.rope_scaling import SCALING_KEYS
from posecards.model.checkpoint import Checkpoint, CheckpointError

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
# HF's default context where a config may omit max_position_embeddings
DEFAULT_CONTEXT = {"falcon": 2048}
# RoPE pairs (2k, 2k+1) in the checkpoint: GPT-J's rotate_every_two. Everything else in HF
# format pairs (k, k + d/2) (rotate_half; HF's conversion script permutes Meta's q/k rows),
# except models whose config sets rope_interleave (DeepSeek-V3).
INTERLEAVED_TYPES = frozenset({"gptj", "codegen"})
ROPE_KEYS = (
    "rope_parameters",
    "rope_scaling",
    "rope_theta",
    "rotary_emb_base",
    "rotary_pct",
    "rotary_dim",
    "partial_rotary_factor",
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
    offset_rule: str  # "none", "padding" (pad_token_id + 1), "fixed" (OPT: 2), "option"
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()
    kind: str = "learned"


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
    kind: str = "rope"


@dataclass(frozen=True)
class AlibiPositions:
    n_heads: int
    family: str  # "bloom" or "mpt"
    max_bias: float  # B in m_h = 2^(-B h / N): MPT's alibi_bias_max; BLOOM: 8
    context: int | None
    config_keys: tuple[str, ...]
    defaults: tuple[str, ...] = ()
    kind: str = "alibi"


Found = LearnedPositions | RopePositions | AlibiPositions


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


def _rope_parameters(cfg: _Config) -> tuple[str, dict[str, Any]]:
    """The rope_parameters / rope_scaling dict (HF 5 per-layer-type dicts: 'full_attention'),
    and the dotted key it was read from."""
    key, params = cfg.first("rope_parameters", "rope_scaling")
    if key is None:
        return "", {}
    if not isinstance(params, Mapping):
        raise CheckpointError(f"config.json: {key} must be an object, got {params!r}")
    if params and all(isinstance(v, Mapping) for v in params.values()):
        # transformers 5 writes one dict per attention layer type (Gemma 3: full and sliding)
        if "full_attention" not in params:
            raise CheckpointError(
                f"config.json: {key} has one entry per layer type ({', '.join(map(str, params))}); "
                "posecards reads 'full_attention'"
            )
        key = f"{key}.full_attention"
        params = params[key.rsplit(".", 1)[1]]
    if key in cfg.used:
        cfg.used.remove(key)  # each key inside is listed instead (below)
    return key, dict(params)


def _rope(cfg: _Config) -> RopePositions | None:
    model_type = cfg.text("model_type")
    if (
        not any(cfg.data.get(k) is not None for k in ROPE_KEYS)
        and model_type not in ROPE_MODEL_TYPES
    ):
        return None
    if model_type:
        cfg.get("model_type")
    defaults: list[str] = []
    prefix, params = _rope_parameters(cfg)
    sub = _Config(params)
    base = sub.real("rope_theta", low=1.0)
    if base is None:
        base = cfg.real("rope_theta", "rotary_emb_base", low=1.0)
        if base is None:
            base = 10000.0
            defaults.append("rope_theta = 10000")
    heads = cfg.integer("num_attention_heads", "n_head", "n_heads", high=MAX_HEADS)
    hidden = cfg.integer("hidden_size", "n_embd", "d_model", high=MAX_HEADS * MAX_HEAD_DIM)
    head_dim = cfg.integer("qk_rope_head_dim", "head_dim", high=MAX_HEAD_DIM)
    if head_dim is None:
        if heads is None or hidden is None:
            raise CheckpointError(
                "config.json: RoPE needs head_dim or hidden_size and num_attention_heads"
            )
        head_dim = hidden // heads
        if not 2 <= head_dim <= MAX_HEAD_DIM:
            raise CheckpointError(
                f"config.json: hidden_size / num_attention_heads = {head_dim} is not a head size"
            )
    partial = sub.real("partial_rotary_factor", high=1.0)
    if partial is None:
        partial = cfg.real("partial_rotary_factor", "rotary_pct", high=1.0)
    rotary_dim = cfg.integer("rotary_dim", high=MAX_HEAD_DIM)
    if rotary_dim is None:
        rotary_dim = int(head_dim * (1.0 if partial is None else partial))
    rotary_dim -= rotary_dim % 2
    if rotary_dim < 2 or rotary_dim > head_dim:
        raise CheckpointError(
            f"config.json: rotary dimension {rotary_dim} does not fit head_dim {head_dim}"
        )
    rope_type = params.get("rope_type") or params.get("type") or "default"
    if not isinstance(rope_type, str):
        raise CheckpointError(f"config.json: rope_type must be a string, got {rope_type!r}")
    if rope_type == "su":  # HF's old name of longrope
        rope_type = "longrope"
    ignored = tuple(
        sorted(str(k) for k in params if k not in SCALING_KEYS and k != "partial_rotary_factor")
    )
    scaling = {
        k: v
        for k, v in params.items()
        if k in SCALING_KEYS
        and k not in ("type", "rope_theta", "partial_rotary_factor")
        and v is not None
    }
    scaling["rope_type"] = rope_type
    factor = sub.real("factor", high=65536.0) if rope_type != "default" else None
    max_pos = cfg.integer("max_position_embeddings", "n_positions", "max_seq_len")
    if max_pos is None and model_type in DEFAULT_CONTEXT:
        max_pos = DEFAULT_CONTEXT[model_type]
        defaults.append(f"max_position_embeddings = {max_pos}")
    # the original (pre-extension) length: HF prefers a top-level key (longrope, DeepSeek)
    orig = cfg.integer("original_max_position_embeddings")
    if orig is None:
        orig = sub.integer("original_max_position_embeddings")
    if orig is not None:
        scaling["original_max_position_embeddings"] = orig
    if orig is not None:
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
    interleaved = model_type in INTERLEAVED_TYPES or cfg.get("rope_interleave") is True
    # every key of the scaling dict that was used, as prefix.key
    used_inside = [k for k in params if k not in ignored and params[k] is not None]
    cfg.used.extend(f"{prefix}.{k}" for k in sorted(used_inside, key=str))
    return RopePositions(
        head_dim=head_dim,
        rotary_dim=rotary_dim,
        base=float(base),
        scaling=scaling,
        rope_type=rope_type,
        ignored_keys=ignored,
        trained_context=int(trained),
        scaled_context=int(max(scaled, trained)),
        context_rule=rule,
        max_position_embeddings=max_pos,
        layout="interleaved" if interleaved else "half",
        config_keys=tuple(cfg.used),
        defaults=tuple(defaults),
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
    rope = _rope(_Config(ckpt.config))
    if rope is not None:
        return rope
    what = "config.json and " if ckpt.config_file else "no config.json; "
    raise CheckpointError(
        f"{ckpt.name}: no position encoding found ({what}{len(ckpt.tensors)} tensors read); "
        f"looked for {LOOKED_FOR}; name a table with --tensor NAME"
    )
