"""Card 8 -- where inside attention each relative scheme puts position.

Every number is a math-layer call on a seeded example (float64); tests/test_card8.py checks them
against transformers' XLNet and DebertaV2 modules and against independent formulas.

Panels (``PANEL_IDS``):
- c8-terms: (x + p)ᵀW_qW_kᵀ(x + p) in four terms, their sizes, and which each scheme keeps.
- c8-shaw: Shaw et al.'s clipped distances: 2k + 1 vectors for any length.
- c8-xl: Transformer-XL's four terms (a)-(d), with the biases u and v.
- c8-shift: the relative shift's index map, from query × distance to query × key.
- c8-deberta: DeBERTa's c2c, c2p and p2c, over √(3d).
- c8-linear: linear attention (elu + 1) with RoPE in the numerator only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders, Scalar
from posecards.content.figdata.card8 import (
    Deberta,
    Linear,
    Shaw,
    Shift,
    ShiftXl,
    Terms,
    XlTerms,
)
from posecards.encodings.disentangled import (
    deberta_relative_positions,
    disentangled_scale,
    disentangled_slots,
    disentangled_terms,
)
from posecards.encodings.linear_attention import elu_feature_map, linear_attention
from posecards.encodings.rel_shift import (
    rel_shift,
    rel_shift_columns,
    rel_shift_zero_pad,
    rel_shift_zero_pad_columns,
    xl_relative_distances,
)
from posecards.encodings.rope import apply_rope
from posecards.encodings.score_terms import score_terms
from posecards.encodings.shaw import shaw_index, shaw_table_rows
from posecards.encodings.sinusoidal import pair_frequencies, sinusoidal_pe
from posecards.encodings.softmax import softmax
from posecards.encodings.xl_attention import xl_terms

CARD = 8
PANEL_IDS = ("c8-terms", "c8-shaw", "c8-xl", "c8-shift", "c8-deberta", "c8-linear")
EXTRA_IDS = ("c8-shift-xl",)  # figure page only

SEED = 8

# --- 1 the four terms ---------------------------------------------------------------------------
TERMS_TOKENS = 16
TERMS_HEAD = 64  # d_head of W_q, W_k (d_model from the card's parameters)
TERMS_CONTENT_RMS = float(np.sqrt(0.5))  # the token vectors' rms: a sinusoid's (mean square ½)
# what each scheme does with cc, cp, pc, pp (label keys of cards/card8.toml): "kind_abs" kept with
# absolute positions, "kind_rel" a vector per distance i - j, "kind_bias" a learned vector that
# replaces the query's position (u), "kind_scalar" a number per distance, "kind_rot" the rotation
# of RoPE, "kind_none" dropped
SCHEME_KINDS: dict[str, tuple[str, str, str, str]] = {
    "sinusoid": ("kind_abs", "kind_abs", "kind_abs", "kind_abs"),
    "shaw": ("kind_abs", "kind_rel", "kind_none", "kind_none"),
    "xl": ("kind_abs", "kind_rel", "kind_bias", "kind_scalar"),
    "t5": ("kind_abs", "kind_none", "kind_none", "kind_scalar"),
    "deberta": ("kind_abs", "kind_rel", "kind_rel", "kind_none"),
    "rope": ("kind_rot", "kind_none", "kind_none", "kind_none"),
    "alibi": ("kind_abs", "kind_none", "kind_none", "kind_scalar"),
}

KERNEL_SEEDS = 20  # item 6: further draws of the example, to see whether one seed is typical
KERNEL_SEED_BASE = 1000

# --- 2 Shaw -------------------------------------------------------------------------------------
SHAW_TOKENS = 9
SHAW_CLIP = 3  # k of the picture
SHAW_HEAD = 64  # d_head for the memory count (a^K and a^V: 2 tables of 2k + 1 rows)

# --- 3 Transformer-XL ---------------------------------------------------------------------------
XL_QUERIES = 8
XL_MEMORY = 0  # M: no memory on the term maps (the shift panel has one)
XL_D_MODEL = 32
XL_HEAD = 16

# --- 4 the shift --------------------------------------------------------------------------------
SHIFT_QUERIES = 3
SHIFT_MEMORY = 2

# --- 5 DeBERTa ----------------------------------------------------------------------------------
DEB_TOKENS = 12
DEB_HIDDEN = 24
DEB_HEAD = 12  # one head; √(3·12) = 6
DEB_BUCKETS = 8  # position_buckets: span s, a table of 2s rows
DEB_MAX_POSITION = 32  # max_relative_positions

# --- 6 linear attention -------------------------------------------------------------------------
LIN_TOKENS = 10
LIN_HEAD = 8
LIN_BASE = 10000.0


def terms_example(params: PEParams) -> dict[str, Any]:
    """c8-terms' seeded sentence: token vectors x, sinusoids p, W_q, W_k (shared with the tests)."""
    rng = np.random.default_rng(SEED)
    n, d = TERMS_TOKENS, params.d_model
    return {
        "x": rng.standard_normal((n, d)) * TERMS_CONTENT_RMS,  # (n, d): mean square of a sinusoid
        "p": sinusoidal_pe(n, d, params.base),  # (n, d)
        "wq": rng.standard_normal((d, TERMS_HEAD)) / np.sqrt(d),  # (d, d_head)
        "wk": rng.standard_normal((d, TERMS_HEAD)) / np.sqrt(d),  # (d, d_head)
    }


