"""Card 1: why position? Self-attention alone cannot see word order.

Panels: the permutation demo (attention with and without PE on a sentence and its reversal),
where position can enter a model (added to the input, rotating q and k, a bias on the scores,
nowhere) with what a shift of every position does to the scores in each case, the road from
counting to the sinusoid (integer, normalised, binary digits, their smooth twins), and the
wavelength ladder against typical context lengths. Figure pages: the PE values for
d_model = 8 as a table, the trajectory of the PE vectors in 2-D (UMAP and PCA) and two raw
pairs on their circles (c1-pairs). The learned-table comparison (no row past the end, memory)
feeds a takeaway and a pitfall.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posecards.cache import array_key, memo_array
from posecards.config import PEParams
from posecards.content import CardContent, Scalar, declare
from posecards.content.figdata.card1 import (
    Counting,
    Permutation,
    PeTable,
    Trajectory,
    Wavelengths,
    Where,
)
from posecards.encodings.alibi import alibi_bias
from posecards.encodings.attention import attention_permutation_demo
from posecards.encodings.counting import binary_digits, normalised_positions, smooth_digits
from posecards.encodings.learned import PositionOutOfRangeError, learned_pe
from posecards.encodings.projection import project_2d
from posecards.encodings.rope import apply_rope
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.sampling import spread_positions
from posecards.encodings.sinusoidal import sinusoidal_pe, wavelengths

# The sentence of the permutation demo, per card language; the demo reverses it.
TOKENS: dict[str, tuple[str, ...]] = {
    "en": ("I", "eat", "apples"),
    "zh": ("我", "吃", "苹果"),
}
DEMO_D_MODEL = 16  # a small attention head: the property shown does not depend on its size
# PE table panel: a small encoding that fits on a slide
TABLE_D_MODEL = 8
TABLE_POSITIONS = 10
# trajectory (figure page): the card's positions 0..positions-1, at most this many of them
TRAJECTORY_POSITIONS = 256
# where position enters: one head of width DEMO_D_MODEL on WHERE_TOKENS random tokens, every
# position shifted by WHERE_SHIFT
WHERE_TOKENS = 8
WHERE_SHIFT = 100
WHERE_REL_CLIP = 4  # relative vectors: one learned vector per distance -K..K (Shaw et al.)
# the road from counting (c1-counting): positions 0..COUNT_POSITIONS-1, COUNT_BITS binary digits, and a
# shorter sequence of COUNT_SHORT tokens to show that p / (N - 1) depends on N
COUNT_POSITIONS = 16
COUNT_BITS = 3
COUNT_SHORT = 8
COUNT_P = 5  # the position whose normalised value is compared
# typical context lengths marked on the wavelength ladder
CONTEXT_LENGTHS: tuple[int, ...] = (512, 2048, 8192, 32768, 131072)
COUNT_CONTEXT = 2048  # "how many pairs turn at least once within this context"
# a learned table with 2048 rows (a 2048-token context) of width 768
LEARNED_ROWS = 2048
LEARNED_DIM = 768
MIB = 2**20


def _permutation(params: PEParams) -> tuple[Permutation, dict[str, Scalar]]:
    data: dict[str, Any] = {}
    numbers: dict[str, Scalar] = {}
    for lang, tokens in TOKENS.items():
        demo = attention_permutation_demo(tokens, d_model=DEMO_D_MODEL, seed=0)
        p = list(demo.order)
        data[f"tokens_{lang}"] = list(demo.tokens)
        data[f"tokens_reordered_{lang}"] = [demo.tokens[i] for i in p]
        data[f"weights_plain_{lang}"] = demo.weights_plain  # (n, n)
        data[f"weights_plain_reordered_{lang}"] = demo.weights_plain_reordered  # (n, n)
        data[f"weights_pe_{lang}"] = demo.weights_pe  # (n, n)
        data[f"weights_pe_reordered_{lang}"] = demo.weights_pe_reordered  # (n, n)
        data[f"deviation_without_pe_{lang}"] = demo.deviation_without_pe
        data[f"deviation_with_pe_{lang}"] = demo.deviation_with_pe
        # the same comparison on the weight matrices: W(PX) vs P W(X) P^T
        data[f"weight_deviation_without_pe_{lang}"] = float(
            np.abs(demo.weights_plain_reordered - demo.weights_plain[p][:, p]).max()
        )
        data[f"weight_deviation_with_pe_{lang}"] = float(
            np.abs(demo.weights_pe_reordered - demo.weights_pe[p][:, p]).max()
        )
        numbers[f"dev_plain_{lang}"] = demo.deviation_without_pe
        numbers[f"dev_pe_{lang}"] = demo.deviation_with_pe
        numbers[f"wdev_plain_{lang}"] = data[f"weight_deviation_without_pe_{lang}"]
        numbers[f"wdev_pe_{lang}"] = data[f"weight_deviation_with_pe_{lang}"]
    data["order"] = np.asarray(demo.order, dtype=np.int64)
    data["demo_d_model"] = DEMO_D_MODEL
    numbers["demo_d_model"] = DEMO_D_MODEL
    numbers["n_tokens"] = len(TOKENS["en"])
    return Permutation(**data), numbers


def _pe_table(params: PEParams) -> tuple[PeTable, dict[str, Scalar]]:
    pe = sinusoidal_pe(TABLE_POSITIONS, TABLE_D_MODEL, params.base)  # (10, 8), interleaved
    lam = wavelengths(TABLE_D_MODEL, params.base)  # (4,)
    data = PeTable(
        pe=pe,
        positions=np.arange(TABLE_POSITIONS, dtype=np.int64),
        dims=np.arange(TABLE_D_MODEL, dtype=np.int64),
        d_model=TABLE_D_MODEL,
        wavelengths=lam,
        base=params.base,
    )
    numbers: dict[str, Scalar] = {
        "table_d": TABLE_D_MODEL,
        "table_rows": TABLE_POSITIONS,
        "table_last_pos": TABLE_POSITIONS - 1,
        "table_last_dim": TABLE_D_MODEL - 1,
        "table_lam_first": float(lam[0]),
        "table_lam_last": float(lam[-1]),
        "table_pe_1_0": float(pe[1, 0]),  # sin(1 · ω_0) = sin(1)
        "table_pe_9_0": float(pe[9, 0]),
        "table_pe_9_last": float(pe[9, -1]),  # slowest cos: still close to 1
    }
    return data, numbers


def _trajectory(params: PEParams) -> tuple[Trajectory, dict[str, Scalar]]:
    d = params.d_model
    # the card's positions 0..positions-1 (the footer's), at most TRAJECTORY_POSITIONS of them
    positions = spread_positions(params.positions, TRAJECTORY_POSITIONS)  # (n,)
    pe = sinusoidal_pe(positions, d, params.base)  # (n, d)
    slow = d // 4  # pair index of the slow pair: dims (2·slow, 2·slow + 1)
    lam = wavelengths(d, params.base)  # (d/2,)
    last = int(positions[-1])
    # how many full turns each pair makes over positions 0..N-1: the angle runs from 0 to
    # (N-1)·ω, so (N-1)/λ turns (not N/λ)
    fast_turns = last / float(lam[0])
    slow_turns = last / float(lam[slow])
    data = Trajectory(
        positions=positions.astype(np.int64),
        # the UMAP fit costs seconds (numba): cached by the exact input bytes and library versions
        umap=memo_array(
            "umap",
            array_key("umap", [pe], seed=0),
            lambda: project_2d(pe, method="umap", seed=0),
            libraries=("umap-learn", "numba", "pynndescent", "numpy", "scikit-learn"),
        ),  # (n, 2)
        pca=project_2d(pe, method="pca"),  # (n, 2)
        fast=pe[:, 0:2].copy(),  # (n, 2): pair 0 = dims 0, 1
        slow=pe[:, 2 * slow : 2 * slow + 2].copy(),  # (n, 2)
        slow_pair=slow,
        slow_dims=np.asarray([2 * slow, 2 * slow + 1], dtype=np.int64),
        fast_wavelength=float(lam[0]),
        slow_wavelength=float(lam[slow]),
        fast_turns=fast_turns,
        slow_turns=slow_turns,
        d_model=d,
        base=params.base,
    )
    numbers: dict[str, Scalar] = {
        "traj_n": int(positions.size),
        "traj_last": last,
        "slow_pair": slow,
        "slow_dim0": 2 * slow,
        "slow_dim1": 2 * slow + 1,
        "lam_fast": float(lam[0]),
        "lam_slow": float(lam[slow]),
        "slow_turns": slow_turns,
        "fast_turns": fast_turns,
    }
    return data, numbers


def _where(params: PEParams) -> tuple[Where, dict[str, Scalar]]:
    """Where position can enter, and what shifting every position by WHERE_SHIFT does to the
    attention scores in each case: the largest change of one head's scores."""
    d, n, s = DEMO_D_MODEL, WHERE_TOKENS, float(WHERE_SHIFT)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, d))  # (n, d): token embeddings
    w_q = rng.standard_normal((d, d)) / np.sqrt(d)  # (d, d)
    w_k = rng.standard_normal((d, d)) / np.sqrt(d)  # (d, d)
    pos = np.arange(n, dtype=np.float64)  # (n,)

    def added(p: np.ndarray) -> np.ndarray:
        xp = x + sinusoidal_pe(p, d, params.base)  # (n, d): position added to the input
        scores: np.ndarray = (xp @ w_q) @ (xp @ w_k).T / np.sqrt(d)  # (n, n)
        return scores

    inv_freq, _ = rope_inv_freq(d, params.base)  # (d/2,)
    q, k = x @ w_q, x @ w_k  # (n, d) each

    def rotated(p: np.ndarray) -> np.ndarray:
        scores: np.ndarray = apply_rope(q, p, inv_freq) @ apply_rope(k, p, inv_freq).T / np.sqrt(d)
        return scores  # (n, n)

    plain = q @ k.T / np.sqrt(d)  # (n, n): no position anywhere (NoPE)

    def nope(p: np.ndarray) -> np.ndarray:
        scores: np.ndarray = q @ k.T / np.sqrt(d)  # (n, n): the positions p enter nowhere
        return scores

    # ALiBi's bias depends on i - j only: the block of a longer bias at positions s..s+n-1
    bias = alibi_bias(1, n + WHERE_SHIFT, causal=False)[0]  # (n+s, n+s)
    biased, biased_shifted = plain + bias[:n, :n], plain + bias[WHERE_SHIFT:, WHERE_SHIFT:]
    # relative vectors inside attention (Shaw et al.'s keys; Transformer-XL and DeBERTa add such
    # terms too): s_ij = q_i . (k_j + a[clip(j - i, -K, K)]) / sqrt(d), a learned table of vectors
    rel_table = rng.standard_normal((2 * WHERE_REL_CLIP + 1, d))  # (2K+1, d)

    def relative(p: np.ndarray) -> np.ndarray:
        dist = np.clip(p[None, :] - p[:, None], -WHERE_REL_CLIP, WHERE_REL_CLIP)  # (n, n) j - i
        a = rel_table[(dist + WHERE_REL_CLIP).astype(np.int64)]  # (n, n, d)
        scores: np.ndarray = (plain * np.sqrt(d) + np.einsum("id,ijd->ij", q, a)) / np.sqrt(d)
        return scores  # (n, n)

    changes = {
        "added": float(np.abs(added(pos + s) - added(pos)).max()),
        "rotated": float(np.abs(rotated(pos + s) - rotated(pos)).max()),
        "bias": float(np.abs(biased_shifted - biased).max()),
        "none": float(np.abs(nope(pos + s) - nope(pos)).max()),
    }
    relative_change = float(np.abs(relative(pos + s) - relative(pos)).max())
    data = Where(
        places=["added", "rotated", "bias", "none"],
        change=np.array([changes[k] for k in ("added", "rotated", "bias", "none")]),
        shift=WHERE_SHIFT,
        width=d,
        tokens=n,
        score_scale=float(np.abs(plain).mean()),
    )
    numbers: dict[str, Scalar] = {
        "where_shift": WHERE_SHIFT,
        "where_n": n,
        "where_added": changes["added"],
        "where_rotated": changes["rotated"],
        "where_bias": changes["bias"],
        "where_none": changes["none"],
        "where_relative": relative_change,  # relative vectors: they too see only j - i
        "where_score_scale": data.score_scale,
    }
    return data, numbers


