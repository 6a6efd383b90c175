"""The text model's config.json keys, read with its config class's defaults.

``text_config(config)`` finds the text model (``text_config`` of a multimodal config, or the flat
keys of a Qwen2-VL one); a ``TextConfig`` reads its keys through the aliases transformers'
``attribute_map`` resolves, falling back on the class defaults of its family
(``posecards/model/families.py``), and records which keys were read and which defaults were
filled, in the order they were, so the card can name them.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from posecards.model.checkpoint import CheckpointError
from posecards.model.families import COMPOSITE, FAMILIES, Family

# aliases transformers' attribute_map resolves (GPT-J, GPT-2-style names)
_ALIASES: dict[str, tuple[str, ...]] = {
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "num_attention_heads": ("num_attention_heads", "n_head", "n_heads"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer", "n_layers", "num_layers"),
    "max_position_embeddings": ("max_position_embeddings", "n_positions", "max_seq_len"),
}
# config.json keys that name RoPE (an unknown model_type with one of them is read as RoPE)
_ROPE_KEYS = (
    "rope_parameters",
    "rope_scaling",
    "rope_theta",
    "rotary_emb_base",
    "rotary_pct",
    "rotary_dim",
    "partial_rotary_factor",
    "rope_local_base_freq",
)
MAX_LAYERS = 4096
MAX_HEAD_DIM = 65536


def finite(v: Any) -> TypeGuard[int | float]:
    """A finite int or float (not a bool)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class TextConfig:
    """The text model's config: reads with the class defaults, recording keys and defaults."""

    def __init__(self, data: Mapping[str, Any], prefix: str, family: Family) -> None:
        self.data = data
        self.prefix = prefix
        self.family = family
        self.used: list[str] = []
        self.defaults: list[str] = []

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        """config.json's value (None if absent), recorded as read."""
        if key in self.data:
            self.note(key)
            return self.data[key]
        return None

    def note(self, key: str) -> None:
        dotted = self.prefix + key
        if dotted not in self.used:
            self.used.append(dotted)

    def get(self, key: str) -> Any:
        """config.json's value if the key is present (even null), else the class default."""
        for k in _ALIASES.get(key, (key,)):
            if k in self.data:
                self.note(k)
                return self.data[k]
        for k in _ALIASES.get(key, (key,)):
            if k in self.family.defaults:
                value = self.family.defaults[k]
                if value is not None:
                    self.default(k, value)
                return value
        return None

    def default(self, key: str, value: Any) -> None:
        shown = value
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            shown = int(value)  # 10000.0 -> 10000, as config.json would write it
        text = f"{key} = {shown}"
        if text not in self.defaults:
            self.defaults.append(text)

    def integer(self, key: str, low: int = 1, high: int = 1 << 31, value: Any = None) -> int:
        v = self.get(key) if value is None else value
        if not finite(v) or v != int(v) or not low <= int(v) <= high:
            raise CheckpointError(
                f"config.json: {self.prefix}{key} must be an integer from {low} to {high:,}, "
                f"got {v!r}"
            )
        return int(v)

    def optional_int(self, key: str, low: int = 1, high: int = 1 << 31) -> int | None:
        v = self.get(key)
        return None if v is None else self.integer(key, low, high, v)

    def real(self, key: str, value: Any = None, low: float = 0.0) -> float:
        v = self.get(key) if value is None else value
        if not finite(v) or not float(v) > low:
            raise CheckpointError(
                f"config.json: {self.prefix}{key} must be a finite number above {low:g}, got {v!r}"
            )
        return float(v)

    def object(self, key: str) -> dict[str, Any] | None:
        """A copy of config.json's object at ``key`` (None if absent)."""
        v = self.raw(key)
        if v is None:
            return None
        if not isinstance(v, Mapping):
            raise CheckpointError(f"config.json: {self.prefix}{key} must be an object, got {v!r}")
        return copy.deepcopy(dict(v))

    def raw_at(self, path: str) -> Mapping[str, Any]:
        """The dict config.json holds at a dotted path of the text config (empty if none)."""
        node: Any = self.data
        for part in path.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else {}


def text_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], str, str]:
    """(the text model's dict, key prefix, its model_type)."""
    outer = config.get("model_type")
    outer = outer if isinstance(outer, str) else ""
    text = config.get("text_config")
    if text is not None:
        if not isinstance(text, Mapping):
            raise CheckpointError(f"config.json: text_config must be an object, got {text!r}")
        inner = text.get("model_type")
        if not isinstance(inner, str) or not inner:
            inner = COMPOSITE.get(outer, outer)
        return dict(text), "text_config.", inner
    # Qwen2-VL and Qwen2.5-VL hub configs are flat: the text keys sit at the top level
    return dict(config), "", COMPOSITE.get(outer, outer)


def has_rope_keys(config: Mapping[str, Any]) -> bool:
    """Whether a config names RoPE (for an unknown model_type), its text model's keys included."""
    text, _, model_type = text_config(config)
    return model_type in FAMILIES or any(text.get(k) is not None for k in _ROPE_KEYS)