def _terms(params: PEParams, numbers: dict[str, Scalar]) -> Terms:
    """c8-terms: the four terms of a seeded sentence with sinusoids added; item 6's checks."""
    ex = terms_example(params)
    x, p, wq, wk = ex["x"], ex["p"], ex["wq"], ex["wk"]
    n, d = x.shape
    t = score_terms(x, p, wq, wk)
    rms = np.array([np.sqrt(np.mean(m**2)) for m in (t.cc, t.cp, t.pc, t.pp)])  # (4,)
    numbers.update(
        terms_n=n,
        terms_d_model=d,
        terms_head=TERMS_HEAD,
        terms_cc=float(rms[0]),
        terms_cp=float(rms[1]),
        terms_pc=float(rms[2]),
        terms_pp=float(rms[3]),
    )
    _kernel_claim(x, p, wq, wk, numbers)
    return Terms(
        rms=rms,
        schemes=list(SCHEME_KINDS),
        kinds=[list(v) for v in SCHEME_KINDS.values()],
    )


def _kernel_claim(x: Any, p: Any, wq: Any, wk: Any, numbers: dict[str, Scalar]) -> None:
    """Issue 37, item 6: is position added to the input "distorted by the kernel's high-order
    features"? Three numbers on the card's example (x + p, W_q, W_k of c8-terms):

    - softmax's kernel exp(s) has every order, yet it factorises exactly into the four terms:
      exp(cc + cp + pc + pp) = exp(cc)·exp(cp)·exp(pc)·exp(pp) (largest relative gap);
    - elu + 1 is x + 1 wherever its input is positive: there position adds exactly, coordinate
      by coordinate (the share of coordinates where φ(W(x+p)) = φ(Wx) + Wp);
    - position is not singled out: taking the sinusoids away moves the outputs by a share of
      what taking the tokens' content away does, for softmax and for linear attention alike
      (linear attention's outputs move less for both: its weights are flatter).
    """
    t = score_terms(x, p, wq, wk)
    s = t.total / np.sqrt(wq.shape[1])  # (n, n)
    parts = [m / np.sqrt(wq.shape[1]) for m in (t.cc, t.cp, t.pc, t.pp)]
    product = np.exp(parts[0]) * np.exp(parts[1]) * np.exp(parts[2]) * np.exp(parts[3])
    gap = float(np.max(np.abs(product - np.exp(s)) / np.exp(s)))
    u, w = x @ wq, p @ wq  # (n, d_head): content and position parts of the queries
    linear = (u > 0) & (u + w > 0)  # where φ(u + w) = φ(u) + w exactly
    v = np.random.default_rng(SEED + 1).standard_normal((x.shape[0], 4))  # (n, 4) values

    def effects(attend: Any, x: Any, wq: Any, wk: Any, v: Any) -> tuple[float, float]:
        """rms change of the outputs when the positions, then the contents, are taken away."""
        full = attend((x + p) @ wq, (x + p) @ wk, v)
        no_pos = attend(x @ wq, x @ wk, v)
        no_content = attend(p @ wq, p @ wk, v)
        return _rms(full - no_pos), _rms(full - no_content)

    def soft(q: Any, k: Any, vv: Any) -> Any:
        return softmax(q @ k.T / np.sqrt(q.shape[1])) @ vv

    def lin(q: Any, k: Any, vv: Any) -> Any:
        return linear_attention(q, k, vv).outputs

    (s_pos, s_content) = effects(soft, x, wq, wk, v)
    (l_pos, l_content) = effects(lin, x, wq, wk, v)
    # the same ratio over KERNEL_SEEDS other draws of tokens, weights and values
    below, ratios = 0, []
    for seed in range(KERNEL_SEEDS):
        ex = _kernel_draw(x.shape[0], x.shape[1], wq.shape[1], seed)
        draw = (ex["x"], ex["wq"], ex["wk"], ex["v"])
        (sp, sc), (lp, lc) = effects(soft, *draw), effects(lin, *draw)
        below += int(lp / lc < sp / sc)
        ratios.append((lp / lc) / (sp / sc))
    numbers.update(
        kernel_seeds=KERNEL_SEEDS,
        kernel_seeds_below=below,
        kernel_ratio_median=float(np.median(ratios)),
    )
    numbers.update(
        kernel_factor_gap=gap,
        kernel_linear_share=float(np.mean(linear)),
        kernel_pos_softmax=s_pos / s_content,
        kernel_pos_linear=l_pos / l_content,
        kernel_flatter=s_content / l_content,
    )


