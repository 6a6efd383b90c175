"""The math behind card 7's pitfalls: properties (hypothesis) and, for every panel's number, the
named reference implementation.

1 pair layout      transformers' rotate_half / apply_rotary_pos_emb, convert_llama_weights_to_hf's
                   permute, Meta's complex rotation
2 precision        torch's own bfloat16 / float16 rounding
3 ALiBi            Press et al.'s get_slopes, BLOOM's build_alibi_tensor
4 YaRN magnitude   transformers' _compute_yarn_parameters, DeepSeek-V3's yarn_apply_mscale
5 dynamic NTK      transformers' dynamic_rope_update (LlamaRotaryEmbedding with rope_type dynamic)
6 position ids     transformers' generation (_prepare_position_ids_for_generation) and its
                   apply_rotary_pos_emb at those ids
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st
from test_alibi import _press_get_slopes
from test_rope import hf_permute, llama_config, meta_apply_rotary_emb
from test_rope_scaling import hf_rope
from transformers.generation.utils import GenerationMixin
from transformers.models.deepseek_v3.modeling_deepseek_v3 import yarn_apply_mscale
from transformers.models.llama.modeling_llama import (
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
)

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card7 import (
    ALIBI_HEADS,
    DYN_CALLS,
    DYN_FACTOR,
    DYN_MAX,
    HEAD_DIM,
    PREC_POSITIONS,
    YARN_ROPE_DIM,
    YARN_SCALING,
    compute,
)
from posecards.encodings.alibi import alibi_geometric_slopes, alibi_slopes
from posecards.encodings.dynamic_ntk import dynamic_ntk_base, dynamic_ntk_call_lengths
from posecards.encodings.position_ids import position_ids_from_attention_mask
from posecards.encodings.precision import (
    FLOAT_DTYPES,
    SIGNIFICAND_BITS,
    first_inexact_integer,
    round_to_dtype,
)
from posecards.encodings.rope import (
    apply_rope,
    rope_layout_permutation,
    rope_pair_slots,
    rope_scores,
)
from posecards.encodings.rope_scaling import rope_inv_freq

transformers.logging.set_verbosity_error()
PROPS = settings(max_examples=40, deadline=None)
TORCH_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


@pytest.fixture(scope="module")
def card() -> CardContent:
    return compute(PEParams())


# --- 1 pair layout --------------------------------------------------------------------------------


@PROPS
@given(st.integers(1, 64))
def test_permuted_channels_turn_at_their_trained_speed(half: int) -> None:
    """Slot c of Meta's layout and slot P^-1(c) of rotate_half's belong to the same pair, so the
    permutation gives every channel back its trained speed (the card's channel speeds)."""
    p = rope_layout_permutation(2 * half)
    inter = rope_pair_slots(2 * half, 2 * half, "interleaved")
    half_slots = rope_pair_slots(2 * half, 2 * half, "half")
    np.testing.assert_array_equal(inter[p], half_slots)
    np.testing.assert_array_equal(half_slots[np.argsort(p)], inter)
    # without it only the first and the last slot agree
    assert int(np.sum(inter == half_slots)) == 2 and inter[0] == half_slots[0] == 0


def test_half_slots_are_what_hf_rotates_each_slot_by() -> None:
    """transformers' LlamaRotaryEmbedding builds cos = cos(cat(freqs, freqs)): slot c of the head
    turns by inv_freq[c mod d/2] per position, the "half" speeds."""
    d = 16
    rot = LlamaRotaryEmbedding(llama_config(d, {"rope_type": "default", "rope_theta": 10000.0}))
    x = torch.zeros(1, 1, d)
    cos, sin = rot(x, torch.tensor([[1]]))
    inv, _ = rope_inv_freq(d, 10000.0)
    angle = np.arctan2(sin[0, 0].double().numpy(), cos[0, 0].double().numpy())  # at position 1
    np.testing.assert_allclose(angle, inv[rope_pair_slots(d, d, "half")], rtol=1e-6)


def test_layout_scores_against_hf_and_meta(card: CardContent) -> None:
    """Meta's complex rotation on Meta's weights (the reference), HF's rotate_half on the same
    weights (the mistake) and on the weights permuted by convert_llama_weights_to_hf (the rule)."""
    rng = np.random.default_rng(3)
    n, d = 9, HEAD_DIM
    w_meta = rng.normal(size=(d, 24))  # one head's q (and k) projection rows, Meta's order
    x = rng.normal(size=(n, 24))
    pos = torch.arange(n, dtype=torch.float64) * 11.0
    inv, _ = rope_inv_freq(d, 10000.0)
    q_meta = torch.from_numpy(x @ w_meta.T)  # (n, d)
    ref_q = meta_apply_rotary_emb(q_meta, pos, torch.from_numpy(inv))
    ref = (ref_q @ ref_q.T).numpy()  # Meta: scores of q against itself as keys

    def hf_scores(w: np.ndarray) -> np.ndarray:
        q = torch.from_numpy(x @ w.T)[None, None]  # (1, 1, n, d)
        ang = torch.outer(pos, torch.from_numpy(inv))
        emb = torch.cat((ang, ang), dim=-1)[None]
        qr, _ = apply_rotary_pos_emb(q, q, emb.cos(), emb.sin())
        return (qr[0, 0] @ qr[0, 0].T).numpy()

    w_hf = hf_permute(torch.from_numpy(w_meta), 1, d, 24).numpy()
    np.testing.assert_allclose(hf_scores(w_hf), ref, atol=1e-9 * np.abs(ref).max())
    wrong = hf_scores(w_meta)
    ours = rope_scores(x @ w_meta.T, x @ w_meta.T, pos.numpy(), pos.numpy(), inv, "half")
    np.testing.assert_allclose(ours, wrong, atol=1e-9 * np.abs(ref).max())
    off = ~np.eye(n, dtype=bool)  # a query against another token (the diagonal is |q|^2 either way)
    assert np.sqrt(np.mean((wrong - ref)[off] ** 2)) > 0.3 * np.sqrt(np.mean(ref[off] ** 2))
    # the card: the same three computations on its own vectors
    data = card.figures["c7-layout"]
    r, w, f = data.reference, data.not_permuted, data.permuted
    scale = np.sqrt(np.mean(r**2))
    assert card.numbers["layout_err_wrong"] == pytest.approx(
        np.sqrt(np.mean((w - r) ** 2)) / scale, rel=1e-12
    )
    assert card.numbers["layout_err_fixed"] == pytest.approx(np.max(np.abs(f - r)) / scale)
    assert card.numbers["layout_err_fixed"] < 1e-13 < 0.5 < card.numbers["layout_err_wrong"]
    speeds = card.figures["c7-channel-speeds"]
    assert card.numbers["layout_right_channels"] == 2  # slot 0 and slot d-1 only
    np.testing.assert_array_equal(speeds.permuted, speeds.trained)
    assert card.numbers["layout_worst_speed"] == pytest.approx(10000.0 ** (32 / 64), rel=1e-12)


# --- 2 precision ----------------------------------------------------------------------------------


@PROPS
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=32), min_size=1, max_size=50),
    st.sampled_from(FLOAT_DTYPES),
)
def test_round_to_dtype_is_torchs_rounding(values: list[float], dtype: str) -> None:
    x = np.asarray(values, dtype=np.float32)
    ref = torch.from_numpy(x).to(TORCH_DTYPES[dtype]).double().numpy()
    np.testing.assert_array_equal(round_to_dtype(x, dtype), ref)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_small_numbers_and_specials_round_like_torch(dtype: str) -> None:
    x = np.array(
        [0.0, -0.0, 1e-8, 6e-5, 1.15e-4, 2.0**-140, 65504.0, 65520.0, 1e30, np.inf, -np.inf],
        dtype=np.float32,
    )
    ref = torch.from_numpy(x).to(TORCH_DTYPES[dtype]).double().numpy()
    np.testing.assert_array_equal(round_to_dtype(x, dtype), ref)
    assert np.isnan(round_to_dtype([np.nan], dtype)[0])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_first_inexact_integer_against_torch(dtype: str) -> None:
    n = first_inexact_integer(dtype)
    assert n == 2 ** SIGNIFICAND_BITS[dtype] + 1
    ints = torch.arange(n - 3, n + 1, dtype=torch.float64)  # exact in float64
    back = ints.to(TORCH_DTYPES[dtype]).double()
    assert torch.equal(back[:3], ints[:3]) and back[3].item() == n - 1  # ties to even


