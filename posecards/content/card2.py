"""Card 2: sinusoidal geometry. Every position gets a fingerprint; similarity depends on offset.

Panels: the position × dimension heatmap of the encoding, the rotation bridge PE(p+k) = R(k)·PE(p)
(R block diagonal, one 2 × 2 rotation per pair: the step to RoPE on card 3), the similarity matrix
with the offset profile f(k) measured from several start positions, and two measured pitfalls
(dimension index in the exponent, float32 angles). The sin/cos curves (c2-curves) and the layout
comparison are computed for the figure pages and the pitfall text.

Everything is computed at display resolution: at most HEAT_ROWS (heatmap) or MAX_ROWS positions and
HEAT_PAIRS pairs are evaluated for the pictures, so params.positions = 131072 and d_model = 65536
stay fast and small.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.config import PEParams
from posecards.content import CardContent, Scalar, declare
from posecards.content.card2_budget import (
    CHUNK_ELEMENTS,
    TRIG_BUDGET,
    pe_columns,
    row_dots,
    rows_within_budget,
)
from posecards.content.figdata.card2 import (
    Curves,
    Heatmap,
    Pitfalls,
    Rotation,
    Similarity,
)
from posecards.encodings.dimension_index_bug import dimension_index_bug_pe
from posecards.encodings.precision import float32_angle_error
from posecards.encodings.rope import rope_layout_permutation
from posecards.encodings.sampling import even_positions, position_step, spread_positions
from posecards.encodings.similarity import offset_profile, pe_similarity
from posecards.encodings.sinusoidal import (
    offset_rotation,
    rotate_by_offset,
    sinusoidal_pe,
    wavelengths,
)

MAX_ROWS = 512  # positions shown in the similarity matrix
# The heatmap is about 410 x 240 pixels on a 1920 x 1080 card (240 x 170 on A4). Drawn with more
# columns than pixels, nearest-neighbour sampling drops columns and its regular pattern beats
# against the sin/cos alternation of the slow pairs: false stripes (moiré), worse again when a
# viewer scales the picture. At most 48 pairs (96 columns) and 128 positions keep columns at least
# 2.4 pixels wide and rows 1.3 high at every card size (tests/test_card2.py measures it).
HEAT_ROWS = 128  # positions shown in the heatmap
HEAT_PAIRS = 48  # (sin, cos) pairs shown in the heatmap: at most 96 columns
MAX_CURVE_POINTS = 1024  # positions sampled along the slow curves
FAST_WINDOW = 48  # the fast curves: positions 0..47
MAX_OFFSETS = 256  # offsets k = 0..255 at most for the measured profiles
MAX_BUG_STARTS = 256  # start positions of the dimension-index-bug demo
PROFILE_STARTS = (0, 17)  # plus a start in the middle of the range (at least 50)
OFFSET_A, OFFSET_B = 1, 10  # the offsets whose similarity the card prints
DIST_GRID = 32  # positions of the grid on which the distance identity is checked
LAYOUT_GRID = 64  # positions on which the layouts are compared
F32_ELEMENTS = 2**20  # at most this many (position, pair) cells in the float32 error computation
F32_MAX_ROWS = 256
F32_MAX_COLS = 256
# rotation bridge: R(k) drawn for a small encoding, checked at the card's d_model
ROT_SHOW_D = 8  # the R(k) picture: 8 × 8, four 2 × 2 blocks
ROT_K = 3  # the offset shown
ROT_P = 2  # the start position shown on the unit circle
ROT_CHECK_ROWS = 64  # positions p of the check; offsets k up to the same number
# where f(k) first rises again is searched in blocks of offsets, up to MONO_BUDGET cosines
MONO_BLOCK = 256
MONO_BUDGET = 2**22


def _heatmap(params: PEParams) -> tuple[Heatmap, dict[str, Scalar]]:
    n, d = params.positions, params.d_model
    pos = even_positions(n, rows_within_budget(d, HEAT_ROWS))  # (m,)
    half = d // 2
    # the first and the last pair and evenly spread ones between (steps differ by at most one)
    pairs = spread_positions(half, HEAT_PAIRS).astype(np.int64)  # (c/2,)
    pair_step = int(np.max(np.diff(pairs))) if pairs.shape[0] > 1 else 1
    dims = np.sort(np.concatenate([2 * pairs, 2 * pairs + 1]))  # (c,): sin and cos of each
    values = pe_columns(pos, dims, params)  # (m, c)
    lam = wavelengths(d, params.base)  # (d/2,)
    # wavelength ticks at shown pairs: the nearest shown to 0, 1/4, 1/2, 3/4 and the last
    wanted = np.array([0, half // 4, half // 2, 3 * half // 4, half - 1])
    tick_pairs = np.unique(pairs[np.abs(pairs[None, :] - wanted[:, None]).argmin(axis=1)])
    data = Heatmap(
        values=values,
        wavelength_tick_dims=2 * tick_pairs,  # sine column of a few pairs
        wavelength_ticks=lam[tick_pairs],  # and their wavelengths λ_i = 2π/ω_i
        positions=pos,
        dims=dims,
        position_step=int(pos[1] - pos[0]) if pos.shape[0] > 1 else 1,
        pair_step=pair_step,
        d_model=d,
        n_positions=n,
        base=params.base,
    )
    numbers: dict[str, Scalar] = {
        "heat_rows": int(pos.shape[0]),
        "heat_cols": int(dims.shape[0]),
        "heat_pos_step": data.position_step,
        "heat_pair_step": pair_step,
        "heat_last_pos": int(pos[-1]),
        "last_dim": d - 1,
        "lambda_min": float(lam[0]),
        "lambda_max": float(lam[-1]),
        "pe_norm": float(np.linalg.norm(pe_columns(np.array([float(n - 1)]), None, params))),
    }
    return data, numbers


def _curves(params: PEParams) -> tuple[Curves, dict[str, Scalar]]:
    n, d = params.positions, params.d_model
    pos = even_positions(n, rows_within_budget(d, MAX_CURVE_POINTS, 64))  # (m,)
    fast = [j for j in range(4) if j < d]
    # two slow sine dimensions: pairs d/8 and d/4 (dims d/4 and d/2 when 8 divides d)
    slow_pairs = sorted({max(2, d // 8), max(2, d // 4)})
    slow = [2 * i for i in slow_pairs if 2 * i < d]
    fast_dims = np.asarray(fast, dtype=np.int64)  # (4,)
    slow_dims = np.asarray(slow, dtype=np.int64)  # (<= 2,)
    # the fast dimensions turn every ~6 positions: they are drawn over the first FAST_WINDOW
    # integer positions, the slow ones over all positions
    fast_pos = np.arange(min(n, FAST_WINDOW), dtype=np.float64)  # (w,)
    lam = wavelengths(d, params.base)  # (d/2,)
    data = Curves(
        fast_positions=fast_pos,
        fast_dims=fast_dims,
        fast_values=pe_columns(fast_pos, fast_dims, params).T,  # (4, w)
        fast_wavelengths=lam[fast_dims // 2],  # (4,)
        slow_positions=pos,
        slow_dims=slow_dims,
        slow_values=pe_columns(pos, slow_dims, params).T,  # (<= 2, m)
        slow_wavelengths=lam[slow_dims // 2],  # (<= 2,)
        n_positions=n,
    )
    numbers: dict[str, Scalar] = {
        "fast_last": int(fast_pos.shape[0]) - 1,
        "lambda_0": float(lam[0]),
        "lambda_1": float(lam[min(1, lam.shape[0] - 1)]),
    }
    # tiny d_model has fewer than two slow dimensions: the text then names the last pair twice
    named = (slow + slow[-1:] * 2)[:2] if slow else [d - 2, d - 2]
    for tag, j in zip("ab", named, strict=True):
        numbers[f"slow_dim_{tag}"] = int(j)
        numbers[f"lambda_{tag}"] = float(lam[j // 2])
        numbers[f"turns_{tag}"] = float(n / lam[j // 2])  # cycles over the positions shown
        numbers[f"cycles_{tag}"] = (n - 1) / float(lam[j // 2])  # cycles from position 0 to n - 1
    return data, numbers


def _rotation(params: PEParams) -> tuple[Rotation, dict[str, Scalar]]:
    """PE(p+k) = R(k)·PE(p): R(k) for a small encoding, and the identity checked at d_model."""
    n, d = params.positions, params.d_model
    r_show = offset_rotation(ROT_K, ROT_SHOW_D, params.base)  # (8, 8)
    pe_show = sinusoidal_pe(
        np.array([ROT_P, ROT_P + ROT_K], dtype=np.float64), ROT_SHOW_D, params.base
    )
    omega_show = 2 * np.pi / wavelengths(ROT_SHOW_D, params.base)  # (4,)
    # the check at the card's size: every start p and offset k of a grid, actual vectors
    m = rows_within_budget(4 * d, ROT_CHECK_ROWS, 8)
    starts = even_positions(n, m)  # (m,)
    offsets = np.unique(np.linspace(0, max(1, n - 1), num=min(m, n)).round())  # (k,)
    pe_p = pe_columns(starts, None, params)  # (m, d)
    err = 0.0
    for k in offsets:
        shifted = pe_columns(starts + k, None, params)  # (m, d): PE(p + k)
        turned = rotate_by_offset(pe_p, float(k), params.base)  # (m, d): R(k)·PE(p), row-wise
        err = max(err, float(np.abs(shifted - turned).max()))
    data = Rotation(
        r=r_show,  # (8, 8)
        pe_p=pe_show[0],  # (8,)
        pe_pk=pe_show[1],  # (8,)
        omega=omega_show,  # (4,)
        k=ROT_K,
        p=ROT_P,
        d_show=ROT_SHOW_D,
        base=params.base,
        d_model=d,
        err=err,
    )
    numbers: dict[str, Scalar] = {
        "rot_k": ROT_K,
        "rot_p": ROT_P,
        "rot_d": ROT_SHOW_D,
        "rot_angle_0": float(ROT_K * omega_show[0]),  # radians, pair 0
        "rot_angle_1": float(ROT_K * omega_show[1]),  # radians, pair 1
        "rot_err": err,
        "rot_check_starts": int(starts.shape[0]),
        "rot_check_offsets": int(offsets.shape[0]),
        "rot_check_max_k": int(offsets[-1]),
    }
    return data, numbers


def _first_rise(params: PEParams) -> tuple[int, float, bool]:
    """First offset k with f(k+1) > f(k), f(k) there, and whether it was found.

    f falls strictly for k = 0..k_mono. The search stops after MONO_BUDGET cosines; if no rise was
    found by then, the last offset searched is returned with found = False (f still falls there).
    """
    d = params.d_model
    limit = max(MONO_BLOCK, MONO_BUDGET // max(1, d // 2))  # offsets searched at most
    start = 0
    while start < limit:
        k = np.arange(start, start + MONO_BLOCK + 1, dtype=np.float64)  # block plus one
        f = offset_profile(k, d, params.base)  # (block + 1,)
        rises = np.nonzero(np.diff(f) > 0)[0]
        if rises.size:
            at = int(rises[0])
            return start + at, float(f[at]), True
        start += MONO_BLOCK
    return start, float(offset_profile([start], d, params.base)[0]), False


def _similarity(params: PEParams) -> tuple[Similarity, dict[str, Scalar]]:
    n, d = params.positions, params.d_model
    half = d / 2
    pos = even_positions(n, rows_within_budget(d, MAX_ROWS))  # (m,): pe_similarity costs ~m·d
    sim = pe_similarity(pos, d, params.base)  # (m, m)

    # every integer offset k = 0..K-1 (K <= MAX_OFFSETS): 3 starts, d sines/cosines per row
    offsets = np.arange(
        min(n, rows_within_budget(3 * d, MAX_OFFSETS, 32)), dtype=np.float64
    )  # (K,)
    starts = sorted({*PROFILE_STARTS, max(50, n // 2)})
    measured = np.stack(
        [row_dots(float(p0), p0 + offsets, params) / half for p0 in starts]
    )  # (S, K): PE(p0)·PE(p0+k)/(d/2), from the actual vectors
    formula = offset_profile(offsets, d, params.base)  # (K,)
    # the other direction: PE(p0)·PE(p0 - k), a token k before instead of k after; f(k) = f(-k)
    backward = np.stack([row_dots(float(p0), p0 - offsets, params) / half for p0 in starts])
    sign_dev = float(np.abs(backward - measured).max())  # (S, K) -> one number
    # after query and key projections (random W_q, W_k, one head of width d): the score of
    # positions p and p + OFFSET_B now depends on p, where the raw similarity did not
    proj = _projected_offset_scores(n, params)  # (m',)
    f_ab = offset_profile([OFFSET_A, OFFSET_B], d, params.base)
    k_mono, f_mono, mono_found = _first_rise(params)

    # distance identity: ||PE(p) - PE(q)||² = Σ_i (2 - 2cos((q-p)ω_i)) on a grid of positions
    g = min(n, DIST_GRID, max(4, int(np.sqrt(2 * TRIG_BUDGET / d))))  # G² offsets × d/2 cosines
    grid = spread_positions(n, g)  # (G,)
    pe = pe_columns(grid, None, params)  # (G, d)
    dist_err = 0.0
    for a in range(grid.shape[0]):
        lhs = ((pe - pe[a]) ** 2).sum(axis=1)  # (G,): ||PE(p) - PE(q)||²
        # Σ_i (2 - 2cos(Δθ_i)) = d - 2·Σ_i cos(Δ·ω_i) = d·(1 - f(Δ)), Δ = q - p
        rhs = d * (1.0 - offset_profile(grid - grid[a], d, params.base))  # (G,)
        dist_err = max(dist_err, float(np.abs(lhs - rhs).max()))

    data = Similarity(
        similarity=sim,
        positions=pos,
        position_step=int(pos[1] - pos[0]) if pos.shape[0] > 1 else 1,
        offsets=offsets,
        starts=np.asarray(starts, dtype=np.int64),
        measured=measured,
        formula=formula,
        offset_a=OFFSET_A,
        offset_b=OFFSET_B,
        f_a=float(f_ab[0]),
        f_b=float(f_ab[1]),
        k_mono=k_mono,
        f_mono=f_mono,
        mono_found=mono_found,
    )
    numbers: dict[str, Scalar] = {
        "f1": float(f_ab[0]),
        "f10": float(f_ab[1]),
        "start_dev": float(np.abs(measured - formula[None, :]).max()),
        "k_mono": k_mono,
        "f_mono": f_mono,
        "mono_found": mono_found,
        "dist_err": dist_err,
        "dist_grid": int(grid.shape[0]),
        "sim_rows": int(pos.shape[0]),
        "last_pos": n - 1,
        "start_a": starts[0],
        "start_b": starts[1],
        "start_c": starts[-1],
        "max_offset": int(offsets[-1]),
        "sign_dev": sign_dev,
        "offset_b": OFFSET_B,
        "proj_head": PROJ_HEAD,  # f(k) - f(-k): the similarity cannot tell before from after
        "proj_spread": float(proj.max() - proj.min()) if proj.size else 0.0,
        "proj_rel": float((proj.max() - proj.min()) / np.abs(proj).mean()) if proj.size else 0.0,
    }
    return data, numbers


PROJ_SEED = 2  # the random query/key projections of the "after W_q, W_k" number
PROJ_HEAD = 64  # their head width
PROJ_STARTS = 256  # at most this many start positions p


def _projected_offset_scores(n: int, params: PEParams) -> npt.NDArray[np.float64]:
    """(PE(p) W_q)·(PE(p + OFFSET_B) W_k) / h for up to PROJ_STARTS starts p in 0 .. n - 1 -
    OFFSET_B: one offset's score after random query and key projections (d x h, entries
    N(0, 1/d)), shape (m,). Raw encodings give the same value from every start; projected ones
    need not."""
    d, h = params.d_model, PROJ_HEAD
    m = max(0, n - OFFSET_B)
    starts = np.unique(np.round(np.linspace(0, m - 1, min(m, PROJ_STARTS))))  # (m',)
    if starts.size == 0:
        return starts.astype(np.float64)
    rng = np.random.default_rng(PROJ_SEED)
    w_q = rng.standard_normal((d, h)) / np.sqrt(d)  # (d, h)
    w_k = rng.standard_normal((d, h)) / np.sqrt(d)  # (d, h)
    q = sinusoidal_pe(starts, d, params.base) @ w_q  # (m', h)
    k = sinusoidal_pe(starts + OFFSET_B, d, params.base) @ w_k  # (m', h)
    out: npt.NDArray[np.float64] = np.einsum("mh,mh->m", q, k) / h  # (m',)
    return out


def _bug(params: PEParams) -> tuple[dict[str, Any], dict[str, Scalar]]:
    n, d = params.positions, params.d_model
    starts = even_positions(
        n, rows_within_budget(4 * d, MAX_BUG_STARTS)
    )  # (S,): 4 rows of d per start
    k = float(OFFSET_B)
    rows = max(1, CHUNK_ELEMENTS // (2 * d))
    cos_bug = np.empty(starts.shape[0], dtype=np.float64)  # (S,)
    norm_min, norm_max = np.inf, -np.inf
    for s in range(0, starts.shape[0], rows):
        p = starts[s : s + rows]
        a = dimension_index_bug_pe(p, d, params.base)  # (r, d)
        b = dimension_index_bug_pe(p + k, d, params.base)  # (r, d)
        cos_bug[s : s + rows] = (a * b).sum(1) / (
            np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        )
        pair_sq = a[:, 0::2] ** 2 + a[:, 1::2] ** 2  # (r, d/2): squared length of each pair
        norm_min = min(norm_min, float(pair_sq.min()))
        norm_max = max(norm_max, float(pair_sq.max()))
    correct = np.empty_like(cos_bug)  # (S,): the correct encoding, measured the same way
    for s in range(0, starts.shape[0], rows):
        p = starts[s : s + rows]
        a = sinusoidal_pe(p, d, params.base)
        b = sinusoidal_pe(p + k, d, params.base)
        correct[s : s + rows] = (a * b).sum(1) / (
            np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        )
    data = {
        "starts": starts,
        "offset": OFFSET_B,
        "cos_bug": cos_bug,
        "cos_correct": correct,
        "d_model": d,
        "base": params.base,
    }
    numbers: dict[str, Scalar] = {
        "bug_f10_min": float(cos_bug.min()),
        "bug_f10_max": float(cos_bug.max()),
        "bug_spread": float(np.ptp(cos_bug)),
        "correct_spread": float(np.ptp(correct)),
        "bug_norm_min": norm_min,
        "bug_norm_max": norm_max,
    }
    return data, numbers


def _layouts(params: PEParams) -> tuple[dict[str, Any], dict[str, Scalar]]:
    n, d = params.positions, params.d_model
    grid = even_positions(n, rows_within_budget(2 * d, LAYOUT_GRID, 8))  # (G,)
    inter = pe_columns(grid, None, params)  # (G, d)
    half = pe_columns(grid, None, params, layout="half")  # (G, d)
    perm = rope_layout_permutation(d)  # (d,): half = interleaved[:, perm]
    sim_inter = inter @ inter.T / (d / 2)  # (G, G)
    sim_half = half @ half.T / (d / 2)  # (G, G)
    sim_grid = even_positions(n, rows_within_budget(2 * d, MAX_ROWS))  # two pe_similarity calls
    t2t = pe_similarity(sim_grid, d, params.base, "tensor2tensor") if d >= 4 else None
    paper = pe_similarity(sim_grid, d, params.base)
    data = {
        "perm_diff": float(np.abs(inter[:, perm] - half).max()),  # exactly 0
        "raw_diff": float(np.abs(inter - half).max()),  # same column index, different numbers
        "sim_diff": float(np.abs(sim_inter - sim_half).max()),  # rounding of the sums only
        "t2t_sim_diff": 0.0 if t2t is None else float(np.abs(t2t - paper).max()),
    }
    numbers: dict[str, Scalar] = {f"layout_{k}": v for k, v in data.items()}
    return data, numbers


def _float32(params: PEParams) -> tuple[dict[str, Any], dict[str, Scalar]]:
    n, d = params.positions, params.d_model
    n_rows = max(8, min(F32_MAX_ROWS, F32_ELEMENTS // (d // 2)))
    pos = spread_positions(n, n_rows)  # (r,): includes n-1
    err = float32_angle_error(d, pos, params.base)
    angle_error = err.angle_error  # (r, d/2)
    at = np.unravel_index(int(np.argmax(angle_error)), angle_error.shape)
    cols = np.arange(0, d // 2, position_step(d // 2, F32_MAX_COLS), dtype=np.int64)  # (c,)
    slow_from = d // 4
    slow = angle_error[:, slow_from:]
    data = {
        "positions": pos,
        "pairs": cols,
        "angle_error": angle_error[:, cols],  # (r, c); 0 where float32 is exact
        "max_error": float(angle_error[at]),
        "max_position": int(pos[at[0]]),
        "max_pair": int(at[1]),
        "slow_from": slow_from,
    }
    numbers: dict[str, Scalar] = {
        "f32_max": float(angle_error[at]),
        "f32_max_pos": int(pos[at[0]]),
        "f32_max_i": int(at[1]),
        "f32_sin_max": float(max(err.sin_error.max(), err.cos_error.max())),
        "f32_slow_from": slow_from,
        "f32_slow_max": float(slow.max()) if slow.size else 0.0,
    }
    return data, numbers


EX_OFFSET = 5  # the exercise's offset k


def _exercises(params: PEParams) -> dict[str, Scalar]:
    """The page's exercises: f(k) from the formula at one offset, and the first pair that does
    not complete a turn over the card's positions."""
    d, b, n = params.d_model, float(params.base), params.positions
    omega = b ** (-2.0 * np.arange(d // 2, dtype=np.float64) / d)  # (d/2,) omega_i = b^(-2i/d)
    wavelength = 2.0 * np.pi / omega  # (d/2,)
    slow = int(np.argmax(wavelength > n))  # first pair with lambda_i > n (they grow with i)
    return {
        "drill_k": EX_OFFSET,
        "drill_f": float(np.mean(np.cos(EX_OFFSET * omega))),  # f(k) = (2/d) sum_i cos(k omega_i)
        "drill_slow_pair": slow,
        "drill_slow_wl": float(wavelength[slow]),
        "drill_prev_pair": slow - 1,
        "drill_prev_wl": float(wavelength[slow - 1]),
    }


def compute(params: PEParams) -> CardContent:
    heat, n_heat = _heatmap(params)
    curves, n_curves = _curves(params)
    rot, n_rot = _rotation(params)
    sim, n_sim = _similarity(params)
    bug, n_bug = _bug(params)
    layouts, n_layouts = _layouts(params)
    f32, n_f32 = _float32(params)
    numbers = declare(
        {
            "d_model": params.d_model,
            "base": params.base,
            "n_positions": params.positions,
            "half_d": params.d_model // 2,
            "last_pair": params.d_model // 2 - 1,
        },
        n_heat,
        n_curves,
        n_rot,
        n_sim,
        n_bug,
        n_layouts,
        n_f32,
        _exercises(params),
    )
    pitfalls = Pitfalls(
        **{f"bug_{k}": v for k, v in bug.items()},
        **{f"layout_{k}": v for k, v in layouts.items()},
        **{f"f32_{k}": v for k, v in f32.items()},
    )
    return CardContent(
        card=2,
        figures={
            "c2-heatmap": heat,
            "c2-curves": curves,
            "c2-rotation": rot,
            "c2-similarity": sim,
            "c2-pitfalls": pitfalls,  # the dimension-index bug
            "c2-float32": pitfalls,  # figure pages: float32 angle error
            "c2-layouts": pitfalls,  # figure pages: layouts and frequency rules
        },
        numbers=numbers,
    )
