"""Card 5, measured: what happens beyond the training length.

Reads the results of `posecards measure` (``posecards.experiment.files.measurements_path()``:
the shipped file or ``POSECARDS_MEASUREMENTS``) and the quoted published numbers
(``posecards/data/quoted.toml``). It computes only summaries of those numbers: means and seed
ranges, loss by position averaged over windows of positions, and the comparisons the card text
uses to choose its wording. Card 5 does not depend on ``PEParams``.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.config import PEParams
from posecards.content import DECK_FIELD, CardContent, Placeholders, Scalar
from posecards.content.figdata.card5 import (
    Beyond,
    Quoted,
    Recall,
    RopeScaling,
    Table,
)
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.experiment import results
from posecards.experiment.files import QUOTED
from posecards.experiment.positions import SCALINGS, SCHEMES, rope_scaling_dict

F64 = npt.NDArray[np.float64]

WINDOW = 8  # positions per point of the loss-by-position curves
# rows of the measured table: (scheme, inference scaling, key used in the placeholders)
ROWS: tuple[tuple[str, str | None, str], ...] = (
    *((s, None, s) for s in SCHEMES),
    *(("rope", sc, f"rope_{sc}") for sc in SCALINGS),
)
FLAT = 0.1  # nats: a loss beyond the training length within this of the 1x loss "held"


def _curves(doc: dict[str, Any], scheme: str, scaling: str | None, length: int) -> F64:
    """loss_by_position of every seed, shape (seeds, length)."""
    rows = [
        r
        for r in doc["results"]
        if r.get("task", "local") == "local"
        and r["scheme"] == scheme
        and r["inference_scaling"] == scaling
        and r["eval_length"] == length
    ]
    rows.sort(key=lambda r: r["seed"])
    return np.array([r["loss_by_position"] for r in rows], dtype=np.float64)  # (seeds, length)


def _summary(doc: dict[str, Any], scheme: str, scaling: str | None, length: int) -> F64:
    """(mean, min, max) over seeds of the loss: all positions at 1x, positions >= L beyond."""
    L = doc["config"]["train_length"]
    curves = _curves(doc, scheme, scaling, length)
    per_seed = curves.mean(axis=1) if length == L else curves[:, L:].mean(axis=1)  # (seeds,)
    return np.array([per_seed.mean(), per_seed.min(), per_seed.max()], dtype=np.float64)


def _windows(curves: F64) -> tuple[F64, F64, F64, F64]:
    """Window centres and the mean / min / max over seeds of each window's mean loss."""
    seeds, n = curves.shape
    w = curves[:, : n - n % WINDOW].reshape(seeds, -1, WINDOW).mean(axis=2)  # (seeds, n/W)
    centres = np.arange(w.shape[1], dtype=np.float64) * WINDOW + (WINDOW - 1) / 2.0
    return centres, w.mean(axis=0), w.min(axis=0), w.max(axis=0)


def _recall_summary(
    doc: dict[str, Any], scheme: str, scaling: str | None, length: int, key: str
) -> tuple[F64, float]:
    """The recall task at one length: (mean, min, max) over seeds of the accuracy in percent,
    and the mean loss; at 1x over every question, beyond over the questions whose fact lies at
    least train_length back (``accuracy_beyond``, ``loss_beyond``)."""
    L = int(doc["config"]["train_length"])
    rows = [
        r
        for r in doc["results"]
        if r.get("task") == "recall"
        and r["scheme"] == scheme
        and r["inference_scaling"] == scaling
        and r["eval_length"] == length
    ]
    part = "" if length == L else "_beyond"
    acc = np.array([100.0 * r[f"accuracy{part}"] for r in rows], dtype=np.float64)  # (seeds,)
    loss = float(np.mean([r["loss" + part] for r in rows]))
    return np.array([acc.mean(), acc.min(), acc.max()], dtype=np.float64), loss


