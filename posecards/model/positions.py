"""What a checkpoint uses for position, read from its config.json and tensor names.

Three kinds, tried in this order:

- ALiBi: BLOOM (always) and MPT (``attn_config.alibi``): no tensor, only the head count.
- a learned absolute table: a ``--tensor`` given by the user, else the first known name
  (GPT-2 ``wpe``, BERT/RoBERTa ``embeddings.position_embeddings``, OPT/BART ``embed_positions``).
  Some tables start with rows that no position uses: RoBERTa-style models number positions from
  ``pad_token_id + 1``; OPT, BART and BioGPT add 2 to every position id.
- RoPE: the rotary keys of config.json (HF 5 ``rope_parameters``; HF 4 ``rope_theta`` and
  ``rope_scaling``; GPT-NeoX ``rotary_pct``/``rotary_emb_base``; GPT-J ``rotary_dim``).

Every config key read is recorded, so the card can say where each number came from.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from posecards.encodings.rope_scaling import SCALING_KEYS
from posecards.model.checkpoint import Checkpoint, CheckpointError

# Known learned position tables: (name pattern, what it is).
LEARNED_TABLES: tuple[tuple[str, str], ...] = (
    (r"(.+\.)?wpe\.weight", "GPT-2 style wpe"),
    (r"(.+\.)?embeddings\.position_embeddings\.weight", "BERT/RoBERTa position_embeddings"),
    (r"(.+\.)?embed_positions\.weight", "OPT/BART embed_positions"),
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
    }
)
# model_type -> fixed offset added to every position id (OPTLearnedPositionalEmbedding & co.)
FIXED_OFFSET_TYPES: dict[str, int] = {"opt": 2, "bart": 2, "mbart": 2, "biogpt": 2}
# RoPE pairs (2k, 2k+1) in the checkpoint: GPT-J's rotate_every_two. Everything else in HF
# format pairs (k, k + d/2) (rotate_half; HF's conversion script permutes Meta's q/k rows).
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
ALIBI_TYPES = ("bloom", "mpt")
# Largest position table read (as float64: 1 GiB). Real ones are far smaller: GPT-2 XL has
# 1024 × 1600 values, OPT-175B 2050 × 12288.
MAX_TABLE_VALUES = 1 << 27

LOOKED_FOR = (
    "learned tables (wpe.weight, embeddings.position_embeddings.weight, embed_positions.weight), "
    "RoPE keys in config.json (rope_parameters, rope_scaling, rope_theta, rotary_*), "
    "ALiBi (BLOOM, MPT attn_config.alibi)"
)


class _Config:
    """config.json with a record of the keys read (dotted for nested keys)."""

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

    def first(self, *keys: str, default: Any = None) -> Any:
        for k in keys:
            v = self.get(k)
            if v is not None:
                return v
        return default


@dataclass(frozen=True)
class LearnedPositions:
    tensor: str
    shape: tuple[int, int]
    dtype: str
    offset: int  # table rows before the row of position 0
    offset_rule: str  # "none", "padding" (pad_token_id + 1), "fixed" (OPT: 2), "option"
    config_keys: tuple[str, ...]
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
    max_position_embeddings: int | None
    layout: str  # "half" or "interleaved"
    config_keys: tuple[str, ...]
    kind: str = "rope"


@dataclass(frozen=True)
class AlibiPositions:
    n_heads: int
    family: str  # "bloom" or "mpt"
    max_bias: float  # B in m_h = 2^(-B h / N): MPT's alibi_bias_max; BLOOM: 8
    context: int | None
    config_keys: tuple[str, ...]
    kind: str = "alibi"


Found = LearnedPositions | RopePositions | AlibiPositions


@dataclass(frozen=True)
class InspectOptions:
    """What the user chose: ``--tensor NAME`` and ``--offset N`` (None: detect)."""

    tensor: str | None = None
    offset: int | None = None


def _int(cfg: _Config, *keys: str) -> int | None:
    v = cfg.first(*keys)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or v <= 0:
        raise CheckpointError(f"config.json: {keys[0]} must be a positive integer, got {v!r}")
    return int(v)


def _learned(ckpt: Checkpoint, cfg: _Config, opts: InspectOptions) -> LearnedPositions | None:
    if opts.tensor is not None:
        name = opts.tensor
        if name not in ckpt.tensors:
            close = sorted(n for n in ckpt.tensors if "pos" in n or "wpe" in n)[:5]
            hint = f"; tensors with 'pos' in their name: {', '.join(close)}" if close else ""
            raise CheckpointError(f"--tensor {name!r} is not in {ckpt.name}{hint}")
    else:
        hits = [
            n for n in ckpt.tensors for pat, _ in LEARNED_TABLES if re.fullmatch(pat, n) is not None
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
    model_type = str(cfg.get("model_type", ""))
    if opts.offset is not None:
        offset, rule = opts.offset, "option"
    elif opts.tensor is not None:
        offset, rule = 0, "none"
    elif model_type in FIXED_OFFSET_TYPES:
        offset, rule = FIXED_OFFSET_TYPES[model_type], "fixed"
    elif model_type in PADDING_OFFSET_TYPES:
        pad = _int(cfg, "pad_token_id")
        offset, rule = (1 if pad is None else pad) + 1, "padding"
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
    )


def _rope(ckpt: Checkpoint, cfg: _Config) -> RopePositions | None:
    model_type = str(cfg.get("model_type", ""))
    if not any(cfg.data.get(k) is not None for k in ROPE_KEYS):
        return None
    params = cfg.first("rope_parameters", "rope_scaling", default={})
    if not isinstance(params, Mapping):
        raise CheckpointError(f"config.json: rope_parameters must be an object, got {params!r}")
    params = dict(params)
    base = params.pop("rope_theta", None)
    if base is None:
        base = cfg.first("rope_theta", "rotary_emb_base", default=10000.0)
    else:
        cfg.used.append("rope_parameters.rope_theta")
    heads = _int(cfg, "num_attention_heads", "n_head", "n_heads")
    hidden = _int(cfg, "hidden_size", "n_embd", "d_model")
    head_dim = _int(cfg, "head_dim")
    if head_dim is None:
        if heads is None or hidden is None:
            raise CheckpointError(
                "config.json: RoPE needs head_dim or hidden_size and num_attention_heads"
            )
        head_dim = hidden // heads
    partial = params.pop("partial_rotary_factor", None)
    if partial is None:
        partial = cfg.first("partial_rotary_factor", "rotary_pct")
    rotary_dim = _int(cfg, "rotary_dim")
    if rotary_dim is None:
        frac = 1.0 if partial is None else float(partial)
        if not 0 < frac <= 1:
            raise CheckpointError(
                f"config.json: partial_rotary_factor must be in (0, 1], got {frac}"
            )
        rotary_dim = int(head_dim * frac)
    rotary_dim -= rotary_dim % 2
    if rotary_dim < 2 or rotary_dim > head_dim:
        raise CheckpointError(
            f"config.json: rotary dimension {rotary_dim} does not fit head_dim {head_dim}"
        )
    rope_type = str(params.get("rope_type") or params.get("type") or "default")
    if rope_type == "su":  # HF's old name of longrope
        rope_type = "longrope"
    ignored = tuple(sorted(k for k in params if k not in SCALING_KEYS))
    scaling = {k: v for k, v in params.items() if k in SCALING_KEYS and k != "type"}
    scaling["rope_type"] = rope_type
    max_pos = _int(cfg, "max_position_embeddings", "n_positions", "max_seq_len")
    orig = scaling.get("original_max_position_embeddings")
    if orig is None and rope_type == "longrope":
        orig = _int(cfg, "original_max_position_embeddings")
        if orig is not None:
            scaling["original_max_position_embeddings"] = orig
    if orig is not None:
        trained = int(orig)
        scaled = max_pos if max_pos is not None else int(trained * float(scaling.get("factor", 1)))
    else:
        if max_pos is None:
            raise CheckpointError("config.json: RoPE needs max_position_embeddings")
        trained = max_pos
        scaled = int(round(max_pos * float(scaling.get("factor", 1.0))))
    return RopePositions(
        head_dim=head_dim,
        rotary_dim=rotary_dim,
        base=float(base),
        scaling=scaling,
        rope_type=rope_type,
        ignored_keys=ignored,
        trained_context=trained,
        scaled_context=max(scaled, trained),
        max_position_embeddings=max_pos,
        layout="interleaved" if model_type in INTERLEAVED_TYPES else "half",
        config_keys=tuple(cfg.used),
    )


def _alibi(cfg: _Config) -> AlibiPositions | None:
    model_type = str(cfg.data.get("model_type", ""))
    if model_type == "bloom":
        cfg.get("model_type")
        heads = _int(cfg, "n_head", "num_attention_heads")
        if heads is None:
            raise CheckpointError("config.json: a BLOOM config needs n_head")
        return AlibiPositions(heads, "bloom", 8.0, None, tuple(cfg.used))  # BLOOM: B = 8
    if model_type == "mpt" and cfg.data.get("attn_config", {}).get("alibi", True):
        cfg.get("model_type")
        cfg.get("attn_config.alibi")
        heads = _int(cfg, "n_heads", "num_attention_heads")
        if heads is None:
            raise CheckpointError("config.json: an MPT config needs n_heads")
        max_bias = float(cfg.get("attn_config.alibi_bias_max", 8))
        if not math.isfinite(max_bias) or max_bias <= 0:
            raise CheckpointError(f"config.json: alibi_bias_max must be positive, got {max_bias}")
        return AlibiPositions(heads, "mpt", max_bias, _int(cfg, "max_seq_len"), tuple(cfg.used))
    if cfg.data.get("alibi") is True:
        raise CheckpointError(
            f"config.json sets alibi for model_type {model_type!r}; "
            "posecards reads ALiBi from BLOOM and MPT configs only"
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
    rope = _rope(ckpt, _Config(ckpt.config))
    if rope is not None:
        return rope
    what = "config.json and " if ckpt.config_file else "no config.json; "
    raise CheckpointError(
        f"{ckpt.name}: no position encoding found ({what}{len(ckpt.tensors)} tensors read); "
        f"looked for {LOOKED_FOR}; name a table with --tensor NAME"
    )
