"""Card 7 -- pitfalls that bit real projects, each settled by one computed number.

Every panel is a call of the correct math-layer function next to the mistaken one (or the same
function called with the mistaken argument), with the settings of the models the threads were
about. This module only chooses those settings and picks numbers out of the results; the threads
(``owner/repo#number``) are the card's data, listed per panel in ``card7_threads.THREADS`` (all were read; see
docs/pitfalls.md for their titles and what they say).

Panels (``PANEL_IDS``):
- c7-layout: Meta's interleaved q/k channels run through ``rotate_half`` without the permutation.
- c7-precision: positions cast to bfloat16/float16 before the rotation.
- c7-alibi: ALiBi slopes 2^(-8h/H) for 12 and 40 heads instead of Press et al.'s rule.
- c7-yarn: YaRN's magnitude placed on cos/sin as well as in DeepSeek's softmax scale.
- c7-dynamic: dynamic NTK in transformers 5.23 keeps a grown base for later, shorter calls.
- c7-position-ids: position ids that jump where the attention mask does not.
Figure page only (``EXTRA_IDS``): c7-channel-speeds, the rotation speed of every channel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders, Scalar
from posecards.content.card7_threads import SIDE_THREADS, thread_numbers, threads_of
from posecards.content.figdata.card7 import (
    Alibi,
    ChannelSpeeds,
    Dynamic,
    Layout,
    PositionIds,
    Precision,
    Yarn,
)
from posecards.encodings.alibi import alibi_geometric_slopes, alibi_slopes
from posecards.encodings.dynamic_ntk import dynamic_ntk_base, dynamic_ntk_call_lengths
from posecards.encodings.mla import mla_softmax_scale
from posecards.encodings.position_ids import position_ids_from_attention_mask
from posecards.encodings.precision import first_inexact_integer, round_to_dtype
from posecards.encodings.rope import rope_layout_permutation, rope_pair_slots, rope_scores
from posecards.encodings.rope_scaling import rope_inv_freq

CARD = 7
PANEL_IDS = (
    "c7-layout",
    "c7-precision",
    "c7-alibi",
    "c7-yarn",
    "c7-dynamic",
    "c7-position-ids",
)
EXTRA_IDS = ("c7-channel-speeds",)  # figure page only


SEED = 7
HEAD_DIM = 128  # one attention head, as in Llama

# --- 1 pair layout ------------------------------------------------------------------------------
LAYOUT_TOKENS = 20  # tokens at spread positions; every (query, key) pair is a point

# --- 2 precision --------------------------------------------------------------------------------
PREC_POSITIONS = 8192  # positions 0 .. 8191
PREC_DTYPES = ("bfloat16", "float16", "float32")  # the two mistakes, then the rule

# --- 3 ALiBi ------------------------------------------------------------------------------------
ALIBI_HEADS = (12, 40)  # BLOOM-560m/Baichuan-style head counts that are not a power of two

# --- 4 YaRN magnitude ---------------------------------------------------------------------------
# DeepSeek-V3's published rope_scaling (config.json of deepseek-ai/DeepSeek-V3)
YARN_SCALING: dict[str, Any] = {
    "rope_type": "yarn",
    "factor": 40.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32,
    "beta_slow": 1,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
}
YARN_ROPE_DIM = 64  # qk_rope_head_dim
YARN_NOPE_DIM = 128  # qk_nope_head_dim

# --- 5 dynamic NTK ------------------------------------------------------------------------------
DYN_MAX = 4096  # max_position_embeddings M
DYN_FACTOR = 4.0
# tokens per call: under M, long (M * s), then two calls between M and the long one, which
# transformers 5.23 rotates with the long call's base
DYN_CALLS = (1000, DYN_MAX * 4, 8000, 5000)

# --- 6 position ids -----------------------------------------------------------------------------
POS_PROMPT = 10  # real tokens of the short prompt
POS_PADS = 4  # left padding: the batch's longest prompt has POS_PROMPT + POS_PADS tokens

# --- the card's two side pitfalls: Gemma 3 (config.json of google/gemma-3-4b-it) -------------------
GEMMA_HEAD_DIM = 256
GEMMA_GLOBAL_BASE = 1_000_000.0  # rope_theta: the full-attention layers
GEMMA_LOCAL_BASE = 10_000.0  # rope_local_base_freq: the sliding-window layers, never scaled
GEMMA_SCALING: dict[str, Any] = {"rope_type": "linear", "factor": 8.0}  # global layers only
GEMMA_CONTEXT = 131072  # max_position_embeddings


def _layout(params: PEParams, numbers: dict[str, Scalar]) -> tuple[Layout, ChannelSpeeds]:
    """(c7-layout, c7-channel-speeds): scores of Meta-layout q/k through rotate_half, with and
    without convert_llama_weights_to_hf's permutation; the speed each channel turns at."""
    inv_freq, _ = rope_inv_freq(HEAD_DIM, params.base)  # (64,)
    rng = np.random.default_rng(SEED)
    n = LAYOUT_TOKENS
    pos = np.round(np.linspace(0, params.positions - 1, n))  # (n,) spread positions
    q = rng.standard_normal((n, HEAD_DIM))  # (n, 128) Meta's q, interleaved channel order
    k = rng.standard_normal((n, HEAD_DIM))  # (n, 128)
    perm = rope_layout_permutation(HEAD_DIM)  # (128,) x_half = x_interleaved[P]
    s_ref = rope_scores(q, k, pos, pos, inv_freq, "interleaved")  # (n, n) what Meta computes
    s_wrong = rope_scores(q, k, pos, pos, inv_freq, "half")  # (n, n) rotate_half, not permuted
    s_fixed = rope_scores(q[:, perm], k[:, perm], pos, pos, inv_freq, "half")  # (n, n) permuted
    scale = float(np.sqrt(np.mean(s_ref**2)))  # rms of the reference scores

    # the speed each channel turns at: the frequency of the pair its slot belongs to
    trained = inv_freq[rope_pair_slots(HEAD_DIM, HEAD_DIM, "interleaved")]  # (128,) Meta's pairs
    applied = inv_freq[rope_pair_slots(HEAD_DIM, HEAD_DIM, "half")]  # (128,) rotate_half's
    applied_fixed = applied[np.argsort(perm)]  # (128,) permuted channels, back in Meta's order
    right = int(np.sum(trained == applied))
    worst = float(np.max(np.maximum(trained / applied, applied / trained)))
    err_wrong = float(np.sqrt(np.mean((s_wrong - s_ref) ** 2)) / scale)
    err_fixed = float(np.max(np.abs(s_fixed - s_ref)) / scale)
    numbers.update(
        rope_base=float(params.base),
        layout_dim=HEAD_DIM,
        layout_n=n,
        layout_pairs=n * n,
        layout_last_pos=int(pos[-1]),
        layout_err_wrong=err_wrong,
        layout_err_fixed=err_fixed,
        layout_right_channels=right,
        layout_worst_speed=worst,
    )
    panel = Layout(
        reference=s_ref.reshape(-1),  # (n*n,) Meta's interleaved rotation
        not_permuted=s_wrong.reshape(-1),  # (n*n,)
        permuted=s_fixed.reshape(-1),  # (n*n,)
        head_dim=HEAD_DIM,
        base=float(params.base),
        err_wrong=err_wrong,
        err_fixed=err_fixed,
        **threads_of("c7-layout"),
    )
    speeds = ChannelSpeeds(
        channel=np.arange(HEAD_DIM, dtype=np.float64),  # (128,)
        trained=trained,  # (128,) interleaved: theta[c // 2]
        not_permuted=applied,  # (128,) half: theta[c mod 64]
        permuted=applied_fixed,  # (128,) the permuted channel's speed, back in Meta's order
        right_channels=right,
        worst_ratio=worst,
        head_dim=HEAD_DIM,
        base=float(params.base),
    )
    return panel, speeds


