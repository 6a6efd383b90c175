"""Card 10 (how to choose a position scheme): ids, text, and every number of every branch against
an independent computation here: the measured tasks recomputed from the rows of
measurements.json, the census from census.json's records, the calculators from their closed
forms or brute force; and the calculators' papers (Men et al. 2024, Table 1)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card10 import PANEL_IDS, SHOWN, compute
from posecards.content.census import census
from posecards.experiment.files import measurements_path
from posecards.experiment.positions import SCHEMES
from posecards.figures.card10 import DRAW
from posecards.render.text import fill_card, load_card_text


@pytest.fixture(scope="module")
def card() -> CardContent:
    return compute(PEParams())


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return list(json.loads(measurements_path().read_text(encoding="utf-8"))["results"])


def _local(rows: list[dict], scheme: str, length: int, scaling: str | None = None) -> float:
    """Mean over seeds of the two-back loss: every position at 64, positions >= 64 beyond."""
    per_seed = [
        np.mean(r["loss_by_position"][64:] if length > 64 else r["loss_by_position"])
        for r in rows
        if r["task"] == "local"
        and r["scheme"] == scheme
        and r["eval_length"] == length
        and r["inference_scaling"] == scaling
    ]
    return float(np.mean(per_seed))


def _recall(rows: list[dict], scheme: str, length: int, scaling: str | None = None) -> float:
    key = "accuracy" if length == 64 else "accuracy_beyond"
    acc = [
        100.0 * r[key]
        for r in rows
        if r["task"] == "recall"
        and r["scheme"] == scheme
        and r["eval_length"] == length
        and r["inference_scaling"] == scaling
    ]
    return float(np.mean(acc))


def test_ids_match_everywhere(card: CardContent) -> None:
    text = load_card_text(10)
    assert list(DRAW) == list(card.figures) == list(PANEL_IDS)
    assert [p.id for p in text.panels] == list(PANEL_IDS) and len(PANEL_IDS) <= 6
    assert text.figures == ()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_has_a_value(card: CardContent, lang: str) -> None:
    filled = fill_card(load_card_text(10), lang, card.numbers)
    blob = " ".join(
        [filled.title, filled.thesis, filled.formula_note]
        + [" ".join(p[1:]) for p in filled.panels]
        + [v for _, v in filled.takeaways + filled.pitfalls]
    )
    assert "{{" not in blob and "}}" not in blob
    assert census().transformers in blob and str(census().model_types) in blob


def test_card_text_has_no_typed_numbers_outside_placeholders() -> None:
    text = load_card_text(10)
    entries = [text.thesis, text.formula_note, *(v for _, v in text.takeaways + text.pitfalls)]
    entries += [b for p in text.panels for b in (p.alt, p.caption) if b is not None]
    entries += list(text.labels.values())
    # a field with variants: each phrasing
    entries = [
        b for e in entries for b in ([t for _, t in e.options] if hasattr(e, "options") else [e])
    ]
    allowed = {"0", "1", "2", "3", "5", "50"}  # panel numbers, "1×", "50 %" (recall learnt)
    names = (
        r"card 9|卡片 9|Llama 3|T5|2024|2-D|d_extra|MRoPE|\(T − 1\)/\(L − 1\)|2π|b\^\(−2i/d\)|d/2"
    )
    for entry in entries:
        for lang in ("en", "zh"):
            bare = re.sub(r"\{\{.*?\}\}", "", entry.get(lang))
            bare = re.sub(names, "", bare)
            found = set(re.findall(r"\d+(?:\.\d+)?", bare)) - allowed
            assert not found, (entry.en[:50], lang, found)


def test_formula_renders() -> None:
    from matplotlib.mathtext import MathTextParser

    MathTextParser("path").parse(load_card_text(10).formula_tex)


# --- the measured branches: recomputed from the rows of measurements.json -------------------------


def test_within_the_training_length(card: CardContent, rows: list[dict]) -> None:
    n, data = card.numbers, card.figures["c10-within"]
    local = [_local(rows, s, 64) for s in SCHEMES]
    recall = [_recall(rows, s, 64) for s in SCHEMES]
    np.testing.assert_allclose(data.local_loss, local, rtol=1e-12)
    np.testing.assert_allclose(data.recall, recall, rtol=1e-12)
    with_position = [x for s, x in zip(SCHEMES, local, strict=True) if s != "nope"]
    assert n["within_low"] == pytest.approx(min(with_position), rel=1e-12)
    assert n["within_high"] == pytest.approx(max(with_position), rel=1e-12)
    assert n["within_unlearnt"] == tuple(s for s, r in zip(SCHEMES, recall, strict=True) if r < 50)


def test_beyond_the_training_length(card: CardContent, rows: list[dict]) -> None:
    n, data = card.numbers, card.figures["c10-beyond"]
    far = [_local(rows, s, 512) for s in SCHEMES]
    np.testing.assert_allclose(data.loss_max, far, rtol=1e-12)
    held = tuple(s for s in SCHEMES if _local(rows, s, 512) - _local(rows, s, 64) <= 0.1)
    assert n["beyond_held"] == held and held  # the caption says "only ..." of a non-empty list


def test_far_facts_reorder_the_schemes(card: CardContent, rows: list[dict]) -> None:
    n, data = card.numbers, card.figures["c10-far"]
    by_local = sorted(SCHEMES, key=lambda s: _local(rows, s, 512))
    by_recall = sorted(SCHEMES, key=lambda s: -_recall(rows, s, 512))
    assert data.schemes == by_local
    np.testing.assert_allclose(data.recall_max, [_recall(rows, s, 512) for s in by_local])
    assert n["far_local_best"] == by_local[0] and n["far_best"] == by_recall[0]
    assert n["far_local_best_rank"] == by_recall.index(by_local[0]) + 1
    assert n["census_alibi_models"] == census().counts["alibi"]


def test_extend_factors_in_closed_form(card: CardContent, rows: list[dict]) -> None:
    """Linear: (T − 1)/(L − 1). NTK-aware slows pair k by s^(2k/(d−2)); a pair that did not turn
    within L tokens needs s^(2k/(d−2)) >= (T − 1)/(L − 1): the slowest-turning such pair sets s."""
    data = card.figures["c10-extend"]
    d, b, L, T = 16, 10000.0, 64, 512
    r = (T - 1) / (L - 1)
    factor = dict(zip(data.methods, data.factor, strict=True))
    assert factor["linear"] == pytest.approx(r, rel=1e-8)
    theta = b ** (-2.0 * np.arange(d // 2) / d)
    k = int(np.flatnonzero(theta * (L - 1) < 2 * np.pi)[0])
    assert factor["ntk"] == pytest.approx(r ** ((d - 2) / (2 * k)), rel=1e-6)
    recall = [_recall(rows, "rope", 512, s) for s in (None, "linear", "ntk", "yarn")]
    np.testing.assert_allclose(data.recall_max, recall, rtol=1e-12)


# --- the census branches -------------------------------------------------------------------------


def test_base_panel_is_the_census_records(card: CardContent) -> None:
    c, data = census(), card.figures["c10-base"]
    rope = {n: r for n, r in c.models.items() if r["position"] == "rope" and "base_holds" in r}
    assert int((data.published == 0).sum()) == len(rope)
    assert int(data.holds[data.published == 0].sum()) == sum(r["base_holds"] for r in rope.values())
    # the records' bound, brute force where the context is short enough to sum here
    for name, r in rope.items():
        ctx, dim = int(r["max_position_embeddings"]), 2 * int(r["rotated_pairs"])
        if ctx <= 8192:
            theta = float(r["theta"]) ** (-2.0 * np.arange(dim // 2) / dim)
            holds = bool((np.cos(np.arange(ctx)[:, None] * theta).sum(axis=1) >= 0).all())
            assert holds == r["base_holds"], name


def test_census_panel_counts(card: CardContent) -> None:
    c, data = census(), card.figures["c10-census"]
    assert data.categories == list(SHOWN)
    assert list(data.defaults) == [len(c.counts[k]) for k in SHOWN]
    assert list(data.published) == [len(c.shipped_counts[k]) for k in SHOWN]
    assert card.numbers["census_models"] == len(c.models)


def test_critical_dimension_median(card: CardContent) -> None:
    shares = []
    for r in census().models.values():
        if r["position"] == "rope" and r["max_position_embeddings"]:
            d = 2 * r["rotated_pairs"]
            periods = 2 * math.pi * r["theta"] ** (2 * np.arange(d // 2) / d)
            shares.append(2 * int((periods <= r["max_position_embeddings"]).sum()) / d)
    # the closed form and the count of pairs agree off integer boundaries
    assert card.numbers["crit_median"] == pytest.approx(100 * float(np.median(shares)), abs=1.0)


# --- the papers' tables --------------------------------------------------------------------------


@pytest.mark.parametrize("context,paper", [(1024, 4.3e3), (4096, 2.7e4), (8192, 8.4e4)])
def test_men_et_al_table_1(context: int, paper: float) -> None:
    """Men et al. 2024 (arXiv 2405.14591), Table 1: the lower bound of the base for a context,
    head dimension 128, to two significant digits. (The 2k and 16k entries, 1.6e4 and 3.1e5, are
    not the first base that holds here: 1.36e4 and 2.70e5, with failing bases above them, since
    B is not monotone in the base.)"""
    from posecards.encodings.rope_base_bound import smallest_base

    found = smallest_base(context, 128, low=0.8 * paper, high=1.25 * paper)
    assert float(f"{found:.1e}") == paper
