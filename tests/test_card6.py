"""Card 6 (position in today's models): every number on the card is read from a published config
as transformers 5.23.0 reads it, and computed as its modules compute it.

Each published file is built with transformers' own ``AutoConfig.for_model``; the rotary modules'
``inv_freq`` buffers (float32) are compared with the card's float64 frequencies (``f32_rtol``),
attention modules built on the ``meta`` device give the softmax scales and which layers rotate,
``Llama4TextAttention`` itself gives the query temperature, ``get_rope_index`` the MRoPE position
ids. Hypothesis varies the configs where the card's reading could go wrong: per-layer-type
frequencies (Gemma 3), proportional zeros (Gemma 4), the MLA softmax scale, the Llama 4
temperature and ``get_rope_index``'s ids.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from hypothesis import given, settings
from hypothesis import strategies as st
from test_modern_math import _axes_from_rotary, f32_rtol, hf_rope_index

from posecards.config import Look, PEParams
from posecards.content import CardContent, card_inputs
from posecards.content.card6 import (
    DEFAULTS,
    EXTRA_IDS,
    MROPE_SEQUENCE,
    PANEL_IDS,
    compute,
    mla_panel,
    mrope_ids_panel,
    nope_panel,
    partial_panel,
    two_ropes_panel,
)
from posecards.content.configs import SLUGS, config_files, model_ids, published, text_config
from posecards.content.figdata.card6 import TwoRopes
from posecards.figures.card6 import DRAW
from posecards.render.text import fill_card, load_card_text

T.logging.set_verbosity_error()
IDS = list(PANEL_IDS)
EXTRA = list(EXTRA_IDS)


@pytest.fixture(scope="module")
def card() -> CardContent:
    return compute(PEParams())


def hf_config(raw: dict[str, Any]) -> Any:
    """transformers' config object for a published config dict (model_type and all)."""
    d = copy.deepcopy(raw)
    d.pop("_name_or_path", None)
    d.pop("architectures", None)
    text = d.get("text_config", d)
    if "attn_temperature_tuning" in text:
        # Llama 4 Scout's file has the integer 4 here; transformers 5.23.0's strict config class
        # wants a bool (its attention module only tests the value for truth)
        text["attn_temperature_tuning"] = bool(text["attn_temperature_tuning"])
    return T.AutoConfig.for_model(d.pop("model_type"), **d)


def hf_text(slug: str) -> Any:
    return hf_config(published(slug)).get_text_config()


def inv_of(wavelength: Any) -> np.ndarray:
    wl = np.asarray(wavelength, dtype=np.float64)
    return np.where(np.isfinite(wl), 2 * np.pi / np.where(np.isfinite(wl), wl, 1.0), 0.0)


def assert_f32_close(mine: np.ndarray, ref: torch.Tensor, base: float) -> None:
    ref64 = ref.double().numpy()
    assert mine.shape == ref64.shape
    np.testing.assert_array_equal(mine == 0, ref64 == 0)  # the zero frequencies are exact
    np.testing.assert_allclose(mine, ref64, rtol=f32_rtol(base), atol=0)


# ---------------------------------------------------------------- the files themselves


def test_the_files_are_the_published_configs_card_6_names() -> None:
    assert [p.name for p in config_files()] == [f"{s}.json" for s in SLUGS]
    assert model_ids() == (
        "microsoft/phi-2",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "google/gemma-4-26B-A4B-it",
        "google/gemma-3-27b-it",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "HuggingFaceTB/SmolLM3-3B",
        "deepseek-ai/DeepSeek-V3",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "Qwen/Qwen3-VL-8B-Instruct",
    )
    for slug in SLUGS:  # every file builds as the config class of its model_type
        cfg = hf_config(published(slug))
        assert cfg.model_type == published(slug)["model_type"]
    # the config files are inputs of card 6: the cache and --check see an edited file
    assert set(config_files()) <= set(card_inputs(6))


def test_the_defaults_card_6_assumes_are_the_config_classes() -> None:
    g3 = hf_text("gemma-3-27b")
    d = DEFAULTS["gemma3_text"]
    assert "rope_theta" not in text_config("gemma-3-27b")  # absent from the published file
    assert g3.rope_parameters["full_attention"]["rope_theta"] == d["rope_theta"]
    assert g3.rope_parameters["sliding_attention"]["rope_theta"] == d["rope_local_base_freq"]
    assert g3.max_position_embeddings == d["max_position_embeddings"]
    assert g3._sliding_window_pattern == d["sliding_window_pattern"]
    assert T.Gemma3TextConfig().query_pre_attn_scalar == d["query_pre_attn_scalar"]
    g4 = hf_text("gemma-4-26b-a4b")
    n = g4.num_hidden_layers
    every = DEFAULTS["gemma4_text"]["sliding_window_pattern"]
    assert [t == "full_attention" for t in g4.layer_types] == [
        (i + 1) % every == 0 or i == n - 1 for i in range(n)
    ]


# ---------------------------------------------------------------- panel 1: partial, proportional


