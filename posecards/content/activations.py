"""How a RoPE model uses its pairs on real text (``posecards inspect --activations``): the measured
counterpart of ``posecards.content.weights`` (no plotting, no templating).

``activations_reading`` runs the model once through transformers (``posecards.model.activations``)
on posecards' own text (``posecards/data/text/activations.en.txt``, written for this) or the
user's, and keeps per layer only the statistics of ``posecards.encodings.activation_stats``:
mean pair norms of q and k over the tokens (Barbero et al.), massive slots (Jin et al.'s 5×
rule), attention mass by distance and the share each head gives the first token. Measured use of
pair k by query head h is ``mean‖q[h] pair k‖ · mean‖k[g(h)] pair k‖`` as a share of the head's
total, the same formula as the weights' use, so the two compare pair by pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posecards.content import CardContent
from posecards.content.figdata.inspect_activations import Agree, Distance, UseMap
from posecards.content.weights import WeightsReading
from posecards.encodings._checks import F64, I64
from posecards.encodings.activation_stats import (
    MASSIVE_FACTOR,
    distance_edges,
    first_token_share,
    mass_by_distance,
    massive_slots,
    pair_norm_means,
)
from posecards.encodings.rope_use import pair_rows, pair_use, shares
from posecards.model.activations import (
    MAX_TOKENS,
    check_memory,
    load_model,
    load_tokenizer,
    run_on_text,
)
from posecards.model.checkpoint import Checkpoint, CheckpointError
from posecards.model.names import display_name

# posecards' own text, written for this (about 2,360 tokens for SmolLM2's tokenizer)
TEXT = Path(__file__).resolve().parent.parent / "data" / "text" / "activations.en.txt"
MIN_TOKENS = 64  # a text shorter than this says too little about distances
CARD = "inspect-activations"


@dataclass(frozen=True)
class ActivationsReading:
    """Per measured layer, from one pass over ``tokens`` tokens (float64)."""

    text: str  # "posecards" (the shipped text) or the user's file name
    tokens: int
    layers: tuple[int, ...]
    q_norm: F64  # (layers, heads, pairs) mean ‖q pair‖ over tokens
    k_norm: F64  # (layers, kv_heads, pairs)
    use: F64  # (layers, heads, pairs) measured use shares: each head's row sums to 1
    q_massive: I64  # (layers, pairs) massive q slots in each pair, over all heads
    k_massive: I64  # (layers, pairs)
    edges: I64  # (bins + 1,) distance bins: edges[b] <= i - j < edges[b + 1]
    mass: F64  # (layers, heads, bins) mean attention mass in each distance bin
    first_token: F64  # (layers, heads) mean weight on token 0 (queries 1 .. tokens - 1)


def read_text(path: Path | None) -> tuple[str, str]:
    """(name, text): the user's UTF-8 file, or posecards' own."""
    if path is None:
        return "posecards", TEXT.read_text(encoding="utf-8")
    try:
        return path.name, path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CheckpointError(f"--text {path}: no such file") from None
    except UnicodeDecodeError:
        raise CheckpointError(f"--text {path}: not UTF-8 text") from None
    except OSError as exc:
        raise CheckpointError(f"--text {path}: cannot read it ({exc.strerror})") from None


def activations_reading(
    ckpt: Checkpoint, w: WeightsReading, text_file: Path | None = None
) -> ActivationsReading:
    """Run the model on the text (its first MAX_TOKENS tokens) and measure every layer."""
    name, text = read_text(text_file)
    tokenizer = load_tokenizer(ckpt)
    ids = list(tokenizer(text)["input_ids"])[:MAX_TOKENS]
    if len(ids) < MIN_TOKENS:
        raise CheckpointError(
            f"{'--text ' + name if text_file else 'posecards text'}: {len(ids)} tokens for "
            f"{ckpt.name}'s tokenizer; posecards measures attention by distance on at least "
            f"{MIN_TOKENS}"
        )
    check_memory(ckpt, len(ids), w.heads)
    rows = pair_rows(w.rotated_dim, w.layout)  # (pairs, 2) in the model's own order
    edges = distance_edges(len(ids))
    per: dict[int, tuple[F64, F64, Any, Any, F64, F64]] = {}

    def on_layer(layer: int, q: np.ndarray, k: np.ndarray, attn: np.ndarray) -> None:
        # q (tokens, heads, head_dim), k (tokens, kv_heads, head_dim), attn (heads, s, s)
        qm = massive_slots(q)[:, rows].sum(axis=(0, 2))  # (pairs,) massive slots per pair
        km = massive_slots(k)[:, rows].sum(axis=(0, 2))  # (pairs,)
        per[layer] = (
            pair_norm_means(q, rows),
            pair_norm_means(k, rows),
            qm,
            km,
            mass_by_distance(attn, edges),
            first_token_share(attn),
        )

    model = load_model(ckpt)
    run_on_text(model, ids, on_layer)
    del model
    layers = tuple(i for i in w.layers if i in per)
    if not layers:
        raise CheckpointError(f"{ckpt.name}: no rotating layer's attention was measured")
    qn = np.stack([per[i][0] for i in layers])  # (layers, heads, pairs)
    kn = np.stack([per[i][1] for i in layers])  # (layers, kv, pairs)
    if qn.shape[1] != w.heads or kn.shape[1] != w.kv_heads:
        raise CheckpointError(
            f"{ckpt.name}: the model ran {qn.shape[1]} query and {kn.shape[1]} key heads; the "
            f"config says {w.heads} and {w.kv_heads}"
        )
    return ActivationsReading(
        text=name,
        tokens=len(ids),
        layers=layers,
        q_norm=qn,
        k_norm=kn,
        use=np.stack([shares(pair_use(qn[j], kn[j], w.kv_head)) for j in range(len(layers))]),
        q_massive=np.stack([per[i][2] for i in layers]).astype(np.int64),
        k_massive=np.stack([per[i][3] for i in layers]).astype(np.int64),
        edges=edges,
        mass=np.stack([per[i][4] for i in layers]),
        first_token=np.stack([per[i][5] for i in layers]),
    )


def agreement(w: WeightsReading, a: ActivationsReading) -> F64:
    """``(layers,)`` Pearson r, per measured layer, between the pairs' mean use from the weights
    and measured on the text (each averaged over the query heads)."""
    at = [w.layers.index(i) for i in a.layers]
    out = np.empty(len(at), dtype=np.float64)
    for j, li in enumerate(at):
        x, y = np.nanmean(w.use[li], axis=0), np.nanmean(a.use[j], axis=0)  # (pairs,) each
        out[j] = float(np.corrcoef(x, y)[0, 1]) if np.std(x) > 0 and np.std(y) > 0 else math.nan
    return out


def _f(x: float) -> float | str:
    return float(x) if math.isfinite(x) else str(x)


def activations_json(w: WeightsReading, a: ActivationsReading) -> dict[str, Any]:
    """The ``activations`` object of the weights document (docs/inspect-json.md)."""
    r = agreement(w, a)
    return {
        "text": a.text,
        "tokens": a.tokens,
        "massive_factor": MASSIVE_FACTOR,
        "distance_bins": [int(x) for x in a.edges.tolist()],
        "layers": [
            {
                "index": int(li),
                "use": [[_f(v) for v in row] for row in a.use[j].tolist()],
                "q_pair_norm": [[_f(v) for v in row] for row in a.q_norm[j].tolist()],
                "k_pair_norm": [[_f(v) for v in row] for row in a.k_norm[j].tolist()],
                "q_massive_per_pair": [int(v) for v in a.q_massive[j].tolist()],
                "k_massive_per_pair": [int(v) for v in a.k_massive[j].tolist()],
                "attention_by_distance": [[_f(v) for v in row] for row in a.mass[j].tolist()],
                "first_token_share": [_f(v) for v in a.first_token[j].tolist()],
                "use_r_weights": _f(float(r[j])),
            }
            for j, li in enumerate(a.layers)
        ],
    }


def compute_activations_card(
    ckpt: Checkpoint, w: WeightsReading, a: ActivationsReading
) -> CardContent:
    """The CardContent of ``cards/inspect-activations.toml``: the weights' use beside the use
    measured on the text, their agreement per layer and how far each layer looks."""
    at = [w.layers.index(i) for i in a.layers]
    w_use = np.nanmean(w.use[at], axis=1)  # (layers, pairs) over the query heads
    a_use = np.nanmean(a.use, axis=1)  # (layers, pairs)
    r = agreement(w, a)  # (layers,)
    first = a.first_token.mean(axis=1)  # (layers,) over heads
    layers = np.asarray(a.layers, dtype=np.float64)
    massive = a.q_massive.sum(axis=0)  # (pairs,) over layers
    w_mean, a_mean = np.nanmean(w_use, axis=0), np.nanmean(a_use, axis=0)  # (pairs,)
    vmax = 100 * float(max(np.nanmax(w_use), np.nanmax(a_use)))
    fin = np.isfinite(r)
    lo, hi = int(np.nanargmin(r)) if fin.any() else 0, int(np.nanargmax(r)) if fin.any() else 0
    figures = {
        "a-weights": UseMap(use=w_use, layers=layers, vmax=vmax),
        "a-text": UseMap(use=a_use, layers=layers, vmax=vmax),
        "a-agree": Agree(r=r, layers=layers),
        "a-distance": Distance(mass=a.mass.mean(axis=1), layers=layers, edges=a.edges),
    }
    numbers: dict[str, Any] = {
        "model": display_name(ckpt.name),
        "tokens": a.tokens,
        "text_name": TEXT.name if a.text == "posecards" else a.text,
        "layers": len(a.layers),
        "heads": w.heads,
        "pairs": w.inv_freq.size,
        "w_top": int(np.argmax(w_mean)),
        "w_top_pct": 100 * float(np.max(w_mean)),
        "a_top": int(np.argmax(a_mean)),
        "a_top_pct": 100 * float(np.max(a_mean)),
        "r_median": float(np.nanmedian(r)) if fin.any() else math.nan,
        "r_min": float(r[lo]),
        "r_min_layer": int(a.layers[lo]),
        "r_max": float(r[hi]),
        "r_max_layer": int(a.layers[hi]),
        "q_massive": int(a.q_massive.sum()),
        "k_massive": int(a.k_massive.sum()),
        "massive_top": int(np.argmax(massive)),
        "massive_top_n": int(np.max(massive)),
        "first_share_max": 100 * float(np.max(first)),
        "first_share_layer": int(a.layers[int(np.argmax(first))]),
        "first_share_low": 100 * float(np.min(first)),
    }
    has = "found" if a.q_massive.sum() + a.k_massive.sum() > 0 else "none"
    variants = {"thesis": has, "takeaways.massive": has}
    return CardContent(card=CARD, figures=figures, numbers=numbers, variants=variants)