def _precision(params: PEParams, numbers: dict[str, Scalar]) -> Precision:
    """Positions 0..8191 stored as bfloat16 / float16: the worst angle error of the fastest pair
    (theta_0 = 1 rad per position) so far, and inv_freq cast the same way."""
    p = np.arange(PREC_POSITIONS, dtype=np.float64)  # (8192,)
    inv_freq, _ = rope_inv_freq(HEAD_DIM, params.base)  # (64,)
    inv32 = round_to_dtype(inv_freq, "float32")  # (64,) the float32 buffer a model keeps
    steps: dict[str, Any] = {}
    for dt in PREC_DTYPES:
        stored = round_to_dtype(p, dt)  # (8192,) fl_dt(p)
        err = np.abs(stored - p)  # (8192,) angle error of pair 0: |fl(p) - p| * 1 rad
        worst = np.maximum.accumulate(err)  # (8192,) worst error among positions <= p
        change = np.flatnonzero(np.diff(worst)) + 1  # (c,) where the staircase steps up
        x = np.concatenate([[0.0], p[change], [p[-1]]])  # (c+2,)
        y = np.concatenate([[worst[0]], worst[change], [worst[-1]]])  # (c+2,)
        inv_low = round_to_dtype(inv32, dt)  # (64,) inv_freq cast to dt
        inv_err = np.abs(np.outer(p, inv_low - inv_freq))  # (8192, 64) angle error, positions exact
        steps[dt] = {"x": x, "y": y}
        numbers.update(
            {
                f"prec_first_{dt}": first_inexact_integer(dt),
                f"prec_exact_{dt}": first_inexact_integer(dt) - 1,  # every integer up to here
                f"prec_distinct_{dt}": int(np.unique(stored).size),
                f"prec_worst_{dt}": float(worst[-1]),
                f"prec_inv_err_{dt}": float(inv_err.max()),
            }
        )
    numbers.update(prec_positions=PREC_POSITIONS, prec_last=PREC_POSITIONS - 1)
    per_dtype: dict[str, Any] = {
        **{f"x_{dt}": steps[dt]["x"] for dt in PREC_DTYPES},  # (c+2,) staircase positions
        **{f"y_{dt}": steps[dt]["y"] for dt in PREC_DTYPES},  # (c+2,) worst error so far (rad)
        **{f"first_{dt}": numbers[f"prec_first_{dt}"] for dt in PREC_DTYPES},
    }
    return Precision(
        dtypes=list(PREC_DTYPES),
        **per_dtype,
        positions=PREC_POSITIONS,
        half_turn=float(np.pi),
        **threads_of("c7-precision"),
    )


