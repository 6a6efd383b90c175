"""Card 4 -- beyond rotation: ALiBi, RoPE length scaling, T5's relative buckets, 2-D grids.

Every array and number here comes from the math layer (``posecards.encodings``); this module
only chooses the settings shown on the card and picks values out of the results.

The card's four panels (``PANEL_IDS``) hold six plots, one idea each. Details that no longer
fit on the card are figures of their own (``EXTRA_IDS``, drawn by ``posecards figure`` and the
lecture deck): the ALiBi slopes for 8 and 12 heads, DeBERTa's log buckets, and why RoPE fails past
its training length (the angles each pair reaches at test length that it never reached in
training, under each scaling method and a larger base).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders, Scalar
from posecards.content.figdata.card4 import (
    Alibi,
    AlibiSlopes,
    Buckets,
    Deberta,
    Grid2d,
    RopeScaling,
    UnseenAngles,
)
from posecards.encodings.alibi import alibi_bias, alibi_bias_key_only, alibi_slopes
from posecards.encodings.buckets import deberta_log_bucket, t5_relative_bucket
from posecards.encodings.cosine import cosine_similarity
from posecards.encodings.grid2d import sincos_2d_pe, sum_angle_2d_pe
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.softmax import softmax
from posecards.encodings.unseen_angles import angle_reach, unseen_angles

PANEL_IDS = ("c4-alibi", "c4-rope-scaling", "c4-buckets", "c4-grid2d")  # on the card
EXTRA_IDS = ("c4-alibi-slopes", "c4-deberta", "c4-unseen-angles")  # figures only

# --- ALiBi -------------------------------------------------------------------------------
ALIBI_HEADS = 8
ALIBI_HEADS_ODD = 12  # not a power of two: 8 slopes of the 8-head set + every other of 16
ALIBI_SHOWN = (0, 3, 7)  # first, middle, last head of 8 (0-based)
ALIBI_MATRIX_LEN = 16

# --- RoPE scaling ------------------------------------------------------------------------
ROPE_DIM = 128  # head dimension of Llama-style models
ROPE_ORIG = 8192  # original context length L (original_max_position_embeddings)
ROPE_FACTOR = 4  # every method on the plot at the same factor, Llama 3's too
LLAMA31_FACTOR = 8  # the factor Llama 3.1 ships with (its config.json), quoted in the text
# (key, scaling dict, seq_len): six settings, in legend order; the card draws ROPE_SHOWN (the
# two dynamic-NTK rows are in the exported data and the alt text only)
ROPE_SCHEMES: tuple[tuple[str, dict[str, Any], int | None], ...] = (
    ("linear", {"rope_type": "linear", "factor": ROPE_FACTOR}, None),
    ("ntk", {"rope_type": "ntk", "factor": ROPE_FACTOR}, None),
    ("dynamic2", {"rope_type": "dynamic", "factor": ROPE_FACTOR}, 2 * ROPE_ORIG),
    ("dynamic4", {"rope_type": "dynamic", "factor": ROPE_FACTOR}, 4 * ROPE_ORIG),
    (
        "yarn",
        {
            "rope_type": "yarn",
            "factor": ROPE_FACTOR,
            "original_max_position_embeddings": ROPE_ORIG,
        },
        None,
    ),
    (
        "llama3",
        {
            "rope_type": "llama3",
            "factor": ROPE_FACTOR,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": ROPE_ORIG,
        },
        None,
    ),
)

ROPE_SHOWN = ("linear", "ntk", "yarn", "llama3")

# --- why RoPE fails past its training length: angles never seen in training -----------------
UNSEEN_TEST = ROPE_ORIG * ROPE_FACTOR  # tested on s L tokens, every method at factor s
UNSEEN_BASE = 500_000.0  # "a larger base": trained and tested with it, no scaling
UNSEEN_MIN = 0.01  # rad: a pair "sees new angles" when its unseen arc is longer than this
# (key, scaling dict or None, trained base or None = the card's base), in legend order
UNSEEN_METHODS: tuple[tuple[str, dict[str, Any] | None, float | None], ...] = (
    ("none", None, None),
    *((k, sc, None) for k, sc, _ in ROPE_SCHEMES if k in ROPE_SHOWN),
    ("base", None, UNSEEN_BASE),
)

# --- buckets -----------------------------------------------------------------------------
T5_BUCKETS = 32
T5_MAX_DISTANCE = 128
T5_RANGE = 300
DEBERTA_BUCKET_SIZE = 256
DEBERTA_MAX_POSITION = 512
DEBERTA_RANGE = 1000

# --- 2-D grid ----------------------------------------------------------------------------
GRID = 14  # 224 px image / 16 px patches (ViT-B/16, MAE)
GRID_PATCHES = ((7, 7),)  # (row y, column x) of the patch whose maps are shown: the centre
COLLISION_A = (2, 1)  # (row y, column x): the patch at x = 1, y = 2
COLLISION_B = (1, 2)  # the patch at x = 2, y = 1


def _alibi(params: PEParams, numbers: dict[str, Scalar]) -> tuple[Alibi, AlibiSlopes]:
    """(c4-alibi, c4-alibi-slopes): the bias of the steepest head and the weights it gives; the
    slopes of 8 and 12 heads."""
    slopes8 = alibi_slopes(ALIBI_HEADS)  # (8,)
    slopes12 = alibi_slopes(ALIBI_HEADS_ODD)  # (12,)
    slopes16 = alibi_slopes(2 * ALIBI_HEADS)  # (16,) the set the extra slopes are taken from
    shown = np.asarray(ALIBI_SHOWN)
    bias = alibi_bias(ALIBI_HEADS, ALIBI_MATRIX_LEN)[shown]  # (3, 16, 16), -inf above diagonal

    # Attention of the last query (i = L-1) on uniform content: softmax of the bias alone.
    # The key-only form m·j differs from -m·(L-1-j) by a constant per row: same softmax.
    length = params.positions
    key_bias = alibi_bias_key_only(ALIBI_HEADS, length)[:, 0, :]  # (8, L)
    weights = softmax(key_bias, axis=-1)[:, ::-1]  # (8, L), column d = distance L-1-j
    wrong = softmax(-key_bias, axis=-1)[:, ::-1]  # (8, L) positive slope +m·(i-j): wrong sign
    distance = np.arange(length, dtype=np.float64)  # (L,)

    first, last = ALIBI_SHOWN[0], ALIBI_SHOWN[-1]
    far = length - 1
    numbers.update(
        alibi_heads=ALIBI_HEADS,
        alibi_heads_odd=ALIBI_HEADS_ODD,
        alibi_odd_extra=ALIBI_HEADS_ODD - ALIBI_HEADS,  # heads beyond the power of two
        alibi_heads_double=2 * ALIBI_HEADS,  # the set every other slope is taken from
        alibi_m_first=float(slopes8[0]),
        alibi_m_last=float(slopes8[-1]),
        alibi_inv_first=float(1.0 / slopes8[0]),
        alibi_inv_last=float(1.0 / slopes8[-1]),
        alibi_mid_head=ALIBI_SHOWN[1] + 1,
        alibi_last_head=ALIBI_SHOWN[2] + 1,
        alibi_len=ALIBI_MATRIX_LEN,
        alibi_corner=float(bias[0, -1, 0]),  # bias of the farthest key in the 16 x 16 matrix
        alibi_positions=length,
        alibi_far=far,
        # per-token decay factor w(d+1)/w(d) = exp(-m), read off the softmax
        alibi_step_first=float(weights[first, 1] / weights[first, 0]) if length > 1 else 1.0,
        alibi_step_last=float(weights[last, 1] / weights[last, 0]) if length > 1 else 1.0,
        alibi_far_near_last=float(weights[last, far] / weights[last, 0]),
        alibi_far_first=float(weights[first, far]),
        alibi_far_wrong=float(wrong[first, far]),
        alibi_near_wrong=float(wrong[first, 0]),
    )
    panel = Alibi(
        heads=ALIBI_HEADS,
        shown_heads=shown + 1,  # 1-based head numbers
        shown_slopes=slopes8[shown],
        shown_inv_slopes=1.0 / slopes8[shown],
        bias=bias[0],  # (16, 16) the steepest head, -inf above the diagonal
        bias_head=first + 1,
        bias_inv_slope=float(1.0 / slopes8[first]),
        distance=distance,
        weights=weights[shown],  # (3, L)
        weights_wrong_first=wrong[first],  # (L,) exported, drawn nowhere (a pitfall)
    )
    slopes = AlibiSlopes(
        slopes8=slopes8,
        slopes12=slopes12,
        slopes16=slopes16,
        odd_first_extra=float(slopes12[ALIBI_HEADS]),
        odd_last_extra=float(slopes12[-1]),
    )
    return panel, slopes


def _rope_scaling(params: PEParams, numbers: dict[str, Scalar]) -> RopeScaling:
    plain, _ = rope_inv_freq(ROPE_DIM, params.base)  # (64,)
    wavelength = 2.0 * np.pi / plain  # (64,) original wavelength in positions
    ratios = []
    attention = []
    factors = []
    for _key, scaling, seq_len in ROPE_SCHEMES:
        inv, att = rope_inv_freq(
            ROPE_DIM,
            params.base,
            scaling,
            seq_len=seq_len,
            max_position_embeddings=ROPE_ORIG if seq_len is not None else None,
        )
        ratios.append(inv / plain)  # (64,) scaled / original frequency
        attention.append(att)
        factors.append(float(scaling["factor"]))
    ratio = np.asarray(ratios, dtype=np.float64)  # (6, 64)
    keys = [k for k, _, _ in ROPE_SCHEMES]
    at = {k: i for i, k in enumerate(keys)}
    untouched = np.isclose(ratio, 1.0, rtol=1e-12, atol=0.0).sum(axis=1)  # (6,)

    numbers.update(
        rope_base=float(params.base),
        rope_dim=ROPE_DIM,
        rope_pairs=ROPE_DIM // 2,
        rope_orig=ROPE_ORIG,
        rope_factor=ROPE_FACTOR,
        llama3_factor=ROPE_FACTOR,
        llama31_factor=LLAMA31_FACTOR,
        rope_longest=float(wavelength[-1]),
        pi_short_orig=float(wavelength[0]),
        pi_short_scaled=float(wavelength[0] / ratio[at["linear"], 0]),
        pi_ratio=float(ratio[at["linear"], 0]),
        ntk_ratio_high=float(ratio[at["ntk"], 0]),
        ntk_ratio_low=float(ratio[at["ntk"], -1]),
        yarn_ratio_high=float(ratio[at["yarn"], 0]),
        yarn_ratio_low=float(ratio[at["yarn"], -1]),
        dyn2_ratio_low=float(ratio[at["dynamic2"], -1]),
        dyn4_ratio_low=float(ratio[at["dynamic4"], -1]),
        dyn2_len=2 * ROPE_ORIG,
        dyn4_len=4 * ROPE_ORIG,
        yarn_attention=float(attention[at["yarn"]]),
        yarn_score_factor=float(attention[at["yarn"]]) ** 2,  # cos, sin x a: q·k x a^2
        yarn_untouched=int(untouched[at["yarn"]]),
        llama3_untouched=int(untouched[at["llama3"]]),
        llama3_ratio_low=float(ratio[at["llama3"], -1]),
    )
    return RopeScaling(
        keys=keys,
        shown=list(ROPE_SHOWN),
        pair=np.arange(ROPE_DIM // 2, dtype=np.float64),  # (64,)
        wavelength=wavelength,  # (64,)
        ratio=ratio,  # (6, 64)
        factor=np.asarray(factors, dtype=np.float64),  # (6,)
        attention_factor=np.asarray(attention, dtype=np.float64),  # (6,)
        # cos and sin are multiplied by the attention factor, so q and k are, and q·k by its square
        score_factor=np.asarray(attention, dtype=np.float64) ** 2,  # (6,)
        seq_len=np.asarray(
            [s if s is not None else 0 for _, _, s in ROPE_SCHEMES], dtype=np.float64
        ),  # (6,), 0 = not used
        orig_len=float(ROPE_ORIG),
        head_dim=ROPE_DIM,
        base=float(params.base),
    )


def _first_shared(distance: np.ndarray, bucket: np.ndarray) -> int:
    """Smallest distance (>= 0) whose bucket also holds another distance (distance sorted)."""
    _, inverse, counts = np.unique(bucket, return_inverse=True, return_counts=True)
    shared = counts[inverse] > 1  # (n,)
    return int(distance[np.argmax(shared)])


def _first_in_last(distance: np.ndarray, bucket: np.ndarray) -> int:
    """Smallest distance that falls into the last bucket (distance sorted)."""
    return int(distance[np.argmax(bucket == bucket.max())])


def _t5_buckets(numbers: dict[str, Scalar]) -> Buckets:
    """T5's buckets for keys before the query, n = query - key = 0..T5_RANGE: the encoder's
    bidirectional rule (half the buckets per side) and the decoder's unidirectional one."""
    n = np.arange(T5_RANGE + 1)  # (301,)
    enc = t5_relative_bucket(-n, True, T5_BUCKETS, T5_MAX_DISTANCE)  # (301,) 0..15
    dec = t5_relative_bucket(-n, False, T5_BUCKETS, T5_MAX_DISTANCE)  # (301,) 0..31
    enc_exact, dec_exact = _first_shared(n, enc), _first_shared(n, dec)
    enc_last_start, dec_last_start = _first_in_last(n, enc), _first_in_last(n, dec)
    numbers.update(
        t5_buckets=T5_BUCKETS,
        t5_side_buckets=T5_BUCKETS // 2,
        t5_max_distance=T5_MAX_DISTANCE,
        t5_range=T5_RANGE,
        t5_enc_exact=enc_exact,  # distances 0 .. exact-1 have a bucket each
        t5_enc_last_start=enc_last_start,
        t5_enc_last_bucket=int(enc.max()),
        t5_dec_exact=dec_exact,
        t5_dec_last_start=dec_last_start,
        t5_dec_last_bucket=int(dec.max()),
    )
    return Buckets(
        distance=n.astype(np.float64),  # (301,) n = query - key
        encoder=enc.astype(np.float64),  # (301,)
        decoder=dec.astype(np.float64),  # (301,)
        num_buckets=T5_BUCKETS,
        max_distance=T5_MAX_DISTANCE,
        enc_exact=enc_exact,
        dec_exact=dec_exact,
        enc_last_start=enc_last_start,
        dec_last_start=dec_last_start,
    )