def test_partial_rotary_is_what_phi_and_qwen3_next_rotate(card: CardContent) -> None:
    from transformers.models.phi.modeling_phi import PhiAttention, PhiRotaryEmbedding
    from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextRotaryEmbedding

    data, nums = card.figures["c6-partial"], card.numbers
    phi = hf_text("phi-2")
    ref = PhiRotaryEmbedding(phi).inv_freq
    mine = inv_of(data.phi_wavelength)[: nums["phi_pairs"]]
    assert_f32_close(mine, ref, phi.rope_parameters["rope_theta"])
    with torch.device("meta"):
        attn = PhiAttention(phi, 0)
    assert attn.rotary_ndims == nums["phi_rotated"] == 2 * nums["phi_pairs"] == 32
    assert attn.head_dim == nums["phi_head"] == 80
    qn = hf_text("qwen3-next-80b-a3b")
    ref = Qwen3NextRotaryEmbedding(qn).inv_freq
    assert_f32_close(inv_of(data.qn_wavelength)[: nums["qn_pairs"]], ref, 1e7)
    assert nums["qn_pairs"] == ref.numel() == 32 and nums["qn_head"] == qn.head_dim == 256
    # the slowest wavelength from transformers' own float32 frequencies
    for key, module_ref in (("phi", PhiRotaryEmbedding(phi).inv_freq), ("qn", ref)):
        slowest = 2 * math.pi / float(module_ref.double().min())
        assert nums[f"{key}_slowest"] == pytest.approx(slowest, rel=1e-6)
        ctx = nums[f"{key}_ctx"]
        beyond = int((2 * math.pi / module_ref.double() > ctx).sum())
        assert nums[f"{key}_beyond"] == beyond
    assert nums["qn_ctx"] == qn.max_position_embeddings == 262144
    assert nums["phi_ctx"] == phi.max_position_embeddings == 2048


def test_proportional_is_what_gemma_4_full_layers_hold(card: CardContent) -> None:
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding

    data, nums = card.figures["c6-partial"], card.numbers
    g4 = hf_text("gemma-4-26b-a4b")
    ref = Gemma4TextRotaryEmbedding(g4).full_attention_inv_freq
    assert_f32_close(inv_of(data.g4_wavelength), ref, 1e6)
    full = g4.layer_types.index("full_attention")
    assert g4.per_layer_config[full].head_dim == nums["g4_head"] == 512
    assert int((ref == 0).sum()) == nums["g4_zero"] == nums["g4_still"] == 192
    assert int((ref > 0).sum()) == nums["g4_pairs"] == 64
    assert nums["g4_slowest"] == pytest.approx(
        2 * math.pi / float(ref[ref > 0].double().min()), rel=1e-6
    )
    assert nums["g4_beyond"] == 0 and nums["g4_slowest"] < 189
    # the misreading of the pitfall: the same p and theta as partial rotary (exponent over 128)
    from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextRotaryEmbedding

    wrong = T.Qwen3NextConfig(head_dim=512, partial_rotary_factor=0.25, rope_theta=1e6)
    wrong_ref = Qwen3NextRotaryEmbedding(wrong).inv_freq.double()
    assert nums["g4_as_partial"] == pytest.approx(2 * math.pi / float(wrong_ref.min()), rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([256, 512]),
    st.sampled_from([0.125, 0.25, 0.5]),
    st.sampled_from([1e5, 1e6, 1e7]),
)
def test_proportional_zeros_for_other_gemma_4_configs(head: int, p: float, theta: float) -> None:
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding

    g4 = copy.deepcopy(text_config("gemma-4-26b-a4b"))
    g4["global_head_dim"] = head
    g4["rope_parameters"]["full_attention"].update(partial_rotary_factor=p, rope_theta=theta)
    data, nums = partial_panel(published("phi-2"), published("qwen3-next-80b-a3b"), g4)
    cfg = hf_config({"model_type": "gemma4", "text_config": g4}).get_text_config()
    ref = Gemma4TextRotaryEmbedding(cfg).full_attention_inv_freq
    assert_f32_close(inv_of(data.g4_wavelength), ref, theta)
    assert nums["g4_zero"] == int((ref == 0).sum()) == head // 2 - int(p * head // 2)


# ---------------------------------------------------------------- panel 2: Gemma 3's two RoPEs


def _gemma3_checks(data: TwoRopes, nums: dict[str, Any], cfg: Any) -> None:
    from transformers.models.gemma3.modeling_gemma3 import Gemma3Attention, Gemma3RotaryEmbedding

    rot = Gemma3RotaryEmbedding(cfg)
    local = cfg.rope_parameters["sliding_attention"]["rope_theta"]
    full = cfg.rope_parameters["full_attention"]["rope_theta"]
    assert_f32_close(np.asarray(data.local_inv_freq), rot.sliding_attention_inv_freq, local)
    assert_f32_close(np.asarray(data.full_inv_freq), rot.full_attention_inv_freq, full)
    assert [t == "full_attention" for t in cfg.layer_types] == list(data.full)
    assert float(rot.full_attention_attention_scaling) == nums["g3_attention"]
    with torch.device("meta"):
        for i in range(cfg.num_hidden_layers):
            attn = Gemma3Attention(cfg, i)
            assert attn.is_sliding == (not data.full[i])
            assert attn.sliding_window == (None if data.full[i] else nums["g3_window"])