def _alibi(numbers: dict[str, Scalar]) -> Alibi:
    """Slopes of 12 and 40 heads: Press et al.'s rule (what the models were trained with) and the
    geometric sequence 2^(-8h/H) a port computes from the paper's sentence."""
    out: dict[str, Any] = {"heads": list(ALIBI_HEADS)}
    for n in ALIBI_HEADS:
        trained = alibi_slopes(n)  # (n,)
        naive = alibi_geometric_slopes(n)  # (n,)
        ratio = np.maximum(trained / naive, naive / trained)  # (n,)
        h = int(np.argmax(ratio))
        out[f"trained_{n}"] = trained
        out[f"naive_{n}"] = naive
        numbers.update(
            {
                f"alibi_{n}_heads": n,
                f"alibi_{n}_worst_head": h + 1,
                f"alibi_{n}_worst_ratio": float(ratio[h]),
                f"alibi_{n}_trained": float(trained[h]),
                f"alibi_{n}_naive": float(naive[h]),
                f"alibi_{n}_equal": int(np.sum(trained == naive)),
                f"alibi_{n}_pow2": int(2 ** np.floor(np.log2(n))),
                f"alibi_{n}_first_extra": int(2 ** np.floor(np.log2(n))) + 1,  # first extra head
            }
        )
        out[f"worst_head_{n}"] = h + 1
    out.update(threads_of("c7-alibi"))
    return Alibi(**out)


