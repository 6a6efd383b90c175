"""RoPE rotation, layouts and scores: against transformers' Llama code, Meta's complex form,
closed forms and the algebraic properties that make RoPE relative."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import (
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
    rotate_half,
)

from posecards.encodings.rope import (
    apply_rope,
    apply_rope_complex,
    rope_angles,
    rope_layout_inverse_permutation,
    rope_layout_permutation,
    rope_relative_upper_bound,
    rope_scores,
    rotation_2d,
)
from posecards.encodings.rope_scaling import rope_inv_freq

transformers.logging.set_verbosity_error()

LAYOUTS = ("half", "interleaved")
PROPS = settings(max_examples=40, deadline=None)


def random_inv_freq(rng: np.random.Generator, half: int) -> np.ndarray:
    return np.sort(rng.uniform(1e-4, 1.0, half))[::-1].copy()


# ---------------------------------------------------------------------------------------------
# reference implementations


def meta_apply_rotary_emb(
    x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor
) -> torch.Tensor:
    """Meta LLaMA ``apply_rotary_emb`` (facebookresearch/llama, llama/model.py) in float64:
    ``freqs_cis = torch.polar(1, outer(t, freqs))``, ``view_as_complex`` on pairs (2i, 2i+1)."""
    freqs_cis = torch.polar(
        torch.ones(len(positions), len(inv_freq), dtype=torch.float64),
        torch.outer(positions, inv_freq),
    )
    x_ = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(x_ * freqs_cis).flatten(-2)


def hf_permute(w: torch.Tensor, n_heads: int, dim1: int, dim2: int) -> torch.Tensor:
    """``permute`` of transformers' ``convert_llama_weights_to_hf.py`` ("permute for sliced
    rotary"), copied verbatim from huggingface/transformers
    src/transformers/models/llama/convert_llama_weights_to_hf.py (e.g. commit 01cc9cd9); the
    script is not shipped in the 5.23.0 wheel, so it cannot be imported here."""
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def llama_config(
    head_dim: int, rope_parameters: dict[str, Any], max_pos: int = 4096
) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=16,
        hidden_size=2 * head_dim,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_pos,
        rope_parameters=dict(rope_parameters),
    )


# ---------------------------------------------------------------------------------------------
# transformers' Llama (half layout)


@pytest.mark.parametrize(
    ("head_dim", "base", "n"), [(8, 10000.0, 5), (64, 10000.0, 33), (128, 500000.0, 17)]
)
def test_half_matches_hf_apply_rotary_pos_emb(head_dim: int, base: float, n: int) -> None:
    rng = np.random.default_rng(head_dim)
    inv_freq, _ = rope_inv_freq(head_dim, base)
    positions = np.sort(rng.choice(5000, n, replace=False)).astype(np.float64)
    q = rng.normal(size=(2, 3, n, head_dim))  # (batch, heads, n, head_dim)
    k = rng.normal(size=(2, 1, n, head_dim))
    # HF's cos/sin layout built in float64: emb = cat(freqs, freqs), shape (batch, n, head_dim)
    angles = torch.from_numpy(rope_angles(positions, inv_freq))
    emb = torch.cat((angles, angles), dim=-1).expand(2, n, head_dim)
    q_ref, k_ref = apply_rotary_pos_emb(
        torch.from_numpy(q), torch.from_numpy(k), emb.cos(), emb.sin()
    )
    np.testing.assert_allclose(
        apply_rope(q, positions, inv_freq, "half"), q_ref.numpy(), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        apply_rope(k, positions, inv_freq, "half"), k_ref.numpy(), rtol=0, atol=1e-12
    )


def test_rotate_half_is_the_quarter_turn_of_each_half_pair() -> None:
    x = np.arange(1.0, 9.0)  # (8,)
    # rotate_half(x) = cat(-x2, x1): apply_rope at angle pi/2 on every pair does the same.
    quarter = apply_rope(x, [1.0], np.full(4, math.pi / 2), "half")
    np.testing.assert_allclose(quarter, rotate_half(torch.from_numpy(x)).numpy(), atol=1e-15)


@pytest.mark.parametrize(
    ("name", "params", "max_pos", "positions"),
    [
        ("default", {"rope_type": "default", "rope_theta": 10000.0}, 4096, np.arange(40)),
        (
            "default big positions",
            {"rope_type": "default", "rope_theta": 500000.0},
            4096,
            np.arange(3000, 3040),
        ),
        (
            "yarn (attention scaling)",
            {
                "rope_type": "yarn",
                "rope_theta": 10000.0,
                "factor": 8.0,
                "original_max_position_embeddings": 512,
            },
            4096,
            np.arange(0, 4096, 97),
        ),
        # dynamic: forward recomputes inv_freq for seq_len = max(position_ids) + 1 > max_pos
        (
            "dynamic above",
            {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 4.0},
            256,
            np.arange(0, 1000, 25),
        ),
        (
            "dynamic below",
            {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 4.0},
            256,
            np.arange(0, 200, 5),
        ),
        # llama3 through the module (static)
        (
            "llama3",
            {
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 1024,
            },
            8192,
            np.arange(0, 8192, 211),
        ),
    ],
)
def test_llama_rotary_embedding_cos_sin(
    name: str, params: dict[str, Any], max_pos: int, positions: np.ndarray
) -> None:
    head_dim = 64
    config = llama_config(head_dim, params, max_pos)
    rotary = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, len(positions), head_dim, dtype=torch.float64)
    cos_hf, sin_hf = rotary(x, torch.from_numpy(positions)[None, :].long())  # (1, n, head_dim)

    scaling = {k: v for k, v in params.items() if k != "rope_theta"}
    seq_len = int(positions.max()) + 1
    inv_freq, attention_factor = rope_inv_freq(
        head_dim, params["rope_theta"], scaling, seq_len=seq_len, max_position_embeddings=max_pos
    )
    angles = rope_angles(positions, inv_freq)  # (n, head_dim/2)
    cos = attention_factor * np.cos(np.concatenate([angles, angles], axis=-1))
    sin = attention_factor * np.sin(np.concatenate([angles, angles], axis=-1))
    # HF multiplies float32 positions by float32 inv_freq: the angle carries a relative error of
    # about (ln(base) + 10) * 2^-24, so cos/sin are off by up to max|angle| times that.
    atol = attention_factor * (
        float(np.max(angles)) * (math.log(params["rope_theta"]) + 10) * 2.0**-24 + 2e-7
    )
    np.testing.assert_allclose(cos_hf[0].numpy(), cos, rtol=0, atol=atol)
    np.testing.assert_allclose(sin_hf[0].numpy(), sin, rtol=0, atol=atol)


def test_longrope_switch_through_llama_module() -> None:
    head_dim, orig = 32, 256
    rng = np.random.default_rng(3)
    params = {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "short_factor": list(rng.uniform(1.0, 1.1, head_dim // 2)),
        "long_factor": list(rng.uniform(1.0, 20.0, head_dim // 2)),
        "original_max_position_embeddings": orig,
    }
    scaling = {k: v for k, v in params.items() if k != "rope_theta"}
    config = llama_config(head_dim, params, max_pos=4096)
    rotary = LlamaRotaryEmbedding(config)
    for top in (orig - 1, orig):  # seq_len = top + 1: orig (short) and orig + 1 (long)
        positions = np.arange(0, top + 1, 7).astype(np.float64)
        positions[-1] = top
        x = torch.zeros(1, len(positions), head_dim, dtype=torch.float64)
        cos_hf, _ = rotary(x, torch.from_numpy(positions)[None, :].long())
        inv_freq, af = rope_inv_freq(
            head_dim, 10000.0, scaling, seq_len=top + 1, max_position_embeddings=4096
        )
        angles = rope_angles(positions, inv_freq)
        cos = af * np.cos(np.concatenate([angles, angles], axis=-1))
        np.testing.assert_allclose(cos_hf[0].numpy(), cos, rtol=0, atol=5e-5)
    short, _ = rope_inv_freq(head_dim, 10000.0, {**scaling, "factor": 16.0}, seq_len=orig)
    long, _ = rope_inv_freq(head_dim, 10000.0, {**scaling, "factor": 16.0}, seq_len=orig + 1)
    assert not np.allclose(short, long)


# ---------------------------------------------------------------------------------------------
# Meta LLaMA complex form (interleaved layout)


@pytest.mark.parametrize(("dim", "n"), [(2, 3), (16, 10), (128, 7)])
def test_complex_multiplication_is_meta_and_the_interleaved_rotation(dim: int, n: int) -> None:
    """RoPE as q·e^(imθ) (card 3's formula box): the same numbers as Meta's complex code and as
    the interleaved rotation; the half layout is the same product after the permutation."""
    rng = np.random.default_rng(dim + 1)
    inv_freq, _ = rope_inv_freq(dim, 10000.0)
    positions = rng.uniform(0, 3000, n)
    x = rng.normal(size=(2, n, dim))
    ref = meta_apply_rotary_emb(
        torch.from_numpy(x), torch.from_numpy(positions), torch.from_numpy(inv_freq)
    ).numpy()
    got = apply_rope_complex(x, positions, inv_freq)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got, apply_rope(x, positions, inv_freq, "interleaved"), atol=1e-12)
    perm = rope_layout_permutation(dim)
    np.testing.assert_allclose(
        apply_rope(x[..., perm], positions, inv_freq, "half"), got[..., perm], atol=1e-12
    )


def test_complex_score_keeps_only_the_offset() -> None:
    """<R_m q, R_n k> = Re Σ z_i conj(w_i) e^(i(m−n)θ_i), z, w the pairs of q, k as complex."""
    rng = np.random.default_rng(5)
    dim = 32
    inv_freq, _ = rope_inv_freq(dim, 10000.0)
    q, k = rng.normal(size=(2, 6, dim))
    m, n = rng.uniform(0, 500, 6), rng.uniform(0, 500, 6)
    scores = rope_scores(q, k, m, n, inv_freq, "interleaved")  # (6, 6)
    z, w = q[:, 0::2] + 1j * q[:, 1::2], k[:, 0::2] + 1j * k[:, 1::2]
    phase = np.exp(1j * (m[:, None, None] - n[None, :, None]) * inv_freq)
    expected = np.real((z[:, None, :] * np.conj(w)[None, :, :] * phase).sum(axis=2))
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-11)


def test_complex_rope_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="shape"):
        apply_rope_complex(np.ones(8), 3, np.ones(4))
    with pytest.raises(ValueError, match="even"):
        apply_rope_complex(np.ones((3, 7)), 3, np.ones(3))
    with pytest.raises(ValueError, match="one entry per row"):
        apply_rope_complex(np.ones((3, 8)), 4, np.ones(4))


@pytest.mark.parametrize(("dim", "n"), [(2, 3), (16, 10), (128, 7)])
def test_interleaved_matches_meta_complex(dim: int, n: int) -> None:
    rng = np.random.default_rng(dim)
    inv_freq, _ = rope_inv_freq(dim, 10000.0)
    positions = rng.uniform(0, 3000, n)
    x = rng.normal(size=(4, n, dim))
    ref = meta_apply_rotary_emb(
        torch.from_numpy(x), torch.from_numpy(positions), torch.from_numpy(inv_freq)
    )
    np.testing.assert_allclose(
        apply_rope(x, positions, inv_freq, "interleaved"), ref.numpy(), rtol=0, atol=1e-12
    )


# ---------------------------------------------------------------------------------------------
# worked example and the 2x2 rotation


def test_worked_example() -> None:
    q, k = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    m, n, theta = 10, 15, np.array([0.1])
    for layout in LAYOUTS:  # with dim 2 both layouts are the same pair
        q_rot = apply_rope(q, [m], theta, layout)
        k_rot = apply_rope(k, [n], theta, layout)
        np.testing.assert_allclose(q_rot, [math.cos(1.0), math.sin(1.0)], rtol=0, atol=1e-15)
        np.testing.assert_allclose(k_rot, [-math.sin(1.5), math.cos(1.5)], rtol=0, atol=1e-15)
        # cos1 * (-sin1.5) + sin1 * cos1.5 = sin(1 - 1.5) = sin(-(n - m) theta) = -sin(0.5)
        expected = math.sin((m - n) * 0.1)
        assert float(q_rot @ k_rot) == pytest.approx(expected, abs=1e-15)
        assert expected == pytest.approx(-math.sin(0.5), abs=1e-15)
        # ... which is q . R_(n-m) k
        assert float(q @ (rotation_2d((n - m) * 0.1) @ k)) == pytest.approx(expected, abs=1e-15)
        score = rope_scores(q[None], k[None], [m], [n], theta, layout)
        assert score.shape == (1, 1) and score[0, 0] == pytest.approx(expected, abs=1e-15)


def test_rotation_2d() -> None:
    np.testing.assert_allclose(rotation_2d(math.pi / 2) @ [1.0, 0.0], [0.0, 1.0], atol=1e-16)
    a, b = 0.3, -1.7
    np.testing.assert_allclose(rotation_2d(a) @ rotation_2d(b), rotation_2d(a + b), atol=1e-15)
    np.testing.assert_allclose(rotation_2d(a).T @ rotation_2d(b), rotation_2d(b - a), atol=1e-15)
    assert np.linalg.det(rotation_2d(a)) == pytest.approx(1.0, abs=1e-15)
    assert rotation_2d(a).dtype == np.float64 and rotation_2d(a).shape == (2, 2)
    x = np.array([0.4, -2.0])
    np.testing.assert_allclose(
        apply_rope(x, [7.0], [0.3], "half"), rotation_2d(2.1) @ x, atol=1e-15
    )


def test_rope_angles() -> None:
    inv_freq = np.array([1.0, 0.1, 0.01])
    angles = rope_angles(4, inv_freq)
    assert angles.shape == (4, 3) and angles.dtype == np.float64
    np.testing.assert_array_equal(angles, np.outer(np.arange(4.0), inv_freq))
    np.testing.assert_array_equal(rope_angles([2.5], inv_freq), [[2.5, 0.25, 0.025]])


# ---------------------------------------------------------------------------------------------
# properties


@st.composite
def rope_case(draw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    half = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    m = draw(st.integers(-2000, 2000))
    n = draw(st.integers(-2000, 2000))
    return rng.normal(size=2 * half), rng.normal(size=2 * half), random_inv_freq(rng, half), m, n


@PROPS
@given(rope_case(), st.sampled_from(LAYOUTS))
def test_scores_depend_on_relative_position(case: Any, layout: str) -> None:
    q, k, inv_freq, m, n = case
    lhs = apply_rope(q, [m], inv_freq, layout) @ apply_rope(k, [n], inv_freq, layout)
    rhs = q @ apply_rope(k, [n - m], inv_freq, layout)  # q . R_(n-m) k
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert abs(lhs - rhs) <= 1e-11 * scale


@PROPS
@given(rope_case(), st.sampled_from(LAYOUTS))
def test_rotation_preserves_norms(case: Any, layout: str) -> None:
    q, _, inv_freq, m, n = case
    x = np.stack([q, 3 * q, -q])  # (3, dim)
    rotated = apply_rope(x, [m, n, m + n], inv_freq, layout)
    np.testing.assert_allclose(
        np.linalg.norm(rotated, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13
    )


@PROPS
@given(st.integers(1, 10), st.integers(0, 2**32 - 1), st.floats(-500, 500))
def test_layouts_agree_after_permutation(half: int, seed: int, shift: float) -> None:
    rng = np.random.default_rng(seed)
    dim = 2 * half
    inv_freq = random_inv_freq(rng, half)
    q, k = rng.normal(size=(5, dim)), rng.normal(size=(4, dim))
    pq, pk = rng.uniform(0, 1000, 5), rng.uniform(0, 1000, 4)
    p, inv = rope_layout_permutation(dim), rope_layout_inverse_permutation(dim)
    interleaved = rope_scores(q, k, pq, pk, inv_freq, "interleaved")
    half_scores = rope_scores(q[:, p], k[:, p], pq, pk, inv_freq, "half")
    np.testing.assert_allclose(
        half_scores, interleaved, rtol=0, atol=1e-11 * np.abs(q).sum() * np.abs(k).sum()
    )
    # vectors too: rotating in the half layout equals rotating interleaved, then permuting
    np.testing.assert_allclose(
        apply_rope(q[:, p], pq, inv_freq, "half"),
        apply_rope(q, pq, inv_freq, "interleaved")[:, p],
        atol=1e-12,
    )
    np.testing.assert_allclose(
        apply_rope(q[:, inv], pq, inv_freq, "interleaved"),
        apply_rope(q, pq, inv_freq, "half")[:, inv],
        atol=1e-12,
    )
    # and the scores are shift invariant
    shifted = rope_scores(q, k, pq + shift, pk + shift, inv_freq, "interleaved")
    np.testing.assert_allclose(
        shifted, interleaved, rtol=0, atol=1e-10 * np.abs(q).sum() * np.abs(k).sum()
    )


@PROPS
@given(st.integers(0, 2**32 - 1), st.integers(-3000, 3000), st.sampled_from(LAYOUTS))
def test_score_matrix_is_toeplitz_in_position(seed: int, offset: int, layout: str) -> None:
    # One q and one k at all positions 0..n-1: S[i, j] depends only on j - i.
    rng = np.random.default_rng(seed)
    inv_freq, _ = rope_inv_freq(8, 10000.0)
    q, k = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))
    n = 12
    pos = np.arange(n) + offset
    scores = rope_scores(np.repeat(q, n, 0), np.repeat(k, n, 0), pos, pos, inv_freq, layout)
    for d in range(-n + 1, n):
        diag = np.diagonal(scores, offset=d)
        np.testing.assert_allclose(diag, diag[0], rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------------------------
# Llama weight permutation


@pytest.mark.parametrize(("n_heads", "head_dim", "hidden"), [(1, 8, 8), (4, 16, 64), (2, 128, 32)])
def test_permutation_is_hf_llama_permute(n_heads: int, head_dim: int, hidden: int) -> None:
    rng = np.random.default_rng(head_dim)
    w_meta = rng.normal(size=(n_heads * head_dim, hidden))
    w_hf = hf_permute(torch.from_numpy(w_meta), n_heads, n_heads * head_dim, hidden).numpy()
    p = rope_layout_permutation(head_dim)
    per_head = w_meta.reshape(n_heads, head_dim, hidden)[:, p, :].reshape(
        n_heads * head_dim, hidden
    )
    np.testing.assert_array_equal(w_hf, per_head)
    inv = rope_layout_inverse_permutation(head_dim)
    back = w_hf.reshape(n_heads, head_dim, hidden)[:, inv, :].reshape(n_heads * head_dim, hidden)
    np.testing.assert_array_equal(back, w_meta)
    # End to end: Meta's q (interleaved rope) and HF's q (half rope) give the same scores.
    x = rng.normal(size=(6, hidden))
    inv_freq, _ = rope_inv_freq(head_dim, 10000.0)
    pos = np.arange(6) * 37.0
    q_meta = (x @ w_meta.T).reshape(6, n_heads, head_dim).transpose(1, 0, 2)  # (heads, n, head_dim)
    q_hf = (x @ w_hf.T).reshape(6, n_heads, head_dim).transpose(1, 0, 2)
    for h in range(n_heads):
        s_meta = rope_scores(q_meta[h], q_meta[h], pos, pos, inv_freq, "interleaved")
        s_hf = rope_scores(q_hf[h], q_hf[h], pos, pos, inv_freq, "half")
        np.testing.assert_allclose(s_hf, s_meta, rtol=1e-12, atol=1e-10)


def test_permutation_values() -> None:
    np.testing.assert_array_equal(rope_layout_permutation(8), [0, 2, 4, 6, 1, 3, 5, 7])
    np.testing.assert_array_equal(rope_layout_inverse_permutation(8), [0, 4, 1, 5, 2, 6, 3, 7])
    assert rope_layout_permutation(8).dtype == np.int64
    x = np.arange(8.0)
    np.testing.assert_array_equal(
        x[rope_layout_permutation(8)][rope_layout_inverse_permutation(8)], x
    )


# ---------------------------------------------------------------------------------------------
# RoFormer long-term decay bound


def test_upper_bound_closed_forms_and_brute_force() -> None:
    inv_freq, _ = rope_inv_freq(128, 10000.0)
    b = rope_relative_upper_bound([0.0, 1.0, 50.0, 1234.5], inv_freq)
    assert b.shape == (4,) and b.dtype == np.float64
    assert b[0] == pytest.approx((64 + 1) / 2, rel=1e-15)  # |S_j(0)| = j, mean over j = 1..64
    for r, got in zip([1.0, 50.0, 1234.5], b[1:], strict=True):
        s = 0j
        total = 0.0
        for j in range(64):  # S_(j+1) = S_j + e^(i r theta_j)
            s += complex(math.cos(r * inv_freq[j]), math.sin(r * inv_freq[j]))
            total += abs(s)
        assert got == pytest.approx(total / 64, rel=1e-12)
    # symmetric in r and decaying on average (RoFormer Fig. 2)
    distances = np.arange(4000.0)
    curve = rope_relative_upper_bound(distances, inv_freq)
    np.testing.assert_allclose(rope_relative_upper_bound(-distances, inv_freq), curve, rtol=1e-12)
    assert curve[0] == curve.max()
    assert curve[10:100].mean() > curve[100:1000].mean() > curve[1000:].mean()


def test_upper_bound_chunking() -> None:
    rng = np.random.default_rng(0)
    inv_freq = rng.uniform(0, 1, 2**19)  # chunk = 2 rows
    r = np.array([0.0, 1.0, 2.0, 3.5, 10.0])
    got = rope_relative_upper_bound(r, inv_freq)
    s = np.cumsum(np.exp(1j * np.outer(r, inv_freq)), axis=1)
    np.testing.assert_allclose(got, np.abs(s).mean(axis=1), rtol=1e-12)


@PROPS
@given(rope_case())
def test_upper_bound_bounds_the_score(case: Any) -> None:
    # Abel summation: |sum_i h_i e^(i r theta_i)| <= max_i |h_(i+1) - h_i| * (d/2) * B(r),
    # h_i = q~_i conj(k~_i) with h_(d/2) = 0, and the RoPE score at m, n is Re of that sum at m - n.
    q, k, inv_freq, m, n = case
    half = inv_freq.size
    h = np.append((q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2]), 0)  # (d/2 + 1,)
    bound = np.abs(np.diff(h)).max() * half * rope_relative_upper_bound([m - n], inv_freq)[0]
    score = rope_scores(q[None], k[None], [m], [n], inv_freq, "interleaved")[0, 0]
    total = np.sum(h[:-1] * np.exp(1j * (m - n) * inv_freq))
    assert score == pytest.approx(total.real, abs=1e-10)
    assert abs(total) <= bound * (1 + 1e-12) + 1e-12


# ---------------------------------------------------------------------------------------------
# argument errors


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: apply_rope(np.ones((3, 7)), 3, np.ones(3)), "dim must be even"),
        (lambda: apply_rope(np.ones((3, 8)), 3, np.ones(3)), "inv_freq must have dim/2 = 4"),
        (lambda: apply_rope(np.ones((3, 8)), 4, np.ones(4)), "positions"),
        (
            lambda: apply_rope(np.ones((3, 8)), 3, np.ones(4), "complex"),
            "layout 'complex'.*interleaved, half",
        ),
        (lambda: apply_rope(np.float64(1.0), 1, np.ones(1)), "x must have shape"),
        (lambda: apply_rope(np.ones((1, 2)), 1, [np.nan]), "inv_freq"),
        (lambda: rope_angles(3, []), "inv_freq"),
        (lambda: rope_angles([], [1.0]), "positions"),
        (lambda: rope_layout_permutation(5), "dim must be even"),
        (lambda: rope_layout_inverse_permutation(0), "dim"),
        (lambda: rope_scores(np.ones((2, 4)), np.ones((2, 6)), 2, 2, np.ones(2)), "dim"),
        (lambda: rope_scores(np.ones(4), np.ones((2, 4)), 1, 2, np.ones(2)), "q and k must be 2-D"),
        (lambda: rotation_2d(float("inf")), "angle"),
        (lambda: rope_relative_upper_bound([], np.ones(2)), "distances"),
        (lambda: rope_relative_upper_bound([np.nan], np.ones(2)), "distances"),
    ],
)
def test_bad_arguments(call: Any, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        call()