def test_gemma_3_has_two_ropes_as_transformers_builds_them(card: CardContent) -> None:
    data, nums = card.figures["c6-two-ropes"], card.numbers
    cfg = hf_text("gemma-3-27b")
    _gemma3_checks(data, dict(nums), cfg)
    assert (nums["g3_layers"], nums["g3_sliding"], nums["g3_full"]) == (62, 52, 10)
    assert [nums["g3_first_full"], nums["g3_second_full"], nums["g3_last_full"]] == [5, 11, 59]
    assert nums["g3_window"] == cfg.sliding_window == 1024
    assert nums["g3_ctx"] == cfg.max_position_embeddings == 131072
    assert nums["g3_factor"] == cfg.rope_parameters["full_attention"]["factor"] == 8.0
    assert cfg.rope_parameters["full_attention"]["rope_type"] == "linear"
    assert nums["g3_scalar"] == cfg.query_pre_attn_scalar == 168
    ref = (
        2
        * math.pi
        / T.models.gemma3.modeling_gemma3.Gemma3RotaryEmbedding(
            cfg
        ).full_attention_inv_freq.double()
    )
    assert nums["g3_full_slowest"] == pytest.approx(float(ref.max()), rel=1e-6)
    assert nums["g3_full_in_ctx"] == int((ref <= nums["g3_ctx"]).sum())


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from([64, 128, 256]),
    st.integers(6, 40),
    st.integers(2, 6),
    st.sampled_from([1e5, 1e6]),
    st.sampled_from([1e4, 5e4]),
    st.sampled_from([None, 2.0, 8.0]),
)
def test_per_layer_type_frequencies_for_other_gemma_3_configs(
    head: int, layers: int, every: int, theta: float, local: float, factor: float | None
) -> None:
    t: dict[str, Any] = {
        "model_type": "gemma3_text",
        "head_dim": head,
        "hidden_size": 2 * head,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "num_hidden_layers": layers,
        "sliding_window_pattern": every,
        "rope_theta": theta,
        "rope_local_base_freq": local,
        "sliding_window": 512,
    }
    if factor is not None:
        t["rope_scaling"] = {"rope_type": "linear", "factor": factor}
    data, nums = two_ropes_panel(t)
    cfg = hf_config({"model_type": "gemma3", "text_config": t}).get_text_config()
    _gemma3_checks(data, dict(nums), cfg)


# ---------------------------------------------------------------- panel 3: layers without RoPE


class _Cache:
    """A stand-in KV cache: ``offset`` tokens already seen, nothing stored."""

    def __init__(self, offset: int) -> None:
        self.offset = offset

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.offset

    def update(self, k: torch.Tensor, v: torch.Tensor, layer_idx: int) -> tuple[Any, Any]:
        return k, v


@contextmanager
def _queries_seen() -> Iterator[list[torch.Tensor]]:
    import transformers.models.llama4.modeling_llama4 as m

    seen: list[torch.Tensor] = []

    def capture(module: Any, query: torch.Tensor, *a: Any, **kw: Any) -> Any:
        seen.append(query.detach().clone())
        return query.new_zeros(query.shape[0], query.shape[2], query.shape[1], query.shape[3]), None

    orig = m.eager_attention_forward
    m.eager_attention_forward = capture
    try:
        yield seen
    finally:
        m.eager_attention_forward = orig


def llama4_tau(text: dict[str, Any], positions: list[int]) -> np.ndarray:
    """The factor ``Llama4TextAttention`` multiplies the query at each position by, on its first
    NoPE layer, from a config with the published temperature keys (small sizes)."""
    import transformers.models.llama4.modeling_llama4 as m

    cfg = T.Llama4TextConfig(
        vocab_size=16,
        hidden_size=16,
        intermediate_size=8,
        intermediate_size_mlp=8,
        num_hidden_layers=len(text["no_rope_layers"]),
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=8,
        no_rope_layers=list(text["no_rope_layers"]),
        floor_scale=text["floor_scale"],
        attn_scale=text["attn_scale"],
        attn_temperature_tuning=bool(text["attn_temperature_tuning"]),
        use_qk_norm=False,
    )
    cfg._attn_implementation = "eager"
    layer = cfg.no_rope_layers.index(0)
    torch.manual_seed(0)
    attn = m.Llama4TextAttention(cfg, layer).double()
    assert not attn.use_rope
    h = torch.randn(1, 1, 16, dtype=torch.float64)
    freqs = torch.ones(1, 1, 4, dtype=torch.complex128)
    out = []
    with _queries_seen() as seen:
        for p in positions:
            seen.clear()
            attn.attn_temperature_tuning = bool(text["attn_temperature_tuning"])
            attn(h, freqs, None, past_key_values=_Cache(p))
            attn.attn_temperature_tuning = False
            attn(h, freqs, None, past_key_values=_Cache(p))
            out.append(float((seen[0] / seen[1])[0, 0, 0, 0]))
    return np.array(out)


