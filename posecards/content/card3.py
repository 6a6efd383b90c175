"""Card 3: from sinusoid to rotation (RoPE). Every number comes from posecards.encodings.

Which dimension is used where (also stored in each figure's data):

- c3-rotation: a 2-D worked example (one rotation pair, theta = 0.1), fixed on purpose.
- c3-scores, c3-decay, the layout demo c3-layouts and the value pitfall: one attention
  head of ``HEAD_DIM = 128`` (LLaMA's head size), base ``params.base``.
- the wavelength (base) panel c3-base: one head of ``HEAD_DIM`` too (RoPE rotates per head:
  64 pairs at head dimension 128, whatever d_model is).

The card's four panels (``PANEL_IDS``) hold six plots; the pair-layout diagram no longer fits
and is a figure of its own (``EXTRA_IDS``: ``posecards figure c3-layouts``, the lecture deck).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders
from posecards.encodings.rope import (
    apply_rope,
    apply_rope_complex,
    rope_layout_permutation,
    rope_relative_upper_bound,
    rope_scores,
    rotation_2d,
)
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.sampling import even_positions, position_step
from posecards.encodings.sinusoidal import sinusoidal_pe
from posecards.encodings.toeplitz import diagonal_spread

CARD = 3
PANEL_IDS = ("c3-rotation", "c3-scores", "c3-decay", "c3-base")  # on the card
EXTRA_IDS = ("c3-layouts",)  # figures only
HEAD_DIM = 128  # one attention head, as in LLaMA
SEED = 0
MAX_SHOWN = 512  # at most this many positions per heatmap side
DEMO_BASES = (10000.0, 500000.0)  # the original RoPE base and LLaMA 3's
CONTEXTS = (4096, 131072)  # 4k and 128k tokens
DECAY_MAX_DISTANCE = 65536
DECAY_POINTS = 700
DECAY_PROBE = 1000  # distance at which the text compares the decay bound
LAYOUT_DIM = 8  # the small pairing diagram
SHIFT = 100  # positions by which the value pitfall shifts a sequence
# the worked 2-D example: q = [1, 0] at position m, k = [0, 1] at position n, theta = 0.1
EX_Q = (1.0, 0.0)
EX_K = (0.0, 1.0)
EX_M, EX_N, EX_THETA = 10, 15, 0.1


F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card3.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Rotation:
    """c3-rotation: one pair, q and k rotated by m theta and n theta."""

    q: F64  # (2,)
    k: F64  # (2,)
    m: int
    n: int
    theta: float
    q_rot: F64  # (2,) R(m theta) q
    k_rot: F64  # (2,) R(n theta) k
    q_rot_matrix: F64  # (2,) the same, by the 2x2 matrix
    k_rot_matrix: F64  # (2,)
    angle_q: float
    angle_k: float
    angle_rel: float  # (n - m) theta
    k_rel: F64  # (2,) R((n - m) theta) k
    score_rope: float
    score_relative: float
    difference: float
    shift: int
    score_shifted: float


@dataclass(frozen=True, eq=False)
class Scores:
    """c3-scores: the scores of one query and key at every pair of positions."""

    positions: F64  # (n,)
    step: int
    head_dim: int
    base: float
    seed: int
    scores_rope: F64  # (n, n)
    scores_additive: F64  # (n, n)
    deviation_rope: float
    deviation_additive: float


@dataclass(frozen=True, eq=False)
class Decay:
    """c3-decay: the upper bound of the relative score with distance, per base."""

    distances: F64  # (r,)
    bases: F64  # (n_bases,)
    bounds: F64  # (n_bases, r)
    head_dim: int
    context: int
    max_distance: int
    probe: int
    probe_values: F64  # (n_bases,)


@dataclass(frozen=True, eq=False)
class Layouts:
    """c3-layouts: the interleaved and the half pair layouts."""

    layout_dim: int
    permutation: I64  # (layout_dim,)
    pair_interleaved: I64  # (layout_dim,)
    pair_half: I64  # (layout_dim,)
    head_dim: int
    base: float
    perm_diff: float
    wrong_max: float
    wrong_mean: float


@dataclass(frozen=True, eq=False)
class Base:
    """c3-base: the wavelength of each pair per base, and the pairs that turn in a context."""

    d_model: int
    head_dim: int
    bases: F64  # (n_bases,)
    wavelengths: F64  # (n_bases, HEAD_DIM/2)
    contexts: I64  # (n_ctx,)
    turns: I64  # (n_bases, n_ctx) pairs with lambda <= L - 1
    pairs: int


def _bases(params: PEParams) -> list[float]:
    return sorted({*DEMO_BASES, float(params.base)})


def _shown_positions(positions: int) -> tuple[np.ndarray, int]:
    """Evenly spaced positions 0, s, 2s, ... < positions, at most MAX_SHOWN of them."""
    return even_positions(positions, MAX_SHOWN), position_step(positions, MAX_SHOWN)  # (n,)


def _rotation(numbers: dict[str, float | int | str | bool]) -> Rotation:
    q = np.array(EX_Q, dtype=np.float64)  # (2,)
    k = np.array(EX_K, dtype=np.float64)  # (2,)
    theta = np.array([EX_THETA])  # (1,): one pair
    q_rot = apply_rope(q, [EX_M], theta)  # (2,) R(m theta) q
    k_rot = apply_rope(k, [EX_N], theta)  # (2,) R(n theta) k
    q_rot_matrix = rotation_2d(EX_M * EX_THETA) @ q  # (2,) same, by the 2x2 matrix
    k_rot_matrix = rotation_2d(EX_N * EX_THETA) @ k  # (2,)
    score_rope = float(q_rot @ k_rot)
    k_rel = rotation_2d((EX_N - EX_M) * EX_THETA) @ k  # (2,) R((n - m) theta) k
    score_relative = float(q @ k_rel)
    shifted = float(apply_rope(q, [EX_M + SHIFT], theta) @ apply_rope(k, [EX_N + SHIFT], theta))
    numbers.update(
        ex_m=EX_M,
        ex_n=EX_N,
        ex_theta=EX_THETA,
        ex_angle_q=EX_M * EX_THETA,
        ex_angle_k=EX_N * EX_THETA,
        ex_angle_rel=(EX_N - EX_M) * EX_THETA,
        ex_qrot0=float(q_rot[0]),
        ex_qrot1=float(q_rot[1]),
        ex_krot0=float(k_rot[0]),
        ex_krot1=float(k_rot[1]),
        ex_score=score_rope,
        ex_score_rel=score_relative,
        ex_diff=abs(score_rope - score_relative),
        ex_shift=SHIFT,
        ex_score_shifted=shifted,
    )
    return Rotation(
        q=q,
        k=k,
        m=EX_M,
        n=EX_N,
        theta=EX_THETA,
        q_rot=q_rot,
        k_rot=k_rot,
        q_rot_matrix=q_rot_matrix,
        k_rot_matrix=k_rot_matrix,
        angle_q=EX_M * EX_THETA,
        angle_k=EX_N * EX_THETA,
        angle_rel=(EX_N - EX_M) * EX_THETA,
        k_rel=k_rel,
        score_rope=score_rope,
        score_relative=score_relative,
        difference=abs(score_rope - score_relative),
        shift=SHIFT,
        score_shifted=shifted,
    )


def _scores(params: PEParams, numbers: dict[str, float | int | str | bool]) -> Scores:
    pos, step = _shown_positions(params.positions)  # (n,)
    n = pos.size
    inv_freq, _ = rope_inv_freq(HEAD_DIM, params.base)  # (HEAD_DIM/2,)
    rng = np.random.default_rng(SEED)
    q = rng.standard_normal(HEAD_DIM)  # (HEAD_DIM,) the same query at every position
    k = rng.standard_normal(HEAD_DIM)  # (HEAD_DIM,) the same key at every position
    q_rows = np.broadcast_to(q, (n, HEAD_DIM))  # (n, HEAD_DIM)
    k_rows = np.broadcast_to(k, (n, HEAD_DIM))  # (n, HEAD_DIM)
    rope = rope_scores(q_rows, k_rows, pos, pos, inv_freq)  # (n, n) <R_m q, R_n k>
    pe = sinusoidal_pe(pos, HEAD_DIM, params.base)  # (n, HEAD_DIM)
    additive = (q_rows + pe) @ (k_rows + pe).T  # (n, n) (q + PE_m).(k + PE_n)
    dev_rope = float(diagonal_spread(rope).max())
    dev_add = float(diagonal_spread(additive).max())
    # the bound of the decay panel falls with |n - m|; scores need not: over many random q, k
    # the mean |score| at the far half of the distances over that at the near half (about 1)
    far_near = _far_over_near(pos, inv_freq)
    numbers.update(
        scores_n=n,
        scores_step=step,
        scores_last=float(pos[-1]),
        scores_dev_rope=dev_rope,
        scores_dev_add=dev_add,
        scores_far_near=far_near,
        scores_max_rope=float(np.abs(rope).max()),
        scores_max_add=float(np.abs(additive).max()),
    )
    return Scores(
        positions=pos,
        step=step,
        head_dim=HEAD_DIM,
        base=float(params.base),
        seed=SEED,
        scores_rope=rope,
        scores_additive=additive,
        deviation_rope=dev_rope,
        deviation_additive=dev_add,
    )


DECAY_SAMPLES = 256  # random (q, k) pairs averaged for the "scores need not decay" number
DECAY_DISTANCES = 512  # at most this many evenly spaced distances 1 .. span


def _far_over_near(pos: npt.NDArray[np.float64], inv_freq: npt.NDArray[np.float64]) -> float:
    """Mean |<R_m q, R_n k>| over DECAY_SAMPLES random q, k (N(0, 1) entries) at distances
    |n - m| above the median distance, over that at distances up to it: the RoPE score itself
    does not fall with the distance (its expectation is the same at every distance)."""
    if pos.size < 3:
        return 1.0
    span = int(pos[-1] - pos[0])
    dist = np.unique(np.round(np.linspace(1, span, min(span, DECAY_DISTANCES))))  # (r,) even
    cut = float(np.median(dist))
    rng = np.random.default_rng(SEED + 11)
    q = rng.standard_normal((DECAY_SAMPLES, HEAD_DIM))  # (S, HEAD_DIM)
    k = rng.standard_normal((DECAY_SAMPLES, HEAD_DIM))  # (S, HEAD_DIM)
    # interleaved pairs as complex numbers: score(r) = Re sum_i z_i e^{i r theta_i},
    # z_i = q_i conj(k_i) with q_i = q[2i] + i q[2i+1]
    z = (q[:, 0::2] + 1j * q[:, 1::2]) * np.conj(k[:, 0::2] + 1j * k[:, 1::2])  # (S, HEAD_DIM/2)
    phase = np.exp(1j * np.outer(dist, inv_freq))  # (r, HEAD_DIM/2)
    score = np.abs((z @ phase.T).real)  # (S, r)
    near, far = score[:, dist <= cut], score[:, dist > cut]
    return float(far.mean() / near.mean())


def _decay(params: PEParams, numbers: dict[str, float | int | str | bool]) -> Decay:
    max_distance = max(DECAY_MAX_DISTANCE, params.positions)
    distances = np.geomspace(1.0, max_distance, DECAY_POINTS)  # (r,)
    bases = _bases(params)
    bounds = np.stack(
        [rope_relative_upper_bound(distances, rope_inv_freq(HEAD_DIM, b)[0]) for b in bases]
    )  # (n_bases, r)

    def bound_at(r: float, b: float) -> float:
        return float(rope_relative_upper_bound([r], rope_inv_freq(HEAD_DIM, b)[0])[0])

    numbers.update(
        decay_at0=bound_at(0.0, params.base),  # off the log axis: not quoted on the card
        decay_at1=bound_at(1.0, params.base),  # the left end of the plotted curve
        decay_probe=DECAY_PROBE,
        decay_base_probe=bound_at(DECAY_PROBE, params.base),
        decay_10k_probe=bound_at(DECAY_PROBE, DEMO_BASES[0]),
        decay_500k_probe=bound_at(DECAY_PROBE, DEMO_BASES[1]),
        decay_max_distance=max_distance,
    )
    return Decay(
        distances=distances,
        bases=np.array(bases),
        bounds=bounds,
        head_dim=HEAD_DIM,
        context=params.positions,
        max_distance=max_distance,
        probe=DECAY_PROBE,
        probe_values=np.array([bound_at(DECAY_PROBE, b) for b in bases]),  # (n_bases,)
    )


def _layouts_base(
    params: PEParams, numbers: dict[str, float | int | str | bool]
) -> tuple[Layouts, Base]:
    """(c3-layouts, c3-base): the two pair layouts; the wavelength of each pair per base."""
    # -- layouts: the same vectors in the interleaved and the half layout --------------------
    perm_small = rope_layout_permutation(LAYOUT_DIM)  # (8,) x_half = x_interleaved[P]
    pair_interleaved = np.arange(LAYOUT_DIM) // 2  # (8,) pair of interleaved dim j: j // 2
    pair_half = np.arange(LAYOUT_DIM) % (LAYOUT_DIM // 2)  # (8,) pair of half slot j: j mod d/2

    pos, _ = _shown_positions(params.positions)  # (n,)
    n = pos.size
    inv_freq, _ = rope_inv_freq(HEAD_DIM, params.base)  # (HEAD_DIM/2,)
    rng = np.random.default_rng(SEED + 1)
    q = rng.standard_normal((n, HEAD_DIM))  # (n, HEAD_DIM) a checkpoint's q in interleaved order
    k = rng.standard_normal((n, HEAD_DIM))  # (n, HEAD_DIM)
    perm = rope_layout_permutation(HEAD_DIM)  # (HEAD_DIM,)
    s_inter = rope_scores(q, k, pos, pos, inv_freq, "interleaved")  # (n, n) the reference
    s_perm = rope_scores(q[:, perm], k[:, perm], pos, pos, inv_freq, "half")  # (n, n) permuted
    s_wrong = rope_scores(q, k, pos, pos, inv_freq, "half")  # (n, n) not permuted
    perm_diff = float(np.abs(s_perm - s_inter).max())
    wrong = np.abs(s_wrong - s_inter)  # (n, n)

    # -- the base knob: wavelength of each pair of one head (RoPE rotates per head) ------------
    bases = _bases(params)
    lam = np.stack(
        [2.0 * np.pi / rope_inv_freq(HEAD_DIM, b)[0] for b in bases]
    )  # (n_bases, HEAD_DIM/2) lambda_k = 2 pi / theta_k
    contexts = np.array(CONTEXTS, dtype=np.int64)  # (n_ctx,)
    # pair k completes a full turn inside a context of L tokens when its wavelength fits in the
    # largest relative distance there, L - 1
    turns = (lam[:, None, :] <= (contexts[None, :, None] - 1)).sum(axis=2)  # (n_bases, n_ctx)
    pairs = HEAD_DIM // 2
    i10k, i500k, ibase = (
        bases.index(DEMO_BASES[0]),
        bases.index(DEMO_BASES[1]),
        bases.index(float(params.base)),
    )
    inv_500k, _ = rope_inv_freq(HEAD_DIM, DEMO_BASES[1])  # (HEAD_DIM/2,)
    numbers.update(
        layout_dim=LAYOUT_DIM,
        layout_half=LAYOUT_DIM // 2,
        perm_diff=perm_diff,
        wrong_max=float(wrong.max()),
        wrong_mean=float(wrong.mean()),
        score_mean_abs=float(np.abs(s_inter).mean()),
        pairs=pairs,
        turns_base_4k=int(turns[ibase, 0]),
        turns_base_128k=int(turns[ibase, 1]),
        never_10k_4k=int(pairs - turns[i10k, 0]),
        never_500k_4k=int(pairs - turns[i500k, 0]),
        turns_500k_4k=int(turns[i500k, 0]),
        never_base_128k=int(pairs - turns[ibase, 1]),
        slowest_angle_500k_4k=float((CONTEXTS[0] - 1) * inv_500k[-1]),
        lambda_min=float(lam[ibase].min()),
        lambda_max_base=float(lam[ibase].max()),
    )
    layouts = Layouts(
        layout_dim=LAYOUT_DIM,
        permutation=perm_small,
        pair_interleaved=pair_interleaved,
        pair_half=pair_half,
        head_dim=HEAD_DIM,
        base=float(params.base),
        perm_diff=perm_diff,
        wrong_max=float(wrong.max()),
        wrong_mean=float(wrong.mean()),
    )
    base = Base(
        d_model=params.d_model,
        head_dim=HEAD_DIM,
        bases=np.array(bases),
        wavelengths=lam,  # (n_bases, HEAD_DIM/2)
        contexts=contexts,
        turns=turns.astype(np.int64),  # (n_bases, n_ctx) pairs with lambda <= L - 1
        pairs=pairs,
    )
    return layouts, base


def _values_pitfall(params: PEParams, numbers: dict[str, float | int | str | bool]) -> None:
    """RoPE on q, k is shift-invariant; rotating values as well would carry absolute position."""
    pos, _ = _shown_positions(params.positions)  # (n,)
    n = pos.size
    inv_freq, _ = rope_inv_freq(HEAD_DIM, params.base)  # (HEAD_DIM/2,)
    rng = np.random.default_rng(SEED + 2)
    q, k, v = rng.standard_normal((3, n, HEAD_DIM))  # (n, HEAD_DIM) each
    s0 = rope_scores(q, k, pos, pos, inv_freq)  # (n, n)
    s1 = rope_scores(q, k, pos + SHIFT, pos + SHIFT, inv_freq)  # (n, n) whole sequence shifted
    v0 = apply_rope(v, pos, inv_freq)  # (n, HEAD_DIM)
    v1 = apply_rope(v, pos + SHIFT, inv_freq)  # (n, HEAD_DIM)
    rel = np.linalg.norm(v1 - v0, axis=1) / np.linalg.norm(v, axis=1)  # (n,)
    numbers.update(
        shift=SHIFT,
        shift_score_change=float(np.abs(s1 - s0).max()),
        shift_value_change_pct=float(100.0 * rel.mean()),
    )


def _complex_view(params: PEParams, numbers: dict[str, float | int | str | bool]) -> None:
    """RoPE as complex multiplication (the formula box): pair i read as z = q_2i + i q_2i+1 and
    multiplied by e^(i m theta_i) gives the same numbers as the rotation in the interleaved
    layout (the score identity Re sum z conj(w) e^(i (m - n) theta) is checked in the tests)."""
    pos, _ = _shown_positions(params.positions)  # (n,)
    inv_freq, _ = rope_inv_freq(HEAD_DIM, params.base)  # (HEAD_DIM/2,)
    q = np.random.default_rng(SEED + 3).standard_normal((pos.size, HEAD_DIM))  # (n, HEAD_DIM)
    rotated = apply_rope(q, pos, inv_freq, layout="interleaved")  # (n, HEAD_DIM)
    multiplied = apply_rope_complex(q, pos, inv_freq)  # (n, HEAD_DIM)
    numbers["complex_err"] = float(np.abs(multiplied - rotated).max())


EX_QUERY_POS, EX_KEY_POS = 7, 3  # the exercise's query and key positions


def _exercises(numbers: dict[str, float | int | str | bool]) -> None:
    """The page's exercises (head of HEAD_DIM, base 10,000): the score of two unit vectors in
    pair 1 after rotation, and the pairs that never complete a turn in a 4k training context."""
    inv_freq, _ = rope_inv_freq(HEAD_DIM, DEMO_BASES[0])  # (64,) theta_i = b^(-2i/d)
    wavelength = 2.0 * np.pi / inv_freq  # (64,)
    slow = wavelength > CONTEXTS[0]  # (64,) pairs that do not finish a turn in training
    first = int(np.argmax(slow))
    numbers.update(
        drill_m=EX_QUERY_POS,
        drill_n=EX_KEY_POS,
        drill_mn=EX_QUERY_POS - EX_KEY_POS,
        drill_omega=float(inv_freq[1]),
        # <R(m theta) q, R(n theta) k> = cos((m - n) theta) for q = k = (1, 0)
        drill_score=float(np.cos((EX_QUERY_POS - EX_KEY_POS) * inv_freq[1])),
        drill_pairs=HEAD_DIM // 2,
        drill_slow=int(slow.sum()),
        drill_first_slow=first,
        drill_first_slow_wl=float(wavelength[first]),
    )


def compute(params: PEParams) -> CardContent:
    """Everything card 3 shows, for the given parameters."""
    numbers: dict[str, float | int | str | bool] = {
        "d_model": params.d_model,
        "base": float(params.base),
        "positions": params.positions,
        "head_dim": HEAD_DIM,
        "base_10k": DEMO_BASES[0],
        "base_500k": DEMO_BASES[1],
        "ctx_4k": CONTEXTS[0],
        "ctx_128k": CONTEXTS[1],
    }
    numbers = Placeholders(numbers)  # each name declared once from here on
    layouts, base = _layouts_base(params, numbers)
    figures = {
        "c3-rotation": _rotation(numbers),
        "c3-scores": _scores(params, numbers),
        "c3-decay": _decay(params, numbers),
        "c3-base": base,
        "c3-layouts": layouts,
    }
    assert tuple(figures) == PANEL_IDS + EXTRA_IDS
    _values_pitfall(params, numbers)
    _complex_view(params, numbers)
    _exercises(numbers)
    return CardContent(card=CARD, figures=figures, numbers=numbers)
