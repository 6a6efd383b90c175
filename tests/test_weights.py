"""Frequency use from the weights (item 2 of issue 40): the math of encodings/rope_use.py in closed
form and properties, and the whole reading against transformers 5.23.0's own q/k projections and
rotary on tiny random checkpoints it saves (Llama, Llama with grouped-query attention, Qwen2 with
q/k biases, Gemma 3, Phi-2 with partial rotary), on a GGUF written from one of them, and on the
real SmolLM2 against transformers' GGUF loading."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from gguf_files import hf_state_to_gguf, smollm2_file, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.content.weights import summarize, weights_reading
from posecards.encodings.critical_dim import critical_dimension
from posecards.encodings.rope import rope_pair_slots
from posecards.encodings.rope_base_bound import base_holds, minimum_base
from posecards.encodings.rope_use import (
    bias_score,
    kv_head_of,
    pair_cosines,
    pair_norms,
    pair_rows,
    shares,
)
from posecards.model.checkpoint import CheckpointError, open_checkpoint
from posecards.model.gguf import unpermute_rows
from posecards.model.positions import find_positions
from posecards.model.weights import stored_layout

T.logging.set_verbosity_error()


# ---------------------------------------------------------------- the math


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize(("head_dim", "rotated"), [(8, 8), (10, 4), (64, 64)])
def test_pair_rows_are_the_pairs_of_rope_pair_slots(
    layout: str, head_dim: int, rotated: int
) -> None:
    rows = pair_rows(rotated, layout)
    slots = rope_pair_slots(head_dim, rotated, layout)
    for k, (a, b) in enumerate(rows):
        assert slots[a] == slots[b] == k and a < b
    assert sorted(rows.reshape(-1).tolist()) == list(range(rotated))


def test_pair_norm_and_cosine_closed_forms() -> None:
    # one head, two pairs ("half": rows (0, 2) and (1, 3)), inputs of size 2
    w = np.array([[[3.0, 0.0], [1.0, 1.0], [0.0, 4.0], [2.0, 2.0]]])
    rows = pair_rows(4, "half")
    np.testing.assert_allclose(pair_norms(w, rows), [[5.0, math.sqrt(10.0)]])
    np.testing.assert_allclose(pair_cosines(w, rows), [[0.0, 1.0]])
    z = np.zeros((1, 4, 2))
    assert np.isnan(pair_cosines(z, rows)).all()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(["half", "interleaved"]))
def test_pair_norms_are_rotation_invariant(seed: int, layout: str) -> None:
    """Turning each pair by any angle (what RoPE does at a position) keeps its norm: the rows of
    W and of R W give the same pair norms, and cosines measured between the same two rows
    change (so they describe W, not a position)."""
    rng = np.random.default_rng(seed)
    d, d_in = 8, 5
    w = rng.standard_normal((2, d, d_in))
    rows = pair_rows(d, layout)
    angle = rng.uniform(0, 2 * np.pi, size=d // 2)
    r = w.copy()
    a, b = rows[:, 0], rows[:, 1]
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    r[:, a] = w[:, a] * c - w[:, b] * s
    r[:, b] = w[:, b] * c + w[:, a] * s
    np.testing.assert_allclose(pair_norms(r, rows), pair_norms(w, rows), rtol=1e-12)


def test_bias_score_by_hand() -> None:
    # one pair, θ = π/2: b_q = (1, 0), b_k = (0, 1); query at m, key at n = 0: R(mθ) b_q · b_k
    rows = pair_rows(2, "half")
    d = np.arange(4, dtype=np.float64)
    got = bias_score(np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([np.pi / 2]), rows, d)
    np.testing.assert_allclose(got, [0.0, 1.0, 0.0, -1.0], atol=1e-15)


def test_gqa_mapping_is_transformers_repeat_kv() -> None:
    from transformers.models.llama.modeling_llama import repeat_kv

    for heads, kv in ((9, 3), (8, 8), (8, 1), (12, 4)):
        x = torch.arange(kv, dtype=torch.float64).reshape(1, kv, 1, 1)
        ref = repeat_kv(x, heads // kv).reshape(-1).long().numpy()
        np.testing.assert_array_equal(kv_head_of(heads, kv), ref)
    with pytest.raises(ValueError, match="multiple"):
        kv_head_of(9, 2)


def test_shares_sum_to_one() -> None:
    v = np.array([[1.0, 3.0], [0.0, 0.0]])
    np.testing.assert_allclose(shares(v)[0], [0.25, 0.75])
    assert np.isnan(shares(v)[1]).all()


def test_critical_dimension_closed_form() -> None:
    # Liu et al.: 2 ceil(d/2 log_b(T / 2π)); Llama 2 (d 128, b 1e4, T 4096) gives 92
    assert (
        critical_dimension(128, 10000.0, 4096)
        == 2 * math.ceil(64 * math.log(4096 / (2 * math.pi)) / math.log(1e4))
        == 92
    )
    # the pairs it counts are those whose wavelength 2π b^(2k/d) fits in T
    for d, b, t in ((64, 1e5, 8192), (128, 5e5, 8192), (64, 1e4, 100)):
        k = np.arange(d // 2)
        fits = int(np.count_nonzero(2 * np.pi * b ** (2 * k / d) <= t))
        assert critical_dimension(d, b, t) in (2 * fits, 2 * fits + 2)
    assert critical_dimension(64, 1e4, 3) == 0  # no pair turns within 3 positions
    assert critical_dimension(8, 2.0, 10**9) == 8


def test_minimum_base_is_the_first_on_its_grid() -> None:
    for d, L in ((16, 256), (64, 1024), (128, 2048)):
        b = minimum_base(d, L)
        assert base_holds(L, d, b)
        assert not base_holds(L, d, b / 1.01)
        # brute force: B(m) >= 0 for all m < L at b, and some m < L where it fails just below
        k = np.arange(d // 2)
        m = np.arange(L, dtype=np.float64)[:, None]
        assert (np.cos(m * b ** (-2 * k / d)).sum(axis=1) >= 0).all()
        assert (np.cos(m * (b / 1.01) ** (-2 * k / d)).sum(axis=1) < 0).any()
    # a longer context needs a larger base
    assert minimum_base(64, 4096) > minimum_base(64, 1024)


# ---------------------------------------------------------------- against transformers


def _tiny(kind: str, seed: int = 0) -> Any:
    torch.manual_seed(seed)
    common = dict(vocab_size=16, intermediate_size=8, num_hidden_layers=2)
    if kind == "llama":
        return T.LlamaForCausalLM(T.LlamaConfig(**common, hidden_size=48, num_attention_heads=4))
    if kind == "llama-gqa":
        cfg = T.LlamaConfig(**common, hidden_size=64, num_attention_heads=8, num_key_value_heads=2)
        return T.LlamaForCausalLM(cfg)
    if kind == "qwen2":
        cfg = T.Qwen2Config(**common, hidden_size=48, num_attention_heads=6, num_key_value_heads=2)
        return T.Qwen2ForCausalLM(cfg)
    if kind == "gemma3":
        cfg = T.Gemma3TextConfig(  # 6 layers: 5 sliding (base 10,000), then 1 full (1e6)
            **{**common, "num_hidden_layers": 6},
            hidden_size=32,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=16,
        )
        return T.Gemma3ForCausalLM(cfg)
    if kind == "phi":
        cfg = T.PhiConfig(
            **common, hidden_size=40, num_attention_heads=2, partial_rotary_factor=0.4
        )
        return T.PhiForCausalLM(cfg)
    raise AssertionError(kind)


def _randomize(model: Any, seed: int) -> None:
    """Norm gains and biases away from their initial 1 / 0, so that folding them is tested."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("norm.weight", "layernorm.weight", ".bias")):
                p.copy_(torch.rand(p.shape, generator=g) + 0.5)