def test_llama_4_scout_and_smollm3_leave_layers_without_rope(card: CardContent) -> None:
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention
    from transformers.models.smollm3.modeling_smollm3 import SmolLM3Attention

    data, nums = card.figures["c6-nope"], card.numbers
    l4 = hf_text("llama-4-scout")
    smol = hf_text("smollm3-3b")
    with torch.device("meta"):
        l4_rope = [bool(Llama4TextAttention(l4, i).use_rope) for i in range(l4.num_hidden_layers)]
        smol_rope = [
            bool(SmolLM3Attention(smol, i).use_rope) for i in range(smol.num_hidden_layers)
        ]
    assert l4_rope == list(data.l4_rope) and smol_rope == list(data.smol_rope)
    # RoPE layers attend in chunks, NoPE layers to everything (Llama4TextConfig.layer_types)
    assert l4.layer_types == ["chunked_attention" if r else "full_attention" for r in l4_rope]
    assert nums["l4_chunk"] == l4.attention_chunk_size == 8192
    assert set(smol.layer_types) == {"full_attention"}
    assert (nums["l4_layers"], nums["l4_nope"], nums["l4_rope"]) == (48, 12, 36)
    assert (nums["smol_layers"], nums["smol_nope"], nums["smol_rope"]) == (36, 9, 27)
    assert nums["l4_first_nope"] == l4_rope.index(False) == 3
    assert nums["l4_ctx"] == l4.max_position_embeddings == 10485760


def test_the_query_temperature_is_what_llama4_attention_applies(card: CardContent) -> None:
    nums, data = card.numbers, card.figures["c6-nope"]
    text = text_config("llama-4-scout")
    probe = [nums["l4_before_step"], nums["l4_step"], nums["l4_pos_128k"], nums["l4_pos_end"]]
    ref = llama4_tau(text, probe)
    assert ref[0] == 1.0
    mine = [1.0, nums["l4_tau_step"], nums["l4_tau_128k"], nums["l4_tau_end"]]
    np.testing.assert_allclose(mine, ref, rtol=1e-6)  # HF computes tau in float32
    # the drawn step function: tau at every step position (and at 0), from the module
    pos = np.asarray(data.position)
    sample = [0, 1, 2, len(pos) // 2, len(pos) - 1]
    np.testing.assert_allclose(
        np.asarray(data.tau)[sample], llama4_tau(text, [int(pos[i]) for i in sample]), rtol=1e-6
    )


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from([4, 64, 8192]),
    st.sampled_from([0.05, 0.1, 0.5]),
    st.sampled_from([2, 3, 4]),
    st.integers(8, 24),
)
def test_llama_4_temperature_for_other_configs(
    floor: int, scale: float, interval: int, layers: int
) -> None:
    text = copy.deepcopy(text_config("llama-4-scout"))
    text.update(
        floor_scale=floor,
        attn_scale=scale,
        num_hidden_layers=layers,
        no_rope_layers=[int((i + 1) % interval != 0) for i in range(layers)],
        max_position_embeddings=64 * floor,
    )
    _, nums = nope_panel(text, published("smollm3-3b"))
    probe = [nums["l4_before_step"], nums["l4_step"], nums["l4_pos_end"]]
    ref = llama4_tau(text, probe)
    np.testing.assert_allclose([1.0, nums["l4_tau_step"], nums["l4_tau_end"]], ref, rtol=1e-6)
    assert nums["l4_nope"] == layers // interval


# ---------------------------------------------------------------- panel 4: MLA


def _mla_config(ds: dict[str, Any]) -> Any:
    return hf_config(ds)


