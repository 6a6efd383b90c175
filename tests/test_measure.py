"""`posecards measure`: the task, every scheme's position code, training, determinism, schema, CLI.

Tiny configurations (a few hundred parameters, a few steps) keep this file fast; one `--quick`
run of the real command checks the whole path as CI runs it.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from conftest import run

from posecards.config import MeasureConfig, MeasureSetup
from posecards.encodings.alibi import alibi_bias
from posecards.encodings.buckets import t5_relative_bucket
from posecards.encodings.rope import apply_rope
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.sinusoidal import sinusoidal_pe
from posecards.experiment import positions as P
from posecards.experiment import recall, results, task
from posecards.experiment.model import PositionModel, rope_tables, rotate_half
from posecards.experiment.run import command, run_all, to_json
from posecards.experiment.tasks import TASK_IDS, TASKS
from posecards.experiment.train import (
    distance_bins,
    loss_by_position,
    measure_run,
    recall_answers,
    recall_row,
    task_batch,
    train_model,
)
from posecards.torch_threads import one_torch_thread

TINY = MeasureSetup(
    train_length=8,
    eval_multiples=(1, 2, 4),
    layers=1,
    d_model=16,
    heads=2,
    d_ff=32,
    batch=8,
    warmup=2,
    eval_sequences=4,
    t5_buckets=8,
    recall_pairs=2,
)
TINY_STEPS = 6


# --- the task ------------------------------------------------------------------------------


@pytest.mark.parametrize("vocab,follow", [(16, 0.75), (4, 0.0), (7, 1.0), (32, 0.5)])
def test_entropy_rate_is_the_entropy_of_a_row(vocab: int, follow: float) -> None:
    table = task.transition_table(vocab, follow)
    np.testing.assert_allclose(table.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(table.sum(axis=0), 1.0, rtol=0, atol=1e-15)  # doubly stochastic
    row = table[0][table[0] > 0]
    assert task.entropy_rate(vocab, follow) == pytest.approx(-(row * np.log(row)).sum(), rel=1e-12)
    if follow == 0.0:
        assert task.entropy_rate(vocab, follow) == pytest.approx(math.log(vocab), rel=1e-12)


def test_samples_follow_the_table() -> None:
    vocab, follow = 5, 0.6
    x = task.sample(np.random.default_rng(0), 4000, 12, vocab, follow)  # (n, 12)
    counts = np.zeros((vocab, vocab))
    np.add.at(counts, (x[:, :-2].ravel(), x[:, 2:].ravel()), 1)
    freq = counts / counts.sum(axis=1, keepdims=True)
    # 8,000 draws per row: the standard error of a frequency is below 0.006
    np.testing.assert_allclose(freq, task.transition_table(vocab, follow), atol=0.03)
    # x_t and x_{t-1} are independent: the lag-1 table is uniform
    lag1 = np.zeros((vocab, vocab))
    np.add.at(lag1, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    np.testing.assert_allclose(lag1 / lag1.sum(axis=1, keepdims=True), 1 / vocab, atol=0.03)


# --- the long-range task: recall at a random distance ---------------------------------------


@pytest.mark.parametrize("length,pairs", [(64, 4), (512, 4), (8, 2), (17, 3)])
def test_recall_questions_are_answered_by_their_fact(length: int, pairs: int) -> None:
    keys, values = 8, 8
    tokens, dist = recall.sample(np.random.default_rng(5), 300, length, keys, values, pairs)
    assert tokens.shape == (300, length + 1) and dist.shape == (300, length)
    fact0, ask0 = values, values + keys * values  # first fact symbol, first question symbol
    for row, d in zip(tokens, dist, strict=True):
        asks = np.flatnonzero(d)
        assert len(asks) == pairs
        assert (row[asks] >= ask0).all()  # a question where a distance is recorded
        assert ((row[:length] >= ask0).sum()) == pairs  # and nowhere else
        facts = np.flatnonzero((row >= fact0) & (row < ask0))
        assert len(facts) == pairs and (facts < length // 2).all() and (asks >= length // 2).all()
        for a in asks:
            f = a - d[a]  # the fact this question points back to
            key, value = divmod(int(row[f]) - fact0, values)
            assert int(row[a]) - ask0 == key  # asks the key written there
            assert row[a + 1] == value  # and the next token is its value
            assert 1 <= d[a] <= length - 1
    # at the training length no distance reaches it: beyond it, every far one is unseen
    assert dist.max() < length


def test_recall_answers_are_uniform_and_distances_spread() -> None:
    keys, values, length = 8, 8, 512
    tokens, dist = recall.sample(np.random.default_rng(9), 2000, length, keys, values, 4)
    answers = tokens[:, 1:][dist > 0]  # (8000,)
    freq = np.bincount(answers, minlength=values) / answers.size
    np.testing.assert_allclose(freq, 1 / values, atol=0.02)  # standard error 0.004
    far = dist[dist > 0] >= 64
    assert far.mean() > 0.9  # at 8x most questions reach past the training length
    assert recall.chance_loss(values) == pytest.approx(math.log(values), rel=1e-15)
    assert recall.vocabulary(keys, values) == values + keys * values + keys


def test_recall_refuses_more_pairs_than_fit() -> None:
    with pytest.raises(ValueError, match="pairs must be from 1 to 2 at length 8"):
        recall.sample(np.random.default_rng(0), 1, 8, 8, 8, 3)


def test_task_registry_keeps_the_first_task_streams() -> None:
    # the first task's evaluation text and training batches are those it had before recall came
    assert TASK_IDS == MeasureConfig().tasks == ("local", "recall")
    tokens, dist = task_batch(TINY, "local", 16)
    expected = task.sample(np.random.default_rng([4242, 16]), 4, 17, TINY.vocab, TINY.follow)
    assert dist is None and np.array_equal(tokens, expected)
    assert TASKS["local"].train_stream == (1,) and TASKS["recall"].train_stream == (2,)


def test_recall_row_bins_and_beyond() -> None:
    nll = np.array([0.1, 0.2, 0.3, 0.4, 1.0])
    hit = np.array([True, True, False, True, False])
    dist = np.array([1, 7, 8, 15, 20])
    row = recall_row("alibi", None, 0, 32, (nll, hit, dist), TINY)
    assert distance_bins(TINY) == [(1, 8), (8, 16), (16, 32)]
    assert row["loss"] == pytest.approx(0.4) and row["accuracy"] == pytest.approx(0.6)
    assert row["loss_beyond"] == pytest.approx((0.3 + 0.4 + 1.0) / 3)  # distance >= 8
    assert row["accuracy_beyond"] == pytest.approx(1 / 3)
    assert [(b["from"], b["questions"], b["loss"]) for b in row["by_distance"]] == [
        (1, 2, pytest.approx(0.15)),
        (8, 2, pytest.approx(0.35)),
        (16, 1, pytest.approx(1.0)),
    ]
    near = recall_row("alibi", None, 0, 8, (nll[:2], hit[:2], dist[:2]), TINY)
    assert near["loss_beyond"] is None and near["accuracy_beyond"] is None


@pytest.mark.slow  # trains 250 steps (about 3 CPU s on one thread)
def test_recall_is_learnt_within_the_budget() -> None:
    """The reason for one-token facts: a 1-layer model learns the recall at its training length
    (well under chance ln V) in a few hundred small steps; an answer scored only at questions."""
    s = replace(TINY, d_model=32, heads=2, d_ff=64, batch=32, train_length=32, warmup=10)
    s = replace(s, eval_sequences=32, recall_pairs=4, lr=3e-3)
    with one_torch_thread():  # as measure_run trains (same losses to 1e-8, a sixth of the CPU)
        model, _ = train_model("rope", 0, 250, s, task_id="recall")
        nll, hit, dist = recall_answers(model, replace(s, vocab=TASKS["recall"].vocab(s)), 32)
    assert nll.shape == hit.shape == dist.shape == (32 * 4,)
    assert nll.mean() < 0.5 * math.log(s.recall_values) and hit.mean() > 0.6


# --- position code: the math layer's functions, nothing else ---------------------------------


@pytest.mark.parametrize("scaling", [None, "linear", "ntk", "yarn"])
@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0])
def test_torch_rope_is_apply_rope(scaling: str | None, factor: float) -> None:
    head_dim, length, train_length = 16, 40, 8
    params = P.rope_scaling_dict(scaling, factor, train_length)
    inv_freq, attention = rope_inv_freq(head_dim, 10000.0, params)
    x = np.random.default_rng(1).standard_normal((3, length, head_dim))
    expected = apply_rope(x, length, inv_freq, layout="half") * attention
    cos, sin = P.rope_cos_sin(length, head_dim, 10000.0, scaling, factor, train_length)
    got = rotate_half(torch.from_numpy(x), torch.from_numpy(cos), torch.from_numpy(sin))
    np.testing.assert_allclose(got.numpy(), expected, rtol=0, atol=1e-12)
    if scaling == "yarn" and factor > 1:  # HF: attention factor 0.1 ln s + 1 on cos and sin
        assert attention == pytest.approx(0.1 * math.log(factor) + 1, rel=1e-15)
    if factor == 1.0:  # no scaling at the training length
        plain = P.rope_cos_sin(length, head_dim, 10000.0)
        np.testing.assert_array_equal(cos, plain[0])
    # the model's float32 tables are these numbers
    c32, s32 = rope_tables(replace(TINY, d_model=32, heads=2), length, scaling, factor)
    np.testing.assert_array_equal(c32.numpy(), cos.astype(np.float32))
    np.testing.assert_array_equal(s32.numpy(), sin.astype(np.float32))


def test_linear_scaling_divides_positions() -> None:
    cos, _ = P.rope_cos_sin(64, 16, 10000.0, "linear", 4.0, 16)
    inv_freq, _ = rope_inv_freq(16, 10000.0)
    np.testing.assert_allclose(cos, np.cos(np.arange(64)[:, None] / 4.0 * inv_freq), atol=1e-14)


def test_model_buffers_come_from_the_math_layer() -> None:
    n = max(TINY.train_length * m for m in TINY.eval_multiples)
    torch.manual_seed(0)
    sin = PositionModel("sinusoidal", TINY, n)
    np.testing.assert_array_equal(
        sin.pe.numpy(), sinusoidal_pe(n, TINY.d_model, layout="interleaved").astype(np.float32)
    )
    alibi = PositionModel("alibi", TINY, n)
    np.testing.assert_array_equal(alibi.alibi.numpy(), alibi_bias(TINY.heads, n).astype(np.float32))
    t5 = PositionModel("t5", TINY, n)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    expected = t5_relative_bucket(j - i, bidirectional=False, num_buckets=8, max_distance=8)
    np.testing.assert_array_equal(t5.buckets.numpy(), expected)


# --- beyond the training length: what each scheme does ----------------------------------------


def test_learned_rows_beyond_training_are_never_trained() -> None:
    n = TINY.train_length * max(TINY.eval_multiples)
    torch.manual_seed(3)
    fresh = PositionModel("learned", TINY, n)
    with one_torch_thread():
        model, _ = train_model("learned", 3, TINY_STEPS, TINY)
    assert model.untrained_rows.shape == (n - TINY.train_length, TINY.d_model)
    assert torch.equal(model.untrained_rows, fresh.untrained_rows)  # untouched by training
    assert not torch.equal(model.pos, fresh.pos)  # the first L rows were trained
    rows = model.position_rows(n)
    assert torch.equal(rows[: TINY.train_length], model.pos)
    assert torch.equal(rows[TINY.train_length :], model.untrained_rows)
    # the initial table is N(0, 0.02²)
    assert 0.01 < float(fresh.untrained_rows.std()) < 0.03
    assert "untrained_rows" not in dict(model.named_parameters())


@pytest.mark.parametrize("length", [64, 256, 512])
def test_t5_far_distances_use_a_bucket_trained_within_the_length(length: int) -> None:
    train = 64
    b = P.t5_buckets(length, 32, max_distance=train)
    lower = np.tril(np.ones((length, length), dtype=bool))
    seen_in_training = set(np.unique(b[:train, :train][lower[:train, :train]]))
    assert set(np.unique(b[lower])) <= seen_in_training
    assert (b[lower][np.tril(np.ones_like(b), -train)[lower] == 1] == 31).all()  # d >= L: last


def test_nope_sees_order_only_through_the_mask() -> None:
    torch.manual_seed(0)
    model = PositionModel("nope", TINY, 16).eval()
    x = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    swapped = torch.tensor([[2, 1, 3, 4, 5, 6, 7, 8]])
    with torch.no_grad():
        a, b = model(x), model(swapped)
    # one layer: from position 2 on (after both swapped tokens) the prediction does not depend on their order
    torch.testing.assert_close(a[0, 2:], b[0, 2:], rtol=0, atol=1e-6)
    learned = PositionModel("learned", TINY, 16).eval()
    with torch.no_grad():
        assert not torch.allclose(learned(x)[0, 1:], learned(swapped)[0, 1:], atol=1e-6)


def test_rope_model_needs_its_tables_and_refuses_too_long_input() -> None:
    model = PositionModel("rope", TINY, 16)
    with pytest.raises(ValueError, match="cos/sin"):
        model(torch.zeros((1, 4), dtype=torch.int64))
    with pytest.raises(ValueError, match="longer than max_length"):
        model(torch.zeros((1, 17), dtype=torch.int64), rope_tables(TINY, 17))
    with pytest.raises(ValueError, match="unknown scheme"):
        PositionModel("xpos", TINY, 16)


# --- training and evaluation ------------------------------------------------------------------


@pytest.mark.parametrize("scheme", P.SCHEMES)
def test_each_scheme_learns_recall_and_is_scored_at_every_length(scheme: str) -> None:
    out = measure_run(scheme, 0, TINY_STEPS, TINY, task_id="recall")
    lengths = [TINY.train_length * m for m in TINY.eval_multiples]
    scalings = (None, *P.SCALINGS) if scheme == "rope" else (None,)
    assert [(r["inference_scaling"], r["eval_length"]) for r in out["rows"]] == [
        (s, n) for s in scalings for n in lengths
    ]
    for r in out["rows"]:
        assert r["task"] == "recall" and r["questions"] == TINY.eval_sequences * TINY.recall_pairs
        total = sum(b["questions"] for b in r["by_distance"])
        assert total == r["questions"]
        mean = sum(b["questions"] * b["loss"] for b in r["by_distance"]) / total
        assert r["loss"] == pytest.approx(mean, abs=1e-5)
        assert (r["loss_beyond"] is None) == (r["eval_length"] == TINY.train_length)
    assert out["task"] == "recall" and math.isfinite(out["train_loss"])


@pytest.mark.parametrize("scheme", P.SCHEMES)
def test_each_scheme_trains_and_is_evaluated_at_every_length(scheme: str) -> None:
    out = measure_run(scheme, 0, TINY_STEPS, TINY)
    lengths = [TINY.train_length * m for m in TINY.eval_multiples]
    scalings = (None, *P.SCALINGS) if scheme == "rope" else (None,)
    assert [(r["inference_scaling"], r["eval_length"]) for r in out["rows"]] == [
        (s, n) for s in scalings for n in lengths
    ]
    for r in out["rows"]:
        curve = np.array(r["loss_by_position"])
        assert curve.shape == (r["eval_length"],) and np.isfinite(curve).all()
        assert r["loss"] == pytest.approx(curve.mean(), abs=1e-5)
        if r["eval_length"] == TINY.train_length:
            assert r["loss_beyond"] is None
        else:
            assert r["loss_beyond"] == pytest.approx(curve[TINY.train_length :].mean(), abs=1e-5)
    assert math.isfinite(out["train_loss"])
    assert torch.get_num_threads() >= 1 and not torch.are_deterministic_algorithms_enabled()


def test_training_lowers_the_loss_towards_the_source_entropy() -> None:
    s = replace(TINY, d_model=32, heads=2, d_ff=64, batch=16, train_length=16, warmup=5, lr=1e-2)
    with one_torch_thread():
        model, _ = train_model("alibi", 0, 60, s)
        curve = loss_by_position(model, replace(s, eval_sequences=32), 16)
    # position 0 can only be guessed; later positions approach the entropy rate
    assert curve[0] > task.entropy_rate(s.vocab, s.follow) + 0.8
    assert curve[2:].mean() < 0.5 * (math.log(s.vocab) + task.entropy_rate(s.vocab, s.follow))


# --- the results file ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_doc() -> dict:
    return run_all(MeasureConfig(seeds=2, steps=TINY_STEPS, jobs=1, setup=TINY))


def _without_environment(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "environment"}


def test_same_run_same_numbers_in_process_and_in_parallel(tiny_doc: dict) -> None:
    again = run_all(MeasureConfig(seeds=2, steps=TINY_STEPS, jobs=1, setup=TINY))
    assert to_json(_without_environment(again)) == to_json(_without_environment(tiny_doc))
    parallel = run_all(MeasureConfig(seeds=2, steps=TINY_STEPS, jobs=2, setup=TINY))
    assert to_json(_without_environment(parallel)) == to_json(_without_environment(tiny_doc))
    assert parallel["environment"]["jobs"] == 2 and tiny_doc["environment"]["threads"] == 1


def test_schema(tiny_doc: dict, tmp_path: Path) -> None:
    assert results.check(tiny_doc) is None
    cfg = tiny_doc["config"]
    assert cfg["train_length"] == 8 and cfg["eval_lengths"] == [8, 16, 32]
    assert cfg["seeds"] == [0, 1] and cfg["steps"] == TINY_STEPS
    assert set(cfg["positions_beyond_training"]) == set(P.SCHEMES)
    env = tiny_doc["environment"]
    assert env["seconds"] > 0 and env["torch"] == torch.__version__
    n = (len(P.SCHEMES) + len(P.SCALINGS)) * 2 * 3 * len(TASK_IDS)
    assert len(tiny_doc["results"]) == n
    assert cfg["tasks"] == list(TASK_IDS) and cfg["recall"]["pairs"] == TINY.recall_pairs
    assert env["cpu_seconds"] > 0
    # the file round-trips through JSON, and load() accepts it
    path = tmp_path / "m.json"
    path.write_bytes(to_json(tiny_doc))
    assert json.loads(path.read_text()) == json.loads(json.dumps(tiny_doc))
    assert results.load(path)["results"] == json.loads(json.dumps(tiny_doc["results"]))
    # at the training length, scaling changes nothing (factor 1)
    by = {
        (r["inference_scaling"], r["seed"]): r
        for r in tiny_doc["results"]
        if r["scheme"] == "rope" and r["eval_length"] == 8 and r["task"] == "local"
    }
    for s in P.SCALINGS:
        assert by[(s, 0)]["loss_by_position"] == by[(None, 0)]["loss_by_position"]
    recall_by = {
        (r["inference_scaling"], r["seed"]): r
        for r in tiny_doc["results"]
        if r["scheme"] == "rope" and r["eval_length"] == 8 and r["task"] == "recall"
    }
    for s in P.SCALINGS:
        assert recall_by[(s, 0)]["by_distance"] == recall_by[(None, 0)]["by_distance"]


@pytest.mark.parametrize(
    "breakage,message",
    [
        (lambda d: d["results"].pop(), "missing"),
        (lambda d: d["results"][0]["loss_by_position"].pop(), "one value per position"),
        (lambda d: d["results"][0].__setitem__("loss", float("nan")), "finite"),
        (lambda d: d["results"][0].__setitem__("scheme", "xpos"), "unknown scheme"),
        (lambda d: d["results"][-1].__setitem__("task", "passkey"), "not one of the config"),
        (lambda d: d["results"][-1].pop("by_distance"), "lacks one of"),
        (lambda d: d["results"][-1]["by_distance"][0].__setitem__("loss", None), "finite"),
        (lambda d: d["config"].__setitem__("tasks", ["local"]), "not one of the config"),
        (lambda d: d["results"][0].__setitem__("inference_scaling", "yarn"), "inference_scaling"),
        (lambda d: d.pop("environment"), "environment"),
        (lambda d: d["config"].pop("train_length"), "train_length"),
    ],
)
def test_schema_rejects(tiny_doc: dict, breakage, message: str) -> None:  # type: ignore[no-untyped-def]
    doc = copy.deepcopy(tiny_doc)
    breakage(doc)
    assert message in (results.check(doc) or "")


def test_load_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(results.MeasurementsError, match="not JSON"):
        results.load(bad)
    with pytest.raises(results.MeasurementsError, match="cannot read"):
        results.load(tmp_path / "missing.json")


# --- the command --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,message",
    [
        (["--seeds", "0"], "--seeds"),
        (["--steps", "0"], "--steps"),
        (["--jobs", "0"], "--jobs"),
        (["--out", "results.txt"], ".json"),
        (["--out", "."], "folder"),
    ],
)
def test_bad_options_are_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    r = run("measure", *args, cwd=tmp_path)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_quick_means_one_seed_and_120_steps_unless_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from posecards import cli, commands

    seen: list[Any] = []
    monkeypatch.setattr(commands, "measure", lambda cfg, say=None: seen.append(cfg) or 0.0)
    out = str(tmp_path / "m.json")
    for args in (["--quick"], ["--quick", "--steps", "7"], ["--quick", "--seeds", "2"], []):
        assert (
            CliRunner().invoke(cli.app, ["measure", "--out", out, "--quiet", *args]).exit_code == 0
        )
    assert [(c.seeds, c.steps) for c in seen] == [(1, 120), (1, 7), (2, 120), (3, 300)]


def test_quick_run_writes_a_valid_file(tmp_path: Path) -> None:
    # --quick with fewer steps (the whole pipeline, each scheme trained and evaluated at every
    # length; the mapping of --quick itself is the test above). Two steps take the same path as
    # any count under the warm-up (30): warm-up learning rates only, the last step's loss
    # reported; the evaluation at the four lengths (and RoPE's scalings) is most of the time.
    out = tmp_path / "quick.json"
    r = run("measure", "--quick", "--steps", "2", "--jobs", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    doc = results.load(out)
    assert doc["config"]["seeds"] == [0] and doc["config"]["steps"] == 2
    assert doc["config"]["train_length"] == 64 and doc["config"]["eval_lengths"] == [
        64,
        128,
        256,
        512,
    ]
    # one progress bar per run on stderr, each reaching its last step
    for scheme in P.SCHEMES:
        assert f"{scheme} seed 0" in r.stderr
    assert r.stderr.count(" 2/2 steps") == len(P.SCHEMES) * len(TASK_IDS)
    assert {r["task"] for r in doc["results"]} == set(TASK_IDS)
    # the command that makes the same numbers, not where this one wrote them
    assert doc["environment"]["command"] == "posecards measure --seeds 1 --steps 2"


def test_recorded_command_has_only_what_the_numbers_depend_on() -> None:
    assert command(MeasureConfig(out=Path("/tmp/x.json"), jobs=2, quiet=True)) == (
        "posecards measure"
    )
    assert command(MeasureConfig(seeds=1, steps=120)) == "posecards measure --seeds 1 --steps 120"
    assert command(MeasureConfig(steps=500)) == "posecards measure --steps 500"
    # what the command line cannot ask for is not written as a command
    assert command(MeasureConfig(tasks=("local",))) is None
    assert command(MeasureConfig(setup=TINY)) is None


def test_shipped_results_record_the_defaults_command() -> None:
    """The shipped file says how to make it again: the defaults (3 seeds, 300 steps, both tasks)."""
    from posecards.experiment.files import SHIPPED

    doc = json.loads(SHIPPED.read_text())
    default = MeasureConfig()
    assert doc["config"]["seeds"] == list(range(default.seeds))
    assert doc["config"]["steps"] == default.steps
    assert {r["task"] for r in doc["results"]} == set(default.tasks)
    assert doc["environment"]["command"] == command(default) == "posecards measure"


def _trained(scheme: str, task_id: str, *, fill: bool, foreach: bool) -> list[np.ndarray]:
    """Training loss, every weight and every evaluation array of one TINY run, under measure's
    settings but for the two speed-ups (fill: NaN-fill new tensors; foreach: AdamW kernels)."""
    adamw = torch.optim.AdamW
    with pytest.MonkeyPatch.context() as mp, one_torch_thread():
        mp.setattr(torch.utils.deterministic, "fill_uninitialized_memory", fill)
        mp.setattr(torch.optim, "AdamW", lambda *a, **k: adamw(*a, **{**k, "foreach": foreach}))
        deterministic = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            model, loss = train_model(scheme, 0, TINY_STEPS, TINY, None, task_id)
            out = [np.array(loss)] + [v.numpy().copy() for v in model.state_dict().values()]
            for scaling in (None, "yarn"):
                for length in (8, 32):
                    if task_id == "recall":
                        out += recall_answers(
                            model,
                            replace(
                                TINY, vocab=recall.vocabulary(TINY.recall_keys, TINY.recall_values)
                            ),
                            length,
                            scaling,
                        )
                    else:
                        out.append(loss_by_position(model, TINY, length, scaling))
        finally:
            torch.use_deterministic_algorithms(deterministic)
    return out


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("scheme", ["learned", "rope", "t5"])
def test_speed_ups_change_no_number(task_id: str, scheme: str) -> None:
    """measure_run turns deterministic mode's NaN fill of new tensors off, and train_model steps
    AdamW with foreach kernels: the weights and every evaluation number are the same, bit for
    bit, as with the fill on and one AdamW kernel per tensor (this torch, this machine)."""
    fast = _trained(scheme, task_id, fill=False, foreach=True)
    slow = _trained(scheme, task_id, fill=True, foreach=False)
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)  # bit for bit (no NaN here)


def test_measure_run_fills_no_new_tensor_and_restores_the_setting() -> None:
    fill = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]
    seen: list[bool] = []

    def progress(done: int, total: int) -> None:
        seen.append(torch.utils.deterministic.fill_uninitialized_memory)  # type: ignore[attr-defined]

    measure_run("nope", 0, 2, TINY, progress)
    assert seen == [False, False]
    assert torch.utils.deterministic.fill_uninitialized_memory is fill  # type: ignore[attr-defined]


def test_evaluation_text_is_made_once_and_read_only() -> None:
    a, b = task_batch(TINY, "recall", 16), task_batch(TINY, "recall", 16)
    assert a[0] is b[0] and a[1] is b[1]
    assert not a[0].flags.writeable and a[1] is not None and not a[1].flags.writeable
    assert not task.permutation(16).flags.writeable
    assert task.permutation(16) is task.permutation(16)


def test_freed_memory_is_kept_where_glibc_allows_it() -> None:
    """measure_run keeps torch's freed blocks in the process (train.keep_freed_memory): on glibc
    the allocator must take the settings, or `measure` silently faults in fresh pages again."""
    import platform

    from posecards.experiment.train import keep_freed_memory

    assert keep_freed_memory() is (platform.libc_ver()[0] == "glibc")