def _counting(params: PEParams) -> tuple[Counting, dict[str, Scalar]]:
    """The road from counting to the sinusoid: p, p / (N - 1) for two lengths N, binary digits
    and their smooth twins over positions 0..COUNT_POSITIONS-1."""
    n, bits = COUNT_POSITIONS, COUNT_BITS
    pos = np.arange(n, dtype=np.float64)  # (n,)
    short = np.arange(COUNT_SHORT, dtype=np.float64)  # (N_short,)
    norm_long = normalised_positions(pos, n)  # (n,)
    norm_short = normalised_positions(short, COUNT_SHORT)  # (N_short,)
    lam = wavelengths(params.d_model, params.base)  # (d/2,)
    periods = 2 ** np.arange(1, bits + 1)  # (bits,): digit j flips every 2^j, period 2^(j+1)
    data: dict[str, Any] = {
        "positions": pos,
        "short_positions": short,
        "normalised": norm_long,
        "normalised_short": norm_short,
        "digits": binary_digits(pos, bits).T.copy(),  # (bits, n): digit j in row j
        "smooth": smooth_digits(pos, bits).T.copy(),  # (bits, n)
        "length": n,
        "short_length": COUNT_SHORT,
        "p": COUNT_P,
    }
    repeat = np.flatnonzero((data["digits"] == data["digits"][:, :1]).all(axis=0))  # (k,)
    data["repeat"] = int(repeat[1])  # the first p > 0 with the code of 0: p and p + it agree
    numbers: dict[str, Scalar] = {
        "count_n": n,
        "count_last": n - 1,
        "count_short": COUNT_SHORT,
        "count_bits": bits,
        # the first p > 0 whose digits are those of 0: bits digits count only up to 2^bits
        "count_repeat": data["repeat"],
        "count_p": COUNT_P,
        "count_norm_long": float(norm_long[COUNT_P]),
        "count_norm_short": float(norm_short[COUNT_P]),
        "count_period_min": int(periods[0]),
        "count_period_max": int(periods[-1]),
        # the sinusoidal encoding's digits: each pair's wavelength is b^(2/d) times the last
        "count_pair_ratio": float(lam[1] / lam[0]) if lam.size > 1 else 1.0,
    }
    return Counting(**data), numbers


