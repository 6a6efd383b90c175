"""The registry of RoPE types (posecards/encodings/rope_scaling.ROPE_REGISTRY) against
transformers 5.23.0: its names, the keys each type requires, which types get
original_max_position_embeddings, which read head_dim without a fallback, and the lists
derived from it (rope_inv_freq's, head_inv_freq's, the config reader's, the GGUF reader's)."""

from __future__ import annotations

from typing import Any

import pytest
import transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from posecards.encodings.rope_partial import HEAD_ROPE_TYPES
from posecards.encodings.rope_scaling import (
    CONFIG_ROPE_TYPES,
    ROPE_REGISTRY,
    ROPE_TYPES,
    rope_inv_freq,
)
from posecards.model.gguf import ROPE_SCALING

transformers.logging.set_verbosity_error()

HF_TYPES = ("default", *ROPE_INIT_FUNCTIONS)
# values that every validator and init function of transformers accepts (head_dim 8: 4 pairs)
VALUES: dict[str, Any] = {
    "factor": 4.0,
    "original_max_position_embeddings": 1024,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "short_factor": [1.0] * 4,
    "long_factor": [2.0] * 4,
    "partial_rotary_factor": 0.5,
}


def _params(name: str, keys: tuple[str, ...]) -> dict[str, Any]:
    return {"rope_type": name, "rope_theta": 10000.0, **{k: VALUES[k] for k in keys}}


def test_the_names_are_transformers_and_posecards_own_ntk() -> None:
    assert all(name == t.name for name, t in ROPE_REGISTRY.items())
    assert set(CONFIG_ROPE_TYPES) == set(HF_TYPES)
    assert set(ROPE_REGISTRY) - set(HF_TYPES) == {"ntk"}
    assert ROPE_TYPES == tuple(n for n in ROPE_REGISTRY if n != "proportional")
    assert HEAD_ROPE_TYPES == tuple(ROPE_REGISTRY)


@pytest.mark.parametrize("name", HF_TYPES)
def test_required_keys_are_those_transformers_validates(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keys transformers' _validate_<name>_rope_parameters requires, less rope_type and
    rope_theta (posecards takes rope_theta from the base when the dict has none)."""
    seen: list[set[str]] = []

    def record(rope_type: str, received: set[str], required: set[str], *a: Any, **k: Any) -> None:
        seen.append(set(required))

    config = LlamaConfig(head_dim=8, hidden_size=32, num_attention_heads=4)
    monkeypatch.setattr(LlamaConfig, "_check_received_keys", staticmethod(record))
    validate = getattr(config, f"_validate_{name}_rope_parameters")
    try:
        validate(_params(name, ROPE_REGISTRY[name].required))
    except (KeyError, TypeError):  # what the validator reads after the key check
        pass
    assert seen, name
    assert seen[0] - {"rope_type", "rope_theta"} == set(ROPE_REGISTRY[name].required)


@pytest.mark.parametrize("name", HF_TYPES)
def test_original_length_is_what_standardize_fills_in(name: str) -> None:
    declared = ROPE_REGISTRY[name]
    keys = tuple(k for k in declared.required if k != "original_max_position_embeddings")
    config = LlamaConfig(
        head_dim=8, hidden_size=32, num_attention_heads=4, max_position_embeddings=2048,
        rope_parameters=_params(name, keys),
    )  # fmt: skip
    filled = config.rope_parameters.get("original_max_position_embeddings")
    assert (filled == 2048) is declared.original_length
    if declared.original_length:  # and rope_inv_freq falls back to max_position_embeddings alike
        a, _ = rope_inv_freq(8, 10000.0, _params(name, keys), max_position_embeddings=2048)
        explicit = {**_params(name, keys), "original_max_position_embeddings": 2048}
        b, _ = rope_inv_freq(8, 10000.0, explicit, max_position_embeddings=2048)
        assert (a == b).all()


@pytest.mark.parametrize("name", HF_TYPES)
def test_head_dim_without_fallback_is_where_a_none_head_dim_breaks_transformers(
    name: str,
) -> None:
    """A config class that holds head_dim = None: the init function of the types declared
    head_dim_without_fallback fails on it, the others derive hidden_size // heads."""
    declared = ROPE_REGISTRY[name]
    config = LlamaConfig(
        hidden_size=32, num_attention_heads=4, max_position_embeddings=2048,
        rope_parameters=_params(name, declared.required),
    )  # fmt: skip
    config.head_dim = None
    init = (
        LlamaRotaryEmbedding.compute_default_rope_parameters
        if name == "default"
        else ROPE_INIT_FUNCTIONS[name]
    )
    if declared.head_dim_without_fallback:
        with pytest.raises(TypeError):
            init(config)
    else:
        inv_freq, _ = init(config)
        assert inv_freq.numel() in (
            4,
            2,
        )  # head_dim 32 // 4 = 8: 4 pairs (2 rotate, partial)


def test_max_position_and_gguf_names() -> None:
    """posecards needs max_position_embeddings for every type with a threshold or an extended
    context; llama.cpp's scaling names map to declared types (GGUF: linear, yarn)."""
    assert {n for n, t in ROPE_REGISTRY.items() if t.max_position} == {
        "dynamic", "yarn", "longrope", "llama3",
    }  # fmt: skip
    assert ROPE_SCALING == {"linear": "linear", "yarn": "yarn"}
    assert all(ROPE_REGISTRY[v].gguf == k for k, v in ROPE_SCALING.items())


def test_a_missing_required_key_is_named_with_the_declared_list() -> None:
    for name in ROPE_TYPES:
        required = ROPE_REGISTRY[name].required
        for key in required:
            if key == "original_max_position_embeddings":
                continue  # falls back to max_position_embeddings
            params = _params(name, tuple(k for k in required if k != key))
            with pytest.raises(ValueError, match=f"{key}.*required keys: {', '.join(required)}"):
                rope_inv_freq(8, 10000.0, params, max_position_embeddings=4096)