def test_deepseek_v3_splits_the_head_and_the_two_factors(card: CardContent) -> None:
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import (
        DeepseekV3Attention,
        DeepseekV3RotaryEmbedding,
    )

    data, nums = card.figures["c6-mla"], card.numbers
    cfg = hf_text("deepseek-v3")
    with torch.device("meta"):
        attn = DeepseekV3Attention(cfg, 0)
    assert nums["ds_scale"] == pytest.approx(attn.scaling, rel=1e-12)
    assert nums["ds_plain"] == pytest.approx(attn.qk_head_dim**-0.5, rel=1e-15)
    assert nums["ds_m2"] == pytest.approx(attn.scaling / attn.qk_head_dim**-0.5, rel=1e-12)
    rot = DeepseekV3RotaryEmbedding(cfg)
    assert nums["ds_cos_sin"] == pytest.approx(float(rot.attention_scaling), rel=1e-12)
    assert nums["ds_cos_sin"] == 1.0
    # one head: qk_nope_head_dim content slots, then qk_rope_head_dim rotated ones, interleaved
    assert (nums["ds_nope"], nums["ds_rope"], nums["ds_qk"]) == (128, 64, attn.qk_head_dim)
    assert attn.q_b_proj.out_features == nums["ds_heads"] * nums["ds_qk"]
    # the key's rotated slice: one per token (the latent projection's last qk_rope_head_dim)
    assert attn.kv_a_proj_with_mqa.out_features == nums["ds_kv_rank"] + nums["ds_rope"]
    assert attn.kv_b_proj.out_features == nums["ds_heads"] * (attn.qk_nope_head_dim + 128)
    assert cfg.rope_interleave is True
    slots = np.asarray(data.slots)
    assert (slots[:128] == -1).all() and slots[128:].tolist() == [k // 2 for k in range(64)]
    ref = rot.inv_freq.double()
    assert nums["ds_slowest"] == pytest.approx(2 * math.pi / float(ref.min()), rel=1e-6)


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from([(128, 64), (64, 32), (192, 64)]),
    st.sampled_from([4.0, 16.0, 40.0]),
    st.sampled_from([0.707, 1.0]),
    st.sampled_from([0.707, 1.0]),
)
def test_mla_softmax_scale_for_other_configs(
    dims: tuple[int, int], factor: float, mscale: float, mscale_all: float
) -> None:
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import (
        DeepseekV3Attention,
        DeepseekV3RotaryEmbedding,
    )

    ds = copy.deepcopy(published("deepseek-v3"))
    ds.update(qk_nope_head_dim=dims[0], qk_rope_head_dim=dims[1])
    ds["rope_scaling"].update(factor=factor, mscale=mscale, mscale_all_dim=mscale_all)
    _, nums = mla_panel(ds)
    cfg = hf_config(ds)
    with torch.device("meta"):
        attn = DeepseekV3Attention(cfg, 0)
    assert nums["ds_scale"] == pytest.approx(attn.scaling, rel=1e-12)
    rot = DeepseekV3RotaryEmbedding(cfg)
    assert nums["ds_cos_sin"] == pytest.approx(float(rot.attention_scaling), rel=1e-12)


# ---------------------------------------------------------------- panels 5 and 6: MRoPE


@pytest.mark.parametrize(
    ("key", "slug", "module"),
    [
        ("q25", "qwen2.5-vl-7b", "qwen2_5_vl.modeling_qwen2_5_vl.Qwen2_5_VLRotaryEmbedding"),
        ("q3", "qwen3-vl-8b", "qwen3_vl.modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding"),
    ],
)
def test_mrope_axes_and_wavelengths_are_the_rotary_modules(
    card: CardContent, key: str, slug: str, module: str
) -> None:
    import importlib

    mod, cls = module.rsplit(".", 1)
    rotary_cls = getattr(importlib.import_module(f"transformers.models.{mod}"), cls)
    cfg = hf_text(slug)
    rot = rotary_cls(cfg)
    d, nums = card.figures["c6-mrope-axes"].model(key), card.numbers
    axes = np.asarray(d.axes)
    np.testing.assert_array_equal(axes, _axes_from_rotary(rot, axes.size))
    assert_f32_close(inv_of(d.wavelength), rot.inv_freq, cfg.rope_parameters["rope_theta"])
    assert d.section == cfg.rope_parameters["mrope_section"]
    wl = 2 * math.pi / rot.inv_freq.double().numpy()
    for a, name in enumerate("thw"):
        assert nums[f"{key}_{name}_fast"] == pytest.approx(wl[axes == a].min(), rel=1e-6)
        assert nums[f"{key}_{name}_slow"] == pytest.approx(wl[axes == a].max(), rel=1e-6)
        assert nums[f"{key}_n{name}"] == int((axes == a).sum()) == int(np.asarray(d.count)[a])
    assert nums[f"{key}_w_turns"] == pytest.approx(
        (nums["image_width"] - 1) / wl[axes == 2].min(), rel=1e-6
    )


@pytest.fixture(scope="module")
def vl_models() -> dict[str, Any]:
    """The two VL models on the meta device, from the published configs (one layer each: the
    position ids depend only on the vision config's spatial_merge_size)."""
    out = {}
    for slug in ("qwen2.5-vl-7b", "qwen3-vl-8b"):
        raw = copy.deepcopy(published(slug))
        text = raw.get("text_config", raw)
        text["num_hidden_layers"] = 1
        raw.setdefault("vision_config", {})["depth"] = 1
        if slug == "qwen3-vl-8b":
            raw["vision_config"]["deepstack_visual_indexes"] = []
        cfg = hf_config(raw)
        with torch.device("meta"):
            out[slug] = T.AutoModel.from_config(cfg)
        merge = published(slug)["vision_config"]["spatial_merge_size"]
        assert out[slug].config.vision_config.spatial_merge_size == merge
    return out