def _wavelengths(params: PEParams) -> tuple[Wavelengths, dict[str, Scalar]]:
    d = params.d_model
    lam = wavelengths(d, params.base)  # (d/2,)
    ctx = np.asarray(CONTEXT_LENGTHS, dtype=np.float64)
    # how many pairs complete at least one full turn inside each context
    turning = np.asarray([int(np.sum(lam <= c)) for c in ctx], dtype=np.int64)
    data = Wavelengths(
        pair=np.arange(lam.shape[0], dtype=np.int64),
        wavelengths=lam,
        context_lengths=ctx,
        pairs_turning=turning,
        shortest=float(lam[0]),
        longest=float(lam[-1]),
        d_model=d,
        base=params.base,
    )
    k = CONTEXT_LENGTHS.index(COUNT_CONTEXT)
    numbers: dict[str, Scalar] = {
        "n_pairs": int(lam.shape[0]),
        "last_pair": int(lam.shape[0]) - 1,
        "lam_min": float(lam[0]),
        "lam_max": float(lam[-1]),
        "lam_ratio": float(lam[-1] / lam[0]),
        "count_ctx": COUNT_CONTEXT,
        "pairs_turning_ctx": int(turning[k]),
        "ctx_min": CONTEXT_LENGTHS[0],
        "ctx_max": CONTEXT_LENGTHS[-1],
    }
    return data, numbers


