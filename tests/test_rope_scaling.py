"""rope_inv_freq against the RoPE init functions of Hugging Face transformers 5.23.0.

Tolerance: transformers builds inv_freq in float32 (``torch.arange(...).float()``, ``base ** t``
with a float32 ``t``). Rounding the exponent ``t = 2k/d`` to float32 (relative error <= 2^-24)
moves ``base^t`` by a relative ``ln(base) * t * 2^-24``; pow, division, the YaRN/llama3 blends and
float32 factor lists add a few ulps more. Hence ``rtol = (ln(base') + 8) * 2^-24``, about 1e-6 for
base 1e6. The attention factor is plain Python float64 in transformers: ``rtol = 1e-12``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from posecards.encodings.rope_scaling import ROPE_TYPES, rope_inv_freq

transformers.logging.set_verbosity_error()  # HF warns (not raises) on odd but legal configs


def f32_rtol(base: float) -> float:
    return (math.log(base) + 8.0) * 2.0**-24


def hf_rope(
    rope_parameters: dict[str, Any],
    head_dim: int,
    max_position_embeddings: int = 4096,
    seq_len: int | None = None,
    **config_kwargs: Any,
) -> tuple[np.ndarray, float]:
    """(inv_freq, attention_factor) from transformers for a small LlamaConfig."""
    config = LlamaConfig(
        vocab_size=16,
        hidden_size=2 * head_dim,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=dict(rope_parameters),
        **config_kwargs,
    )
    rope_type: str = dict(config.rope_parameters or {})["rope_type"]
    if rope_type == "default":
        # Llama's default ignores partial_rotary_factor; GPT-NeoX's honours it (same formula).
        fn: Any = GPTNeoXRotaryEmbedding.compute_default_rope_parameters
        inv_freq, attention_factor = fn(config)
        if "partial_rotary_factor" not in rope_parameters:
            llama_inv, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
            assert np.array_equal(llama_inv.numpy(), inv_freq.numpy())
    else:
        inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len)
    return inv_freq.double().numpy(), float(attention_factor)


def ours(
    rope_parameters: dict[str, Any],
    head_dim: int,
    max_position_embeddings: int = 4096,
    seq_len: int | None = None,
) -> tuple[np.ndarray, float]:
    params = dict(rope_parameters)
    prf = params.pop("partial_rotary_factor", 1.0)
    base = params.pop("rope_theta", 10000.0)
    return rope_inv_freq(
        int(head_dim * prf),
        base=base,
        scaling=params,
        seq_len=seq_len,
        max_position_embeddings=max_position_embeddings,
    )


def assert_matches_hf(
    rope_parameters: dict[str, Any],
    head_dim: int,
    max_position_embeddings: int = 4096,
    seq_len: int | None = None,
    base_for_tol: float | None = None,
) -> tuple[np.ndarray, float]:
    ref, ref_af = hf_rope(rope_parameters, head_dim, max_position_embeddings, seq_len)
    got, got_af = ours(rope_parameters, head_dim, max_position_embeddings, seq_len)
    assert got.dtype == np.float64
    assert got.shape == ref.shape
    base = base_for_tol or rope_parameters.get("rope_theta", 10000.0)
    np.testing.assert_allclose(got, ref, rtol=f32_rtol(base), atol=0)
    assert got_af == pytest.approx(ref_af, rel=1e-12, abs=0)
    return got, got_af


# ---------------------------------------------------------------------------------------------
# default and linear


@pytest.mark.parametrize(
    ("params", "head_dim"),
    [
        ({"rope_type": "default", "rope_theta": 10000.0}, 64),
        ({"rope_type": "default", "rope_theta": 500000.0}, 128),
        ({"rope_type": "default", "rope_theta": 1e6, "partial_rotary_factor": 0.5}, 96),
        ({"rope_type": "default", "rope_theta": 10000.0}, 2),
    ],
)
def test_default_matches_hf(params: dict[str, Any], head_dim: int) -> None:
    got, af = assert_matches_hf(params, head_dim)
    assert af == 1.0
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    expected = params["rope_theta"] ** (-np.arange(dim // 2) * 2.0 / dim)
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_default_is_the_no_scaling_case() -> None:
    inv, af = rope_inv_freq(16)
    np.testing.assert_array_equal(inv, rope_inv_freq(16, scaling={"rope_type": "default"})[0])
    assert inv[0] == 1.0 and af == 1.0
    assert inv[1] == pytest.approx(10000.0 ** (-2 / 16), rel=1e-15)


@pytest.mark.parametrize(
    ("params", "head_dim"),
    [
        ({"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}, 64),
        ({"rope_type": "linear", "rope_theta": 500000.0, "factor": 2.5}, 128),
        (
            {
                "rope_type": "linear",
                "rope_theta": 10000.0,
                "factor": 8,
                "partial_rotary_factor": 0.4,
            },
            80,
        ),
        ({"type": "linear", "rope_theta": 10000.0, "factor": 3.0}, 32),  # legacy key
    ],
)
def test_linear_matches_hf(params: dict[str, Any], head_dim: int) -> None:
    got, af = assert_matches_hf(params, head_dim)
    assert af == 1.0
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    plain, _ = rope_inv_freq(dim, params["rope_theta"])
    np.testing.assert_allclose(got * params["factor"], plain, rtol=1e-14)


def test_legacy_rope_scaling_kwarg_matches() -> None:
    # transformers 5.x still accepts rope_scaling={"type": ...} and maps it to rope_parameters.
    legacy: dict[str, Any] = {
        "rope_theta": 500.0,
        "rope_scaling": {"type": "linear", "factor": 4.0},
    }
    config = LlamaConfig(hidden_size=64, num_attention_heads=2, head_dim=32, **legacy)
    assert dict(config.rope_parameters or {})["rope_type"] == "linear"
    ref, _ = ROPE_INIT_FUNCTIONS["linear"](config)
    got, _ = rope_inv_freq(32, 500.0, {"type": "linear", "factor": 4.0})
    np.testing.assert_allclose(got, ref.double().numpy(), rtol=f32_rtol(500.0))


def test_rope_theta_in_dict_wins_over_base() -> None:
    a, _ = rope_inv_freq(32, base=10000.0, scaling={"rope_type": "default", "rope_theta": 500.0})
    b, _ = rope_inv_freq(32, base=500.0)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# dynamic NTK and static NTK


@pytest.mark.parametrize("seq_len", [None, 1, 1000, 2048, 2049, 4096, 8192, 100_000])
@pytest.mark.parametrize(
    ("params", "head_dim"),
    [
        ({"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}, 64),
        ({"rope_type": "dynamic", "rope_theta": 500000.0, "factor": 4.0}, 128),
        (
            {
                "rope_type": "dynamic",
                "rope_theta": 10000.0,
                "factor": 8.0,
                "partial_rotary_factor": 0.25,
            },
            64,
        ),
    ],
)
def test_dynamic_matches_hf(params: dict[str, Any], head_dim: int, seq_len: int | None) -> None:
    max_pos = 2048
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    # The tolerance uses the effective base' (larger than base above max_pos).
    s, f = max(seq_len or 0, max_pos), params["factor"]
    base_eff = params["rope_theta"] * (f * s / max_pos - (f - 1)) ** (dim / (dim - 2))
    got, af = assert_matches_hf(params, head_dim, max_pos, seq_len, base_for_tol=base_eff)
    plain, _ = rope_inv_freq(dim, params["rope_theta"])
    if seq_len is None or seq_len <= max_pos:
        np.testing.assert_allclose(got, plain, rtol=1e-13)  # unscaled below the threshold
    else:
        assert np.all(got[1:] < plain[1:])  # lower frequencies above it
        assert got[0] == 1.0
    assert af == 1.0


def test_dynamic_without_seq_len_needs_no_max_position() -> None:
    inv, _ = rope_inv_freq(16, scaling={"rope_type": "dynamic", "factor": 4.0})
    np.testing.assert_array_equal(inv, rope_inv_freq(16)[0])
    with pytest.raises(ValueError, match="max_position_embeddings"):
        rope_inv_freq(16, scaling={"rope_type": "dynamic", "factor": 4.0}, seq_len=10)


@pytest.mark.parametrize("dim", [4, 32, 128])
def test_ntk_closed_form_and_equals_dynamic(dim: int) -> None:
    alpha = 4.0
    inv, af = rope_inv_freq(dim, 10000.0, {"rope_type": "ntk", "factor": alpha})
    base_prime = 10000.0 * alpha ** (dim / (dim - 2))
    np.testing.assert_allclose(inv, base_prime ** (-np.arange(0, dim, 2) / dim), rtol=1e-14)
    assert af == 1.0
    # The base' of NTK-aware scaling makes the lowest frequency exactly theta_last / alpha.
    plain, _ = rope_inv_freq(dim, 10000.0)
    assert inv[-1] == pytest.approx(plain[-1] / alpha, rel=1e-12)
    # dynamic at seq_len s equals ntk with alpha = factor * s / L - (factor - 1): factor 3, s = 2L.
    dyn, _ = rope_inv_freq(
        dim,
        10000.0,
        {"rope_type": "dynamic", "factor": 3.0},
        seq_len=4096,
        max_position_embeddings=2048,
    )
    np.testing.assert_allclose(dyn, inv, rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# YaRN


YARN_CASES: list[tuple[str, dict[str, Any], int, int]] = [
    # (id, rope_parameters, head_dim, max_position_embeddings)
    (
        "qwen-like",
        {
            "rope_type": "yarn",
            "rope_theta": 1e6,
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
        },
        128,
        131072,
    ),
    (
        "gpt-oss-like no truncate",
        {
            "rope_type": "yarn",
            "rope_theta": 150000.0,
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
        },
        64,
        131072,
    ),
    (
        "truncate True explicit",
        {
            "rope_type": "yarn",
            "rope_theta": 150000.0,
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "truncate": True,
        },
        64,
        131072,
    ),
    (
        "deepseek-v3 mscale equal",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
        64,
        163840,
    ),
    (
        "mscale differ",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
            "mscale_all_dim": 0.707,
        },
        64,
        163840,
    ),
    (
        "mscale without mscale_all_dim is ignored",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 16.0,
            "original_max_position_embeddings": 4096,
            "mscale": 0.707,
        },
        64,
        65536,
    ),
    (
        "mscale 0 is falsy -> m(s, 1)",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 0.0,
            "mscale_all_dim": 1.0,
        },
        64,
        163840,
    ),
    (
        "explicit attention_factor",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 8.0,
            "original_max_position_embeddings": 2048,
            "attention_factor": 1.5,
            "mscale": 1.0,
            "mscale_all_dim": 0.5,
        },
        64,
        16384,
    ),
    (
        "factor None -> max_pos / original",
        {
            "rope_type": "yarn",
            "rope_theta": 50000.0,
            "factor": None,
            "original_max_position_embeddings": 2048,
        },
        32,
        6144,  # factor 3
    ),
    (
        "other betas, partial rotary",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 2048,
            "beta_fast": 16.0,
            "beta_slow": 2.0,
            "partial_rotary_factor": 0.5,
        },
        128,
        8192,
    ),
    (
        "beta 0 falls back to 32/1 (or)",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 2048,
            "beta_fast": 0,
            "beta_slow": 0,
        },
        64,
        8192,
    ),
    (
        "factor <= 1 has attention factor 1",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 1.0,
            "original_max_position_embeddings": 2048,
        },
        64,
        2048,
    ),
    (
        "tiny original length (ramp bounds clipped at 0)",
        {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 16,
        },
        64,
        64,
    ),
    (
        "degenerate ramp low == high (+0.001)",
        {
            "rope_type": "yarn",
            "rope_theta": 10.0,
            "factor": 4.0,
            "original_max_position_embeddings": 16000,
        },
        8,
        64000,
    ),
    (
        "original length missing -> max_position_embeddings",
        {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0},
        64,
        4096,
    ),
]


@pytest.mark.parametrize(
    ("params", "head_dim", "max_pos"), [c[1:] for c in YARN_CASES], ids=[c[0] for c in YARN_CASES]
)
def test_yarn_matches_hf(params: dict[str, Any], head_dim: int, max_pos: int) -> None:
    assert_matches_hf(params, head_dim, max_pos)


def test_yarn_degenerate_ramp_width() -> None:
    # beta_fast == beta_slow and no truncation give low == high; HF widens the ramp to 0.001.
    # Put the ramp point 0.0005 below k = 2 so that pair 2 sits in the middle of that ramp.
    dim, base, length, factor, c = 16, 10000.0, 4096, 4.0, 1.9995
    beta = length / (2 * math.pi) * math.exp(-2 * math.log(base) * c / dim)
    params = {
        "rope_type": "yarn",
        "factor": factor,
        "original_max_position_embeddings": length,
        "beta_fast": beta,
        "beta_slow": beta,
        "truncate": False,
    }
    got, _ = rope_inv_freq(dim, base, params)
    plain, _ = rope_inv_freq(dim, base)
    r = (2 - c) / 0.001  # 0.5 up to rounding of c
    assert got[2] == pytest.approx(plain[2] * (1 - r) + plain[2] / factor * r, rel=1e-9)
    np.testing.assert_array_equal(got[:2], plain[:2])
    np.testing.assert_allclose(got[3:], plain[3:] / factor, rtol=1e-15)
    # HF rounds the ramp point to float32 (error ~1e-7 out of a width of 1e-3): rtol 1e-3 here.
    ref, _ = hf_rope({**params, "rope_theta": base}, dim, 4 * length)
    np.testing.assert_allclose(got, ref, rtol=1e-3)


def test_yarn_truncate_none_means_no_truncation() -> None:
    # HF reads `rope_parameters.get("truncate", True)` and tests its truthiness.
    common = {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096}
    none, _ = rope_inv_freq(64, 150000.0, {**common, "truncate": None})
    false, _ = rope_inv_freq(64, 150000.0, {**common, "truncate": False})
    true, _ = rope_inv_freq(64, 150000.0, {**common, "truncate": True})
    np.testing.assert_array_equal(none, false)
    assert not np.allclose(true, false)
    ref, _ = hf_rope({**common, "rope_theta": 150000.0, "truncate": None}, 64, 131072)
    np.testing.assert_allclose(none, ref, rtol=f32_rtol(150000.0))


def test_yarn_closed_forms() -> None:
    dim, base, factor, length = 64, 10000.0, 16.0, 4096
    inv, af = rope_inv_freq(
        dim,
        base,
        {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": length},
    )
    assert af == pytest.approx(0.1 * math.log(factor) + 1.0, rel=1e-15)
    plain, _ = rope_inv_freq(dim, base)

    def corr(beta: float) -> float:
        return dim * math.log(length / (2 * math.pi * beta)) / (2 * math.log(base))

    low, high = math.floor(corr(32)), math.ceil(corr(1))
    assert 0 < low < high < dim // 2
    np.testing.assert_array_equal(inv[: low + 1], plain[: low + 1])  # extrapolated (kept)
    np.testing.assert_allclose(inv[high:], plain[high:] / factor, rtol=1e-15)  # interpolated
    mid = (low + high) // 2
    r = (mid - low) / (high - low)
    assert inv[mid] == pytest.approx(plain[mid] * (1 - r) + plain[mid] / factor * r, rel=1e-15)
    # DeepSeek style: attention factor m(s, mscale) / m(s, mscale_all_dim)
    _, af2 = rope_inv_freq(
        dim,
        base,
        {
            "rope_type": "yarn",
            "factor": factor,
            "original_max_position_embeddings": length,
            "mscale": 1.0,
            "mscale_all_dim": 0.5,
        },
    )
    assert af2 == pytest.approx(
        (0.1 * math.log(factor) + 1) / (0.05 * math.log(factor) + 1), rel=1e-15
    )


def test_top_level_original_max_position_overrides_dict_in_hf() -> None:
    # 5.23 quirk: a top-level config.original_max_position_embeddings (Phi-3 style) replaces the
    # rope dict's value when the init function re-standardizes. posecards has only the dict.
    params = {
        "rope_type": "yarn",
        "rope_theta": 50000.0,
        "factor": 4.0,
        "original_max_position_embeddings": 2048,
    }
    ref, _ = hf_rope(params, 32, 8192, original_max_position_embeddings=1024)
    got_1024, _ = rope_inv_freq(32, 50000.0, {**params, "original_max_position_embeddings": 1024})
    got_2048, _ = rope_inv_freq(32, 50000.0, params)
    np.testing.assert_allclose(got_1024, ref, rtol=f32_rtol(50000.0))
    assert not np.allclose(got_2048, ref, rtol=1e-4)


# ---------------------------------------------------------------------------------------------
# LongRoPE


def _phi3_like(half: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "short_factor": list(rng.uniform(1.0, 1.2, half)),
        "long_factor": list(np.sort(rng.uniform(1.0, 60.0, half))),
        "original_max_position_embeddings": 4096,
    }


@pytest.mark.parametrize("seq_len", [None, 1, 4095, 4096, 4097, 131072])
@pytest.mark.parametrize(
    "variant", ["factor None", "factor 8", "attention_factor", "partial rotary", "type key"]
)
def test_longrope_matches_hf(variant: str, seq_len: int | None) -> None:
    head_dim, max_pos = 96, 131072
    params = _phi3_like(head_dim // 2)
    if variant == "factor 8":
        params["factor"] = 8.0
    elif variant == "attention_factor":
        params["attention_factor"] = 1.25
    elif variant == "partial rotary":
        head_dim = 128
        params = {**_phi3_like(48, seed=1), "partial_rotary_factor": 0.75}
    elif variant == "type key":
        params["type"] = params.pop("rope_type")
    got, af = assert_matches_hf(params, head_dim, max_pos, seq_len)
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    plain, _ = rope_inv_freq(dim, 10000.0)
    key = "long_factor" if seq_len is not None and seq_len > 4096 else "short_factor"
    np.testing.assert_allclose(got, plain / np.array(params[key]), rtol=1e-14)
    if variant == "attention_factor":
        assert af == 1.25
    else:
        s = params.get("factor") or max_pos / 4096
        assert af == pytest.approx(math.sqrt(1 + math.log(s) / math.log(4096)), rel=1e-14)


def test_longrope_factor_le_one_attention_factor_one() -> None:
    params = {**_phi3_like(32), "factor": 1.0}
    _, af = assert_matches_hf(params, 64, 4096)
    assert af == 1.0


# ---------------------------------------------------------------------------------------------
# Llama 3


def _llama3(**kw: Any) -> dict[str, Any]:
    return {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        **kw,
    }


@pytest.mark.parametrize(
    ("params", "head_dim", "max_pos"),
    [
        (_llama3(), 128, 131072),  # Llama 3.1
        (_llama3(factor=32.0), 64, 131072),  # Llama 3.2 1B
        (_llama3(rope_theta=10000.0, original_max_position_embeddings=2048), 64, 16384),
        (_llama3(partial_rotary_factor=0.5), 128, 131072),
    ],
)
def test_llama3_matches_hf(params: dict[str, Any], head_dim: int, max_pos: int) -> None:
    got, af = assert_matches_hf(params, head_dim, max_pos)
    assert af == 1.0
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    plain, _ = rope_inv_freq(dim, params["rope_theta"])
    wavelen = 2 * np.pi / plain
    length = params["original_max_position_embeddings"]
    high = wavelen < length / params["high_freq_factor"]
    low = wavelen > length / params["low_freq_factor"]
    assert high.any() and low.any() and (~high & ~low).any()
    np.testing.assert_array_equal(got[high], plain[high])
    np.testing.assert_allclose(got[low], plain[low] / params["factor"], rtol=1e-15)
    mid = ~high & ~low
    assert np.all((got[mid] < plain[mid]) & (got[mid] > plain[mid] / params["factor"]))


@pytest.mark.parametrize("nudge", [-1e-9, 0.0, 1e-9])
def test_llama3_wavelengths_at_the_boundaries(nudge: float) -> None:
    # Choose low/high_freq_factor so that the wavelengths of pairs 20 and 44 sit exactly on (or
    # a hair around) the two boundaries L / high_freq_factor and L / low_freq_factor.
    head_dim, base, length = 128, 500000.0, 8192
    plain, _ = rope_inv_freq(head_dim, base)
    wavelen = 2 * np.pi / plain
    i_high, i_low = 20, 44
    params = _llama3(
        low_freq_factor=float(length / (wavelen[i_low] * (1 + nudge))),
        high_freq_factor=float(length / (wavelen[i_high] * (1 + nudge))),
    )
    got, _ = assert_matches_hf(params, head_dim, 131072)
    # The smooth band meets both sides continuously: a = 1 at the high boundary, 0 at the low one.
    assert got[i_high] == pytest.approx(plain[i_high], rel=1e-8)
    assert got[i_low] == pytest.approx(plain[i_low] / 8.0, rel=1e-8)
    if nudge == 0.0:
        assert got[i_high] == pytest.approx(plain[i_high], rel=1e-14)
        assert got[i_low] == pytest.approx(plain[i_low] / 8.0, rel=1e-14)


def test_llama3_original_length_falls_back_to_max_position() -> None:
    params = _llama3()
    del params["original_max_position_embeddings"]
    got, _ = assert_matches_hf(params, 128, 8192)  # HF setdefault -> 8192
    explicit, _ = ours(_llama3(), 128, 131072)
    np.testing.assert_array_equal(got, explicit)


# ---------------------------------------------------------------------------------------------
# argument errors


def test_rope_types_cover_hf_except_proportional() -> None:
    assert set(ROPE_INIT_FUNCTIONS) - set(ROPE_TYPES) == {"proportional"}
    assert set(ROPE_TYPES) - set(ROPE_INIT_FUNCTIONS) == {"default", "ntk"}


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"dim": 7}, "dim"),
        ({"dim": 0}, "dim"),
        ({"dim": 8, "base": 1.0}, "base"),
        (
            {"dim": 8, "scaling": {"rope_type": "proportional"}},
            "rope_type 'proportional'.*longrope",
        ),
        ({"dim": 8, "scaling": {"type": "nope"}}, "rope_type 'nope'.*default, linear"),
        ({"dim": 8, "scaling": {"rope_type": "linear"}}, r"scaling\['factor'\].*'linear'"),
        ({"dim": 8, "scaling": {"rope_type": "linear", "factor": None}}, r"scaling\['factor'\]"),
        ({"dim": 8, "scaling": {"rope_type": "linear", "factor": -2}}, r"scaling\['factor'\]"),
        ({"dim": 8, "scaling": {"rope_type": "dynamic"}}, r"scaling\['factor'\]"),
        ({"dim": 8, "scaling": {"rope_type": "ntk"}}, r"scaling\['factor'\]"),
        ({"dim": 2, "scaling": {"rope_type": "ntk", "factor": 2}}, "dim"),
        (
            {"dim": 8, "scaling": {"rope_type": "yarn", "original_max_position_embeddings": 10}},
            "factor",
        ),
        (
            {"dim": 8, "scaling": {"rope_type": "yarn", "factor": 2}},
            "original_max_position_embeddings",
        ),
        (
            {
                "dim": 8,
                "scaling": {
                    "rope_type": "yarn",
                    "factor": None,
                    "original_max_position_embeddings": 9,
                },
            },
            "max_position_embeddings",
        ),
        ({"dim": 8, "scaling": {"rope_type": "longrope", "long_factor": [1] * 4}}, "short_factor"),
        ({"dim": 8, "scaling": {"rope_type": "longrope", "short_factor": [1] * 4}}, "long_factor"),
        (
            {
                "dim": 8,
                "scaling": {
                    "rope_type": "longrope",
                    "short_factor": [1] * 3,
                    "long_factor": [1] * 4,
                    "original_max_position_embeddings": 8,
                },
            },
            r"short_factor.*dim/2 = 4",
        ),
        (
            {
                "dim": 8,
                "scaling": {
                    "rope_type": "longrope",
                    "short_factor": [1] * 4,
                    "long_factor": [1] * 4,
                },
            },
            "original_max_position_embeddings",
        ),
        (
            {
                "dim": 8,
                "scaling": {
                    k: v for k, v in _llama3().items() if k != "original_max_position_embeddings"
                },
            },
            "original_max_position_embeddings",
        ),
        (
            {"dim": 8, "scaling": {k: v for k, v in _llama3().items() if k != "low_freq_factor"}},
            "low_freq_factor",
        ),
        ({"dim": 8, "scaling": {k: v for k, v in _llama3().items() if k != "factor"}}, "factor"),
        # high_freq_factor <= low_freq_factor is a step, as in HF (tests/test_modern_math.py);
        # a factor that is not a number > 0 is still refused
        ({"dim": 8, "scaling": _llama3(high_freq_factor=0.0)}, "high_freq_factor"),
        (
            {"dim": 8, "scaling": {"rope_type": "linear", "facotr": 2}},
            "unknown scaling key.*'facotr'",
        ),
        ({"dim": 8, "scaling": {"partial_rotary_factor": 0.5}}, "partial_rotary_factor"),
        ({"dim": 8, "seq_len": 0}, "seq_len"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        rope_inv_freq(**kwargs)


def test_missing_key_message_lists_required_keys() -> None:
    with pytest.raises(ValueError) as err:
        rope_inv_freq(8, scaling={"rope_type": "llama3", "factor": 8.0})
    msg = str(err.value)
    assert "low_freq_factor" in msg and "high_freq_factor" in msg and "llama3" in msg
    assert "\n" not in msg
