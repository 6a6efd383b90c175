"""How a trained RoPE model uses its frequencies, from its q/k weights (no plotting, no templating).

``weights_reading(ckpt, found)`` reads the attention weights one layer at a time
(``posecards.model.weights``) and keeps per layer, head and pair only the numbers of
``posecards.encodings.rope_use``; ``compute_weights_card`` turns them into the CardContent of
``cards/inspect-weights.toml`` and ``weights_json`` into the ``--format json`` document
(docs/inspect-json.md, "weights").

Use of pair k by query head h is ``‖W_q[h] pair k‖ · ‖W_k[g(h)] pair k‖`` (γ folded in, g(h) the
key head of grouped-query attention), shown as a share of the head's total, so that heads and
layers of different scale compare. The "fast" pairs are the quarter with the highest frequencies
(shortest wavelengths), the "slow" ones the quarter with the lowest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from posecards.content import CardContent
from posecards.content.figdata.inspect_weights import Cosine, CosSum, Heads, Use
from posecards.content.reading import kind_frequencies
from posecards.encodings._checks import F64
from posecards.encodings.critical_dim import critical_dimension
from posecards.encodings.rope_base_bound import base_holds, lowest_mean_cos, minimum_base
from posecards.encodings.rope_use import (
    bias_score,
    cosines_from,
    kv_head_of,
    norms_from,
    pair_rows,
    pair_use,
    shares,
    unrotated_norms,
)
from posecards.model.checkpoint import Checkpoint, CheckpointError
from posecards.model.layers import ModelLayers
from posecards.model.names import display_name
from posecards.model.positions import Found, LayeredPositions, RopePositions
from posecards.model.weights import LayerWeights, iter_layers

CARD = "inspect-weights"
BIAS_DISTANCES = 256  # distances 0 .. 255 of the bias score
COS_SUM_POINTS = 2048  # points of the cos-sum curve at most
QUARTER = 4  # fast / slow pairs: the first / last quarter of the pairs


@dataclass(frozen=True)
class WeightsReading:
    """Per rotating layer, head and pair (float64), plus what they were read from."""

    layers: tuple[int, ...]  # indices of the rotating layers read
    heads: int
    kv_heads: int
    head_dim: int
    rotated_dim: int
    base: float
    context: int
    layout: str  # the model's pair layout
    stored_layout: str  # the order the file holds the rows in
    rope: str  # the RoPE whose frequencies the card shows (full attention's where types differ)
    layer_rope: tuple[str, ...]  # the RoPE of each layer read
    inv_freq: F64  # (pairs,) of ``rope``
    kv_head: Any  # (heads,) int: the key head of each query head
    q_norm: F64  # (layers, heads, pairs)
    k_norm: F64  # (layers, kv_heads, pairs)
    q_cos: F64  # (layers, heads, pairs)
    k_cos: F64  # (layers, kv_heads, pairs)
    use: F64  # (layers, heads, pairs) shares: each head's row sums to 1
    q_unrotated: F64  # (layers, heads) norm of the slots that do not rotate
    bias: F64 | None  # (layers, heads, BIAS_DISTANCES) b_q R(Δθ) b_k, None without biases
    qk_norm: bool


def _sizes(config: Mapping[str, Any], prefix: str) -> tuple[int, int]:
    text = config
    for part in prefix.rstrip(".").split(".") if prefix else ():
        text = text.get(part, {}) if isinstance(text, Mapping) else {}
    heads = text.get("num_attention_heads")
    kv = text.get("num_key_value_heads") or heads
    for key, v in (("num_attention_heads", heads), ("num_key_value_heads", kv)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise CheckpointError(f"config: {key} must be a positive integer, got {v!r}")
    assert isinstance(heads, int) and isinstance(kv, int)
    if heads % kv:
        raise CheckpointError(f"config: {heads} query heads do not split into {kv} key heads")
    return heads, kv


def check_rope(ckpt: Checkpoint, found: Found) -> None:
    """A CheckpointError unless the model rotates (before anything is read or said)."""
    if not isinstance(found, RopePositions | LayeredPositions) or (
        isinstance(found, RopePositions) and found.reading is None
    ):
        raise CheckpointError(
            f"{ckpt.name} uses {found.kind} positions, not RoPE: it has no frequencies to use"
        )
    if not ckpt.weights:
        raise CheckpointError(f"{ckpt.name}: a config without weights has no frequency use to read")


def weights_reading(ckpt: Checkpoint, found: Found) -> WeightsReading:
    """Read every rotating layer's q/k weights, one layer at a time."""
    check_rope(ckpt, found)
    assert isinstance(found, RopePositions | LayeredPositions)
    reading = found.reading
    assert reading is not None
    if reading.temperature is not None:
        raise CheckpointError(
            f"{ckpt.name}: a query temperature scales some layers' queries; posecards reads "
            "frequency use of models without one"
        )
    freqs = _frequencies(ckpt, reading)
    # the card's wavelengths: full attention's RoPE where layer types differ (the long one)
    main = "full_attention" if "full_attention" in freqs else next(iter(freqs))
    kind = reading.rope[main]
    inv_freq = freqs[main]
    ctx = _context(ckpt, reading, kind.parameters)
    heads, kv = _sizes(ckpt.config, reading.text_prefix)
    kv_head = kv_head_of(heads, kv)  # (heads,)
    per = []
    for lw in iter_layers(ckpt, reading, heads, kv, kind.head_slots):
        theta = freqs[reading.layers[lw.index].rope or "rope"]
        per.append(_layer_stats(lw, kind.head_slots, kv_head, theta))
        del lw  # layer j goes before j + 1 is handed over and j + 2 read: two layers at most
    bias = [x.bias for x in per if x.bias is not None]
    return WeightsReading(
        layers=tuple(reading.rope_layers),
        heads=heads,
        kv_heads=kv,
        head_dim=kind.head_slots,
        rotated_dim=2 * inv_freq.size,
        base=float(kind.theta),
        context=int(ctx),
        layout=kind.layout,
        stored_layout=per[-1].stored_layout if per else kind.layout,
        rope=main,
        layer_rope=tuple(reading.layers[i].rope or "rope" for i in reading.rope_layers),
        inv_freq=inv_freq,
        kv_head=kv_head,
        q_norm=np.stack([x.q_norm for x in per]),
        k_norm=np.stack([x.k_norm for x in per]),
        q_cos=np.stack([x.q_cos for x in per]),
        k_cos=np.stack([x.k_cos for x in per]),
        use=np.stack([x.use for x in per]),
        q_unrotated=np.stack([x.q_unrotated for x in per]),
        bias=np.stack(bias) if bias and len(bias) == len(per) else None,
        qk_norm=any(x.qk_norm for x in per),
    )