def _yarn(numbers: dict[str, Scalar]) -> Yarn:
    """DeepSeek-V3's YaRN magnitude in three placements: the factor on cos/sin (squared in every
    RoPE logit) and the softmax scale's factor (on every logit)."""
    # cos/sin factor as transformers computes it: m(s, mscale) / m(s, mscale_all_dim) = 1
    _, cos_sin = rope_inv_freq(YARN_ROPE_DIM, 10000.0, YARN_SCALING)
    # the plain YaRN default a port falls back to when it drops mscale/mscale_all_dim: m(s, 1)
    plain = {k: v for k, v in YARN_SCALING.items() if k not in ("mscale", "mscale_all_dim")}
    _, cos_sin_plain = rope_inv_freq(YARN_ROPE_DIM, 10000.0, plain)
    # DeepSeek's yarn_apply_mscale: softmax scale qk_head_dim^(-1/2) * m(s, mscale_all_dim)^2
    scale = mla_softmax_scale(YARN_NOPE_DIM, YARN_ROPE_DIM, YARN_SCALING)
    softmax = scale / mla_softmax_scale(YARN_NOPE_DIM, YARN_ROPE_DIM, {"rope_type": "default"})
    placements = {
        "reference": (cos_sin, softmax),  # transformers' DeepSeek-V3: 1 on cos/sin, m^2 in softmax
        "both": (cos_sin_plain, softmax),  # m on cos/sin as well: RoPE logits * m^4
        "forgotten": (cos_sin, 1.0),  # the softmax factor left out: logits * 1
    }
    rope_part = {k: c * c * s for k, (c, s) in placements.items()}  # q.k of the rotated dims
    content_part = {k: s for k, (_, s) in placements.items()}  # q.k of the unrotated dims
    numbers.update(
        yarn_factor=float(YARN_SCALING["factor"]),
        yarn_mscale=float(YARN_SCALING["mscale"]),
        yarn_mscale_all_dim=float(YARN_SCALING["mscale_all_dim"]),
        yarn_cos_sin=float(cos_sin),
        yarn_cos_sin_plain=float(cos_sin_plain),
        yarn_softmax=float(softmax),
        yarn_rope_reference=float(rope_part["reference"]),
        yarn_rope_both=float(rope_part["both"]),
        yarn_rope_forgotten=float(rope_part["forgotten"]),
        yarn_both_ratio=float(rope_part["both"] / rope_part["reference"]),
    )
    keys = list(placements)
    return Yarn(
        placements=keys,
        cos_sin=np.asarray([placements[k][0] for k in keys], dtype=np.float64),  # (3,)
        softmax=np.asarray([placements[k][1] for k in keys], dtype=np.float64),  # (3,)
        rope_part=np.asarray([rope_part[k] for k in keys], dtype=np.float64),  # (3,)
        content_part=np.asarray([content_part[k] for k in keys], dtype=np.float64),  # (3,)
        factor=float(YARN_SCALING["factor"]),
        mscale=float(YARN_SCALING["mscale"]),
        mscale_all_dim=float(YARN_SCALING["mscale_all_dim"]),
        **threads_of("c7-yarn"),
    )