def test_position_ids_are_get_rope_index(card: CardContent, vl_models: dict[str, Any]) -> None:
    data, nums = card.figures["c6-mrope-ids"], card.numbers
    merge = nums["ids_merge"]
    for model in vl_models.values():
        np.testing.assert_array_equal(
            np.asarray(data.ids), hf_rope_index(model, list(MROPE_SEQUENCE), merge)
        )
    assert np.asarray(data.ids).tolist() == [
        [0, 1, 2, 3, 3, 3, 3, 3, 3, 6, 7],
        [0, 1, 2, 3, 3, 3, 4, 4, 4, 6, 7],
        [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7],
    ]
    assert (nums["ids_next"], nums["ids_last"], nums["ids_image_len"]) == (6, 7, 6)


@settings(max_examples=20, deadline=None)
@given(
    st.integers(1, 5),
    st.sampled_from([2, 4, 6, 8, 10]),
    st.sampled_from([2, 4, 6, 12]),
    st.integers(1, 4),
    st.sampled_from(["qwen2.5-vl-7b", "qwen3-vl-8b"]),
)
def test_position_ids_for_other_sequences(
    vl_models: dict[str, Any], before: int, h: int, w: int, after: int, slug: str
) -> None:
    merge = published(slug)["vision_config"]["spatial_merge_size"]
    segs: tuple[tuple[Any, ...], ...] = (("text", before), ("image", (1, h, w)), ("text", after))
    data, nums = mrope_ids_panel(segs, merge)
    np.testing.assert_array_equal(data.ids, hf_rope_index(vl_models[slug], list(segs), merge))
    assert nums["ids_next"] == before + max(h, w) // merge


# ---------------------------------------------------------------- the figure-page table


def test_the_models_table_rows_are_the_rotary_modules(card: CardContent) -> None:
    table = card.figures["c6-models"]
    rows = {(m, k): i for i, (m, k) in enumerate(zip(table.model, table.kind, strict=True))}
    assert len(set(table.model)) == card.numbers["n_configs"] == len(SLUGS)
    from transformers.models.llama4.modeling_llama4 import Llama4TextRotaryEmbedding
    from transformers.models.smollm3.modeling_smollm3 import SmolLM3RotaryEmbedding

    for slug, kind, module in (
        ("llama-4-scout", "llama3", Llama4TextRotaryEmbedding),
        ("smollm3-3b", "default", SmolLM3RotaryEmbedding),
    ):
        cfg = hf_text(slug)
        ref = module(cfg).inv_freq.double()
        i = rows[(published(slug)["_name_or_path"], kind)]
        assert table.slowest[i] == pytest.approx(2 * math.pi / float(ref.min()), rel=1e-6)
        assert table.turning[i] == ref.numel()
        assert table.layers[i] == sum(cfg.no_rope_layers)
        assert table.context[i] == cfg.max_position_embeddings
    qn = hf_text("qwen3-next-80b-a3b")
    i = rows[("Qwen/Qwen3-Next-80B-A3B-Instruct", "partial")]
    assert table.layers[i] == qn.layer_types.count("full_attention") == 12
    assert card.numbers["qn_layers_rope"] == 12 and card.numbers["qn_layers"] == 48
    g4 = hf_text("gemma-4-26b-a4b")
    i = rows[("google/gemma-4-26B-A4B-it", "proportional")]
    assert table.layers[i] == g4.layer_types.count("full_attention")
    assert table.turning[i] == card.numbers["g4_pairs"]


# ---------------------------------------------------------------- text, figures, footer


def test_ids_match_everywhere(card: CardContent) -> None:
    text = load_card_text(6)
    assert list(DRAW) == IDS + EXTRA
    assert list(card.figures) == IDS + EXTRA
    assert [p.id for p in text.panels] == IDS
    assert [p.id for p in text.figures] == EXTRA


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_has_a_value(card: CardContent, lang: str) -> None:
    filled = fill_card(load_card_text(6), lang, card.numbers)
    assert len(filled.takeaways) == 3 and len(filled.pitfalls) >= 2
    blob = " ".join(
        [filled.title, filled.thesis, filled.formula_note]
        + [" ".join(p[1:]) for p in (*filled.panels, *filled.figures)]
        + [v for _, v in filled.takeaways + filled.pitfalls]
    )
    assert "{{" not in blob and "}}" not in blob
    for number in ("37,970,000", "188", "5,063,000", "0.1352", "1.874", "1.716"):
        assert number in blob, number


def test_card_text_has_no_typed_numbers_outside_placeholders() -> None:
    text = load_card_text(6)
    entries = [text.thesis, text.formula_note, *(v for _, v in text.takeaways + text.pitfalls)]
    entries += [b for p in (*text.panels, *text.figures) for b in (p.title, p.alt, p.caption) if b]
    entries += list(text.labels.values())
    allowed = {"0", "1"}  # "1 = RoPE, 0 = none", "frequency 0", "counting up from 0"
    names = r"Phi-2|Qwen3-Next|Qwen3-VL|Qwen2\.5-VL|Qwen-VL|Gemma [34]( 27B)?|Llama 4|SmolLM3|DeepSeek-V3|llama3|transformers 5\.23|Llama4TextConfig"
    for entry in entries:
        for lang in ("en", "zh"):
            bare = re.sub(r"\{\{.*?\}\}", "", entry.get(lang))
            bare = re.sub(names, "", bare)
            bare = re.sub(r"D/2|1/√|2π|m²|q·k", "", bare)  # symbols: half a head, pi, a square
            found = set(re.findall(r"\d+(?:\.\d+)?", bare)) - allowed
            assert not found, (entry.en[:50], found)