def test_precision_numbers_against_torch(card: CardContent) -> None:
    """Positions 0..8191 cast as gpt-neox#1003 and transformers#29285 describe: torch's own
    bfloat16/float16, the first position each loses, the distinct values, the worst error."""
    nums = card.numbers
    p = torch.arange(PREC_POSITIONS, dtype=torch.float32)
    for dt in ("bfloat16", "float16"):
        stored = p.to(TORCH_DTYPES[dt]).float()
        assert nums[f"prec_first_{dt}"] == int((stored != p).nonzero()[0].item())
        assert nums[f"prec_distinct_{dt}"] == stored.unique().numel()
        assert nums[f"prec_worst_{dt}"] == (stored - p).abs().max().item()
        # inv_freq held in float32 and cast to dt (transformers#29496), positions exact
        inv32 = 1.0 / (10000.0 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
        exact = torch.outer(p.double(), torch.from_numpy(rope_inv_freq(HEAD_DIM, 10000.0)[0]))
        low = torch.outer(p.double(), inv32.to(TORCH_DTYPES[dt]).double())
        assert nums[f"prec_inv_err_{dt}"] == pytest.approx(
            (low - exact).abs().max().item(), rel=1e-9
        )
    assert (nums["prec_first_bfloat16"], nums["prec_first_float16"]) == (257, 2049)
    assert nums["prec_distinct_bfloat16"] < nums["prec_distinct_float16"] < PREC_POSITIONS
    data = card.figures["c7-precision"]
    assert np.all(data.y_float32 == 0)  # float32 holds every position below 2^24
    assert np.all(np.diff(data.y_bfloat16) >= 0) and data.y_bfloat16[-1] == 16.0


# --- 3 ALiBi --------------------------------------------------------------------------------------


@PROPS
@given(st.integers(1, 128), st.floats(0.5, 16.0))
def test_geometric_slopes_closed_form_and_agreement_at_powers_of_two(
    n: int, max_bias: float
) -> None:
    g = alibi_geometric_slopes(n, max_bias)
    np.testing.assert_allclose(g, 2.0 ** (-max_bias * np.arange(1, n + 1) / n), rtol=1e-15)
    assert np.all(np.diff(g) < 0)
    if n & (n - 1) == 0:
        np.testing.assert_array_equal(alibi_slopes(n, max_bias), g)


@pytest.mark.parametrize("n", ALIBI_HEADS)
def test_alibi_numbers_against_press_and_bloom(card: CardContent, n: int) -> None:
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    press = np.asarray(_press_get_slopes(n))
    bloom = build_alibi_tensor(torch.ones(1, 2, dtype=torch.long), n, torch.float32)[:, 0, 1]
    data = card.figures["c7-alibi"]
    np.testing.assert_allclose(data.slopes(n).trained, press, rtol=1e-14)
    np.testing.assert_allclose(data.slopes(n).trained, bloom.double().numpy(), rtol=1e-6)
    naive = 2.0 ** (-8 * np.arange(1, n + 1) / n)
    np.testing.assert_allclose(data.slopes(n).naive, naive, rtol=1e-15)
    ratio = np.maximum(press / naive, naive / press)
    h = int(np.argmax(ratio))
    nums = card.numbers
    assert nums[f"alibi_{n}_worst_head"] == h + 1
    assert nums[f"alibi_{n}_worst_ratio"] == pytest.approx(ratio[h], rel=1e-12)
    assert nums[f"alibi_{n}_equal"] == int(np.sum(np.isclose(press, naive, rtol=1e-12)))
    # head pow2 + 1 is the first of the odd-numbered extra slopes: 2^(-8/(2 pow2))
    pow2 = 2 ** math.floor(math.log2(n))
    assert press[pow2] == pytest.approx(2.0 ** (-4.0 / pow2), rel=1e-14)


def test_alibi_40_heads_worst_is_head_33(card: CardContent) -> None:
    nums = card.numbers
    assert (nums["alibi_40_worst_head"], nums["alibi_12_worst_head"]) == (33, 9)
    assert nums["alibi_40_trained"] == pytest.approx(2.0**-0.125, rel=1e-14)
    assert nums["alibi_40_naive"] == pytest.approx(2.0 ** (-8 * 33 / 40), rel=1e-14)


# --- 4 YaRN magnitude -----------------------------------------------------------------------------


def _deepseek_rope_parameters(**over: Any) -> dict[str, Any]:
    return {**YARN_SCALING, "rope_theta": 10000.0, **over}


def test_yarn_numbers_against_transformers_and_deepseek(card: CardContent) -> None:
    nums = card.numbers
    # cos/sin factor: transformers' _compute_yarn_parameters with DeepSeek-V3's rope_parameters
    _, hf_cos_sin = hf_rope(_deepseek_rope_parameters(), YARN_ROPE_DIM, 163840)
    assert nums["yarn_cos_sin"] == pytest.approx(hf_cos_sin, rel=1e-12) == 1.0
    # the plain YaRN default a port falls back to without mscale/mscale_all_dim
    plain = {k: v for k, v in _deepseek_rope_parameters().items() if not k.startswith("mscale")}
    _, hf_plain = hf_rope(plain, YARN_ROPE_DIM, 163840)
    assert nums["yarn_cos_sin_plain"] == pytest.approx(hf_plain, rel=1e-12)
    # the softmax scale's factor: DeepSeek-V3's yarn_apply_mscale (transformers)
    softmax = yarn_apply_mscale(_deepseek_rope_parameters(), 1.0)
    assert nums["yarn_softmax"] == pytest.approx(softmax, rel=1e-12)
    assert nums["yarn_rope_reference"] == pytest.approx(hf_cos_sin**2 * softmax, rel=1e-12)
    assert nums["yarn_rope_both"] == pytest.approx(hf_plain**2 * softmax, rel=1e-12)
    assert nums["yarn_rope_forgotten"] == pytest.approx(hf_cos_sin**2, rel=1e-12)
    # the factor compounds: on cos/sin it enters squared, on top of the softmax's square
    assert nums["yarn_rope_both"] == pytest.approx(nums["yarn_cos_sin_plain"] ** 4, rel=1e-12)


def test_yarn_factor_on_cos_sin_scales_scores_by_its_square() -> None:
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(3, YARN_ROPE_DIM)), rng.normal(size=(5, YARN_ROPE_DIM))
    inv, m = rope_inv_freq(
        YARN_ROPE_DIM,
        10000.0,
        {k: v for k, v in YARN_SCALING.items() if not k.startswith("mscale")},
    )
    pos = np.arange(5.0) * 7
    plain = rope_scores(q, k, pos[:3], pos, inv, "half")
    # HF multiplies cos and sin by m: every rotated coordinate by m, every score by m^2
    scaled = (m * apply_rope(q, pos[:3], inv)) @ (m * apply_rope(k, pos, inv)).T
    np.testing.assert_allclose(scaled, m**2 * plain, rtol=1e-13)