def _frequencies(ckpt: Checkpoint, reading: ModelLayers) -> dict[str, F64]:
    """The ``(pairs,)`` inv_freq of each RoPE the rotating layers use, by key in sorted order;
    a CheckpointError where the heads are not plain or partial RoPE of one shape."""
    keys = sorted({reading.layers[i].rope or "rope" for i in reading.rope_layers})
    freqs: dict[str, F64] = {}
    for key in keys:
        kind = reading.rope[key]
        if kind.first_slot or kind.mrope_section is not None or kind.head_slots != kind.head_dim:
            raise CheckpointError(
                f"{ckpt.name}: its heads rotate only part of a split head (MLA) or by MRoPE "
                "axes; posecards reads frequency use of plain and partial RoPE"
            )
        nums = kind_frequencies(kind)
        if np.any(nums.inv_freq == 0):
            raise CheckpointError(
                f"{ckpt.name}: {key} has pairs that never turn (proportional RoPE); posecards "
                "reads frequency use of plain and partial RoPE"
            )
        freqs[key] = nums.inv_freq  # (pairs,)
    shapes = {(reading.rope[k].head_slots, freqs[k].size, reading.rope[k].layout) for k in keys}
    if len(shapes) != 1:
        raise CheckpointError(
            f"{ckpt.name}: its layer types rotate different numbers of pairs; posecards reads "
            "frequency use where every rotating layer has the same pairs"
        )
    return freqs


def _context(ckpt: Checkpoint, reading: ModelLayers, parameters: Mapping[str, Any]) -> int:
    """The context the model was trained for: before any scaling where the RoPE names it."""
    ctx = reading.max_position_embeddings or 0
    if isinstance(parameters.get("original_max_position_embeddings"), int):
        ctx = int(parameters["original_max_position_embeddings"])  # trained before scaling
    if ctx < 2:
        raise CheckpointError(
            f"{ckpt.name}: the config names no context length (max_position_embeddings); the "
            "frequency-use card draws wavelengths against it"
        )
    return ctx