def test_formula_renders() -> None:
    from matplotlib.mathtext import MathTextParser

    for line in load_card_text(6).formula_tex.split("\n"):
        MathTextParser("path").parse(line)


def test_the_footer_names_every_config() -> None:
    from posecards.render.footers import footer_text

    for lang in ("en", "zh"):
        footer = footer_text(PEParams(), Look(), lang, 6)
        assert all(mid in footer for mid in model_ids())
        assert "transformers 5.23.0" in footer and "d_model" not in footer


# The figures at the default parameters, in both languages and themes, are drawn inside
# card_style (a missing glyph raises) by tests/test_layout.py and tests/test_contrast.py.


def test_card_6_does_not_depend_on_the_parameters(card: CardContent) -> None:
    other = compute(PEParams(d_model=64, base=500.0, positions=16))
    assert other.numbers == card.numbers


def test_an_edited_config_makes_card_6_stale(tmp_path: Path, monkeypatch: Any) -> None:
    """The config files are part of card 6's text digest: the build cache and --check see an
    edited one, and the other cards do not read them."""
    import posecards.content.configs as configs
    from posecards.engine.inputs import text_digest
    from posecards.render.build import card_sources

    def digest(card: int) -> str:
        return text_digest(card_sources(card))

    before, card1 = digest(6), digest(1)
    copy_dir = tmp_path / "configs"
    copy_dir.mkdir()
    for p in config_files():
        (copy_dir / p.name).write_bytes(p.read_bytes())
    monkeypatch.setattr(configs, "CONFIGS", copy_dir)
    assert digest(6) == before  # same bytes, same recipe
    edited = copy_dir / "gemma-3-27b.json"
    edited.write_text(edited.read_text().replace("1024", "4096"))
    assert digest(6) != before
    assert digest(1) == card1


def test_scouts_temperature_key_is_refused_by_transformers_and_the_card_says_so(
    card: CardContent,
) -> None:
    """Llama 4 Scout's published attn_temperature_tuning is the integer 4; transformers 5.23's
    strict Llama4TextConfig refuses it, so every text that says the card reads configs "as
    transformers does" names the exception and how posecards reads it (as true)."""
    from posecards.render.text import fill_card, load_card_text

    raw = text_config("llama-4-scout")["attn_temperature_tuning"]
    assert raw == 4 and card.numbers["l4_tuning"] == raw
    with pytest.raises(Exception, match="expected bool, got int"):
        T.Llama4TextConfig(attn_temperature_tuning=raw)
    from posecards.render.footers import footer_text

    for lang in ("en", "zh"):
        filled = fill_card(load_card_text(6), lang, card.numbers)
        footer = footer_text(PEParams(), Look(), lang, 6)
        # wherever the card says it reads configs as transformers does, it names the exception
        texts = [filled.thesis, footer, *(p[2] + p[3] for p in filled.panels)]
        claims = [x for x in texts if re.search(r"as transformers|按 transformers", x)]
        assert footer in claims
        for said in claims:
            assert "attn_temperature_tuning = 4" in said and "true" in said, said[:80]
        nope = next(p[2] + p[3] for p in filled.panels if p[0] == "c6-nope")
        assert "attn_temperature_tuning" in nope and "Llama4TextConfig" in nope