# --- 5 dynamic NTK --------------------------------------------------------------------------------


@PROPS
@given(
    st.sampled_from([8, 64, 128]),
    st.floats(1.5, 16.0),
    st.integers(1, 200_000),
    st.sampled_from([2048, 4096, 8192]),
)
def test_dynamic_ntk_base_properties(dim: int, factor: float, n: int, m: int) -> None:
    b = dynamic_ntk_base(dim, 10000.0, factor, n, m)
    if n <= m:
        assert b == 10000.0
    else:
        assert b > 10000.0
        assert dynamic_ntk_base(dim, 10000.0, factor, n + 1, m) > b  # grows with the length
    inv, _ = rope_inv_freq(dim, 10000.0, {"rope_type": "dynamic", "factor": factor}, n, m)
    np.testing.assert_allclose(inv, b ** (-np.arange(0, dim, 2) / dim), rtol=1e-13)


def _hf_dynamic_bases(calls: tuple[int, ...], m: int, factor: float) -> list[float]:
    """The base transformers' LlamaRotaryEmbedding (rope_type dynamic) holds after each call, read
    back from its float32 inv_freq: inv_freq[k] = base^(-2k/d), so base = inv_freq[1]^(-d/2)."""
    config = llama_config(
        HEAD_DIM, {"rope_type": "dynamic", "factor": factor, "rope_theta": 10000.0}, m
    )
    rot = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, 1, HEAD_DIM)
    out = []
    for n in calls:
        rot(x, torch.arange(n)[None])
        out.append(float(rot.inv_freq.double()[1]) ** (-HEAD_DIM / 2))
    return out


