"""The modern-RoPE math layer against transformers 5.23.0 itself: partial and proportional RoPE,
Llama 3 scaling with equal factors, pair slots, MLA's softmax scale, the query temperature of
Llama 4 and Ministral 3, MRoPE axes and get_rope_index position ids.

Tolerances: transformers builds inv_freq in float32 (``f32_rtol`` in test_rope_scaling: about
1e-6 for base 1e6; ``hf_inv_freq_rtol`` derives the bound per rope_type from transformers'
float32 operations); python floats in transformers (softmax scales) are compared to 1e-12.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from posecards.encodings.mla import mla_softmax_scale
from posecards.encodings.mrope import (
    mrope_angles,
    mrope_axes,
    mrope_position_ids,
)
from posecards.encodings.query_temperature import query_temperature, query_temperature_steps
from posecards.encodings.rope import (
    apply_rope,
    rope_layout_inverse_permutation,
    rope_pair_slots,
)
from posecards.encodings.rope_partial import (
    head_inv_freq,
    proportional_inv_freq,
    proportional_pairs,
    rotary_dim,
)
from posecards.encodings.rope_scaling import rope_inv_freq

T.logging.set_verbosity_error()


def f32_rtol(base: float) -> float:
    return (math.log(base) + 8.0) * 2.0**-24


U32 = 2.0**-24  # unit roundoff of float32: one rounding changes a value by at most this, relatively


def hf_inv_freq_rtol(base: float, rope_type: str, params: dict[str, Any]) -> float:
    """The largest relative gap between transformers' float32 inv_freq and the exact (float64)
    one, derived from the float32 operations transformers 5.23.0 performs (each rounding
    contributes at most u = 2^-24; torch's float32 pow is within 1 ulp, i.e. 2u relative):

    default (GPT-NeoX), linear: ``1.0 / (base ** (arange(0, d, 2).float() / d))``. The exponent
    e = 2i/d is rounded once (|de| <= u e), which moves base**e by ln(base) e u <= ln(base) u;
    pow adds 2u, the reciprocal u; linear's ``/ factor`` one more u:  (ln b + 4) u.
    yarn: ``pos = base ** e`` (ln b + 2) u; ``1 / pos`` and ``1 / (factor * pos)`` up to 2u more;
    the blend ``interp * (1 - m) + extrap * m`` with the float32 ramp m (one division, one
    subtraction: each moves the sum by at most u relative, since both terms are positive) and
    two products and a sum (2u):  (ln b + 8) u.
    llama3, medium band: ``s = (c / w - l) / (h - l)`` with ``w = 2 pi / inv``, then
    ``R = (1 - s) inv / f + s inv = inv (1/f + (1 - 1/f) s)``. An error in inv moves s too: R's
    condition number in inv is 1 + (1 - 1/f)(c/w) / ((h - l)(1/f + (1 - 1/f) s)), largest at
    s = 0 (c/w = l): kappa = 1 + (f - 1) l / (h - l) (10/3 for Llama 3's f = 8, l = 1, h = 4).
    With e_inv = (ln b + 3) u, c/w carries e_inv + 5u (2 pi and c rounded to float32, two
    reciprocals, two products: torch computes ``x / t`` as ``reciprocal(t) * x``), s's own
    subtraction and division add at most 2u to R, the final expression 4u:
    kappa e_inv + (kappa - 1) 5u + 6u  (71 u = 4.3e-6 for base 5e5).
    The float64 side errs by ~1e-16: negligible.
    """
    ln_b = math.log(base)
    if rope_type == "llama3":
        f, lo, hi = (float(params[k]) for k in ("factor", "low_freq_factor", "high_freq_factor"))
        kappa = 1.0 + (f - 1.0) * lo / (hi - lo)
        return (kappa * (ln_b + 3.0) + (kappa - 1.0) * 5.0 + 6.0) * U32
    if rope_type == "yarn":
        return (ln_b + 8.0) * U32
    return (ln_b + 4.0) * U32


def _llama_config(head_dim: int, rope_parameters: dict[str, Any], **kw: Any) -> Any:
    return T.LlamaConfig(
        vocab_size=16,
        hidden_size=2 * head_dim,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        head_dim=head_dim,
        rope_parameters=dict(rope_parameters),
        **kw,
    )


# ---------------------------------------------------------------- partial and proportional


head_dims = st.sampled_from([32, 64, 80, 96, 128, 256, 512])
partials = st.sampled_from([0.25, 0.4, 0.5, 0.75, 1.0])
thetas = st.sampled_from([10000.0, 500000.0, 1e6, 1e7])


@settings(max_examples=40, deadline=None)
@given(head_dims, partials, thetas, st.sampled_from(["default", "linear", "yarn", "llama3"]))
@example(256, 0.4, 500000.0, "llama3")  # the largest gap measured: 22 u (1.3e-6) in the band
def test_partial_rotary_equals_transformers(
    head_dim: int, partial: float, theta: float, rope_type: str
) -> None:
    assume(int(head_dim * partial) % 2 == 0)  # odd rotated widths are refused (see below)
    params: dict[str, Any] = {
        "rope_type": rope_type,
        "rope_theta": theta,
        "partial_rotary_factor": partial,
    }
    if rope_type == "linear":
        params["factor"] = 4.0
    if rope_type == "yarn":
        params |= {"factor": 8.0, "original_max_position_embeddings": 4096}
    if rope_type == "llama3":
        params |= {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        }
    config = _llama_config(head_dim, params, max_position_embeddings=131072)
    if rope_type == "default":  # GPT-NeoX's default honours partial_rotary_factor
        from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

        ref, ref_att = GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        ref, ref_att = ROPE_INIT_FUNCTIONS[rope_type](config)
    got, att = head_inv_freq(head_dim, params, max_position_embeddings=131072)
    assert got.shape == (rotary_dim(head_dim, partial) // 2,) == tuple(ref.shape)
    rtol = hf_inv_freq_rtol(theta, rope_type, params)
    np.testing.assert_allclose(got, ref.double().numpy(), rtol=rtol, atol=0)
    assert att == pytest.approx(float(ref_att), rel=1e-12)


def test_default_rope_of_llama_ignores_partial_rotary_factor() -> None:
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    params = {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5}
    ref, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(_llama_config(64, params))
    got, _ = head_inv_freq(64, params, partial_in_default=False)
    assert got.shape == (32,) == tuple(ref.shape)
    np.testing.assert_allclose(got, ref.double().numpy(), rtol=f32_rtol(1e4))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([128, 256, 512]),
    st.sampled_from([0.125, 0.25, 0.5, 0.6, 1.0]),
    thetas,
    st.sampled_from([1.0, 2.0, 8.0]),
)
def test_proportional_equals_transformers(
    head_dim: int, partial: float, theta: float, factor: float
) -> None:
    params = {
        "rope_type": "proportional",
        "rope_theta": theta,
        "partial_rotary_factor": partial,
        "factor": factor,
    }
    ref, ref_att = ROPE_INIT_FUNCTIONS["proportional"](_llama_config(head_dim, params))
    got, att = head_inv_freq(head_dim, params)
    ref64 = ref.double().numpy()
    assert got.shape == (head_dim // 2,) == ref64.shape  # always the whole head
    r = proportional_pairs(head_dim, partial)
    assert r == int(partial * head_dim // 2)
    # zero-frequency pairs: exactly the last head_dim/2 - r, in transformers too
    np.testing.assert_array_equal(got[r:], 0.0)
    np.testing.assert_array_equal(ref64[r:], 0.0)
    np.testing.assert_allclose(got[:r], ref64[:r], rtol=f32_rtol(theta), atol=0)
    # the exponent's denominator is the whole head, not the rotated part
    whole, _ = rope_inv_freq(head_dim, theta)
    np.testing.assert_allclose(got[:r], whole[:r] / factor, rtol=1e-15)
    assert att == float(ref_att) == 1.0


def test_proportional_and_partial_differ_in_the_slowest_wavelength() -> None:
    """Gemma 4 full layers (512, 0.25, 1e6) vs Qwen3-Next (256, 0.25, 1e7)."""
    prop = proportional_inv_freq(512, 1e6, 0.25)
    slowest_prop = 2 * math.pi / prop[prop > 0].min()
    part, _ = head_inv_freq(
        256, {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25}
    )
    slowest_part = 2 * math.pi / part.min()
    # proportional: 2 pi b^((2r - 2)/D) with r = 64, D = 512; partial: 2 pi b^((d - 2)/d), d = 64
    assert slowest_prop == pytest.approx(2 * math.pi * 1e6 ** (126 / 512), rel=1e-13)
    assert slowest_part == pytest.approx(2 * math.pi * 1e7 ** (62 / 64), rel=1e-13)
    assert slowest_part > 1000 * slowest_prop


def test_bad_partial_and_rope_types_raise() -> None:
    with pytest.raises(ValueError, match="must be an even number"):
        rotary_dim(64, 0.3)  # 19
    with pytest.raises(ValueError, match="in \\(0, 1\\]"):
        rotary_dim(64, 1.5)
    with pytest.raises(ValueError, match="unknown rope_type 'mrope'"):
        head_inv_freq(64, {"rope_type": "mrope", "rope_theta": 1e4})
    with pytest.raises(ValueError, match="turns no pair"):
        proportional_pairs(8, 0.1)


# ---------------------------------------------------------------- Llama 3 with equal factors


@pytest.mark.parametrize(("low", "high"), [(1.0, 1.0), (2.0, 2.0), (4.0, 1.0)])
def test_llama3_equal_or_reversed_factors_compute_a_step_as_transformers(
    low: float, high: float
) -> None:
    """Llama 4 Scout: low_freq_factor == high_freq_factor == 1; transformers warns and steps."""
    params = {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 16.0,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": 8192,
    }
    ref, _ = ROPE_INIT_FUNCTIONS["llama3"](
        _llama_config(128, params, max_position_embeddings=1 << 20)
    )
    got, att = head_inv_freq(128, params)
    np.testing.assert_allclose(got, ref.double().numpy(), rtol=f32_rtol(5e5), atol=0)
    plain, _ = rope_inv_freq(128, 500000.0)
    step = 2 * np.pi / plain > 8192 / low
    assert step.any() and (~step).any()
    np.testing.assert_allclose(got[step], plain[step] / 16.0, rtol=1e-15)
    np.testing.assert_array_equal(got[~step], plain[~step])
    assert att == 1.0


# ---------------------------------------------------------------- which slots form a pair


def _hf_rotate(module: str, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    import importlib

    mod = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    if module == "deepseek_v3":
        out, _ = mod.apply_rotary_pos_emb_interleave(q, q, cos, sin)
        # DeepSeek reads the pairs (2k, 2k+1) but writes them back de-interleaved (same for q and
        # k, so q.k is unchanged): undo that to compare slot by slot
        out = out[..., rope_layout_inverse_permutation(q.shape[-1])]
    else:
        out, _ = mod.apply_rotary_pos_emb(q, q, cos, sin)
    return out


@pytest.mark.parametrize(
    ("module", "head_dim", "rotated", "layout"),
    [
        ("gpt_neox", 32, 8, "half"),  # rotary_pct 0.25
        ("glm", 32, 16, "interleaved"),  # GLM: interleaved pairs inside q[..., :rotary_dim]
        ("glm4_moe", 32, 16, "half"),
        ("cohere", 16, 16, "interleaved"),
        ("deepseek_v3", 16, 16, "interleaved"),  # rope_interleave
        ("llama", 16, 16, "half"),
    ],
)
def test_pair_slots_equal_transformers_rotation(
    module: str, head_dim: int, rotated: int, layout: str
) -> None:
    """Turn one pair at a time by 90 degrees in transformers and see which slots move."""
    slots = rope_pair_slots(head_dim, rotated, layout)
    pairs = rotated // 2
    q = torch.arange(1, head_dim + 1, dtype=torch.float64).view(1, 1, 1, head_dim)
    for k in range(pairs):
        inv_freq = torch.zeros(pairs, dtype=torch.float64)
        inv_freq[k] = math.pi / 2
        if module == "cohere":  # Cohere's rotary module interleaves the angles itself
            emb = torch.repeat_interleave(inv_freq, 2).view(1, 1, -1)
        else:
            emb = torch.cat((inv_freq, inv_freq)).view(1, 1, -1)
        out = _hf_rotate(module, q, emb.cos(), emb.sin())[0, 0, 0].numpy()
        moved = np.flatnonzero(np.abs(out - q[0, 0, 0].numpy()) > 1e-9)
        assert moved.tolist() == np.flatnonzero(slots == k).tolist()
        # and posecards' own rotation of the rotated block agrees with transformers'
        theta = np.zeros(pairs)
        theta[k] = math.pi / 2
        mine = q[0, 0, 0].numpy().copy()
        mine[:rotated] = apply_rope(mine[:rotated], [1.0], theta, layout)
        np.testing.assert_allclose(mine, out, atol=1e-12)
    assert (slots[rotated:] == -1).all()


def test_mla_slots_put_the_rotated_part_last() -> None:
    slots = rope_pair_slots(192, 64, "interleaved", first=128)
    assert (slots[:128] == -1).all() and slots[128:130].tolist() == [0, 0]
    assert slots[-1] == 31
    with pytest.raises(ValueError, match="exceeds head_dim"):
        rope_pair_slots(64, 64, "half", first=2)


# ---------------------------------------------------------------- MLA softmax scale


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([(128, 64), (64, 32), (0, 64)]),
    st.sampled_from([1.0, 4.0, 40.0]),
    st.sampled_from([0, 0.707, 1.0]),
    st.sampled_from([0.707, 1.0]),
    st.sampled_from(["yarn", "default"]),
)
def test_mla_softmax_scale_equals_the_attention_module(
    dims: tuple[int, int], factor: float, mscale_all_dim: float, mscale: float, rope_type: str
) -> None:
    nope, rope = dims
    params: dict[str, Any] = {"rope_type": rope_type, "rope_theta": 10000.0}
    if rope_type == "yarn":
        params |= {
            "factor": factor,
            "mscale": mscale,
            "mscale_all_dim": mscale_all_dim,
            "original_max_position_embeddings": 4096,
        }
    config = T.DeepseekV3Config(
        vocab_size=16,
        hidden_size=64,
        num_attention_heads=2,
        num_key_value_heads=2,
        q_lora_rank=16,
        kv_lora_rank=16,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        v_head_dim=16,
        num_hidden_layers=1,
        max_position_embeddings=4096 * int(factor),
        rope_parameters=params,
    )
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention

    with torch.device("meta"):
        attn = DeepseekV3Attention(config, 0)
    got = mla_softmax_scale(nope, rope, config.rope_parameters)
    assert got == pytest.approx(attn.scaling, rel=1e-12)
    # the cos/sin factor is the other number: m(s, mscale) / m(s, mscale_all_dim)
    if rope_type == "yarn":
        _, att = ROPE_INIT_FUNCTIONS["yarn"](config)
        _, mine = rope_inv_freq(
            rope, scaling=config.rope_parameters, max_position_embeddings=4096 * int(factor)
        )
        assert mine == pytest.approx(float(att), rel=1e-12)


# ---------------------------------------------------------------- query temperature


def test_llama4_query_temperature_equals_the_attention_module() -> None:
    """Run Llama4TextAttention on a NoPE layer with and without temperature tuning; the ratio of
    the queries it hands to attention is tau(p)."""
    import transformers.models.llama4.modeling_llama4 as m

    floor, n = 4, 23
    cfg = T.Llama4TextConfig(
        vocab_size=16,
        hidden_size=16,
        intermediate_size=8,
        intermediate_size_mlp=8,
        num_hidden_layers=4,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=8,
        floor_scale=floor,
        attn_scale=0.1,
        attn_temperature_tuning=True,
        use_qk_norm=False,
    )
    cfg._attn_implementation = "eager"
    layer = 3  # no_rope_layer_interval 4: layer 3 has no RoPE
    assert cfg.no_rope_layers[layer] == 0
    torch.manual_seed(0)
    attn = m.Llama4TextAttention(cfg, layer).double()
    seen: list[torch.Tensor] = []

    def capture(module: Any, query: torch.Tensor, *a: Any, **kw: Any) -> Any:
        seen.append(query.detach().clone())
        return query.new_zeros(query.shape[0], query.shape[2], query.shape[1], query.shape[3]), None

    h = torch.randn(1, n, 16, dtype=torch.float64)
    freqs = torch.ones(1, n, 4, dtype=torch.complex128)
    orig = m.eager_attention_forward
    m.eager_attention_forward = capture
    try:
        attn(h, freqs, None)
        attn.attn_temperature_tuning = False
        attn(h, freqs, None)
    finally:
        m.eager_attention_forward = orig
    ratio = (seen[0] / seen[1])[0, 0, :, 0].numpy()  # (n,) positions 0..n-1
    mine = query_temperature(n, 0.1, floor, shift=1)
    np.testing.assert_allclose(mine, ratio, rtol=1e-6)  # HF computes tau in float32
    assert mine[floor - 2] == 1.0 and mine[floor - 1] > 1.0  # changes at p = floor - 1
    np.testing.assert_array_equal(query_temperature_steps(floor, 1, n - 1), [3, 7, 11, 15, 19])


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 1 << 22), min_size=1, max_size=20),
    st.sampled_from([0.1, 0.05, 1.0]),
    st.sampled_from([8192, 16384, 4096]),
)
def test_ministral3_query_temperature_equals_transformers(
    positions: list[int], beta: float, length: int
) -> None:
    from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale

    ref = get_llama_4_attn_scale(torch.tensor([positions]), beta, length)[0, 0, :, 0].double()
    np.testing.assert_allclose(query_temperature(positions, beta, length), ref.numpy(), rtol=1e-6)


# ---------------------------------------------------------------- MRoPE


def _axes_from_rotary(module: Any, n_freq: int) -> np.ndarray:
    """Drive transformers' rotary module with one position row at a time (t, then h, then w):
    the frequencies whose sine moves are the ones that axis drives."""
    axes = np.full(n_freq, -1)
    for a in range(3):
        pos = torch.zeros(3, 1, 1, dtype=torch.long)
        pos[a] = 1
        _, sin = module(torch.zeros(1, dtype=torch.float32), pos)
        moved = sin[0, 0, :n_freq].numpy() != 0
        assert (axes[moved] == -1).all()
        axes[moved] = a
    return axes


@pytest.mark.parametrize(
    ("model_type", "section", "layout"),
    [
        ("qwen2_vl", [16, 24, 24], "chunked"),
        ("qwen2_5_vl", [16, 24, 24], "chunked"),
        ("qwen2_5_vl", [8, 12, 12], "chunked"),
        ("qwen3_vl", [24, 20, 20], "interleaved"),
        ("qwen3_vl", [16, 24, 24], "interleaved"),
    ],
)
def test_mrope_axes_equal_the_rotary_module(
    model_type: str, section: list[int], layout: str
) -> None:
    n_freq = sum(section)
    cfg = T.AutoConfig.for_model(
        model_type,
        text_config={
            "head_dim": 2 * n_freq,
            "hidden_size": 4 * n_freq,
            "num_attention_heads": 2,
            "rope_parameters": {"rope_type": "default", "mrope_section": section},
        },
    ).get_text_config()
    with torch.device("meta"):
        model = T.AutoModel.from_config(cfg)
    rotary = type(model.rotary_emb)(config=cfg)
    mine = mrope_axes(section, n_freq, layout)
    np.testing.assert_array_equal(mine, _axes_from_rotary(rotary, n_freq))
    counts = np.bincount(mine, minlength=3).tolist()
    if layout == "chunked" or 3 * max(section[1:]) <= n_freq:
        assert counts == section  # each axis drives as many frequencies as its section says
    else:  # Qwen3-VL's h/w slices stop at the last frequency: t keeps what they cannot reach
        assert counts == [22, 21, 21]


def test_mrope_sections_must_sum_to_half_the_head() -> None:
    with pytest.raises(ValueError, match="sums to 60, but the head has head_dim/2 = 64"):
        mrope_axes([20, 20, 20], 64)
    with pytest.raises(ValueError, match="three integers"):
        mrope_axes([32, 32], 64)


_image = st.tuples(
    st.just("image"),
    st.tuples(st.just(1), st.sampled_from([2, 4, 6, 8]), st.sampled_from([2, 4, 6])),
)
_text = st.tuples(st.just("text"), st.integers(1, 6))


@st.composite
def segments(draw: Any) -> list[tuple[Any, ...]]:
    """Text and images taking turns (a real prompt has <vision_start>/<vision_end> text tokens
    between two images; get_rope_index groups adjacent image tokens into one image)."""
    n = draw(st.integers(1, 3))
    out: list[tuple[Any, ...]] = [draw(_text)] if draw(st.booleans()) else []
    for _ in range(n):
        out += [draw(_image), draw(_text)]
    return out if draw(st.booleans()) else out[:-1]


def hf_rope_index(model: Any, segments: list[tuple[Any, ...]], merge: int) -> np.ndarray:
    """The (t, h, w) position ids transformers' get_rope_index gives a text/image sequence."""
    types: list[int] = []
    grids = []
    for kind, arg in segments:
        if kind == "text":
            types += [0] * arg
        else:
            t, h, w = arg
            types += [1] * (t * (h // merge) * (w // merge))
            grids.append(list(arg))
    ids = torch.zeros(1, len(types), dtype=torch.long)
    ref, _ = model.get_rope_index(
        ids, torch.tensor([types]), image_grid_thw=torch.tensor(grids, dtype=torch.long)
    )
    return np.asarray(ref[:, 0].numpy())


@pytest.fixture(scope="module")
def vl_models() -> dict[str, Any]:
    out = {}
    for mt in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl"):
        with torch.device("meta"):
            out[mt] = T.AutoModel.from_config(T.AutoConfig.for_model(mt))
    return out


@settings(max_examples=30, deadline=None)
@given(segments(), st.sampled_from(["qwen2_vl", "qwen2_5_vl", "qwen3_vl"]))
def test_mrope_position_ids_equal_get_rope_index(
    vl_models: dict[str, Any], segs: list[tuple[Any, ...]], model_type: str
) -> None:
    model = vl_models[model_type]
    merge = model.config.vision_config.spatial_merge_size
    mine = mrope_position_ids(segs, merge)
    np.testing.assert_array_equal(mine, hf_rope_index(model, segs, merge))


def test_text_image_text_ids_and_angles() -> None:
    """4 text tokens, a 1 x 4 x 6 image (2 x 3 tokens after the 2 x 2 merge), 2 text tokens."""
    ids = mrope_position_ids([("text", 4), ("image", (1, 4, 6)), ("text", 2)], 2)
    assert ids.tolist() == [
        [0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 7, 8],
        [0, 1, 2, 3, 4, 4, 4, 5, 5, 5, 7, 8],
        [0, 1, 2, 3, 4, 5, 6, 4, 5, 6, 7, 8],
    ]
    inv = np.array([1.0, 0.5, 0.25, 0.125])
    ang = mrope_angles(ids, inv, mrope_axes([2, 1, 1], 4))
    np.testing.assert_array_equal(ang[6], [4.0, 2.0, 0.25 * 4, 0.125 * 6])  # t, t, h, w of token 6
    np.testing.assert_array_equal(ang[9], [4.0, 2.0, 0.25 * 5, 0.125 * 6])
    # text tokens: every axis equal, so MRoPE is plain RoPE there
    np.testing.assert_array_equal(ang[:4], np.outer(np.arange(4), inv))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 64).map(lambda h: 2 * h),
    st.integers(1, 32).map(lambda r: 2 * r),
    st.integers(0, 40),
    st.sampled_from(["half", "interleaved"]),
)
def test_pair_slots_properties(head_dim: int, rotated: int, first: int, layout: str) -> None:
    """Every pair owns exactly two slots of the rotated block, nothing outside it rotates, and
    the two layouts differ by rope_layout_permutation."""
    assume(first + rotated <= head_dim)
    slots = rope_pair_slots(head_dim, rotated, layout, first)
    block = slots[first : first + rotated]
    assert (np.delete(slots, np.arange(first, first + rotated)) == -1).all()
    assert np.bincount(block, minlength=rotated // 2).tolist() == [2] * (rotated // 2)
    a, b = (np.flatnonzero(block == 0)[:2]).tolist()
    assert b - a == (rotated // 2 if layout == "half" else 1)
    from posecards.encodings.rope import rope_layout_permutation

    half = rope_pair_slots(rotated, rotated, "half")
    inter = rope_pair_slots(rotated, rotated, "interleaved")
    np.testing.assert_array_equal(half, inter[rope_layout_permutation(rotated)])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 24), min_size=3, max_size=3),
    st.sampled_from(["chunked", "interleaved"]),
)
def test_mrope_axes_properties(section: list[int], layout: str) -> None:
    n = sum(section)
    assume(n > 0)
    axes = mrope_axes(section, n, layout)
    assert set(axes.tolist()) <= {0, 1, 2} and axes.size == n
    if layout == "chunked":  # contiguous bands t, then h, then w
        assert axes.tolist() == [0] * section[0] + [1] * section[1] + [2] * section[2]
    else:  # h and w only on their residues mod 3, and below 3 * section
        j = np.arange(n)
        assert ((axes == 1) <= ((j % 3 == 1) & (j < 3 * section[1]))).all()
        assert ((axes == 2) <= ((j % 3 == 2) & (j < 3 * section[2]))).all()