def test_printed_wavelengths_are_what_transformers_float32_inv_freq_gives(
    card: CardContent,
) -> None:
    """Every wavelength the card prints reads the same from the exact (float64) frequency and
    from the float32 inv_freq transformers' rotary module holds: no digit comes from the exact
    formula alone (an 8-digit print did: Scout 40,947,128 vs 40,947,129.8 from transformers)."""
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3RotaryEmbedding
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
    from transformers.models.llama4.modeling_llama4 import Llama4TextRotaryEmbedding
    from transformers.models.phi.modeling_phi import PhiRotaryEmbedding
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLRotaryEmbedding
    from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextRotaryEmbedding
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding
    from transformers.models.smollm3.modeling_smollm3 import SmolLM3RotaryEmbedding

    from posecards.formatting import wl

    def hf_slowest(inv: Any) -> float:
        v = inv.double().numpy()
        return float(2 * math.pi / v[v > 0].min())

    g3 = Gemma3RotaryEmbedding(hf_text("gemma-3-27b"))
    g4 = Gemma4TextRotaryEmbedding(hf_text("gemma-4-26b-a4b"))
    hf = {
        "Phi-2 partial": hf_slowest(PhiRotaryEmbedding(hf_text("phi-2")).inv_freq),
        "Qwen3-Next partial": hf_slowest(
            Qwen3NextRotaryEmbedding(hf_text("qwen3-next-80b-a3b")).inv_freq
        ),
        "Gemma 4 26B sliding": hf_slowest(g4.sliding_attention_inv_freq),
        "Gemma 4 26B proportional": hf_slowest(g4.full_attention_inv_freq),
        "Gemma 3 27B sliding": hf_slowest(g3.sliding_attention_inv_freq),
        "Gemma 3 27B linear": hf_slowest(g3.full_attention_inv_freq),
        "Llama 4 Scout llama3": hf_slowest(
            Llama4TextRotaryEmbedding(hf_text("llama-4-scout")).inv_freq
        ),
        "SmolLM3 default": hf_slowest(SmolLM3RotaryEmbedding(hf_text("smollm3-3b")).inv_freq),
        "DeepSeek-V3 yarn": hf_slowest(DeepseekV3RotaryEmbedding(hf_text("deepseek-v3")).inv_freq),
        "Qwen2.5-VL mrope": hf_slowest(
            Qwen2_5_VLRotaryEmbedding(hf_text("qwen2.5-vl-7b")).inv_freq
        ),
        "Qwen3-VL mrope": hf_slowest(Qwen3VLTextRotaryEmbedding(hf_text("qwen3-vl-8b")).inv_freq),
    }
    table = card.figures["c6-models"]
    seen = {}
    for name, kind, ours in zip(table.name, table.kind, table.slowest, strict=True):
        seen[f"{name} {kind}"] = wl(float(ours))
    assert set(seen) == set(hf)
    for key, value in hf.items():
        assert seen[key] == wl(value), (key, seen[key], wl(value))
    # the three the issue found printed with a digit transformers does not compute
    assert wl(hf["Llama 4 Scout llama3"]) == "40,950,000"
    assert wl(hf["SmolLM3 default"]) == wl(hf["Qwen3-VL mrope"]) == "24,690,000"
    # the numbers the text prints are the table's
    nums = card.numbers
    for key, row in (
        ("qn_slowest", "Qwen3-Next partial"),
        ("g4_slowest", "Gemma 4 26B proportional"),
        ("phi_slowest", "Phi-2 partial"),
        ("g3_full_slowest", "Gemma 3 27B linear"),
        ("g3_local_slowest", "Gemma 3 27B sliding"),
        ("ds_slowest", "DeepSeek-V3 yarn"),
        ("q25_w_slow", "Qwen2.5-VL mrope"),
        ("q3_t_slow", "Qwen3-VL mrope"),
    ):
        assert wl(nums[key]) == wl(hf[row]), key


def test_card_6_statements_say_what_their_numbers_show(card: CardContent) -> None:
    """Issue 36 point 5: the p = 0.25 takeaway compares Gemma 4's own head read two ways; Gemma 3's
    alt names every key that takes a class default; the MRoPE label counts the image's tokens;
    the deck's Gemma 4 question is about full-attention layers (sliding ones reach further); MLA
    says why RoPE has its own slice."""
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding

    from posecards.deck.notes import fill_slide, load_deck_text
    from posecards.formatting import wl
    from posecards.render.text import CardLabels, fill_card, load_card_text

    n = card.numbers
    text = load_card_text(6)
    en = fill_card(text, "en", n)
    part = dict(en.takeaways)["part"]
    assert wl(n["g4_as_partial"]) in part and wl(n["g4_slowest"]) in part
    assert wl(n["qn_slowest"]) not in part and "Qwen3-Next" not in part
    # Gemma 3: the keys the published file leaves out, all of them
    raw = text_config("gemma-3-27b")
    missing = [
        k
        for k in (
            "rope_theta",
            "rope_local_base_freq",
            "sliding_window_pattern",
            "max_position_embeddings",
        )
        if k not in raw
    ]
    assert n["g3_defaults"] == ", ".join(missing) and n["g3_n_defaults"] == len(missing) == 4
    two = dict((p[0], p[2]) for p in en.panels)["c6-two-ropes"]
    assert all(k in two for k in missing)
    # the image label: rows x columns of tokens, as many as the image's tokens
    rows, cols = card.figures["c6-mrope-ids"].token_grid
    assert rows * cols == n["ids_image_len"] == 6
    label = CardLabels(text.labels, "en")("ids_image", R=rows, C=cols)
    assert label == "image: 2×3 tokens"
    # Gemma 4's sliding layers, from transformers' rotary module
    rot = Gemma4TextRotaryEmbedding(hf_text("gemma-4-26b-a4b"))
    hf_sliding = float(2 * math.pi / rot.sliding_attention_inv_freq.double().min())
    assert n["g4_sliding_slowest"] == pytest.approx(hf_sliding, rel=1e-6)
    assert wl(n["g4_sliding_slowest"]) == "58,470"
    deck = load_deck_text()
    notes = fill_slide(deck.panels["c6-partial"], "en", n).notes
    assert "full-attention layers no pair" in notes and "58,470" in notes
    mla = dict((p[0], p[2] + p[3]) for p in en.panels)["c6-mla"]
    assert "folded into the query projection" in mla and str(n["ds_kv_rank"]) in mla