def test_dynamic_numbers_against_dynamic_rope_update(card: CardContent) -> None:
    """transformers 5.23's dynamic_rope_update, called with 1,000, 16,384, 8,000 and 5,000 tokens
    in turn, rotates them with bases 10,000, 135,402, 135,402, 135,402: the card's dashed line.
    The solid line is each sequence's own base (closed form; 49,340 for 8,000 tokens)."""
    assert DYN_CALLS == (1000, 16384, 8000, 5000) and DYN_MAX == 4096 and DYN_FACTOR == 4.0
    hf = _hf_dynamic_bases(DYN_CALLS, DYN_MAX, DYN_FACTOR)
    assert [round(b) for b in hf] == [10000, 135402, 135402, 135402]
    data = card.figures["c7-dynamic"]
    np.testing.assert_allclose(data.base_kept, hf, rtol=1e-5)

    def own(n: int) -> float:  # alpha = s n / M - (s - 1), base' = base alpha^(d/(d-2))
        return 10000.0 * max(1.0, DYN_FACTOR * n / DYN_MAX - (DYN_FACTOR - 1)) ** (128 / 126)

    np.testing.assert_allclose(data.base_per_call, [own(n) for n in DYN_CALLS], rtol=1e-13)
    assert round(own(8000)) == 49340 and card.numbers["dyn_base_mid"] == pytest.approx(own(8000))
    assert card.numbers["dyn_base_kept"] == pytest.approx(own(16384), rel=1e-13)
    # the angle error at the last call's last position, from HF's two inv_freq
    exps = np.arange(0, HEAD_DIM, 2) / HEAD_DIM
    err = np.abs((DYN_CALLS[-1] - 1) * (hf[-1] ** -exps - own(DYN_CALLS[-1]) ** -exps))
    assert card.numbers["dyn_angle_err"] == pytest.approx(err.max(), rel=1e-5)
    assert card.numbers["dyn_pairs_off"] == int(np.sum(err > np.pi))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 20_000), min_size=1, max_size=6))