def _captured_rotary(
    model: Any, layer: int, hidden: torch.Tensor, pos: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """transformers' own q and k after its projection and rotary, for ``hidden`` (already through
    the input norm) at positions ``pos``: apply_rotary_pos_emb is wrapped to record its output."""
    mod = importlib.import_module(type(model).__module__)
    original: Callable[..., Any] = mod.apply_rotary_pos_emb
    seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def record(*args: Any, **kw: Any) -> Any:
        out = original(*args, **kw)
        seen.append(out)
        return out

    mod.apply_rotary_pos_emb = record
    try:
        base = model.model
        attn = base.layers[layer].self_attn
        ids = pos[None, :]
        rotary = base.rotary_emb
        try:
            pe = rotary(hidden, ids)
        except TypeError:
            pe = rotary(
                hidden, ids, attn.layer_type if hasattr(attn, "layer_type") else "full_attention"
            )
        with torch.no_grad():
            attn(hidden_states=hidden, position_embeddings=pe, attention_mask=None)
    finally:
        mod.apply_rotary_pos_emb = original
    q, k = seen[0]
    return q[0].double(), k[0].double()  # (heads, seq, rotated), (kv, seq, rotated)


CASES = ["llama", "llama-gqa", "qwen2", "gemma3", "phi"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    root = tmp_path_factory.mktemp("weights")
    out = {}
    for i, kind in enumerate(CASES):
        model = _tiny(kind, i)
        _randomize(model, i)
        model.eval()
        model.save_pretrained(root / kind)
        out[kind] = (root / kind, model)
    return out


@pytest.mark.parametrize("kind", CASES)
def test_pair_norms_equal_transformers_projection_and_rotary(
    saved: dict[str, tuple[Path, Any]], kind: str
) -> None:
    """Feed every basis vector of the input through transformers' input norm (Phi: its γ alone,
    LayerNorm's β left out as posecards does), q/k projections and rotary at distinct non-zero
    positions: per pair, the sum of squares over the inputs is the pair norm posecards reads
    from the weights, and the rows left unrotated are reported apart."""
    folder, model = saved[kind]
    ckpt = open_checkpoint(folder)
    found = find_positions(ckpt)
    w = weights_reading(ckpt, found)
    cfg = model.config
    d_in = cfg.hidden_size
    for li in range(cfg.num_hidden_layers):
        layer = model.model.layers[li]
        # zero the biases for this check (the bias score is checked apart)
        attn = layer.self_attn
        saved_bias = {
            n: p.detach().clone() for n, p in attn.named_parameters() if n.endswith("bias")
        }
        with torch.no_grad():
            for n, p in attn.named_parameters():
                if n.endswith("bias"):
                    p.zero_()
        try:
            c = 3.0
            eye = c * torch.eye(d_in)[None]  # (1, d_in, d_in): token j is c·e_j
            if kind == "phi":
                hidden = (
                    layer.input_layernorm.weight.detach()[None, None, :] * torch.eye(d_in)[None]
                )
                scale = 1.0
            else:
                hidden = layer.input_layernorm(eye)  # RMSNorm: e_j · c / rms · γ_j
                eps = (
                    getattr(layer.input_layernorm, "eps", None)
                    or layer.input_layernorm.variance_epsilon
                )
                scale = c / math.sqrt(c * c / d_in + eps)
            pos = torch.arange(d_in) * 13 + 5
            for qk_norm in (getattr(attn, "q_norm", None), getattr(attn, "k_norm", None)):
                if qk_norm is not None:  # QK-norm (Gemma 3): its gain alone, without the RMS
                    qk_norm._norm = lambda x: x  # division posecards does not model
            q, k = _captured_rotary(model, li, hidden.float(), pos)
            rot = q.shape[-1]
            half = rot // 2
            ref_q = torch.sqrt((q[..., :half] ** 2 + q[..., half:] ** 2).sum(dim=1)).numpy() / scale
            ref_k = torch.sqrt((k[..., :half] ** 2 + k[..., half:] ** 2).sum(dim=1)).numpy() / scale
        finally:
            for name in ("q_norm", "k_norm"):
                if hasattr(attn, name):
                    vars(getattr(attn, name)).pop("_norm", None)
            with torch.no_grad():
                for n, p in attn.named_parameters():
                    if n in saved_bias:
                        p.copy_(saved_bias[n])
        assert w.rotated_dim == rot
        np.testing.assert_allclose(w.q_norm[li], ref_q, rtol=2e-5)
        np.testing.assert_allclose(w.k_norm[li], ref_k, rtol=2e-5)
    assert w.layout == "half" and w.stored_layout == "half"
    assert w.qk_norm == (kind == "gemma3")
    if kind == "gemma3":  # two RoPEs by layer type: the card shows full attention's
        assert w.layer_rope == ("sliding_attention",) * 5 + ("full_attention",)
        assert w.rope == "full_attention"
    if kind == "phi":
        assert w.rotated_dim == 8 and w.head_dim == 20
        assert (w.q_unrotated > 0).all()
    else:
        assert (w.q_unrotated == 0).all()


def test_qwen2_bias_score_equals_rotated_biases(saved: dict[str, tuple[Path, Any]]) -> None:
    """q_proj(0) = b_q and k_proj(0) = b_k, turned by transformers' rotary at positions 0 .. D−1:
    q at m · k at 0 is posecards' b_qᵀ R(mθ) b_k, head by head (with GQA's key heads)."""
    folder, model = saved["qwen2"]
    w = weights_reading(open_checkpoint(folder), find_positions(open_checkpoint(folder)))
    assert w.bias is not None
    n = 64
    for li in range(2):
        hidden = torch.zeros(1, n, model.config.hidden_size)
        q, k = _captured_rotary(model, li, hidden, torch.arange(n))
        for h in range(model.config.num_attention_heads):
            g = int(w.kv_head[h])
            ref = (q[h] @ k[g][0]).numpy()  # (n,) query at m, key at 0
            scale = float(np.abs(ref).max())
            np.testing.assert_allclose(w.bias[li, h, :n], ref, atol=3e-6 * scale)
    llama = weights_reading(
        open_checkpoint(saved["llama"][0]), find_positions(open_checkpoint(saved["llama"][0]))
    )
    assert llama.bias is None


def test_pair_cosines_from_transformers_rows(saved: dict[str, tuple[Path, Any]]) -> None:
    folder, model = saved["llama-gqa"]
    w = weights_reading(open_checkpoint(folder), find_positions(open_checkpoint(folder)))
    layer = model.model.layers[1]
    wq = (
        (layer.self_attn.q_proj.weight.double() * layer.input_layernorm.weight.double())
        .detach()
        .numpy()
    )
    d = model.config.head_dim
    wq = wq.reshape(-1, d, wq.shape[-1])
    a, b = wq[:, : d // 2], wq[:, d // 2 :]
    ref = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    np.testing.assert_allclose(w.q_cos[1], ref, rtol=1e-10)


def test_gguf_rows_in_file_order_give_the_hf_numbers(
    saved: dict[str, tuple[Path, Any]], tmp_path: Path
) -> None:
    """The named choice: a llama.cpp-permuted file is read in the "interleaved" order without
    de-permuting, and gives the numbers of the Hugging Face checkpoint it was made from."""
    folder, model = saved["llama-gqa"]
    cfg = model.config
    tensors = hf_state_to_gguf(model.state_dict(), 8, 2, permute=True)
    meta = {
        "block_count": 2,
        "context_length": cfg.max_position_embeddings,
        "embedding_length": 64,
        "feed_forward_length": 8,
        "attention.head_count": 8,
        "attention.head_count_kv": 2,
        "rope.freq_base": float(cfg.rope_parameters["rope_theta"]),
        "rope.dimension_count": 8,
        "vocab_size": 16,
    }
    path = write_gguf(tmp_path / "gqa.gguf", "llama", meta, tensors)
    g = open_checkpoint(path)
    assert stored_layout(g, "half") == "interleaved"
    a = weights_reading(g, find_positions(g))
    b = weights_reading(open_checkpoint(folder), find_positions(open_checkpoint(folder)))
    assert a.stored_layout == "interleaved" and b.stored_layout == "half"
    for field in ("q_norm", "k_norm", "q_cos", "k_cos", "use"):
        np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-6, err_msg=field)
    # and reading the raw file rows in the "half" order would be wrong
    raw = np.stack(
        [unpermute_rows(np.eye(64), 8)]
    )  # not a reading: the permutation is not identity
    assert not np.array_equal(raw[0], np.eye(64))


def test_smollm2_pair_numbers_equal_transformers_gguf_loading(
    smollm2_hf_tensors: dict[str, np.ndarray],
) -> None:
    """The real file: posecards reads the permuted rows as "interleaved" pairs; transformers
    de-permutes them (LlamaTensorProcessor) into rotate_half's (k, k + 32). Same pair norms and
    cosines, to float32 rounding. (transformers' loading of the file: conftest.py's
    smollm2_hf_tensors, loaded once per run.)"""
    path = smollm2_file()
    ckpt = open_checkpoint(path)
    w = weights_reading(ckpt, find_positions(ckpt))
    assert (w.heads, w.kv_heads, w.head_dim, len(w.layers)) == (9, 3, 64, 30)
    tensors = smollm2_hf_tensors
    rows = pair_rows(64, "half")
    for li in (0, 7, 29):
        p = f"model.layers.{li}."
        gamma = tensors[p + "input_layernorm.weight"].astype(np.float64)
        wq = tensors[p + "self_attn.q_proj.weight"].astype(np.float64) * gamma
        wk = tensors[p + "self_attn.k_proj.weight"].astype(np.float64) * gamma
        np.testing.assert_allclose(w.q_norm[li], pair_norms(wq.reshape(9, 64, -1), rows), rtol=1e-6)
        np.testing.assert_allclose(w.k_norm[li], pair_norms(wk.reshape(3, 64, -1), rows), rtol=1e-6)
        np.testing.assert_allclose(
            w.q_cos[li], pair_cosines(wq.reshape(9, 64, -1), rows), atol=1e-6
        )
    s = summarize(w)
    assert s.crit_dim == 40 and s.top_pair.shape == (30,)


def test_a_model_without_rope_is_refused(tmp_path: Path) -> None:
    from tiny_models import gpt2_model

    gpt2_model(0).save_pretrained(tmp_path / "gpt2")
    ckpt = open_checkpoint(tmp_path / "gpt2")
    with pytest.raises(CheckpointError, match="uses learned positions, not RoPE"):
        weights_reading(ckpt, find_positions(ckpt))


def test_a_tensor_of_unexpected_shape_is_refused(tmp_path: Path) -> None:
    model = _tiny("llama")
    state = {k: v.clone() for k, v in model.state_dict().items()}
    state["model.layers.1.self_attn.k_proj.weight"] = torch.zeros(7, 48)
    from safetensors.torch import save_file

    (tmp_path / "m").mkdir()
    model.config.save_pretrained(tmp_path / "m")
    save_file(state, tmp_path / "m" / "model.safetensors")
    ckpt = open_checkpoint(tmp_path / "m")
    with pytest.raises(CheckpointError, match=r"k_proj.weight' has shape \(7, 48\)"):
        weights_reading(ckpt, find_positions(ckpt))


def test_a_tensor_with_nan_is_refused(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    model = _tiny("llama")
    state = {k: v.clone() for k, v in model.state_dict().items()}
    state["model.layers.0.self_attn.q_proj.weight"][3, 5] = float("nan")
    (tmp_path / "m").mkdir()
    model.config.save_pretrained(tmp_path / "m")
    save_file(state, tmp_path / "m" / "model.safetensors")
    ckpt = open_checkpoint(tmp_path / "m")
    with pytest.raises(CheckpointError, match="q_proj.weight' holds NaN"):
        weights_reading(ckpt, find_positions(ckpt))


# ---------------------------------------------------------------- streamed: as stored, by blocks


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    heads=st.integers(1, 3),
    pairs=st.integers(1, 9),
    extra=st.integers(0, 3),
    d_in=st.integers(1, 40),
    layout=st.sampled_from(["half", "interleaved"]),
    block=st.sampled_from([16, 48, 200, 384 * 1024]),
)
def test_row_stats_by_blocks_equal_the_direct_float64_sums(
    seed: int, heads: int, pairs: int, extra: int, d_in: int, layout: str, block: int
) -> None:
    """However many pairs a block holds (one to all), with rows that do not rotate (partial
    rotary), from float32 heads given as an array or as a sequence, or as bfloat16 patterns: sq
    and dot are the float64 sums of (W diag(γ))'s rows, to the last few bits."""
    import posecards.encodings.rope_use as ru

    rng = np.random.default_rng(seed)
    head_dim = 2 * pairs + extra
    w = rng.standard_normal((heads, head_dim, d_in)).astype(np.float32)
    bits = (w.view(np.uint32) >> 16).astype(np.uint16)  # bfloat16 patterns (truncated)
    w = (bits.astype(np.uint32) << 16).view(np.float32)  # the same values as float32
    gamma = rng.uniform(0.1, 3.0, d_in)
    rows = pair_rows(2 * pairs, layout)
    wg = w.astype(np.float64) * gamma  # (heads, head_dim, d_in)
    sq_ref = (wg * wg).sum(axis=2)
    dot_ref = (wg[:, rows[:, 0]] * wg[:, rows[:, 1]]).sum(axis=2)
    saved, ru.BLOCK_BYTES = ru.BLOCK_BYTES, block
    try:
        sq, dot = ru.row_stats(w, rows, gamma)
        sq2, dot2 = ru.row_stats([w[h] for h in range(heads)], rows, gamma)
        sq3, dot3 = ru.row_stats(bits, rows, gamma, bfloat16=True)  # widened block by block
    finally:
        ru.BLOCK_BYTES = saved
    np.testing.assert_allclose(sq, sq_ref, rtol=1e-13)
    np.testing.assert_allclose(dot, dot_ref, rtol=1e-12, atol=1e-13 * sq_ref.max())
    np.testing.assert_array_equal(sq2, sq)
    np.testing.assert_array_equal(dot2, dot)
    np.testing.assert_array_equal(sq3, sq)  # bit for bit: the same float64 values, same sums
    np.testing.assert_array_equal(dot3, dot)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_checkpoints_are_read_as_stored_and_widened_exactly(
    tmp_path: Path, dtype: torch.dtype
) -> None:
    """A Qwen2 (q/k biases, GQA) saved by transformers in bfloat16 or float16: its q/k rows stay at
    2 bytes a value until each head is widened (BF16 patterns shifted into float32), and the pair
    norms and cosines are those of torch's own widening of the same weights, in float64."""
    from posecards.model.checkpoint import read_stored
    from posecards.model.weights import read_layer

    model = _tiny("qwen2", 3)
    _randomize(model, 3)
    model = model.to(dtype)
    model.save_pretrained(tmp_path / "m")
    ckpt = open_checkpoint(tmp_path / "m")
    found = find_positions(ckpt)
    w = weights_reading(ckpt, found)
    rows = pair_rows(8, "half")
    for li in range(2):
        layer = model.model.layers[li]
        gamma = layer.input_layernorm.weight.detach().double().numpy()
        for proj, heads, got_norm, got_cos in (
            (layer.self_attn.q_proj, 6, w.q_norm, w.q_cos),
            (layer.self_attn.k_proj, 2, w.k_norm, w.k_cos),
        ):
            ref = (proj.weight.detach().double().numpy() * gamma).reshape(heads, 8, -1)
            a, b = ref[:, rows[:, 0]], ref[:, rows[:, 1]]  # (heads, pairs, d_in)
            na, nb = np.linalg.norm(a, axis=2), np.linalg.norm(b, axis=2)
            np.testing.assert_allclose(got_norm[li], np.hypot(na, nb), rtol=1e-13)
            np.testing.assert_allclose(got_cos[li], (a * b).sum(axis=2) / na / nb, rtol=1e-12)
    stored = read_stored(ckpt, "model.layers.0.self_attn.q_proj.weight")
    assert stored.values.itemsize == 2 and stored.bfloat16 == (dtype == torch.bfloat16)
    lw = read_layer(ckpt, found.reading, 0, 6, 2, 8)  # type: ignore[union-attr]
    q = model.model.layers[0].self_attn.q_proj.weight.detach().float().numpy().reshape(6, 8, -1)
    for h in range(6):
        np.testing.assert_array_equal(lw.q[h], q[h])  # bit for bit: torch's widening


def _owner(a: Any) -> Any:
    """The object an array's memory finally belongs to (bytes, or the mmap under a memoryview)."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a.obj if isinstance(a, memoryview) else a


def test_large_tensors_are_mapped_from_the_page_cache_and_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A safetensors tensor of MAP_BYTES or more is a read-only map of its file (no copy out of
    the page cache), a smaller one is read: the same values either way, bit for bit, and the same
    weights reading; a file cut short after it was opened is refused with one line."""
    import mmap

    from safetensors.torch import save_file

    import posecards.model.checkpoint as ckpt_mod
    from posecards.model.checkpoint import MAP_BYTES, read_stored

    gen = torch.Generator().manual_seed(7)
    big = torch.randn(MAP_BYTES // 2 // 1024, 1024, generator=gen).to(torch.bfloat16)  # MAP_BYTES
    small = torch.randn(3, 5, generator=gen)
    path = tmp_path / "t.safetensors"
    save_file({"big": big, "small": small}, str(path))
    ckpt = open_checkpoint(path)
    got = read_stored(ckpt, "big")
    assert isinstance(_owner(got.values), mmap.mmap) and not got.values.flags.writeable
    assert isinstance(_owner(read_stored(ckpt, "small").values), bytes)
    np.testing.assert_array_equal(got.values, big.view(torch.int16).numpy().view(np.uint16))
    np.testing.assert_array_equal(read_stored(ckpt, "small").values, small.numpy())
    del got
    with path.open("r+b") as fh:  # cut inside "big" after the header was read
        fh.truncate(ckpt.tensors["big"].end - 1)
    with pytest.raises(CheckpointError, match="ends inside tensor 'big'"):
        read_stored(ckpt, "big")

    # a whole weights reading: every tensor mapped, or every tensor read, gives the same bits
    model = _tiny("qwen2", 5)
    _randomize(model, 5)
    model.to(torch.bfloat16).save_pretrained(tmp_path / "m")
    m = open_checkpoint(tmp_path / "m")
    readings = []
    for limit in (0, 1 << 62):
        monkeypatch.setattr(ckpt_mod, "MAP_BYTES", limit)
        readings.append(weights_reading(m, find_positions(m)))
    for name in ("q_norm", "k_norm", "q_cos", "k_cos", "use", "q_unrotated", "bias"):
        a, b = (getattr(r, name) for r in readings)
        assert a.tobytes() == b.tobytes(), name


def test_layers_are_read_one_ahead_in_order_and_errors_arrive_when_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """iter_layers reads layer j + 1 in its reader thread while the caller holds layer j, never
    further ahead; the layers come in order, equal to reading them one by one, and a layer that
    cannot be read raises its own error when the caller asks for it, after the layers before."""
    import threading

    import posecards.model.weights as mw

    model = _tiny("gemma3", 9)  # 6 rotating layers
    _randomize(model, 9)
    model.save_pretrained(tmp_path / "m")
    ckpt = open_checkpoint(tmp_path / "m")
    reading = find_positions(ckpt).reading
    assert reading is not None
    plain = mw.read_layer
    events: list[tuple[str, int]] = []

    def read_layer(*args: Any) -> Any:
        assert threading.current_thread().name.startswith("posecards-read")
        events.append(("read", args[2]))
        if args[2] == 4:
            raise CheckpointError("layer 4 is broken")
        return plain(*args)

    monkeypatch.setattr(mw, "read_layer", read_layer)
    got = []
    with pytest.raises(CheckpointError, match="layer 4 is broken"):
        for lw in mw.iter_layers(ckpt, reading, 2, 1, 16):
            events.append(("yield", lw.index))
            one = plain(ckpt, reading, lw.index, 2, 1, 16)  # read alone, in this thread
            for h in range(2):
                np.testing.assert_array_equal(lw.q[h], one.q[h])
            np.testing.assert_array_equal(lw.k[0], one.k[0])
            got.append(lw.index)
    assert got == [0, 1, 2, 3]
    for i in range(3):  # layer i + 2 is read only after the caller has had layer i
        assert events.index(("read", i + 2)) > events.index(("yield", i))
    assert ("read", 5) not in events  # nothing read past the broken layer


@pytest.mark.parametrize(
    ("dtype", "bad", "zero_gain"),
    [
        (torch.bfloat16, float("inf"), False),
        (torch.bfloat16, float("nan"), False),
        (torch.bfloat16, float("-inf"), True),
        (torch.bfloat16, float("nan"), True),
        (torch.float16, float("nan"), False),
        (torch.float16, float("inf"), True),
        (torch.float32, float("-inf"), False),
    ],
)
def test_a_nan_in_a_bfloat16_weight_is_refused(
    tmp_path: Path, dtype: torch.dtype, bad: float, zero_gain: bool
) -> None:
    """A NaN or ±inf in a half-precision or float32 weight is refused with one line, also where
    the input norm's gain of its column is 0 (the reductions, checked instead of every weight,
    weigh that column by γ² = 0)."""
    from safetensors.torch import save_file

    model = _tiny("llama").to(dtype)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    state["model.layers.1.self_attn.k_proj.weight"][9, 2] = bad
    if zero_gain:
        state["model.layers.1.input_layernorm.weight"][2] = 0.0
    (tmp_path / "m").mkdir()
    model.config.save_pretrained(tmp_path / "m")
    save_file(state, tmp_path / "m" / "model.safetensors")
    ckpt = open_checkpoint(tmp_path / "m")
    with pytest.raises(CheckpointError, match="k_proj.weight' holds NaN or infinite"):
        weights_reading(ckpt, find_positions(ckpt))