@dataclass(frozen=True)
class _LayerStats:
    """One layer's numbers, per head and pair (float64)."""

    q_norm: F64  # (heads, pairs)
    k_norm: F64  # (kv_heads, pairs)
    q_cos: F64  # (heads, pairs)
    k_cos: F64  # (kv_heads, pairs)
    use: F64  # (heads, pairs) shares
    q_unrotated: F64  # (heads,)
    bias: F64 | None  # (heads, BIAS_DISTANCES)
    qk_norm: bool
    stored_layout: str


def _layer_stats(lw: LayerWeights, head_dim: int, kv_head: Any, theta: F64) -> _LayerStats:
    """Pair norms, cosines, use and bias score of one layer's weights; ``theta`` ``(pairs,)``: the
    layer's own RoPE."""
    rows = pair_rows(2 * theta.size, lw.layout)  # (pairs, 2) in the file's order
    q_sq, q_dot = lw.q.stats(rows, lw.gamma)  # (heads, head_dim), (heads, pairs)
    k_sq, k_dot = lw.k.stats(rows, lw.gamma)  # (kv, head_dim), (kv, pairs)
    qk = lw.q_norm is not None and lw.k_norm is not None
    if lw.q_norm is not None and lw.k_norm is not None:
        # the per-slot gain after each head's RMS norm, folded into the rows
        q_sq, q_dot = _gain(q_sq, q_dot, lw.q_norm, rows)
        k_sq, k_dot = _gain(k_sq, k_dot, lw.k_norm, rows)
    q_n, k_n = norms_from(q_sq, rows), norms_from(k_sq, rows)  # (heads, pairs), (kv, pairs)
    mask = np.zeros(head_dim, dtype=bool)
    mask[rows.reshape(-1)] = True
    bias = None
    if lw.q_bias is not None and lw.k_bias is not None:
        dist = np.arange(BIAS_DISTANCES, dtype=np.float64)  # (D,)
        # (heads, D): each query head's bias with the bias of the key head it reads
        bias = bias_score(lw.q_bias, lw.k_bias[kv_head], theta, rows, dist)
    return _LayerStats(
        q_norm=q_n,
        k_norm=k_n,
        q_cos=cosines_from(q_sq, q_dot, rows),
        k_cos=cosines_from(k_sq, k_dot, rows),
        use=shares(pair_use(q_n, k_n, kv_head)),
        q_unrotated=unrotated_norms(q_sq, mask),
        bias=bias,
        qk_norm=qk,
        stored_layout=lw.layout,
    )


def _gain(sq: F64, dot: F64, g: F64, rows: Any) -> tuple[F64, F64]:
    """Rows scaled by a per-slot gain g: squared norms by g², pair dot products by g0·g1."""
    return sq * g**2, dot * (g[rows[:, 0]] * g[rows[:, 1]])


def _corr(a: F64, b: F64) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.std(a[ok]) == 0 or np.std(b[ok]) == 0:
        return math.nan
    return float(np.corrcoef(a[ok], b[ok])[0, 1])


@dataclass(frozen=True)
class Summary:
    mean_use: F64  # (layers, pairs) mean share over heads
    top_pair: Any  # (layers,) int: the pair each layer uses most
    centre: F64  # (layers, heads) use-weighted mean pair index of each head
    fast: F64  # (layers, heads) share on the fastest quarter
    slow: F64  # (layers, heads) share on the slowest quarter
    qk_cos_r: F64  # (layers,) Pearson r of query-pair and key-pair cosines
    crit_dim: int | None
    min_base: float | None