def test_dynamic_call_lengths_follow_dynamic_rope_update(calls: list[int]) -> None:
    """dynamic_ntk_call_lengths replays dynamic_rope_update's grow/reset rule for any series of
    calls: the base it gives matches the one HF's module holds after each call."""
    hf = _hf_dynamic_bases(tuple(calls), 4096, 4.0)
    lengths = dynamic_ntk_call_lengths(tuple(calls), 4096)
    ours = [dynamic_ntk_base(HEAD_DIM, 10000.0, 4.0, n, 4096) for n in lengths]
    np.testing.assert_allclose(ours, hf, rtol=1e-5)


# --- 6 position ids -------------------------------------------------------------------------------


@PROPS
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 9)), min_size=1, max_size=5))
def test_position_ids_match_transformers_generation(rows: list[tuple[int, int]]) -> None:
    """Left-padded rows (pads, tokens): ids from the mask as generate() derives them."""
    length = max(p + n for p, n in rows)
    mask = np.zeros((len(rows), length), dtype=np.int64)
    for r, (p, n) in enumerate(rows):
        mask[r, length - n :] = 1  # left padding
        del p
    ours = position_ids_from_attention_mask(mask)
    ref = GenerationMixin._prepare_position_ids_for_generation(
        None,  # type: ignore[arg-type]
        torch.zeros(mask.shape, dtype=torch.long),
        {"attention_mask": torch.from_numpy(mask)},
    )
    np.testing.assert_array_equal(ours, ref.numpy())
    for r in range(len(rows)):
        real = ours[r][mask[r] == 1]
        np.testing.assert_array_equal(real, np.arange(real.size))