def _recall(
    doc: dict[str, Any], lengths: list[int], multiples: list[int], numbers: dict[str, Scalar]
) -> Recall:
    """c5-recall and its placeholders: recall_<row>_<m>x (accuracy %), recall_order, and
    local_order / recall_order_changed: how the long-range task reorders the schemes at the
    longest length."""
    cfg = doc["config"]
    rc = cfg["recall"]
    acc = np.empty((len(ROWS), len(lengths), 3), dtype=np.float64)  # (rows, lengths, stat)
    loss = np.empty((len(ROWS), len(lengths)), dtype=np.float64)
    for i, (scheme, scaling, key) in enumerate(ROWS):
        for j, (n, m) in enumerate(zip(lengths, multiples, strict=True)):
            acc[i, j], loss[i, j] = _recall_summary(doc, scheme, scaling, n, key)
            numbers[f"recall_{key}_{m}x"] = float(acc[i, j, 0])
            numbers[f"recall_loss_{key}_{m}x"] = float(loss[i, j])
    top = [float(acc[SCHEMES.index(s), -1, 0]) for s in SCHEMES]  # accuracy at the longest length
    order = sorted(range(len(SCHEMES)), key=lambda i: -top[i])
    numbers["recall_best_at_max"] = SCHEMES[order[0]]
    numbers["recall_best_at_max_acc"] = top[order[0]]
    numbers["recall_worst_at_max"] = SCHEMES[order[-1]]
    numbers["recall_chance"] = 100.0 / int(rc["values"])
    numbers["recall_keys"] = int(rc["keys"])
    numbers["recall_values"] = int(rc["values"])
    numbers["recall_pairs"] = int(rc["pairs"])
    return Recall(
        rows=[key for _s, _sc, key in ROWS],
        eval_lengths=np.array(lengths, dtype=np.float64),
        multiples=np.array(multiples, dtype=np.float64),
        accuracy=acc[:, :, 0].copy(),  # (rows, lengths)
        lo=acc[:, :, 1].copy(),
        hi=acc[:, :, 2].copy(),
        loss=loss,
        chance=100.0 / int(rc["values"]),
        chance_loss=float(rc["chance_loss"]),
        train_length=int(cfg["train_length"]),
        keys=int(rc["keys"]),
        values=int(rc["values"]),
        pairs=int(rc["pairs"]),
    )


def _orders(
    last: list[float], recall: Recall, numbers: dict[str, Scalar]
) -> dict[str, tuple[str, ...]]:
    """Both tasks' orders of the schemes at the longest length (best first), and the schemes
    whose place differs."""
    local = tuple(SCHEMES[i] for i in sorted(range(len(SCHEMES)), key=lambda i: last[i]))
    acc = recall.accuracy[: len(SCHEMES), -1]
    far = tuple(SCHEMES[i] for i in sorted(range(len(SCHEMES)), key=lambda i: -float(acc[i])))
    moved = tuple(s for s in SCHEMES if local.index(s) != far.index(s))
    # schemes that did not learn recall at the training length (under half the questions right)
    unlearnt = tuple(s for i, s in enumerate(SCHEMES) if recall.accuracy[i, 0] < 50.0)
    numbers["recall_all_learnt"] = not unlearnt
    numbers["recall_same_order"] = local == far
    numbers["n_moved"] = len(moved)
    return {"local_order": local, "recall_order": far, "moved": moved, "recall_unlearnt": unlearnt}


def quoted() -> dict[str, Any]:
    """Press et al.'s Table 2 as typed into quoted.toml."""
    data = tomllib.loads(QUOTED.read_text(encoding="utf-8"))["press2022"]
    return dict(data)


