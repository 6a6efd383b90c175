"""Card 10 -- how to choose a position scheme: each branch of the guide with its evidence.

Three kinds of evidence, each computed, none typed:
- the two measured tasks of `posecards measure` (the numbers of card 5: ``content.card5``);
- the census of transformers 5.23.0's default configs and of the published configs posecards
  ships (``content.census``: ``posecards/data/census.json``, from posecards' own readings);
- the calculators of the math layer: the factor each scaling method needs
  (``encodings.scaling_needed``), Men et al.'s base bound (``encodings.rope_base_bound``, as
  the census recorded it per model) and Liu et al.'s critical dimension (``encodings.critical_dim``).

Panels (``PANEL_IDS``):
- c10-within: inputs never longer than training: every scheme learns both tasks (or not) at 1x.
- c10-beyond: inference past the training length: the two-back loss at 1x and at 8x.
- c10-far: far dependencies: recall of facts beyond the training length, in the two-back order.
- c10-extend: extending RoPE: one method at a time, each with its own factor.
- c10-base: the base against the trained context: Men et al.'s bound, model by model.
- c10-census: what the default and published configs chose, and what posecards has not measured.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from posecards.config import PEParams
from posecards.content import CardContent, Placeholders
from posecards.content import card5 as measured
from posecards.content.census import Census as CensusData
from posecards.content.census import census
from posecards.content.figdata.card10 import Base, Beyond, Census, Extend, Far, Within
from posecards.encodings.critical_dim import critical_dimension
from posecards.encodings.scaling_needed import METHODS, factor_needed
from posecards.experiment.positions import SCALINGS, SCHEMES

CARD = 10
PANEL_IDS = ("c10-within", "c10-beyond", "c10-far", "c10-extend", "c10-base", "c10-census")

# the census categories c10-census shows, in order (content/census.CATEGORIES)
SHOWN = (
    "rope",
    "learned",
    "relative",
    "alibi",
    "partial",
    "per_layer_type",
    "nope_layers",
    "mrope",
)


def _within(m: dict[str, Any], c: CensusData, n: dict[str, Any]) -> Within:
    local = np.array([m[f"{s}_1x"] for s in SCHEMES], dtype=np.float64)  # (schemes,)
    recall = np.array([m[f"recall_{s}_1x"] for s in SCHEMES], dtype=np.float64)
    positioned = [i for i, s in enumerate(SCHEMES) if s != "nope"]
    unlearnt = [s for s, r in zip(SCHEMES, recall, strict=True) if r < 50.0]
    n.update(
        within_low=float(local[positioned].min()),
        within_high=float(local[positioned].max()),
        within_nope=float(m["nope_1x"]),
        within_uniform=float(m["uniform"]),
        within_unlearnt=tuple(unlearnt),
        within_unlearnt_acc=float(min(recall)),
        within_learnt=len(SCHEMES) - len(unlearnt),
        within_schemes=len(SCHEMES),
        census_learned=c.n("learned"),
        census_relative=c.n("relative"),
    )
    return Within(
        schemes=list(SCHEMES),
        local_loss=local,
        recall=recall,
        uniform_loss=float(m["uniform"]),
        chance=float(m["recall_chance"]),
    )


def _beyond(m: dict[str, Any], c: CensusData, n: dict[str, Any]) -> Beyond:
    k = int(m["max_multiple"])
    one = np.array([m[f"{s}_1x"] for s in SCHEMES], dtype=np.float64)
    far = np.array([m[f"{s}_{k}x"] for s in SCHEMES], dtype=np.float64)
    rise = far - one  # (schemes,) nats gained past the training length
    held = [s for s, r in zip(SCHEMES, rise, strict=True) if r <= measured.FLAT]
    n.update(
        beyond_held=tuple(held),
        beyond_n_held=len(held),
        beyond_alibi_1x=float(m["alibi_1x"]),
        beyond_alibi_max=float(m[f"alibi_{k}x"]),
        beyond_rope_max=float(m[f"rope_{k}x"]),
        beyond_learned_max=float(m[f"learned_{k}x"]),
        beyond_worst=SCHEMES[int(np.argmax(far))],
        beyond_worst_max=float(far.max()),
        census_rope=c.n("rope"),
        census_alibi=c.n("alibi"),
    )
    return Beyond(schemes=list(SCHEMES), loss_1x=one, loss_max=far, max_multiple=k)


def _far(m: dict[str, Any], c: CensusData, n: dict[str, Any]) -> Far:
    k = int(m["max_multiple"])
    local = list(m["local_order"])  # best first at k x
    far = list(m["recall_order"])
    acc = np.array([m[f"recall_{s}_{k}x"] for s in local], dtype=np.float64)
    n.update(
        far_local_best=local[0],
        far_local_best_rank=far.index(local[0]) + 1,
        far_local_best_acc=float(m[f"recall_{local[0]}_{k}x"]),
        far_best=far[0],
        far_best_acc=float(m[f"recall_{far[0]}_{k}x"]),
        far_rope_acc=float(m[f"recall_rope_{k}x"]),
        far_moved=int(m["n_moved"]),
        census_alibi_models=tuple(c.counts["alibi"]),
    )
    return Far(schemes=local, recall_max=acc, chance=float(m["recall_chance"]), max_multiple=k)


def _extend(m: dict[str, Any], c: CensusData, n: dict[str, Any]) -> Extend:
    k = int(m["max_multiple"])
    d, b = int(m["head_dim"]), float(m["rope_base"])
    L, T = int(m["train_length"]), int(m["eval_max"])
    methods = list(METHODS)
    factor = np.array([factor_needed(x, d, b, L, T) for x in methods], dtype=np.float64)
    measured_rows = ["none", *SCALINGS]
    keys = ["rope", *(f"rope_{s}" for s in SCALINGS)]
    acc = np.array([m[f"recall_{key}_{k}x"] for key in keys], dtype=np.float64)
    best = int(np.argmax(acc))
    defaults = c.scalings()
    shipped = c.scalings(shipped=True)
    n.update(
        extend_linear=float(factor[methods.index("linear")]),
        extend_ntk=float(factor[methods.index("ntk")]),
        extend_yarn=float(factor[methods.index("yarn")]),
        extend_llama3=float(factor[methods.index("llama3")]),
        extend_dynamic=float(factor[methods.index("dynamic")]),
        extend_best=measured_rows[best],
        extend_best_acc=float(acc[best]),
        extend_none_acc=float(acc[0]),
        extend_ntk_acc=float(acc[measured_rows.index("ntk")]),
        extend_linear_loss=float(m[f"rope_linear_{k}x"]),
        census_scaled=len({x for v in defaults.values() for x in v}),
        census_scalings=tuple(f"{t} {len(v)}" for t, v in defaults.items()),
        shipped_scaled=len({x for v in shipped.values() for x in v}),
        shipped_scalings=tuple(f"{t} {len(v)}" for t, v in shipped.items()),
    )
    return Extend(
        methods=methods,
        factor=factor,
        measured=measured_rows,
        recall_max=acc,
        linear_ratio=(T - 1) / (L - 1),
        max_multiple=k,
    )


def _base(c: CensusData, n: dict[str, Any]) -> Base:
    rows = []
    for published in (False, True):
        recs = c.shipped if published else c.models
        for name, r in sorted(recs.items()):
            if r["position"] == "rope" and "base_holds" in r:
                rows.append((name, r, published))
    holds = np.array([float(r["base_holds"]) for _n, r, _p in rows], dtype=np.float64)
    pub = np.array([float(p) for _n, _r, p in rows], dtype=np.float64)
    # Liu et al.: share of the rotated dimensions that complete a turn within the context
    crit = [
        critical_dimension(
            2 * int(r["rotated_pairs"]), float(r["theta"]), int(r["max_position_embeddings"])
        )
        / (2 * int(r["rotated_pairs"]))
        for _n, r, p in rows
        if not p
    ]
    n.update(
        base_defaults=int((pub == 0).sum()),
        base_defaults_hold=int(holds[pub == 0].sum()),
        base_published=int((pub == 1).sum()),
        base_published_hold=int(holds[pub == 1].sum()),
        base_published_holds=tuple(nm for nm, r, p in rows if p and r["base_holds"]),
        base_no_context=c.n("rope") - int((pub == 0).sum()),
        crit_median=100.0 * statistics.median(crit),
        crit_all=sum(x >= 1.0 for x in crit),
    )
    return Base(
        context=np.array([r["max_position_embeddings"] for _n, r, _p in rows], dtype=np.float64),
        base=np.array([r["theta"] for _n, r, _p in rows], dtype=np.float64),
        holds=holds,
        published=pub,
        names=[nm for nm, _r, _p in rows],
    )


def _census(c: CensusData, n: dict[str, Any]) -> Census:
    n.update(
        census_version=c.transformers,
        census_model_types=c.model_types,
        census_models=len(c.models),
        census_published=len(c.shipped),
        census_not_text=len(c.not_read.get("not_text", ())),
        census_no_position=len(c.not_read.get("no_position", ())),
        census_unread=sum(len(v) for k, v in c.not_read.items() if k != "not_text"),
        census_half=c.n("layout:half"),
        census_interleaved=c.n("layout:interleaved"),
        census_partial=c.n("partial"),
        census_per_layer=c.n("per_layer_type"),
        census_nope_layers=c.n("nope_layers"),
        census_other_layers=c.n("other_layers"),
        census_mrope=c.n("mrope"),
        shipped_nope_layers=len(c.shipped_counts["nope_layers"]),
        shipped_per_layer=len(c.shipped_counts["per_layer_type"]),
    )
    return Census(
        categories=list(SHOWN),
        defaults=np.array([c.n(k) for k in SHOWN], dtype=np.float64),
        published=np.array([len(c.shipped_counts[k]) for k in SHOWN], dtype=np.float64),
        n_defaults=len(c.models),
        n_published=len(c.shipped),
    )


EX_CONTEXT, EX_HEAD, EX_BASE = 32768, 128, 500000.0  # the exercise's model


def _exercises(n: dict[str, Any]) -> None:
    """The page's exercises: Liu et al.'s critical dimension and the linear factor."""
    n.update(
        drill_context=EX_CONTEXT,
        drill_head=EX_HEAD,
        drill_base=EX_BASE,
        drill_crit=critical_dimension(EX_HEAD, EX_BASE, EX_CONTEXT),
        drill_linear=factor_needed("linear", EX_HEAD, EX_BASE, EX_CONTEXT // 4, EX_CONTEXT),
        drill_train=EX_CONTEXT // 4,
    )


def compute(params: PEParams) -> CardContent:
    m: dict[str, Any] = dict(measured.compute(params).placeholders)  # card 5's numbers
    c = census()
    numbers: dict[str, Any] = Placeholders()
    numbers.update(
        max_multiple=int(m["max_multiple"]),
        train_length=int(m["train_length"]),
        eval_max=int(m["eval_max"]),
        head_dim=int(m["head_dim"]),
        rope_base=float(m["rope_base"]),
        recall_chance=float(m["recall_chance"]),
        layers=int(m["layers"]),
        n_seeds=int(m["n_seeds"]),
        held=float(m["held"]),
    )
    _exercises(numbers)
    figures: dict[str, Any] = {
        "c10-within": _within(m, c, numbers),
        "c10-beyond": _beyond(m, c, numbers),
        "c10-far": _far(m, c, numbers),
        "c10-extend": _extend(m, c, numbers),
        "c10-base": _base(c, numbers),
        "c10-census": _census(c, numbers),
    }
    assert tuple(figures) == PANEL_IDS
    variants = {
        "panels.c10-within.caption": "some-unlearnt" if numbers["within_unlearnt"] else "all-learnt"
    }
    return CardContent(card=CARD, figures=figures, numbers=numbers, variants=variants)