def _deberta_buckets() -> Deberta:
    """DeBERTa's log buckets: indices into its relative-position embeddings (c2p/p2c terms)."""
    deb_r = np.arange(-DEBERTA_RANGE, DEBERTA_RANGE + 1)  # (2001,) query - key
    deb_b = deberta_log_bucket(deb_r, DEBERTA_BUCKET_SIZE, DEBERTA_MAX_POSITION)  # (2001,)
    m = np.arange(DEBERTA_RANGE + 1)  # (1001,)
    deb_side = deberta_log_bucket(m, DEBERTA_BUCKET_SIZE, DEBERTA_MAX_POSITION)  # (1001,)
    edge = DEBERTA_MAX_POSITION - 1
    return Deberta(
        distance=deb_r.astype(np.float64),
        bucket=deb_b.astype(np.float64),
        bucket_size=DEBERTA_BUCKET_SIZE,
        max_position=DEBERTA_MAX_POSITION,
        exact=DEBERTA_BUCKET_SIZE // 2,  # the formula's exact range |r| <= bucket_size/2
        first_shared=_first_shared(m, deb_side),
        edge=edge,
        edge_bucket=int(deb_side[edge]),
        far_bucket=int(deb_side[-1]),
    )


def _distinct_rows(vectors: np.ndarray) -> int:
    """How many different vectors (bit-for-bit equal rows count once) a table holds."""
    return len({row.tobytes() for row in np.ascontiguousarray(vectors)})


