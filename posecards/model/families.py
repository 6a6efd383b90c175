"""What transformers 5.23.0 decides per model family: one row per text ``model_type``.

Each row names the transformers modules it was read from (``models/<x>/configuration_<x>.py`` for
the defaults and layer-type rules, ``models/<x>/modeling_<x>.py`` for the rest). The columns:

- ``defaults``: the config class's field defaults for the keys posecards reads (a key missing from
  config.json gets this value; ``tests/test_inspect_families.py`` checks every value against the
  config class itself). ``theta``: its ``default_theta`` (Gemma 3: global and local).
- ``rope``: how ``rope_parameters`` is standardized (``convert_rope_params_to_dict``): ``generic``
  (``RotaryEmbeddingConfigMixin``), ``gemma3``/``olmo3`` (one dict per layer type, filled from
  ``rope_theta``/``rope_local_base_freq``), ``gpt_neox`` (``rotary_emb_base``, ``rotary_pct``),
  ``phi3`` (``su``/``yarn`` read as longrope), ``qwen2_vl`` (legacy ``type: mrope`` is default),
  ``gemma4`` (taken as given). ``rope_defaults``: the dict the class uses when none is given.
  ``partial``: the ``partial_rotary_factor`` the class sets when config.json has none.
- ``layer_types``: how the class fills ``layer_types`` when config.json has none (see
  ``posecards/model/layer_types.py``; ``none``: the class has no ``layer_types`` field, and a
  ``layer_types`` key in config.json is read by nothing), ``window``: ``layer`` (sliding on ``sliding_attention`` layers)
  or ``all`` (Mistral: every layer slides when ``sliding_window`` is set).
- ``layout``: the pair layout of ``apply_rotary_pos_emb``: ``half`` (``rotate_half``),
  ``interleaved`` (pairs ``(2k, 2k+1)``), or ``rope_interleave`` (the config key decides).
- ``rope_layers``: which layers rotate q and k: ``every`` attention layer, ``sliding`` layers only
  (Cohere 2), or ``no_rope_layers[i] == 1`` (Llama 4, SmolLM3).
- ``rotary``: ``one`` module for every layer, or ``per_layer_type`` (one set of frequencies per
  layer type). ``partial_in_default``: whether the module's own default RoPE honours
  ``partial_rotary_factor`` (Llama's ignores it; GPT-NeoX's uses it).
- ``head_dim``: ``field`` (``head_dim`` or hidden_size / heads), ``computed`` (always hidden_size /
  heads), ``mla`` (``qk_rope_head_dim`` rotates; ``qk_nope_head_dim`` does not), ``gemma4``
  (``global_head_dim`` on full-attention layers).
- ``softmax``: what ``q . k`` is multiplied by: ``head_dim`` (1/sqrt(head_dim)),
  ``query_pre_attn_scalar`` (Gemma 2/3), ``one`` (Gemma 4), ``mla`` (DeepSeek: with YaRN mscale),
  ``attention_multiplier`` (Granite).
- ``temperature``: query temperature: ``llama4`` (NoPE layers) or ``ministral3`` (every layer).
- ``mrope``: ``chunked`` (Qwen2-VL, Qwen2.5-VL) or ``interleaved`` (Qwen3-VL) with
  ``mrope_default``, the section the rotary module uses when ``rope_parameters`` names none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

TRANSFORMERS_VERSION = "5.23.0"


# The columns' values, typed: a value the readers (model/layer_types.py, rope_parameters.py,
# rope_kinds.py, scales.py) do not handle, or a misspelt one, fails mypy.
RopeRule = Literal["generic", "gemma3", "olmo3", "gpt_neox", "gptj", "phi3", "qwen2_vl", "gemma4"]
LayerTypesRule = Literal[
    "none",
    "every_2",
    "every_4",
    "gemma3",
    "cohere2",
    "gemma4",
    "max_window_layers",
    "qwen2_moe",
    "qwen3_next",
    "llama4",
    "smollm3",
]
WindowRule = Literal["layer", "all"]
LayoutRule = Literal["half", "interleaved", "rope_interleave"]
RopeLayersRule = Literal["every", "sliding", "no_rope_layers"]
RotaryRule = Literal["one", "per_layer_type"]
HeadDimRule = Literal["field", "computed", "mla", "gemma4", "rotary_dim"]
SoftmaxRule = Literal["head_dim", "query_pre_attn_scalar", "one", "mla", "attention_multiplier"]
TemperatureRule = Literal["llama4", "ministral3"]
MropeLayout = Literal["chunked", "interleaved"]


@dataclass(frozen=True)
class Family:
    model_type: str  # the text model's model_type
    module: str  # transformers.models.<module>: configuration_<module>.py, modeling_<module>.py
    defaults: Mapping[str, Any]
    theta: float | Mapping[str, float] = 10000.0
    rope: RopeRule = "generic"
    rope_defaults: Mapping[str, Any] | None = None
    partial: float | None = None
    layer_types: LayerTypesRule = "none"
    window: WindowRule = "layer"
    window_gate: bool = False  # sliding_window counts only with use_sliding_window (Qwen2, Qwen3)
    head_dim_none: bool = (
        False  # the class leaves head_dim None (Mixtral): yarn/dynamic/longrope fail
    )
    layout: LayoutRule = "half"
    rope_layers: RopeLayersRule = "every"
    rotary: RotaryRule = "one"
    partial_in_default: bool = False
    head_dim: HeadDimRule = "field"
    softmax: SoftmaxRule = "head_dim"
    temperature: TemperatureRule | None = None
    mrope: MropeLayout | None = None
    mrope_default: tuple[int, int, int] | None = None
    composite: tuple[str, ...] = field(default=())  # outer model_types holding it as text_config

    @property
    def configuration(self) -> str:
        return f"transformers/models/{self.module}/configuration_{self.module}.py"

    @property
    def modeling(self) -> str:
        return f"transformers/models/{self.module}/modeling_{self.module}.py"


def _d(**kw: Any) -> dict[str, Any]:
    return kw


_FAMILIES: tuple[Family, ...] = (
    Family(
        "llama",
        "llama",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=None,
            num_hidden_layers=32,
            max_position_embeddings=2048,
        ),
    ),
    Family(
        "llama4_text",
        "llama4",
        _d(
            hidden_size=5120,
            num_attention_heads=40,
            head_dim=128,
            num_hidden_layers=48,
            max_position_embeddings=131072,
            no_rope_layer_interval=4,
            attention_chunk_size=8192,
            attn_temperature_tuning=True,
            floor_scale=8192,
            attn_scale=0.1,
        ),
        theta=500000.0,
        layer_types="llama4",
        layout="interleaved",  # view_as_complex on (..., -1, 2): pairs (2k, 2k+1)
        rope_layers="no_rope_layers",
        temperature="llama4",
        composite=("llama4",),
    ),
    Family(
        "mistral",
        "mistral",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=None,
            num_hidden_layers=32,
            max_position_embeddings=131072,
            sliding_window=4096,
        ),
        window="all",
        composite=("mistral3",),
    ),
    Family(
        "mixtral",
        "mixtral",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=None,
            num_hidden_layers=32,
            max_position_embeddings=131072,
            sliding_window=None,
        ),
        theta=1000000.0,
        window="all",
        head_dim_none=True,
    ),
    Family(
        "ministral3",
        "ministral3",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=128,
            num_hidden_layers=34,
            max_position_embeddings=262144,
            sliding_window=None,
        ),
        rope_defaults=_d(
            type="yarn",
            rope_theta=1000000.0,
            factor=16.0,
            original_max_position_embeddings=16384,
            max_position_embeddings=None,  # the class puts its max_position_embeddings here
            beta_fast=32.0,
            beta_slow=1.0,
            mscale_all_dim=1.0,
            mscale=1.0,
            llama_4_scaling_beta=0.1,
        ),
        window="all",
        temperature="ministral3",
        composite=("mistral3",),
    ),
    Family(
        "qwen2",
        "qwen2",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            num_hidden_layers=32,
            max_position_embeddings=32768,
            sliding_window=4096,
            use_sliding_window=False,
            max_window_layers=28,
        ),
        layer_types="max_window_layers",
        window_gate=True,
    ),
    Family(
        "qwen2_moe",
        "qwen2_moe",
        _d(
            hidden_size=2048,
            num_attention_heads=16,
            num_hidden_layers=24,
            max_position_embeddings=32768,
            sliding_window=4096,
            use_sliding_window=False,
            max_window_layers=28,
        ),
        layer_types="qwen2_moe",
        window_gate=True,
    ),
    Family(
        "qwen2_vl_text",
        "qwen2_vl",
        _d(
            hidden_size=8192,
            num_attention_heads=64,
            num_hidden_layers=80,
            max_position_embeddings=32768,
            sliding_window=4096,
            use_sliding_window=False,
            max_window_layers=80,
        ),
        theta=1000000.0,
        rope="qwen2_vl",
        layer_types="max_window_layers",
        mrope="chunked",
        mrope_default=(16, 24, 24),
        composite=("qwen2_vl",),
        window_gate=True,
    ),
    Family(
        "qwen2_5_vl_text",
        "qwen2_5_vl",
        _d(
            hidden_size=8192,
            num_attention_heads=64,
            num_hidden_layers=80,
            max_position_embeddings=32768,
            sliding_window=4096,
            use_sliding_window=False,
            max_window_layers=80,
        ),
        theta=1000000.0,
        rope="qwen2_vl",
        layer_types="max_window_layers",
        mrope="chunked",
        mrope_default=(16, 24, 24),
        composite=("qwen2_5_vl",),
        window_gate=True,
    ),
    Family(
        "qwen3",
        "qwen3",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=128,
            num_hidden_layers=32,
            max_position_embeddings=32768,
            sliding_window=4096,
            use_sliding_window=False,
            max_window_layers=28,
        ),
        layer_types="max_window_layers",
        window_gate=True,
    ),
    Family(
        "qwen3_moe",
        "qwen3_moe",
        _d(
            hidden_size=2048,
            num_attention_heads=32,
            num_hidden_layers=24,
            max_position_embeddings=32768,
            sliding_window=4096,
            use_sliding_window=False,
        ),
        window="all",
        window_gate=True,
    ),
    Family(
        "qwen3_vl_text",
        "qwen3_vl",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=128,
            num_hidden_layers=32,
            max_position_embeddings=128000,
        ),
        theta=500000.0,
        mrope="interleaved",
        mrope_default=(24, 20, 20),
        composite=("qwen3_vl",),
    ),
    Family(
        "qwen3_next",
        "qwen3_next",
        _d(
            hidden_size=2048,
            num_attention_heads=16,
            head_dim=256,
            num_hidden_layers=48,
            max_position_embeddings=32768,
        ),
        partial=0.25,
        layer_types="qwen3_next",
        partial_in_default=True,
    ),
    Family(
        "gemma",
        "gemma",
        _d(
            hidden_size=3072,
            num_attention_heads=16,
            head_dim=256,
            num_hidden_layers=28,
            max_position_embeddings=8192,
        ),
    ),
    Family(
        "gemma2",
        "gemma2",
        _d(
            hidden_size=2304,
            num_attention_heads=8,
            head_dim=256,
            num_hidden_layers=26,
            max_position_embeddings=8192,
            sliding_window=4096,
            query_pre_attn_scalar=256,
        ),
        layer_types="every_2",
        softmax="query_pre_attn_scalar",
    ),
    Family(
        "gemma3_text",
        "gemma3",
        _d(
            hidden_size=2304,
            num_attention_heads=8,
            head_dim=256,
            num_hidden_layers=26,
            max_position_embeddings=131072,
            sliding_window=4096,
            query_pre_attn_scalar=256,
        ),
        theta={"global": 1000000.0, "local": 10000.0},
        rope="gemma3",
        layer_types="gemma3",
        rotary="per_layer_type",
        softmax="query_pre_attn_scalar",
        composite=("gemma3",),
    ),
    Family(
        "gemma4_text",
        "gemma4",
        _d(
            hidden_size=2304,
            num_attention_heads=8,
            head_dim=256,
            num_hidden_layers=30,
            max_position_embeddings=131072,
            sliding_window=512,
        ),
        rope="gemma4",
        rope_defaults=_d(
            sliding_attention={"rope_type": "default", "rope_theta": 10000.0},
            full_attention={
                "rope_type": "proportional",
                "partial_rotary_factor": 0.25,
                "rope_theta": 1000000.0,
            },
        ),
        layer_types="gemma4",
        rotary="per_layer_type",
        head_dim="gemma4",
        softmax="one",
        composite=("gemma4",),
    ),
    Family(
        "phi",
        "phi",
        _d(
            hidden_size=2048,
            num_attention_heads=32,
            num_hidden_layers=24,
            max_position_embeddings=2048,
        ),
        partial=0.5,
        partial_in_default=True,
    ),
    Family(
        "phi3",
        "phi3",
        _d(
            hidden_size=3072,
            num_attention_heads=32,
            num_hidden_layers=32,
            max_position_embeddings=4096,
            sliding_window=None,
            original_max_position_embeddings=4096,
        ),
        rope="phi3",
        window="all",
        partial_in_default=True,
    ),
    Family(
        "gpt_neox",
        "gpt_neox",
        _d(
            hidden_size=6144,
            num_attention_heads=64,
            num_hidden_layers=44,
            max_position_embeddings=2048,
        ),
        rope="gpt_neox",
        partial_in_default=True,
    ),
    Family(
        "stablelm",
        "stablelm",
        _d(
            hidden_size=2560,
            num_attention_heads=32,
            num_hidden_layers=32,
            max_position_embeddings=4096,
        ),
        partial=0.25,
        partial_in_default=True,
    ),
    Family(
        "glm",
        "glm",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=128,
            num_hidden_layers=40,
            max_position_embeddings=131072,
        ),
        partial=0.5,
        layout="interleaved",  # rotate_half on x[..., 0::2], x[..., 1::2]
        partial_in_default=True,
    ),
    Family(
        "glm4",
        "glm4",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            head_dim=128,
            num_hidden_layers=40,
            max_position_embeddings=131072,
        ),
        partial=0.5,
        layout="interleaved",
        partial_in_default=True,
    ),
    Family(
        "glm4_moe",
        "glm4_moe",
        _d(
            hidden_size=4096,
            num_attention_heads=96,
            num_hidden_layers=46,
            max_position_embeddings=131072,
        ),
        partial=0.5,
        partial_in_default=True,
    ),
    Family(
        "cohere",
        "cohere",
        _d(
            hidden_size=8192,
            num_attention_heads=64,
            num_hidden_layers=40,
            max_position_embeddings=8192,
        ),
        theta=500000.0,
        layout="interleaved",  # repeat_interleave(freqs, 2) and x[..., ::2]
    ),
    Family(
        "cohere2",
        "cohere2",
        _d(
            hidden_size=8192,
            num_attention_heads=64,
            num_hidden_layers=40,
            max_position_embeddings=8192,
            sliding_window=4096,
        ),
        layer_types="cohere2",
        layout="interleaved",
        rope_layers="sliding",
        head_dim="computed",
    ),
    Family(
        "deepseek_v2",
        "deepseek_v2",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            num_hidden_layers=32,
            max_position_embeddings=2048,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
        ),
        layout="interleaved",  # apply_rotary_emb: view_as_complex of (2k, 2k+1)
        head_dim="mla",
        softmax="mla",
    ),
    Family(
        "deepseek_v3",
        "deepseek_v3",
        _d(
            hidden_size=7168,
            num_attention_heads=128,
            num_hidden_layers=61,
            max_position_embeddings=4096,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            rope_interleave=True,
        ),
        layout="rope_interleave",
        head_dim="mla",
        softmax="mla",
    ),
    Family(
        "gpt_oss",
        "gpt_oss",
        _d(
            hidden_size=2880,
            num_attention_heads=64,
            head_dim=64,
            num_hidden_layers=36,
            max_position_embeddings=131072,
            sliding_window=128,
        ),
        theta=150000.0,
        rope_defaults=_d(
            rope_type="yarn",
            factor=32.0,
            beta_fast=32.0,
            beta_slow=1.0,
            truncate=False,
            original_max_position_embeddings=4096,
        ),
        layer_types="every_2",
    ),
    Family(
        "smollm3",
        "smollm3",
        _d(
            hidden_size=2048,
            num_attention_heads=16,
            num_hidden_layers=36,
            max_position_embeddings=32768,
            sliding_window=None,
            use_sliding_window=False,
            no_rope_layer_interval=4,
        ),
        theta=2000000.0,
        layer_types="smollm3",
        rope_layers="no_rope_layers",
    ),
    Family(
        "olmo2",
        "olmo2",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            num_hidden_layers=32,
            max_position_embeddings=2048,
        ),
    ),
    Family(
        "olmo3",
        "olmo3",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            num_hidden_layers=32,
            max_position_embeddings=2048,
            sliding_window=4096,
        ),
        theta=500000.0,
        rope="olmo3",
        layer_types="every_4",
        rotary="per_layer_type",
    ),
    Family(
        "starcoder2",
        "starcoder2",
        _d(
            hidden_size=3072,
            num_attention_heads=24,
            num_hidden_layers=30,
            max_position_embeddings=4096,
            sliding_window=None,
        ),
        window="all",
    ),
    Family(
        "granite",
        "granite",
        _d(
            hidden_size=4096,
            num_attention_heads=32,
            num_hidden_layers=32,
            max_position_embeddings=2048,
            attention_multiplier=1.0,
        ),
        softmax="attention_multiplier",
    ),
    Family(
        "gptj",
        "gptj",
        _d(n_embd=4096, n_head=16, n_layer=28, n_positions=2048, rotary_dim=64),
        rope="gptj",  # create_sinusoidal_positions(n_positions, rotary_dim): base 10000, fixed
        layout="interleaved",  # rotate_every_two
        head_dim="rotary_dim",
    ),
    Family(
        "codegen",
        "codegen",
        _d(n_embd=4096, n_head=16, n_layer=28, n_positions=2048, rotary_dim=64),
        rope="gptj",  # GPT-J's attention: rotate_every_two on rotary_dim slots
        layout="interleaved",
        head_dim="rotary_dim",
    ),
    Family(
        "falcon",
        "falcon",
        _d(
            hidden_size=4544,
            num_attention_heads=71,
            num_hidden_layers=32,
            max_position_embeddings=2048,
        ),
    ),
)

FAMILIES: dict[str, Family] = {f.model_type: f for f in _FAMILIES}

# outer (multimodal) model_type -> the text model_type transformers builds for text_config
COMPOSITE: dict[str, str] = {
    outer: f.model_type for f in _FAMILIES for outer in f.composite if outer != "mistral3"
}
COMPOSITE["mistral3"] = "mistral"  # Mistral3Config: text_config defaults to model_type mistral

# what an unknown model_type with RoPE keys is read as (named on its card)
ASSUMED = Family("unknown", "llama", _d(), layout="half", partial_in_default=True)