def _dynamic(params: PEParams, numbers: dict[str, Scalar]) -> Dynamic:
    """Dynamic NTK over four calls (1,000, 16,384, 8,000, 5,000 tokens): the base each sequence's
    own length gives, and the base transformers 5.23's dynamic_rope_update rotates it with (a
    grown base stays for every later call of at least max_position_embeddings tokens)."""
    calls = np.asarray(DYN_CALLS, dtype=np.int64)  # (4,)
    hf_lengths = dynamic_ntk_call_lengths(DYN_CALLS, DYN_MAX)  # (4,) what HF rotates each as
    own = [dynamic_ntk_base(HEAD_DIM, params.base, DYN_FACTOR, int(n), DYN_MAX) for n in calls]
    hf = [dynamic_ntk_base(HEAD_DIM, params.base, DYN_FACTOR, n, DYN_MAX) for n in hf_lengths]
    scaling = {"rope_type": "dynamic", "factor": DYN_FACTOR}
    last = int(calls[-1])
    good, _ = rope_inv_freq(HEAD_DIM, params.base, scaling, last, DYN_MAX)  # (64,) own length
    stale, _ = rope_inv_freq(HEAD_DIM, params.base, scaling, hf_lengths[-1], DYN_MAX)  # (64,)
    p_last = last - 1
    err = np.abs(p_last * (stale - good))  # (64,) angle error per pair at the last position
    numbers.update(
        dyn_max=DYN_MAX,
        dyn_factor=DYN_FACTOR,
        dyn_first=int(calls[0]),
        dyn_long=int(calls[1]),
        dyn_mid=int(calls[2]),
        dyn_short=last,
        dyn_base=float(params.base),
        dyn_base_mid=float(own[2]),
        dyn_base_short=float(own[-1]),
        dyn_base_kept=float(hf[-1]),
        dyn_last=p_last,
        dyn_angle_err=float(err.max()),
        dyn_pairs_off=int(np.sum(err > np.pi)),
        dyn_pairs=HEAD_DIM // 2,
        dyn_head_dim=HEAD_DIM,
    )
    return Dynamic(
        calls=calls.astype(np.float64),  # (4,) tokens per call
        base_per_call=np.asarray(own, dtype=np.float64),  # (4,) each sequence's own length
        base_kept=np.asarray(hf, dtype=np.float64),  # (4,) transformers 5.23
        # the bases marked on the axis: the original, the per-sequence one of the 8,000-token
        # call and the grown one (the 5,000-token call's own base is in the text)
        base_ticks=np.unique(np.asarray(own[:3], dtype=np.float64)),  # (3,)
        angle_error=err,  # (64,) at the last call's last position, with the kept base
        head_dim=HEAD_DIM,
        max_position_embeddings=DYN_MAX,
        factor=DYN_FACTOR,
        **threads_of("c7-dynamic"),
    )


def _position_ids(params: PEParams, numbers: dict[str, Scalar]) -> PositionIds:
    """A prompt of 10 tokens left-padded to 14: the score of the next token's query against every
    prompt key with the ids from the mask, with ids counted from the pads (a shift), and with the
    next token numbered by the batch (a gap)."""
    inv_freq, _ = rope_inv_freq(HEAD_DIM, params.base)  # (64,)
    rng = np.random.default_rng(SEED + 6)
    n, pads = POS_PROMPT, POS_PADS
    k = rng.standard_normal((n + 1, HEAD_DIM))  # (11, 128) the prompt's keys and the next token's
    q = rng.standard_normal((1, HEAD_DIM))  # (1, 128) the next token's query
    mask = np.concatenate([np.zeros(pads), np.ones(n + 1)]).astype(np.int64)  # (15,) pads, tokens
    from_mask = position_ids_from_attention_mask(mask)[pads:].astype(np.float64)  # (11,) 0..10
    counted = np.arange(pads, pads + n + 1, dtype=np.float64)  # (11,) 4..14: a uniform shift
    gap = np.concatenate([from_mask[:n], [float(n + pads)]])  # (11,) 0..9, then 14: a gap
    rows = {}
    for name, ids in (("mask", from_mask), ("shift", counted), ("gap", gap)):
        rows[name] = rope_scores(q, k, ids[-1:], ids, inv_freq, "half")[0]  # (11,)
    scale = float(np.mean(np.abs(rows["mask"])))
    numbers.update(
        pos_prompt=n,
        pos_pads=pads,
        pos_next=int(from_mask[-1]),
        pos_next_gap=int(gap[-1]),
        pos_shift_diff=float(np.max(np.abs(rows["shift"] - rows["mask"]))),
        pos_gap_diff=float(np.max(np.abs(rows["gap"] - rows["mask"]))),
        pos_score_scale=scale,
        pos_gap_rel=float(np.max(np.abs(rows["gap"] - rows["mask"])) / scale),
    )
    return PositionIds(
        key=np.arange(n + 1, dtype=np.float64),  # (11,) key index in the prompt
        ids_mask=from_mask,
        ids_shift=counted,
        ids_gap=gap,
        score_mask=rows["mask"],  # (11,)
        score_shift=rows["shift"],  # (11,)
        score_gap=rows["gap"],  # (11,)
        pads=pads,
        **threads_of("c7-position-ids"),
    )