def _grid2d(params: PEParams, numbers: dict[str, Scalar]) -> Grid2d:
    # MAE splits d into 4 blocks (x: sin, cos; y: sin, cos): use the largest multiple of 4.
    d_used = max(4, params.d_model - params.d_model % 4)
    mae = sincos_2d_pe(GRID, GRID, d_used, params.base)  # (196, d)
    wrong = sum_angle_2d_pe(GRID, GRID, d_used, params.base)  # (196, d)
    idx = np.asarray([y * GRID + x for y, x in GRID_PATCHES])  # (3,) row-major token index
    sim_mae = cosine_similarity(mae[idx], mae).reshape(len(idx), GRID, GRID)  # (3, 14, 14)
    sim_sum = cosine_similarity(wrong[idx], wrong).reshape(len(idx), GRID, GRID)  # (3, 14, 14)

    a = COLLISION_A[0] * GRID + COLLISION_A[1]
    b = COLLISION_B[0] * GRID + COLLISION_B[1]
    diff_sum = float(np.max(np.abs(wrong[a] - wrong[b])))
    diff_mae = float(np.max(np.abs(mae[a] - mae[b])))
    centre = GRID_PATCHES[-1][0] * GRID + GRID_PATCHES[-1][1]
    same_as_centre = int(np.sum(np.all(wrong == wrong[centre], axis=1)))

    numbers.update(
        grid=GRID,
        grid_patches=GRID * GRID,
        grid_d=d_used,
        grid_d_model=params.d_model,
        grid_d_adjusted=d_used != params.d_model,
        grid_sum_distinct=_distinct_rows(wrong),
        grid_mae_distinct=_distinct_rows(mae),
        grid_diff_sum=diff_sum,
        grid_diff_mae=diff_mae,
        grid_cos_mae=float(cosine_similarity(mae[a], mae[b])[0, 0]),
        grid_same_centre=same_as_centre,
        grid_ax=COLLISION_A[1],  # the pair (x, y) = (1, 2) vs (2, 1)
        grid_ay=COLLISION_A[0],
        grid_centre_x=GRID_PATCHES[-1][1],
        grid_centre_y=GRID_PATCHES[-1][0],
        grid_centre_sum=GRID_PATCHES[-1][0] + GRID_PATCHES[-1][1],
    )
    return Grid2d(
        grid=GRID,
        base=float(params.base),
        d_model=params.d_model,
        d_used=d_used,
        d_adjusted=d_used != params.d_model,
        patches=np.asarray(GRID_PATCHES, dtype=np.float64),  # (3, 2): (row y, column x)
        sim_mae=sim_mae,
        sim_sum=sim_sum,
        collision_a=np.asarray(COLLISION_A, dtype=np.float64),  # (row y, column x)
        collision_b=np.asarray(COLLISION_B, dtype=np.float64),
        diff_sum=diff_sum,
        diff_mae=diff_mae,
    )