def _kernel_draw(n: int, d: int, d_head: int, seed: int) -> dict[str, Any]:
    """One more draw of item 6's example: tokens x, W_q, W_k and values v (sinusoids unchanged)."""
    rng = np.random.default_rng(KERNEL_SEED_BASE + seed)
    return {
        "x": rng.standard_normal((n, d)) * np.sqrt(0.5),  # (n, d)
        "wq": rng.standard_normal((d, d_head)) / np.sqrt(d),  # (d, d_head)
        "wk": rng.standard_normal((d, d_head)) / np.sqrt(d),  # (d, d_head)
        "v": rng.standard_normal((n, 4)),  # (n, 4)
    }


def _rms(a: Any) -> float:
    return float(np.sqrt(np.mean(np.asarray(a) ** 2)))


def _shaw(params: PEParams, numbers: dict[str, Scalar]) -> Shaw:
    """c8-shaw: clip(j - i) of every pair, and the table's size against an absolute table."""
    k, n = SHAW_CLIP, SHAW_TOKENS
    idx = shaw_index(n, n, k)  # (n, n) rows 0..2k
    clipped = idx - k  # (n, n) clip(j - i)
    rows = shaw_table_rows(k)
    numbers.update(
        shaw_clip=k,
        shaw_rows=rows,
        shaw_n=n,
        shaw_pairs=n * n,
        shaw_edge_pairs=int(np.sum(np.abs(clipped) == k)),  # pairs on the two shared vectors
        shaw_beyond_pairs=int(
            np.sum(np.abs(np.arange(n)[None, :] - np.arange(n)[:, None]) > k)
        ),  # pairs whose own distance has no vector
        shaw_head=SHAW_HEAD,
        shaw_numbers=2 * rows * SHAW_HEAD,  # a^K and a^V per layer
        shaw_positions=params.positions,
        shaw_d_model=params.d_model,
        shaw_absolute_numbers=params.positions * params.d_model,
    )
    return Shaw(clipped=clipped.astype(np.int64), clip=k, rows=rows)


def xl_example() -> dict[str, Any]:
    """c8-xl's head: queries q, keys k, projected sinusoids r of the distances
    (``xl_relative_distances``, "half" layout as XLNet), biases u, v (shared with the tests)."""
    rng = np.random.default_rng(SEED + 2)
    q_len, m = XL_QUERIES, XL_MEMORY
    k_len = m + q_len
    dm, dh = XL_D_MODEL, XL_HEAD
    h = rng.standard_normal((k_len, dm))  # (K, d_model) memory then segment
    w_q, w_ke, w_kr = (rng.standard_normal((dm, dh)) / np.sqrt(dm) for _ in range(3))
    return {
        "q": h[m:] @ w_q,  # (Q, d_head)
        "k": h @ w_ke,  # (K, d_head)
        "r": sinusoidal_pe(xl_relative_distances(q_len, k_len), dm, layout="half") @ w_kr,
        "u": rng.standard_normal(dh) * 0.5,  # (d_head,)
        "v": rng.standard_normal(dh) * 0.5,  # (d_head,)
    }


def _xl(numbers: dict[str, Scalar]) -> XlTerms:
    """c8-xl: the four terms of one head, with seeded W_q, W_k,E, W_k,R, u, v."""
    ex = xl_example()
    q_len, k_len, m = XL_QUERIES, XL_MEMORY + XL_QUERIES, XL_MEMORY
    dm, dh = XL_D_MODEL, XL_HEAD
    t = xl_terms(ex["q"], ex["k"], ex["r"], ex["u"], ex["v"])
    # (c) depends on the key only, (d) on i - j only: their spreads along those lines
    c_spread = float(np.max(np.ptp(t.c, axis=0)))
    d_spread = max(float(np.ptp(np.diagonal(t.d, off))) for off in range(-q_len + 1, k_len))
    rms = {key: float(np.sqrt(np.mean(getattr(t, key) ** 2))) for key in "abcd"}
    numbers.update(
        xl_queries=q_len,
        xl_d_model=dm,
        xl_head=dh,
        xl_rms_a=rms["a"],
        xl_rms_b=rms["b"],
        xl_rms_c=rms["c"],
        xl_rms_d=rms["d"],
        xl_c_spread=c_spread,
        xl_d_spread=d_spread,
    )
    return XlTerms(a=t.a, b=t.b, c=t.c, d=t.d, memory=m)