def _run_numbers(cfg: dict[str, Any], env: dict[str, Any]) -> dict[str, Scalar]:
    """The experiment's settings and where it ran, as the card text quotes them."""
    L = int(cfg["train_length"])
    longest = max(int(n) for n in cfg["eval_lengths"])
    return {
        "train_length": L,
        "eval_max": longest,
        "max_multiple": longest // L,
        "vocab": int(cfg["vocab"]),
        "follow": float(cfg["follow"]),
        "entropy": float(cfg["source_entropy"]),
        "uniform": float(cfg["uniform_loss"]),
        "steps": int(cfg["steps"]),
        "n_seeds": len(cfg["seeds"]),
        "batch": int(cfg["batch"]),
        "layers": int(cfg["model"]["layers"]),
        "d_model": int(cfg["model"]["d_model"]),
        "heads": int(cfg["model"]["heads"]),
        "d_ff": int(cfg["model"]["d_ff"]),
        "head_dim": int(cfg["model"]["d_model"]) // int(cfg["model"]["heads"]),
        "rope_base": float(cfg["rope_base"]),
        "t5_buckets": int(cfg["t5"]["num_buckets"]),
        "eval_sequences": int(cfg["eval_sequences"]),
        "window": WINDOW,
        "held": FLAT,
        "seconds": float(env["seconds"]),
        # CPU time of the runs (files from before it was recorded: the wall time)
        "cpu_seconds": float(env.get("cpu_seconds", env["seconds"])),
        "minutes": float(env["seconds"]) / 60.0,
        "cpu": str(env["cpu"]),
        "cores": int(env.get("cores") or 0),
        "jobs": int(env.get("jobs") or 1),
        "torch": str(env["torch"]),
    }


def _loss_table(
    doc: dict[str, Any], lengths: list[int], multiples: list[int], numbers: dict[str, Scalar]
) -> F64:
    """Mean, min and max over seeds of each row's loss at each evaluation length."""
    table = np.empty((len(ROWS), len(lengths), 3), dtype=np.float64)  # (rows, lengths, stat)
    for i, (scheme, scaling, key) in enumerate(ROWS):
        for j, (n, m) in enumerate(zip(lengths, multiples, strict=True)):
            table[i, j] = _summary(doc, scheme, scaling, n)
            for stat, v in zip(("", "_lo", "_hi"), table[i, j], strict=True):
                numbers[f"{key}_{m}x{stat}"] = float(v)
    return table


def _comparisons(
    doc: dict[str, Any], table: F64, numbers: dict[str, Scalar], L: int, longest: int
) -> list[float]:
    """What the text chooses its wording from; returns each scheme's loss at the longest length."""
    cfg = doc["config"]
    top = f"{longest // L}x"
    midway = 0.5 * (float(cfg["source_entropy"]) + float(cfg["uniform_loss"]))
    for _scheme, _scaling, key in ROWS:
        learnt = float(numbers[f"{key}_1x"]) < midway  # learnt the task at the training length
        numbers[f"{key}_learnt"] = learnt
        numbers[f"{key}_held"] = (
            learnt and float(numbers[f"{key}_{top}"]) - float(numbers[f"{key}_1x"]) < FLAT
        )
    last = [float(table[i, -1, 0]) for i in range(len(SCHEMES))]
    order = sorted(range(len(SCHEMES)), key=lambda i: last[i])
    numbers["best_at_max"] = SCHEMES[order[0]]
    numbers["best_at_max_loss"] = last[order[0]]
    # spreads (max - min over schemes) at 1x and at the longest length: the five schemes with
    # position information, and all six (NoPE included); like is compared with like
    first = [float(table[i, 0, 0]) for i in range(len(SCHEMES))]
    with_pos = [i for i, s in enumerate(SCHEMES) if s != "nope"]
    numbers["spread_1x"] = max(first[i] for i in with_pos) - min(first[i] for i in with_pos)
    numbers["spread_max"] = max(last[i] for i in with_pos) - min(last[i] for i in with_pos)
    numbers["spread_1x_all"] = max(first) - min(first)
    numbers["spread_max_all"] = max(last) - min(last)
    # NoPE at the training length against the worst scheme with positions: Haviv et al. found
    # NoPE language models close to the others there; a positive gap here goes against that
    numbers["nope_gap_1x"] = first[SCHEMES.index("nope")] - max(first[i] for i in with_pos)
    numbers["n_schemes"] = len(SCHEMES)
    numbers["n_with_positions"] = len(with_pos)
    numbers["n_models"] = len(
        {(r.get("task", "local"), r["scheme"], r["seed"]) for r in doc["results"]}
    )
    numbers["n_tasks"] = len({r.get("task", "local") for r in doc["results"]})
    numbers["n_rows"] = len(ROWS)  # the table's rows: the schemes and RoPE's rescalings
    numbers["n_scalings"] = len(SCALINGS)
    # windows of WINDOW positions can dip below the best possible mean loss (test-set noise)
    lows = {sc: float(_windows(_curves(doc, sc, None, longest))[1].min()) for sc in SCHEMES}
    lowest = min(lows, key=lambda sc: lows[sc])
    numbers["lowest_window"] = lows[lowest]
    numbers["lowest_window_scheme"] = lowest
    numbers["below_best"] = lows[lowest] < float(cfg["source_entropy"])

    return last