NORM_SAMPLE = 1024


def _learned_vs_sinusoidal(params: PEParams) -> dict[str, Scalar]:
    table = learned_pe(LEARNED_ROWS, LEARNED_DIM)
    try:
        table.lookup(np.asarray([LEARNED_ROWS]))
        raises, message = False, ""
    except PositionOutOfRangeError as exc:
        raises, message = True, str(exc)
    nbytes = table.nbytes("float32")
    beyond = sinusoidal_pe(np.asarray([LEARNED_ROWS], dtype=np.float64), LEARNED_DIM, params.base)
    # every sinusoidal PE vector has norm sqrt(d/2): one (sin, cos) pair contributes 1
    # checked on at most NORM_SAMPLE evenly spaced positions (first and last included), so the
    # cost stays bounded at any --positions / --d-model
    sample = spread_positions(params.positions, NORM_SAMPLE)  # (<= NORM_SAMPLE,)
    pe = sinusoidal_pe(sample, params.d_model, params.base)  # (sample, d)
    norms = np.linalg.norm(pe, axis=1)  # (sample,)
    return {
        "learned_rows": LEARNED_ROWS,
        "learned_dim": LEARNED_DIM,
        "learned_last": table.n_positions - 1,
        "learned_raises": raises,
        "learned_error": message,
        "learned_bytes": nbytes,
        "learned_mib": nbytes / MIB,
        "learned_params": table.n_positions * table.d_model,
        "sin_beyond_norm": float(np.linalg.norm(beyond[0])),
        "sin_beyond_finite": bool(np.all(np.isfinite(beyond))),
        "pe_norm": float(norms.mean()),
        "pe_norm_spread": float(norms.max() - norms.min()),
        "pe_norm_positions": int(sample.size),
    }


