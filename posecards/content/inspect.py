"""What the inspection card of a real model shows, as numbers (no plotting, no templating).

``compute_inspection(ckpt, found)`` reads the one tensor it needs (learned tables only) and
returns a CardContent for the card text ``cards/inspect-<kind>.toml``:

- learned: cosine similarity of the rows, row norms, mean similarity per offset, and the same
  for the sinusoidal table of the same size (d rounded down to even);
- rope: per-pair wavelengths before and after the checkpoint's scaling, the frequency ratios,
  full turns inside the original (pre-scaling) and the scaled context, and the pair layout;
- alibi: the head slopes, bias matrices of three heads, and the distance at which each head
  halves the weight of a key;
- layers (a RoPE model whose layers differ, or with MRoPE, proportional pairs, MLA or a query
  temperature; ``inspect_layers.py``): every layer's attention kind and RoPE, the wavelength of every pair per RoPE
  (pairs that never turn included), which slots of a head rotate (and on which MRoPE axis), and
  the softmax scale, the factor on cos/sin and the query temperature as separate numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from posecards.content import CardContent
from posecards.content.figdata import inspect_alibi as alibi
from posecards.content.figdata import inspect_learned as learned
from posecards.content.figdata import inspect_rope as rope
from posecards.content.inspect_common import (
    ALIBI_LEN,
    CURVE_MOST,
    HALF,
    HEATMAP_MOST,
    SINUSOID_BASE,
    WEIGHTS_LEN,
    card_name,
    common_numbers,
    first_below,
)
from posecards.content.inspect_layers import layers_content
from posecards.encodings.alibi import alibi_bias, alibi_slopes
from posecards.encodings.position_table import (
    row_norms,
    table_offset_profile,
    table_similarity,
)
from posecards.encodings.rope import rope_pair_slots
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.sampling import even_positions, spread_positions
from posecards.encodings.similarity import offset_profile, pe_similarity
from posecards.encodings.softmax import softmax
from posecards.model.checkpoint import Checkpoint, CheckpointError, read_tensor
from posecards.model.names import display_name
from posecards.model.positions import (
    AlibiPositions,
    Found,
    LayeredPositions,
    LearnedPositions,
    RopePositions,
)


def _learned_variants(
    found: LearnedPositions, k_half: int, sin_k_half: int, zero_rows: int, step: int
) -> dict[str, str]:
    """Which phrasing of each text field of the learned-table card applies."""
    falls = {
        (True, True): "both-fall",
        (True, False): "model-falls",
        (False, True): "sinusoid-falls",
        (False, False): "neither-falls",
    }[(k_half >= 0, sin_k_half >= 0)]
    zeros = "zero-rows" if zero_rows else "no-zero-rows"
    sampled = "sampled" if step > 1 else "all"
    variants = {
        "thesis": "from-row" if found.offset else "from-zero",
        "panels.i-similarity.alt": sampled + ("-zero-rows" if zero_rows else ""),
        "panels.i-similarity.caption": "falls" if k_half >= 0 else "stays",
        "panels.i-norms.alt": zeros,
        "panels.i-norms.caption": zeros,
        "panels.i-offset.alt": falls,
        "takeaways.falloff": falls,
        "takeaways.rows": found.offset_rule,
    }
    return variants


def _learned(ckpt: Checkpoint, found: LearnedPositions) -> CardContent:
    table = read_tensor(ckpt, found.tensor)[found.offset :]  # (n, d)
    n, d = table.shape
    norms = row_norms(table)  # (n,)
    g = table_offset_profile(table)  # (n,)
    shown = even_positions(n, HEATMAP_MOST)  # (m,) positions 0, s, 2s, ...
    sim = table_similarity(table, shown.astype(np.int64))  # (m, m)
    d_sin = d - d % 2
    sin_sim = pe_similarity(shown, d_sin, SINUSOID_BASE)  # (m, m)
    ks = np.arange(n, dtype=np.float64)  # (n,)
    f = offset_profile(ks, d_sin, SINUSOID_BASE)  # (n,)
    curve = spread_positions(n, CURVE_MOST).astype(np.int64)  # (c,) shown points of the curves
    zero_rows = int(np.count_nonzero(norms == 0))
    if zero_rows == n:
        raise CheckpointError(
            f"every row of {found.tensor!r} is zero: it holds no position information"
        )
    k_half, sin_k_half = first_below(g, HALF), first_below(f, HALF)
    far = slice(n // 2, n)
    figures: dict[str, Any] = {
        "i-similarity": learned.Similarity(positions=shown, similarity=sim),
        "i-norms": learned.Norms(positions=ks[curve], norm=norms[curve], zero_rows=zero_rows),
        "i-offset": learned.Offset(
            offset=ks[curve], model=g[curve], sinusoidal=f[curve], level=HALF, d_model=d_sin
        ),
        "i-sinusoidal": learned.Sinusoidal(
            positions=shown, similarity=sin_sim, d_model=d_sin, base=SINUSOID_BASE
        ),
    }
    numbers: dict[str, Any] = {
        **common_numbers(ckpt, found),
        "tensor": display_name(found.tensor),
        "rows": found.shape[0],
        "width": d,
        "d_sin": d_sin,
        "dtype": found.dtype,
        "offset": found.offset,
        "offset_rule": found.offset_rule,
        "positions": n,
        "shown": int(shown.size),
        "step": int(shown[1] - shown[0]) if shown.size > 1 else 1,
        "g1": float(g[1]),
        "f1": float(f[1]),
        "k_half": k_half,
        "sin_k_half": sin_k_half,
        "g_far": float(np.nanmean(g[far])) if np.any(~np.isnan(g[far])) else math.nan,
        "f_far": float(f[far].mean()),
        "norm_min": float(norms.min()),
        "norm_max": float(norms.max()),
        "norm_mean": float(norms.mean()),
        "zero_rows": zero_rows,
        "last": n - 1,  # the last position shown
        "last_row": found.offset + n - 1,  # the tensor's row of the last position
        "far_from": n // 2,  # offsets averaged as "far apart" (the slice ``far``)
    }
    variants = _learned_variants(found, k_half, sin_k_half, zero_rows, int(numbers["step"]))
    return CardContent(card=card_name(found), figures=figures, numbers=numbers, variants=variants)


def _rope_frequencies(found: RopePositions) -> tuple[np.ndarray, np.ndarray, float]:
    """theta_k before and after the checkpoint's scaling, ``(pairs,)`` each, and the factor on
    cos/sin, as transformers computes them for this rope_type."""
    dim = found.rotary_dim
    orig, _ = rope_inv_freq(dim, found.base)  # (pairs,) theta_k = base^(-2k/dim)
    if found.rope_type == "longrope":
        # longrope trains with short_factor: up to the original length HF applies those
        orig, _ = rope_inv_freq(
            dim,
            found.base,
            found.scaling,
            seq_len=found.trained_context,
            max_position_embeddings=found.max_position_embeddings,
        )
    seq_len = found.scaled_context if found.rope_type in ("dynamic", "longrope") else None
    scaled, attention = rope_inv_freq(
        dim,
        found.base,
        found.scaling,
        seq_len=seq_len,
        max_position_embeddings=found.max_position_embeddings,
    )  # (pairs,), scalar
    return orig, scaled, float(attention)


def _rope_variants(found: RopePositions, numbers: dict[str, Any]) -> dict[str, str]:
    """Which phrasing of each text field applies; also sets numbers["context_note"]."""
    scaled_by = "scaled" if numbers["scaled_by"] else "unscaled"
    curves = "longrope" if numbers["longrope"] else scaled_by
    contexts = "two-contexts" if found.scaled_context != found.trained_context else "one-context"
    partial = "-partial" if numbers["partial"] else ""
    # which sentence names where the two contexts come from ([names.context_note])
    dynamic = found.context_rule == "extend" and found.rope_type == "dynamic"
    numbers["context_note"] = "extend-dynamic" if dynamic else found.context_rule
    variants = {
        "thesis": scaled_by + partial,
        "panels.i-wavelengths.alt": f"{curves}-{contexts}",
        "panels.i-wavelengths.caption": scaled_by,
        "panels.i-ratios.caption": scaled_by,
        "panels.i-turns.alt": scaled_by,
        "panels.i-layout.alt": found.layout + partial,
        "panels.i-layout.caption": found.layout,
        "takeaways.scaling": scaled_by,
        "takeaways.config": "defaults" if found.defaults else "read",
    }
    return variants


def _rope(ckpt: Checkpoint, found: RopePositions) -> CardContent:
    dim = found.rotary_dim
    pairs = dim // 2
    orig, scaled, attention = _rope_frequencies(found)  # (pairs,), (pairs,), scalar
    wl_orig = 2 * math.pi / orig  # (pairs,) positions per full turn
    wl_scaled = 2 * math.pi / scaled  # (pairs,)
    ratio = scaled / orig  # (pairs,)
    # turns over positions 0 .. N-1: the largest angle is (N - 1)·θ, i.e. (N - 1)/λ turns
    # (found.trained_context is the original, pre-scaling context: original_max_position_...)
    turns_orig = (found.trained_context - 1) / wl_orig  # (pairs,) within the original context
    turns_scaled = (found.scaled_context - 1) / wl_scaled  # (pairs,) within the scaled context
    k = np.arange(pairs, dtype=np.float64)  # (pairs,)
    # pair index of each of the head_dim slots; -1: not rotated (partial rotary)
    other_layout = "interleaved" if found.layout == "half" else "half"
    this = rope_pair_slots(found.head_dim, dim, found.layout).astype(np.float64)  # (head_dim,)
    other = rope_pair_slots(found.head_dim, dim, other_layout).astype(np.float64)  # (head_dim,)
    unchanged = np.isclose(ratio, 1.0, rtol=1e-12, atol=0.0)
    factor = found.scaling.get("factor")
    baseline: rope.Baseline = "short" if found.rope_type == "longrope" else "original"
    figures: dict[str, Any] = {
        "i-wavelengths": rope.Wavelengths(
            pair=k,
            original=wl_orig,
            scaled=wl_scaled,
            original_context=float(found.trained_context),
            scaled_context=float(found.scaled_context),
            baseline=baseline,
        ),
        "i-ratios": rope.Ratios(
            pair=k,
            ratio=ratio,
            theta=orig,
            theta_scaled=scaled,
            attention_factor=float(attention),
        ),
        "i-turns": rope.Turns(pair=k, original=turns_orig, scaled=turns_scaled, baseline=baseline),
        "i-layout": rope.Layout(this=this, other=other, layout=found.layout),
    }
    numbers: dict[str, Any] = {
        **common_numbers(ckpt, found),
        "rope_type": found.rope_type,
        "scaled_by": found.rope_type != "default",
        "context_rule": found.context_rule,
        "longrope": found.rope_type == "longrope",
        "factor": float(factor) if factor is not None else 1.0,
        "base": found.base,
        "head_dim": found.head_dim,
        "rotary_dim": dim,
        "partial": dim < found.head_dim,
        "pairs": pairs,
        "orig_ctx": found.trained_context,
        "scaled_ctx": found.scaled_context,
        "attention": float(attention),
        "turn_orig": int(np.count_nonzero(turns_orig >= 1)),
        "turn_scaled": int(np.count_nonzero(turns_scaled >= 1)),
        "wl_short": float(wl_orig[0]),
        "wl_long": float(wl_orig[-1]),
        "wl_long_scaled": float(wl_scaled[-1]),
        "ratio_min": float(ratio.min()),
        "ratio_max": float(ratio.max()),
        "unchanged": int(np.count_nonzero(unchanged)),
        "layout": found.layout,
        "ignored": ", ".join(found.ignored_keys) if found.ignored_keys else "none",
    }
    numbers["never_turn"] = pairs - numbers["turn_orig"]  # pairs that never wrap in orig_ctx
    numbers["divided_by"] = 1.0 / numbers["ratio_min"]  # the largest division of a frequency
    variants = _rope_variants(found, numbers)
    return CardContent(card=card_name(found), figures=figures, numbers=numbers, variants=variants)


def _alibi(ckpt: Checkpoint, found: AlibiPositions) -> CardContent:
    h = found.n_heads
    m = alibi_slopes(h, found.max_bias)  # (H,)
    by_slope = np.argsort(-m, kind="stable")  # (H,) head indices, steepest first
    # the steepest, a middle and the gentlest head (fewer when there are fewer heads)
    shown = [int(i) for i in dict.fromkeys(by_slope[[0, (h - 1) // 2, h - 1]].tolist())]
    bias = alibi_bias(h, ALIBI_LEN, True, found.max_bias)[shown]  # (s, L, L)
    half = math.log(2) / m  # (H,) distance at which a key's weight halves (equal content)
    # weights of the last of L queries over its keys, equal content: softmax_j(-m_h (L-1-j))
    length = found.context or WEIGHTS_LEN
    dist = np.arange(length, dtype=np.float64)  # (L,) distance back, 0 = the query itself
    weights = softmax(-m[shown][:, None] * dist[None, :], axis=-1)  # (s, L)
    heads = np.arange(1, h + 1, dtype=np.float64)  # (H,)
    shown_heads = np.asarray(shown, dtype=np.float64) + 1  # (s,)
    figures: dict[str, Any] = {
        "i-slopes": alibi.Slopes(head=heads, slope=m),
        "i-bias": alibi.Bias(bias=bias, heads=shown_heads),
        "i-weights": alibi.Weights(distance=dist, weights=weights, heads=shown_heads),
        "i-reach": alibi.Reach(head=heads, half_distance=half, context=float(found.context or 0)),
    }
    numbers: dict[str, Any] = {
        **common_numbers(ckpt, found),
        "heads": h,
        "family": found.family,
        "pow2": h & (h - 1) == 0,
        "next_pow2": 1 << (h - 1).bit_length(),
        "max_bias": found.max_bias,
        "m_first": float(m[0]),
        "m_last": float(m[-1]),
        "m_min": float(m.min()),
        "m_max": float(m.max()),
        "half_min": float(half.min()),
        "half_first": float(half[0]),
        "half_max": float(half.max()),
        "context": found.context or 0,
        "sorted": bool(np.all(np.diff(m) < 0)),
        "corner": float(bias[0, -1, 0]),
        "corner_gentle": float(bias[-1, -1, 0]),
        "n_shown": len(shown),
        "head_steep": shown[0] + 1,
        "head_gentle": shown[-1] + 1,
        "step_first": math.exp(-float(m[0])),  # weight ratio of neighbouring keys, head 1
        "len": ALIBI_LEN,
        "weights_len": length,
        "w_steep_far": float(weights[0, -1]),
        "w_gentle_far": float(weights[-1, -1]),
        "w_steep_self": float(weights[0, 0]),
        # where B comes from: BLOOM fixes 8; MPT reads alibi_bias_max, which transformers'
        # port ignores (it always builds its slopes with 8)
        "bias_source": (
            "bloom" if found.family == "bloom" else ("mpt" if found.max_bias == 8 else "mpt-ported")
        ),
    }
    one = "one" if len(shown) == 1 else "several"
    order = "sorted" if numbers["sorted"] else "unsorted"
    variants = {
        "formula.note": "pow2" if numbers["pow2"] else "not-pow2",
        "panels.i-slopes.alt": order,
        "panels.i-slopes.caption": order,
        "panels.i-bias.alt": ("one", "two", "three")[len(shown) - 1],
        "panels.i-bias.caption": one,
        "panels.i-weights.alt": one,
        "panels.i-weights.caption": one,
        "panels.i-reach.alt": "context" if found.context else "no-context",
        "takeaways.config": "mpt" if found.family == "mpt" else "bloom",
    }
    return CardContent(card=card_name(found), figures=figures, numbers=numbers, variants=variants)


def compute_inspection(ckpt: Checkpoint, found: Found) -> CardContent:
    """Everything the inspection card shows for ``ckpt``."""
    if isinstance(found, LearnedPositions):
        return _learned(ckpt, found)
    if isinstance(found, RopePositions):
        return _rope(ckpt, found)
    if isinstance(found, LayeredPositions):
        return layers_content(ckpt, found)
    if isinstance(found, AlibiPositions):
        return _alibi(ckpt, found)
    # a reading whose values the folder does not hold (commands.inspect draws no card for it)
    raise ValueError(f"no inspection card draws {found.kind} positions")