def _quoted_comparison(
    q: dict[str, Any], ppl: F64, last: list[float], table: F64, numbers: dict[str, Scalar]
) -> dict[str, tuple[str, ...]]:
    """Press et al.'s order against ours; returns the orders printed through [names.*]."""
    # Press et al.'s order at their longest length where every method ran, and ours at 8x
    col = max(j for j in range(ppl.shape[1]) if np.isfinite(ppl[:, j]).all())
    press_order = [q["methods"][i] for i in np.argsort(ppl[:, col], kind="stable")]
    ours = {s: last[SCHEMES.index(s)] for s in q["methods"]}
    our_order = sorted(q["methods"], key=lambda s: ours[s])
    # pairs the two orders rank differently, and whether our seeds agree on each of them: at
    # the longest length, do the two schemes' seed ranges (min..max) overlap?
    rank_q, rank_o = press_order.index, our_order.index
    flipped = [
        (a, b)
        for i, a in enumerate(our_order)
        for b in our_order[i + 1 :]
        if (rank_q(a) < rank_q(b)) != (rank_o(a) < rank_o(b))
    ]
    lo_hi = {s: table[SCHEMES.index(s), -1, 1:] for s in q["methods"]}  # (min, max) over seeds

    def overlap(a: str, b: str) -> bool:
        return bool(lo_hi[a][1] >= lo_hi[b][0] and lo_hi[b][1] >= lo_hi[a][0])

    numbers["flipped_within_noise"] = bool(flipped) and all(overlap(a, b) for a, b in flipped)
    flipped_ids = tuple(dict.fromkeys(x for pair in flipped for x in pair))
    numbers["same_order_as_quoted"] = press_order == our_order
    # scheme ids, printed through [names.*] of the card text: "ALiBi < RoPE < T5 bias"
    orders = {
        "our_order": tuple(our_order),  # lowest loss at the longest length first
        "quoted_order": tuple(press_order),  # lowest perplexity first
        "flipped": flipped_ids,  # the schemes the two orders rank differently
    }
    numbers["quoted_compare_length"] = int(q["eval_lengths"][col])
    numbers["quoted_train_length"] = int(q["train_length"])
    numbers["quoted_max_length"] = int(max(q["eval_lengths"]))
    for i, m in enumerate(q["methods"]):
        numbers[f"q_{m}_first"] = float(ppl[i, 0])
        numbers[f"q_{m}_compare"] = float(ppl[i, col])
    numbers["rank_match"] = sum(a == b for a, b in zip(press_order, our_order, strict=True))

    return orders