def _gemma(numbers: dict[str, Scalar]) -> None:
    """Gemma 3's two RoPEs: a port that drops the global layers' linear factor, and one that
    gives the local (sliding-window) layers the global factor too."""
    scaled, _ = rope_inv_freq(GEMMA_HEAD_DIM, GEMMA_GLOBAL_BASE, GEMMA_SCALING)  # (128,) trained
    dropped, _ = rope_inv_freq(GEMMA_HEAD_DIM, GEMMA_GLOBAL_BASE)  # (128,) factor dropped
    local, _ = rope_inv_freq(GEMMA_HEAD_DIM, GEMMA_LOCAL_BASE)  # (128,) trained
    local_wrong, _ = rope_inv_freq(GEMMA_HEAD_DIM, GEMMA_LOCAL_BASE, GEMMA_SCALING)  # (128,)
    last = GEMMA_CONTEXT - 1
    numbers.update(
        gemma_factor=float(GEMMA_SCALING["factor"]),
        gemma_last=last,
        gemma_last_seen=float(last * dropped[-1] / scaled[-1]),  # the position it is rotated as
        gemma_local=float(local[0]),
        gemma_local_wrong=float(local_wrong[0]),
        **{f"threads_{k}": ", ".join(v) for k, v in SIDE_THREADS.items()},
    )


EX_BF16_POSITION = 4001  # the exercise's position stored in bfloat16
EX_ALIBI_HEADS, EX_ALIBI_HEAD = 12, 9  # the exercise's head count and head (1-based)


def _exercises(numbers: dict[str, Scalar]) -> None:
    """The page's exercises: a position stored in bfloat16, and one slope of Press et al.'s
    rule for a head count that is not a power of two."""
    stored = float(round_to_dtype(np.array([float(EX_BF16_POSITION)]), "bfloat16")[0])
    numbers.update(
        drill_bf_first=first_inexact_integer("bfloat16"),
        drill_bf_pos=EX_BF16_POSITION,
        drill_bf_stored=stored,
        drill_bf_angle=abs(stored - EX_BF16_POSITION),  # pair 0 turns 1 rad per position
        drill_alibi_heads=EX_ALIBI_HEADS,
        drill_alibi_pow2=2 ** (EX_ALIBI_HEADS.bit_length() - 1),  # largest power of two <= H
        drill_alibi_double=2 ** EX_ALIBI_HEADS.bit_length(),  # the set the extra heads take from
        drill_alibi_head=EX_ALIBI_HEAD,
        drill_alibi_slope=float(alibi_slopes(EX_ALIBI_HEADS)[EX_ALIBI_HEAD - 1]),
        drill_alibi_naive=float(alibi_geometric_slopes(EX_ALIBI_HEADS)[EX_ALIBI_HEAD - 1]),
    )


def compute(params: PEParams) -> CardContent:
    numbers: dict[str, Scalar] = Placeholders()
    _gemma(numbers)
    numbers.update(thread_numbers())
    _exercises(numbers)
    layout, speeds = _layout(params, numbers)
    figures: dict[str, Any] = {
        "c7-layout": layout,
        "c7-precision": _precision(params, numbers),
        "c7-alibi": _alibi(numbers),
        "c7-yarn": _yarn(numbers),
        "c7-dynamic": _dynamic(params, numbers),
        "c7-position-ids": _position_ids(params, numbers),
        "c7-channel-speeds": speeds,
    }
    assert tuple(figures) == PANEL_IDS + EXTRA_IDS
    return CardContent(card=CARD, figures=figures, numbers=numbers)