def summarize(w: WeightsReading) -> Summary:
    pairs = w.inv_freq.size
    k = np.arange(pairs, dtype=np.float64)
    quarter = max(1, pairs // QUARTER)
    mean_use = np.nanmean(w.use, axis=1)  # (layers, pairs)
    r = np.array(
        [
            _corr(w.q_cos[i].reshape(-1), w.k_cos[i][w.kv_head].reshape(-1))
            for i in range(len(w.layers))
        ]
    )  # (layers,)
    crit = mb = None
    if w.context > 0:
        crit = critical_dimension(w.rotated_dim, w.base, w.context)
        if w.context >= 2:
            mb = minimum_base(w.rotated_dim, w.context)
    return Summary(
        mean_use=mean_use,
        top_pair=np.argmax(mean_use, axis=1),
        centre=np.einsum("lhp,p->lh", w.use, k),
        fast=w.use[:, :, :quarter].sum(axis=2),
        slow=w.use[:, :, pairs - quarter :].sum(axis=2),
        qk_cos_r=r,
        crit_dim=crit,
        min_base=mb,
    )


@dataclass(frozen=True)
class _Picks:
    """What the card points at: the heads most on the fast and the slow quarter, the pair used
    most over all layers, and the pairs slower than the context."""

    wavelength: F64  # (pairs,) in positions
    fast: tuple[int, int]  # (layer position, head)
    slow: tuple[int, int]
    overall: F64  # (pairs,) mean share over layers and heads
    top: int
    beyond: int


def _picks(w: WeightsReading, s: Summary) -> _Picks:
    wl = 2 * math.pi / w.inv_freq  # (pairs,) wavelength in positions
    overall = np.nanmean(s.mean_use, axis=0)  # (pairs,)
    fast_l, fast_h = divmod(int(np.nanargmax(s.fast)), w.heads)
    slow_l, slow_h = divmod(int(np.nanargmax(s.slow)), w.heads)
    return _Picks(
        wavelength=wl,
        fast=(fast_l, fast_h),
        slow=(slow_l, slow_h),
        overall=overall,
        top=int(np.nanargmax(overall)),
        beyond=int(np.count_nonzero(wl > w.context)) if w.context else 0,
    )


def compute_weights_card(ckpt: Checkpoint, found: Found, w: WeightsReading) -> CardContent:
    s = summarize(w)
    picks = _picks(w, s)
    ctx = w.context or 0
    holds = bool(ctx >= 2 and base_holds(ctx, w.rotated_dim, w.base))
    variants = {
        "panels.w-use.alt": "beyond" if picks.beyond else "all-turn",
        "panels.w-cos-sum.alt": "holds" if holds else "fails",
        "panels.w-cos-sum.caption": "holds" if holds else "fails",
        "takeaways.heads": "qk-norm" if w.qk_norm else "plain",
        "pitfalls.order": "gguf" if ckpt.format == "gguf" else "hf",
    }
    return CardContent(
        card=CARD,
        figures=_figures(w, s, picks),
        numbers=_numbers(ckpt, w, s, picks),
        variants=variants,
    )


def _figures(w: WeightsReading, s: Summary, picks: _Picks) -> dict[str, Any]:
    ctx = w.context or 0
    layers = np.asarray(w.layers, dtype=np.float64)  # (layers,)
    m = np.unique(np.linspace(0, max(ctx, 2) - 1, COS_SUM_POINTS).round())  # (M,) shown
    shown = m.astype(np.int64)
    (fast_l, fast_h), (slow_l, slow_h) = picks.fast, picks.slow
    return {
        "w-use": Use(
            use=s.mean_use,
            layers=layers,
            wavelength=picks.wavelength,
            context=float(ctx),
            beyond=picks.beyond,
        ),
        "w-cosine": Cosine(
            cos=np.nanmean(np.abs(w.q_cos), axis=1),  # (layers, pairs) mean |cos| over heads
            layers=layers,
        ),
        "w-heads": Heads(
            layer=np.repeat(layers, w.heads),
            centre=s.centre.reshape(-1),
            pairs=w.inv_freq.size,
            fast=[float(w.layers[fast_l]), float(s.centre[fast_l, fast_h])],
            slow=[float(w.layers[slow_l]), float(s.centre[slow_l, slow_h])],
        ),
        "w-cos-sum": CosSum(
            distance=m,
            model=lowest_mean_cos(w.rotated_dim, w.base, max(ctx, 2))[shown],
            minimum=(
                lowest_mean_cos(w.rotated_dim, s.min_base, max(ctx, 2))[shown]
                if s.min_base
                else m * 0
            ),
            base=w.base,
            min_base=s.min_base or math.nan,
        ),
    }


def _numbers(ckpt: Checkpoint, w: WeightsReading, s: Summary, picks: _Picks) -> dict[str, Any]:
    pairs = w.inv_freq.size
    ctx = w.context or 0
    (fast_l, fast_h), (slow_l, slow_h) = picks.fast, picks.slow
    layer_top = [int(x) for x in s.top_pair]
    top = picks.top
    return {
        "model": display_name(ckpt.name),
        "layers": len(w.layers),
        "heads": w.heads,
        "kv_heads": w.kv_heads,
        "group": w.heads // w.kv_heads,
        "head_dim": w.head_dim,
        "rotated_dim": w.rotated_dim,
        "pairs": pairs,
        "base": w.base,
        "context": ctx,
        "layout": w.layout,
        "stored_layout": w.stored_layout,
        "format": ckpt.format,
        "top_pair": top,
        "top_pct": 100 * float(picks.overall[top]),
        "even_pct": 100 / pairs,
        "top_wl": float(picks.wavelength[top]),
        "fast_pct": 100 * float(np.nanmean(s.fast)),
        "slow_pct": 100 * float(np.nanmean(s.slow)),
        "quarter": max(1, pairs // QUARTER),
        "fast_layer": int(w.layers[fast_l]),
        "fast_head": fast_h,
        "fast_head_pct": 100 * float(s.fast[fast_l, fast_h]),
        "slow_layer": int(w.layers[slow_l]),
        "slow_head": slow_h,
        "slow_head_pct": 100 * float(s.slow[slow_l, slow_h]),
        "first_top": layer_top[0],
        "last_top": layer_top[-1],
        "beyond": picks.beyond,
        "crit_dim": s.crit_dim if s.crit_dim is not None else 0,
        "crit_pairs": (s.crit_dim or 0) // 2,
        "rest_pairs": pairs - (s.crit_dim or 0) // 2,
        "min_base": s.min_base or math.nan,
        "cos_r": float(np.nanmedian(s.qk_cos_r)) if np.any(np.isfinite(s.qk_cos_r)) else math.nan,
        "cos_abs": float(np.nanmean(np.abs(w.q_cos))),
    }


def _f(x: float) -> float | str:
    return float(x) if math.isfinite(x) else str(x)


def _grid(a: F64) -> Any:
    return (
        [[_f(v) for v in row] for row in np.asarray(a).tolist()]
        if a.ndim == 2
        else [_grid(x) for x in a]
    )


def weights_json(
    name: str, found: Found, w: WeightsReading, activations: Mapping[str, Any] | None = None
) -> bytes:
    """The ``--format json`` document of a weights reading (docs/inspect-json.md), with the
    ``activations`` object measured on text (``content.activations.activations_json``) or null."""
    s = summarize(w)
    doc = {
        "schema": "posecards.inspect.weights",
        "version": 1,
        "model": name,
        "layout": w.layout,
        "stored_layout": w.stored_layout,
        "heads": w.heads,
        "kv_heads": w.kv_heads,
        "kv_head_of_query_head": [int(x) for x in w.kv_head],
        "head_dim": w.head_dim,
        "rotated_dim": w.rotated_dim,
        "theta": w.base,
        "context": w.context,
        "rope": w.rope,
        "inv_freq": [_f(x) for x in w.inv_freq.tolist()],
        "critical_dimension": s.crit_dim,
        "minimum_base": s.min_base,
        "qk_norm": w.qk_norm,
        "layers": [
            {
                "index": int(li),
                "rope": w.layer_rope[i],
                "top_pair": int(s.top_pair[i]),
                "use": _grid(w.use[i]),
                "q_pair_norm": _grid(w.q_norm[i]),
                "k_pair_norm": _grid(w.k_norm[i]),
                "q_pair_cos": _grid(w.q_cos[i]),
                "k_pair_cos": _grid(w.k_cos[i]),
                "q_unrotated_norm": [_f(x) for x in w.q_unrotated[i].tolist()],
                "qk_cos_r": _f(float(s.qk_cos_r[i])),
                "bias_score": _grid(w.bias[i]) if w.bias is not None else None,
            }
            for i, li in enumerate(w.layers)
        ],
        "activations": activations,
    }
    # one line (the per-head grids hold tens of thousands of numbers), floats in Python's shortest
    # round-trip form, keys in the order above, a final newline: the same bytes on every machine
    return (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
