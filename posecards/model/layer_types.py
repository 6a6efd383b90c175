"""Which attention each layer runs and whether it rotates q and k, as transformers 5.23.0 decides.

``layer_types(t, n)`` is ``config.layer_types`` as the config class fills it (config.json's list,
or the class's rule: ``Family.layer_types``, one function each in ``_RULES``);
``assign_layers`` gives every layer its attention kind (full, sliding with its window, chunked
with its chunk, linear), and whether it rotates and with which RoPE (``Family.rope_layers``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from posecards.model.checkpoint import CheckpointError
from posecards.model.families import ASSUMED, LayerTypesRule
from posecards.model.layer_records import Layer
from posecards.model.text_config import TextConfig

# "none": no self-attention kernel in the layer (state-space, convolution or cross-attention)
ATTENTION_KINDS = ("full", "sliding", "chunked", "linear", "none")
# transformers layer_types value -> attention kind on the card / in the JSON
_KIND = {
    "full_attention": "full",
    "sliding_attention": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
}
_LEGACY_LAYER_TYPES = {"attention": "full_attention", "mamba": "linear_attention"}

LayerTypes = Callable[[TextConfig, int], list[str]]


def window(t: TextConfig) -> int | None:
    """The sliding window the attention uses (Qwen2-style configs gate it by use_sliding_window)."""
    size = t.get("sliding_window")
    if t.family.window_gate and not t.get("use_sliding_window"):
        return None
    if size is None:
        return None
    return t.integer("sliding_window", value=size)


def no_rope_layers(t: TextConfig, n: int) -> list[int]:
    """no_rope_layers[i] == 1: layer i rotates (Llama 4, SmolLM3: the name is the inverse)."""
    given = t.raw("no_rope_layers")
    # Llama 4 replaces an empty list by the default; SmolLM3 only a missing one
    use_default = not given if t.family.model_type == "llama4_text" else given is None
    if use_default:
        interval = t.integer("no_rope_layer_interval")
        return [int((i + 1) % interval != 0) for i in range(n)]
    if not isinstance(given, list) or len(given) != n:
        raise CheckpointError(
            f"config.json: {t.prefix}no_rope_layers must be a list of {n} entries (0 or 1)"
        )
    return [int(bool(x)) for x in given]


# ---------------------------------------------------------------- the classes' rules


def _every(p: int) -> LayerTypes:
    """Sliding except every p-th layer (Gemma 2, gpt-oss, OLMo 3)."""

    def rule(t: TextConfig, n: int) -> list[str]:
        return ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(n)]

    return rule


def _pattern(default: int) -> LayerTypes:
    """Gemma 3, Cohere 2: kwargs sliding_window_pattern (default 6 resp. 4)."""

    def rule(t: TextConfig, n: int) -> list[str]:
        p = t.get("sliding_window_pattern")
        if p is None:
            p = default
            t.default("sliding_window_pattern", p)
        p = t.integer("sliding_window_pattern", value=p)
        return ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(n)]

    return rule


def _gemma4(t: TextConfig, n: int) -> list[str]:
    types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]
    types[-1] = "full_attention"
    return types


def _max_window_layers(t: TextConfig, n: int) -> list[str]:
    """Qwen2: sliding from layer max_window_layers on."""
    size = window(t)
    first = t.integer("max_window_layers", low=0)
    return [
        "sliding_attention" if size is not None and i >= first else "full_attention"
        for i in range(n)
    ]


def _qwen2_moe(t: TextConfig, n: int) -> list[str]:
    """Qwen2-MoE: every other layer below max_window_layers slides."""
    size = window(t)
    last = t.integer("max_window_layers", low=0)
    return [
        "sliding_attention" if (i + 1) % 2 and i < last and size is not None else "full_attention"
        for i in range(n)
    ]


def _qwen3_next(t: TextConfig, n: int) -> list[str]:
    p = t.get("full_attention_interval")
    if p is None:
        p = 4
        t.default("full_attention_interval", 4)
    p = t.integer("full_attention_interval", value=p)
    return ["linear_attention" if (i + 1) % p else "full_attention" for i in range(n)]


def _llama4(t: TextConfig, n: int) -> list[str]:
    return ["chunked_attention" if r else "full_attention" for r in no_rope_layers(t, n)]


def _smollm3(t: TextConfig, n: int) -> list[str]:
    """Sliding on NoPE layers, only with use_sliding_window."""
    size = window(t) if t.get("use_sliding_window") else None
    return [
        "sliding_attention" if size is not None and not r else "full_attention"
        for r in no_rope_layers(t, n)
    ]


_RULES: dict[LayerTypesRule, LayerTypes] = {
    "none": lambda t, n: [],
    "every_2": _every(2),
    "every_4": _every(4),
    "gemma3": _pattern(6),
    "cohere2": _pattern(4),
    "gemma4": _gemma4,
    "max_window_layers": _max_window_layers,
    "qwen2_moe": _qwen2_moe,
    "qwen3_next": _qwen3_next,
    "llama4": _llama4,
    "smollm3": _smollm3,
}


def layer_types(t: TextConfig, n: int) -> list[str]:
    """config.layer_types as the config class fills it."""
    fam = t.family
    if fam.layer_types == "none" and fam is not ASSUMED:
        return []  # the config class has no layer_types field: config.json's is not read
    given = t.raw("layer_types")
    if given is None:
        return _RULES[fam.layer_types](t, n)
    if not isinstance(given, list) or not all(isinstance(x, str) for x in given):
        raise CheckpointError(f"config.json: {t.prefix}layer_types must be a list of strings")
    types = [str(_LEGACY_LAYER_TYPES.get(x, x)) for x in given]
    if len(types) != n:
        raise CheckpointError(
            f"config.json: {t.prefix}layer_types has {len(types)} entries for "
            f"{n} layers (num_hidden_layers)"
        )
    if fam.layer_types == "gemma4" and types and types[-1] != "full_attention":
        types[-1] = "full_attention"  # Gemma4TextConfig forces the last layer to full
    return types


# ---------------------------------------------------------------- every layer


def assign_layers(t: TextConfig, layer_types: Sequence[str], n: int, per_type: bool) -> list[Layer]:
    """Every layer's attention kind, window, and RoPE (``per_type``: keyed by its layer type)."""
    fam = t.family
    size = window(t)
    chunk = t.get("attention_chunk_size") if "chunked_attention" in layer_types else None
    rope_flags = no_rope_layers(t, n) if fam.rope_layers == "no_rope_layers" else [1] * n
    if fam.window == "all" and not layer_types:
        layer_types = ["sliding_attention" if size is not None else "full_attention"] * n
    if not layer_types:
        layer_types = ["full_attention"] * n
    layers: list[Layer] = []
    for i, lt in enumerate(layer_types):
        kind = _KIND.get(lt)
        if kind is None:
            raise CheckpointError(
                f"config.json: layer type {lt!r} of layer {i} is not one posecards reads "
                f"({', '.join(_KIND)})"
            )
        win: int | None = None
        if kind == "sliding":
            if size is None:
                kind = "full"  # the attention module gets sliding_window=None
            else:
                win = size
        if kind == "chunked":
            if chunk is None:
                raise CheckpointError(
                    "config.json: chunked_attention layers need attention_chunk_size "
                    "(transformers raises)"
                )
            win = t.integer("attention_chunk_size", value=chunk)
        rotates = kind != "linear" and bool(rope_flags[i])
        if fam.rope_layers == "sliding":  # Cohere 2: RoPE only where sliding_window is set
            rotates = rotates and win is not None
        key = (lt if per_type else "rope") if rotates else None
        layers.append(Layer(i, kind, win, "rope" if rotates else "none", key))
    return layers