def _shift(numbers: dict[str, Scalar]) -> Shift:
    """c8-shift: shift the matrix of the columns' distances itself: what lands at (i, j) is the
    distance that (i, j) reads."""
    q_len, m = SHIFT_QUERIES, SHIFT_MEMORY
    k_len = m + q_len
    dist = xl_relative_distances(q_len, k_len)  # (R,) K .. -Q+1
    columns = np.tile(dist, (q_len, 1))  # (Q, R)
    shifted = rel_shift(columns, k_len)  # (Q, K)
    numbers.update(
        shift_queries=q_len,
        shift_memory=m,
        shift_keys=k_len,
        shift_rows=dist.size,
        shift_first=int(dist[0]),
        shift_last=int(dist[-1]),
        shift_products=q_len * dist.size,  # q_i·r_c computed: Q·(K + Q)
        shift_dropped=q_len,  # numbers dropped by the reshape
    )
    return Shift(columns=columns, picked=rel_shift_columns(q_len, k_len), shifted=shifted, memory=m)


def _shift_xl(numbers: dict[str, Scalar]) -> ShiftXl:
    """c8-shift-xl: Transformer-XL's ``_rel_shift`` of its distances K - 1 .. 0 (R = K): where a
    causal query sees the key, the cell holds M + i - j; beyond, a zero or a leftover."""
    q_len, m = SHIFT_QUERIES, SHIFT_MEMORY
    k_len = m + q_len
    dist = np.arange(k_len - 1, -1, -1, dtype=np.float64)  # (K,) K-1 .. 0
    columns = np.tile(dist, (q_len, 1))  # (Q, K)
    shifted = rel_shift_zero_pad(columns)  # (Q, K)
    visible = (rel_shift_zero_pad_columns(q_len, k_len) >= 0).astype(np.int64)  # (Q, K)
    numbers.update(
        shift_xl_rows=k_len,
        shift_xl_first=int(dist[0]),
        shift_xl_hidden=int(np.sum(visible == 0)),
    )
    return ShiftXl(columns=columns, shifted=shifted, visible=visible, memory=m)


def deberta_example() -> dict[str, Any]:
    """The seeded hidden states, projections and relative embeddings of c8-deberta (one head,
    biases 0), shared with tests/test_card8.py, which runs them through DebertaV2."""
    rng = np.random.default_rng(SEED + 3)
    hd, dh = DEB_HIDDEN, DEB_HEAD
    return {
        "hidden": rng.standard_normal((DEB_TOKENS, hd)),  # (n, hidden)
        "rel_embeddings": rng.standard_normal((2 * DEB_BUCKETS, hd)),  # (2s, hidden)
        **{w: rng.standard_normal((hd, dh)) / np.sqrt(hd) for w in ("wq", "wk", "wqr", "wkr")},
    }


def _deberta(numbers: dict[str, Scalar]) -> Deberta:
    """c8-deberta: c2c, c2p, p2c of one head, log-bucketed δ, over √(3d)."""
    ex = deberta_example()
    h, p = ex["hidden"], ex["rel_embeddings"]
    rel = deberta_relative_positions(DEB_TOKENS, DEB_TOKENS, DEB_BUCKETS, DEB_MAX_POSITION)
    t = disentangled_terms(
        h @ ex["wq"], h @ ex["wk"], p @ ex["wqr"], p @ ex["wkr"], rel, DEB_BUCKETS
    )
    scale = disentangled_scale(DEB_HEAD)
    slots = disentangled_slots(rel, DEB_BUCKETS)
    rms = {k: float(np.sqrt(np.mean((getattr(t, k) / scale) ** 2))) for k in ("c2c", "c2p", "p2c")}
    numbers.update(
        deb_n=DEB_TOKENS,
        deb_head=DEB_HEAD,
        deb_buckets=DEB_BUCKETS,
        deb_rows=2 * DEB_BUCKETS,
        deb_max_position=DEB_MAX_POSITION,
        deb_scale=scale,
        deb_scale_one=float(np.sqrt(DEB_HEAD)),
        deb_scale_ratio=scale / float(np.sqrt(DEB_HEAD)),
        deb_rms_c2c=rms["c2c"],
        deb_rms_c2p=rms["c2p"],
        deb_rms_p2c=rms["p2c"],
        deb_delta_first=int(rel[0, -1]),
        deb_distance_first=-(DEB_TOKENS - 1),
        deb_slots_used=int(np.unique(slots).size),
    )
    return Deberta(c2c=t.c2c / scale, c2p=t.c2p / scale, p2c=t.p2c / scale, d_head=DEB_HEAD)