def _quoted_figure(q: dict[str, Any], ppl: F64, numbers: dict[str, Any]) -> Quoted:
    """c5-quoted: Press et al.'s table as quoted, and the words the text quotes from it."""
    fig = Quoted(
        methods=list(q["methods"]),
        eval_lengths=np.array(q["eval_lengths"], dtype=np.float64),
        perplexity=ppl,  # (methods, lengths), nan = out of memory
        train_length=int(q["train_length"]),
        source=str(q["short"]),
        source_zh=str(q["short_zh"]),  # the same, for the Chinese card
        citation=str(q["citation"]),
    )
    numbers["quoted_source"] = str(q["short"])
    numbers["quoted_source_zh"] = str(q["short_zh"])
    numbers["quoted_model"] = str(q["model"])
    numbers["quoted_params_en"] = int(q["parameters"]) / 1e6  # "247M parameters"
    numbers["quoted_params_zh"] = int(q["parameters"]) / 1e8  # "2.47 亿个参数"
    numbers["quoted_data"] = str(q["data"])
    return fig


def _rope_scaling_figure(
    doc: dict[str, Any], numbers: dict[str, Any], L: int, longest: int
) -> RopeScaling:
    """c5-rope-scaling: RoPE's loss by position under each scaling method (and YaRN's factors,
    also put into ``numbers``)."""
    cfg = doc["config"]
    rope_fig: dict[str, Any] = {
        "methods": ["none", *SCALINGS],
        "train_length": L,
        "eval_length": longest,
        "factor": float(longest / L),
        "entropy": numbers["entropy"],
        "uniform": numbers["uniform"],
        "rope_base": numbers["rope_base"],
        "head_dim": numbers["head_dim"],
        "window": WINDOW,
        # YaRN's attention factor at this factor (multiplies cos and sin, as in HF)
        "yarn_attention": rope_inv_freq(
            numbers["head_dim"],
            float(cfg["rope_base"]),
            rope_scaling_dict("yarn", longest / L, L),
        )[1],
    }
    # cos and sin x a make q and k x a each, so every score q·k x a^2
    rope_fig["yarn_score_factor"] = float(rope_fig["yarn_attention"]) ** 2
    numbers["yarn_attention"] = float(rope_fig["yarn_attention"])
    numbers["yarn_score_factor"] = rope_fig["yarn_score_factor"]
    for method in ("none", *SCALINGS):
        x, mean, lo, hi = _windows(
            _curves(doc, "rope", None if method == "none" else method, longest)
        )
        rope_fig.update(
            {"position": x, f"{method}_mean": mean, f"{method}_lo": lo, f"{method}_hi": hi}
        )
    return RopeScaling(**rope_fig)


def _figures(
    doc: dict[str, Any],
    numbers: dict[str, Any],
    table: F64,
    lengths: list[int],
    multiples: list[int],
    q: dict[str, Any],
    ppl: F64,
) -> dict[str, Any]:
    """The data of the card's four figures."""
    cfg = doc["config"]
    L = int(cfg["train_length"])
    longest = max(lengths)
    figures: dict[str, Any] = {}
    beyond: dict[str, Any] = {
        "schemes": list(SCHEMES),
        "train_length": L,
        "eval_length": longest,
        "entropy": numbers["entropy"],
        "uniform": numbers["uniform"],
        "window": WINDOW,
        "n_seeds": numbers["n_seeds"],
    }
    for s in SCHEMES:
        x, mean, lo, hi = _windows(_curves(doc, s, None, longest))
        beyond.update({"position": x, f"{s}_mean": mean, f"{s}_lo": lo, f"{s}_hi": hi})
    figures["c5-beyond"] = Beyond(**beyond)

    figures["c5-rope-scaling"] = _rope_scaling_figure(doc, numbers, L, longest)

    figures["c5-table"] = Table(
        rows=[key for _s, _sc, key in ROWS],
        eval_lengths=np.array(lengths, dtype=np.float64),
        multiples=np.array(multiples, dtype=np.float64),
        mean=table[:, :, 0].copy(),  # (rows, lengths)
        lo=table[:, :, 1].copy(),
        hi=table[:, :, 2].copy(),
        entropy=numbers["entropy"],
        uniform=numbers["uniform"],
        train_length=L,
        held=FLAT,
        # the cells the table shades: within FLAT nats of the row's 1x value
        held_cells=(table[:, :, 0] - table[:, :1, 0]) < FLAT,  # (rows, lengths) bool
        recall_multiples=np.zeros(2, dtype=np.float64),  # filled by compute from the recall task
        recall_accuracy=np.zeros((len(ROWS), 2), dtype=np.float64),
        recall_chance=0.0,
    )
    # the page's exercises: the uniform guess's loss, and RoPE vs ALiBi beyond the training length
    numbers["drill_uniform"] = math.log(int(cfg["vocab"]))  # H(uniform over V) = ln V nats
    rope_max, alibi_max = (float(numbers[f"{s}_{longest // L}x"]) for s in ("rope", "alibi"))
    numbers["drill_rope_max"] = rope_max
    numbers["drill_alibi_max"] = alibi_max
    numbers["drill_ppl_ratio"] = math.exp(rope_max - alibi_max)  # e^l_rope / e^l_alibi
    figures["c5-quoted"] = _quoted_figure(q, ppl, numbers)
    return figures