def _unseen(params: PEParams, numbers: dict[str, Scalar]) -> UnseenAngles:
    """For a head of 128 trained on L = 8,192 tokens and tested on 4 L: the arc of angles each
    pair reaches at test length that it never reached in training (``unseen_angles``), with no
    scaling, each scaling method of the rope-scaling panel, and a larger base."""
    rows, keys = [], []
    for key, scaling, trained_base in UNSEEN_METHODS:
        base = float(trained_base if trained_base is not None else params.base)
        train, _ = rope_inv_freq(ROPE_DIM, base)  # (64,) what the model was trained with
        test = train
        if scaling is not None:
            test, _ = rope_inv_freq(ROPE_DIM, base, scaling)  # (64,) what it runs with at 4 L
        rows.append(unseen_angles(train, test, ROPE_ORIG, UNSEEN_TEST))  # (64,)
        keys.append(key)
    unseen = np.asarray(rows, dtype=np.float64)  # (methods, 64)
    plain, _ = rope_inv_freq(ROPE_DIM, params.base)  # (64,)
    trained_reach = angle_reach(plain, ROPE_ORIG)  # (64,) arcs reached in training
    counts = (unseen > UNSEEN_MIN).sum(axis=1)  # (methods,)
    numbers.update(
        unseen_train=ROPE_ORIG,
        unseen_test=UNSEEN_TEST,
        unseen_min=UNSEEN_MIN,
        unseen_big_base=UNSEEN_BASE,
        unseen_full_turn=int(np.sum(trained_reach >= 2 * np.pi)),  # pairs that turned fully
        **{f"unseen_{k}_pairs": int(c) for k, c in zip(keys, counts, strict=True)},
        **{f"unseen_{k}_max": float(u.max()) for k, u in zip(keys, unseen, strict=True)},
    )
    return UnseenAngles(
        methods=keys,
        unseen=unseen,  # (methods, 64) rad, 0 .. 2 pi
        pairs_new=counts.astype(np.int64),  # (methods,)
        pair=np.arange(ROPE_DIM // 2, dtype=np.float64),  # (64,)
        train_length=ROPE_ORIG,
        test_length=UNSEEN_TEST,
        threshold=UNSEEN_MIN,
        big_base=UNSEEN_BASE,
    )


EX_HEAD, EX_DISTANCE = 2, 100  # the exercise's ALiBi head (1-based) and key distance


def _exercises(numbers: dict[str, Scalar]) -> None:
    """The page's exercises: one ALiBi bias, and the base NTK-aware scaling picks."""
    slope = float(alibi_slopes(ALIBI_HEADS)[EX_HEAD - 1])  # m_h = 2^(-8h/H), H a power of two
    d, s = ROPE_DIM, float(ROPE_FACTOR)
    new_base = 10000.0 * s ** (d / (d - 2))  # b' = b s^(d/(d-2))
    before = 2.0 * np.pi * 10000.0 ** ((d - 2) / d)  # slowest pair i = d/2 - 1: 2 pi b^((d-2)/d)
    after = 2.0 * np.pi * new_base ** ((d - 2) / d)
    numbers.update(
        drill_heads=ALIBI_HEADS,
        drill_head=EX_HEAD,
        drill_dist=EX_DISTANCE,
        drill_slope=slope,
        drill_bias=-slope * EX_DISTANCE,
        drill_dim=d,
        drill_factor=s,
        drill_base=10000.0,
        drill_ntk_base=new_base,
        drill_slow_before=before,
        drill_slow_after=after,
        drill_slow_ratio=after / before,
        drill_fast_after=2.0 * np.pi,  # pair 0: omega_0 = b'^0 = 1 for every base
    )


def compute(params: PEParams) -> CardContent:
    numbers: dict[str, Scalar] = Placeholders()
    alibi, slopes = _alibi(params, numbers)
    deb = _deberta_buckets()
    figures: dict[str, Any] = {
        "c4-alibi": alibi,
        "c4-rope-scaling": _rope_scaling(params, numbers),
        "c4-buckets": _t5_buckets(numbers),
        "c4-grid2d": _grid2d(params, numbers),
        "c4-alibi-slopes": slopes,
        "c4-deberta": deb,
        "c4-unseen-angles": _unseen(params, numbers),
    }
    assert tuple(figures) == PANEL_IDS + EXTRA_IDS
    # the figure-page-only figures' text (cards/card4.toml [figures]) quotes these
    _exercises(numbers)
    numbers.update(
        alibi_odd_first_extra=slopes.odd_first_extra,
        alibi_odd_last_extra=slopes.odd_last_extra,
        deberta_bucket_size=deb.bucket_size,
        deberta_max_position=deb.max_position,
        deberta_exact=deb.exact,
        deberta_edge=deb.edge,
        deberta_edge_bucket=deb.edge_bucket,
        deberta_far_bucket=deb.far_bucket,
        deberta_range=int(deb.distance[-1]),
    )
    return CardContent(card=4, figures=figures, numbers=numbers)