def _exercises(params: PEParams) -> dict[str, Scalar]:
    """The page's exercises: one pair's wavelength, and the digits a binary counter needs."""
    d, b, n = params.d_model, float(params.base), params.positions
    pair = d // 8
    bits = (n - 1).bit_length()  # smallest n_bits with 2^n_bits >= n
    return {
        "drill_pair": pair,
        "drill_pair_wavelength": 2.0 * np.pi * b ** (2.0 * pair / d),  # lambda_i = 2 pi b^(2i/d)
        "drill_bits": bits,
        "drill_codes": 2**bits,
        "drill_bits_less": bits - 1,
        "drill_codes_less": 2 ** (bits - 1),
    }


def title_numbers(params: PEParams) -> dict[str, Scalar]:
    """The numbers the titles use (the small table's size, the demo head's width, the
    parameters), without the costly parts."""
    return {
        "d_model": params.d_model,
        "base": params.base,
        "positions": params.positions,
        "demo_d_model": DEMO_D_MODEL,
        **_pe_table(params)[1],
        **_where(params)[1],
        **_counting(params)[1],
    }


def compute(params: PEParams) -> CardContent:
    perm, n1 = _permutation(params)
    table, n2 = _pe_table(params)
    traj, n3 = _trajectory(params)
    waves, n4 = _wavelengths(params)
    where, n5 = _where(params)
    counting, n6 = _counting(params)
    numbers = declare(
        {
            "d_model": params.d_model,
            "base": params.base,
            "positions": params.positions,
        },
        n1,
        n2,
        n3,
        n4,
        n5,
        n6,
        _learned_vs_sinusoidal(params),
        _exercises(params),
    )
    return CardContent(
        card=1,
        figures={
            "c1-permutation": perm,
            "c1-where": where,
            "c1-counting": counting,
            "c1-wavelengths": waves,
            "c1-pe-table": table,  # figure pages: the encoding for d = 8, as numbers
            "c1-trajectory": traj,  # figure pages: the path in 2-D (UMAP, PCA)
            "c1-pairs": traj,  # figure pages: two pairs on their unit circles
        },
        numbers=numbers,
    )