def compute(params: PEParams) -> CardContent:
    doc = results.load()
    cfg, env = doc["config"], doc["environment"]
    L = int(cfg["train_length"])
    lengths = [int(n) for n in cfg["eval_lengths"]]
    longest = max(lengths)
    multiples = [n // L for n in lengths]
    numbers: dict[str, Scalar] = Placeholders(_run_numbers(cfg, env))  # each name declared once
    table = _loss_table(doc, lengths, multiples, numbers)
    last = _comparisons(doc, table, numbers, L, longest)
    q = quoted()
    ppl = np.array(q["perplexity"], dtype=np.float64)  # (methods, lengths); nan = out of memory
    orders = _quoted_comparison(q, ppl, last, table, numbers)
    figures = _figures(doc, numbers, table, lengths, multiples, q, ppl)
    recall = _recall(doc, lengths, multiples, numbers)
    orders.update(_orders(last, recall, numbers))
    figures["c5-table"] = replace(
        figures["c5-table"],
        recall_multiples=recall.multiples[[0, -1]].copy(),
        recall_accuracy=recall.accuracy[:, [0, -1]].copy(),  # (rows, 2)
        recall_chance=recall.chance,
    )
    assert all(not isinstance(v, float) or math.isfinite(v) for v in numbers.values())
    return CardContent(
        card=5, figures=figures, numbers={**numbers, **orders}, variants=variants(numbers)
    )


def variants(n: dict[str, Scalar]) -> dict[str, str]:
    """Which phrasing of the card's (and its slides') text the measurements support."""
    pi_worse = float(n["rope_linear_8x"]) > float(n["rope_8x"])
    if n["same_order_as_quoted"]:
        same_order = "same-order"
    else:  # do our seeds agree where the two orders differ?
        same_order = "other-order-within-noise" if n["flipped_within_noise"] else "other-order"
    return {
        "takeaways.alibi": "held" if n["alibi_held"] else "not-held",
        "takeaways.recall": "same-order" if n["recall_same_order"] else "reordered",
        "panels.c5-table.caption": "all-learnt" if n["recall_all_learnt"] else "some-unlearnt",
        "takeaways.rope": "pi-worse" if pi_worse else "otherwise",
        "pitfalls.toy": same_order,
        "pitfalls.nope": "learnt" if n["nope_learnt"] else "still-learning",
        "panels.c5-beyond.caption": "dips-below-best" if n["below_best"] else "above-best",
        DECK_FIELD + "panels.c5-rope-scaling.pitfall": "pi-worse" if pi_worse else "pi-helped",
        DECK_FIELD + "panels.c5-quoted.numbers": same_order,
        DECK_FIELD + "panels.c5-beyond.read": "dips-below-best"
        if n["below_best"]
        else "above-best",
    }