@PROPS
@given(st.integers(0, 10_000), st.integers(1, 50))
def test_a_uniform_shift_changes_no_rope_score(shift: int, gap: int) -> None:
    rng = np.random.default_rng(shift)
    q, k = rng.normal(size=(4, 32)), rng.normal(size=(6, 32))
    inv, _ = rope_inv_freq(32, 10000.0)
    pq, pk = np.arange(2.0, 6.0), np.arange(6.0)
    base = rope_scores(q, k, pq, pk, inv)
    shifted = rope_scores(q, k, pq + shift, pk + shift, inv)
    np.testing.assert_allclose(shifted, base, atol=1e-9 * max(1.0, shift))
    moved = rope_scores(q, k, pq + gap, pk, inv)  # the queries jump by `gap`: every distance
    assert np.max(np.abs(moved - base)) > 1e-6


def test_position_ids_numbers_against_hf_rotary(card: CardContent) -> None:
    """The card's three numberings through transformers' apply_rotary_pos_emb (float64)."""
    data = card.figures["c7-position-ids"]
    inv = torch.from_numpy(rope_inv_freq(HEAD_DIM, 10000.0)[0])
    rng = np.random.default_rng(7 + 6)  # the card's vectors
    k = torch.from_numpy(rng.standard_normal((11, HEAD_DIM)))
    q = torch.from_numpy(rng.standard_normal((1, HEAD_DIM)))

    def scores(ids: np.ndarray) -> np.ndarray:
        ang = torch.outer(torch.from_numpy(ids), inv)
        emb = torch.cat((ang, ang), dim=-1)[None]
        _, kr = apply_rotary_pos_emb(k[None, None], k[None, None], emb.cos(), emb.sin())
        qr, _ = apply_rotary_pos_emb(
            q[None, None], q[None, None], emb[:, -1:].cos(), emb[:, -1:].sin()
        )
        return (qr[0, 0] @ kr[0, 0].T)[0].numpy()

    for got, ids in (
        (data.score_mask, data.ids_mask),
        (data.score_shift, data.ids_shift),
        (data.score_gap, data.ids_gap),
    ):
        np.testing.assert_allclose(got, scores(ids), atol=1e-10)
    nums = card.numbers
    assert nums["pos_shift_diff"] < 1e-11 < 1.0 < nums["pos_gap_diff"]
    np.testing.assert_array_equal(data.ids_mask, np.arange(11))
    assert data.ids_gap[-1] - data.ids_gap[-2] == nums["pos_pads"] + 1