def linear_example() -> dict[str, Any]:
    """c8-linear's head: q, k (n, d), v (n, 4) and RoPE's frequencies (shared with the tests)."""
    rng = np.random.default_rng(SEED + 4)
    n, d = LIN_TOKENS, LIN_HEAD
    return {
        "q": rng.standard_normal((n, d)),
        "k": rng.standard_normal((n, d)),
        "v": rng.standard_normal((n, 4)),
        "inv_freq": pair_frequencies(d, LIN_BASE),  # (d/2,)
    }


def _linear(numbers: dict[str, Scalar]) -> Linear:
    """c8-linear: linear attention with RoPE in the numerator; order without position; what a
    rotated denominator would be."""
    ex = linear_example()
    q, k, v, inv = ex["q"], ex["k"], ex["v"], ex["inv_freq"]
    n = q.shape[0]
    rev = np.arange(n)[::-1]
    plain, plain_rev = linear_attention(q, k, v), linear_attention(q[rev], k[rev], v[rev])
    rot, rot_rev = linear_attention(q, k, v, inv), linear_attention(q[rev], k[rev], v[rev], inv)
    fq, fk = elu_feature_map(q), elu_feature_map(k)  # (n, d)
    rotated_den = (apply_rope(fq, n, inv) @ apply_rope(fk, n, inv).T).sum(axis=1)  # (n,)
    negative = int(np.sum(rot.numerator < 0))
    numbers.update(
        lin_n=n,
        lin_head=LIN_HEAD,
        lin_pairs=n * n,
        lin_order_plain=float(np.max(np.abs(plain_rev.outputs - plain.outputs[rev]))),
        lin_order_rope=float(np.max(np.abs(rot_rev.outputs - rot.outputs[rev]))),
        lin_negative=negative,
        lin_den_min=float(plain.denominator.min()),
        lin_den_rot_min=float(rotated_den.min()),
        lin_den_rot_ratio=float(np.min(rotated_den / plain.denominator)),
        lin_row_sum_min=float(rot.weights.sum(axis=1).min()),
        lin_row_sum_max=float(rot.weights.sum(axis=1).max()),
    )
    return Linear(numerator=rot.weights, negative=negative)


EX_SHAW_CLIP, EX_SHAW_LENGTH = 4, 512  # the exercise's clip and sequence length
EX_SHIFT_QUERIES, EX_SHIFT_MEMORY = 3, 5  # the exercise's shift
EX_SHIFT_CELL = (2, 1)  # query i, key j


def _exercises(numbers: dict[str, Scalar]) -> None:
    """The page's exercises: Shaw's table for a long sequence, and one cell of the shift."""
    q_len, m = EX_SHIFT_QUERIES, EX_SHIFT_MEMORY
    cols = rel_shift_columns(q_len, m + q_len)
    numbers.update(
        drill_shaw_clip=EX_SHAW_CLIP,
        drill_shaw_length=EX_SHAW_LENGTH,
        drill_shaw_rows=shaw_table_rows(EX_SHAW_CLIP),
        drill_shaw_distances=2 * EX_SHAW_LENGTH - 1,
        drill_shift_queries=q_len,
        drill_shift_memory=m,
        drill_shift_rows=m + 2 * q_len,
        drill_shift_query=EX_SHIFT_CELL[0],
        drill_shift_key=EX_SHIFT_CELL[1],
        drill_shift_column=int(cols[EX_SHIFT_CELL]),
        drill_shift_distance=int(xl_relative_distances(q_len, m + q_len)[cols[EX_SHIFT_CELL]]),
    )


def compute(params: PEParams) -> CardContent:
    numbers: dict[str, Scalar] = Placeholders()
    _exercises(numbers)
    figures: dict[str, Any] = {
        "c8-terms": _terms(params, numbers),
        "c8-shaw": _shaw(params, numbers),
        "c8-xl": _xl(numbers),
        "c8-shift": _shift(numbers),
        "c8-deberta": _deberta(numbers),
        "c8-linear": _linear(numbers),
        "c8-shift-xl": _shift_xl(numbers),
    }
    assert tuple(figures) == PANEL_IDS + EXTRA_IDS
    return CardContent(card=CARD, figures=figures, numbers=numbers)
