"""Card 6's figure page c6-models: one row per (model, RoPE kind) of the published configs."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.content.card6_reading import (
    DEFAULTS,
    head_dim_of,
    pattern_layers,
    rope_params_of,
    turning_wavelengths,
)
from posecards.content.configs import SHORT_NAMES, model_id, published, text_config
from posecards.content.figdata.card6 import Models, TwoRopes
from posecards.encodings.rope_partial import head_inv_freq

F64 = npt.NDArray[np.float64]


def _row(
    rows: list[dict[str, Any]],
    slug: str,
    kind: str,
    layers: int,
    total: int,
    head: int,
    inv: F64,
    theta: float,
    context: int,
) -> None:
    """Append one row: the pairs of this head that turn, and the slowest of them."""
    wl = turning_wavelengths(inv)
    rows.append(
        {
            "model": model_id(slug),
            "name": SHORT_NAMES[slug],
            "kind": kind,
            "layers": layers,
            "total": total,
            "head": head,
            "turning": int(wl.size),
            "pairs": head // 2,
            "theta": theta,
            "slowest": float(wl.max()),
            "context": context,
        }
    )


def _partial_rows(rows: list[dict[str, Any]]) -> None:
    """Phi-2 and Qwen3-Next: partial rotary."""
    phi = published("phi-2")
    h = head_dim_of(phi)
    n = int(phi["num_hidden_layers"])
    _row(
        rows,
        "phi-2",
        "partial",
        n,
        n,
        h,
        head_inv_freq(h, rope_params_of(phi))[0],
        float(phi["rope_theta"]),
        int(phi["max_position_embeddings"]),
    )
    qn = published("qwen3-next-80b-a3b")
    h, n = head_dim_of(qn), int(qn["num_hidden_layers"])
    full = sum(pattern_layers(n, int(qn["full_attention_interval"])))  # Qwen3NextConfig
    _row(
        rows,
        "qwen3-next-80b-a3b",
        "partial",
        full,
        n,
        h,
        head_inv_freq(h, rope_params_of(qn))[0],
        float(qn["rope_theta"]),
        int(qn["max_position_embeddings"]),
    )


def _gemma_rows(rows: list[dict[str, Any]], two: TwoRopes) -> None:
    """Gemma 4 (sliding and proportional) and Gemma 3 (sliding and linear, as panel 2 reads it)."""
    g4 = text_config("gemma-4-26b-a4b")
    n = int(g4["num_hidden_layers"])
    full_l = sum(
        pattern_layers(n, DEFAULTS["gemma4_text"]["sliding_window_pattern"], last_full=True)
    )
    for kind, params, head, count in (
        ("sliding", g4["rope_parameters"]["sliding_attention"], int(g4["head_dim"]), n - full_l),
        (
            "proportional",
            g4["rope_parameters"]["full_attention"],
            int(g4["global_head_dim"]),
            full_l,
        ),
    ):
        _row(
            rows,
            "gemma-4-26b-a4b",
            kind,
            count,
            n,
            head,
            head_inv_freq(head, params)[0],
            float(params["rope_theta"]),
            int(g4["max_position_embeddings"]),
        )
    g3 = text_config("gemma-3-27b")
    n, h = int(g3["num_hidden_layers"]), head_dim_of(g3)
    nf = int(np.sum(two.full))
    ctx = int(two.context)
    _row(
        rows,
        "gemma-3-27b",
        "sliding",
        n - nf,
        n,
        h,
        two.local_inv_freq,
        float(two.local_theta),
        ctx,
    )
    _row(rows, "gemma-3-27b", "linear", nf, n, h, two.full_inv_freq, float(two.full_theta), ctx)


def _other_rows(rows: list[dict[str, Any]]) -> None:
    """Llama 4 Scout, SmolLM3, DeepSeek-V3 and the two Qwen VL models."""
    l4 = text_config("llama-4-scout")
    h, n = head_dim_of(l4), int(l4["num_hidden_layers"])
    _row(
        rows,
        "llama-4-scout",
        "llama3",
        sum(bool(v) for v in l4["no_rope_layers"][:n]),
        n,
        h,
        head_inv_freq(h, rope_params_of(l4))[0],
        float(l4["rope_theta"]),
        int(l4["max_position_embeddings"]),
    )
    sm = published("smollm3-3b")
    h, n = head_dim_of(sm), int(sm["num_hidden_layers"])
    _row(
        rows,
        "smollm3-3b",
        "default",
        sum(bool(v) for v in sm["no_rope_layers"][:n]),
        n,
        h,
        head_inv_freq(h, rope_params_of(sm))[0],
        float(sm["rope_theta"]),
        int(sm["max_position_embeddings"]),
    )
    ds = published("deepseek-v3")
    qk = int(ds["qk_nope_head_dim"]) + int(ds["qk_rope_head_dim"])
    n = int(ds["num_hidden_layers"])
    inv = head_inv_freq(
        int(ds["qk_rope_head_dim"]),
        rope_params_of(ds),
        max_position_embeddings=int(ds["max_position_embeddings"]),
    )[0]
    _row(
        rows,
        "deepseek-v3",
        "yarn",
        n,
        n,
        qk,
        inv,
        float(ds["rope_theta"]),
        int(ds["max_position_embeddings"]),
    )
    for slug in ("qwen2.5-vl-7b", "qwen3-vl-8b"):
        t = text_config(slug)
        h, n = head_dim_of(t), int(t["num_hidden_layers"])
        _row(
            rows,
            slug,
            "mrope",
            n,
            n,
            h,
            head_inv_freq(h, rope_params_of(t))[0],
            float(t["rope_theta"]),
            int(t["max_position_embeddings"]),
        )


def models_table(two: TwoRopes) -> Models:
    """One row per (model, RoPE kind): layers of that kind, head dim, theta, turning pairs of the
    head's pairs, slowest turning wavelength, context. ``two``: panel 2's Gemma 3 reading."""
    rows: list[dict[str, Any]] = []
    _partial_rows(rows)
    _gemma_rows(rows, two)
    _other_rows(rows)
    return Models(
        model=[r["model"] for r in rows],
        name=[r["name"] for r in rows],
        kind=[r["kind"] for r in rows],
        layers=np.array([r["layers"] for r in rows], dtype=np.float64),
        total=np.array([r["total"] for r in rows], dtype=np.float64),
        head=np.array([r["head"] for r in rows], dtype=np.float64),
        turning=np.array([r["turning"] for r in rows], dtype=np.float64),
        pairs=np.array([r["pairs"] for r in rows], dtype=np.float64),
        theta=np.array([r["theta"] for r in rows], dtype=np.float64),
        slowest=np.array([r["slowest"] for r in rows], dtype=np.float64),
        context=np.array([r["context"] for r in rows], dtype=np.float64),
    )
