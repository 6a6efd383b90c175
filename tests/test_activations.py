"""`posecards inspect --activations`: statistics of measured q, k and attention weights (closed
forms, properties) and the whole reading against transformers' own forward pass on tiny random
checkpoints saved with a word-level tokenizer."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from conftest import run_here
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.content.activations import activations_reading, agreement
from posecards.content.weights import weights_reading
from posecards.encodings.activation_stats import (
    distance_edges,
    first_token_share,
    mass_by_distance,
    massive_slots,
    pair_norm_means,
    slot_norms,
)
from posecards.encodings.rope_use import pair_rows
from posecards.model.checkpoint import open_checkpoint
from posecards.model.positions import InspectOptions, find_positions

T.logging.set_verbosity_error()

# ------------------------------------------------------------------------------- statistics


def _causal_uniform(heads: int, s: int) -> np.ndarray:
    """Every query spreads its weight evenly over keys 0..i: a[h, i, j] = 1/(i + 1), j <= i."""
    a = np.tril(np.ones((s, s))) / np.arange(1, s + 1)[:, None]
    return np.broadcast_to(a, (heads, s, s)).copy()


def test_distance_edges() -> None:
    assert distance_edges(1).tolist() == [0, 1]
    assert distance_edges(2).tolist() == [0, 1, 2]
    assert distance_edges(9).tolist() == [0, 1, 2, 4, 8, 9]
    assert distance_edges(2048).tolist() == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]


def test_mass_by_distance_closed_form_for_uniform_attention() -> None:
    s = 37
    a = _causal_uniform(2, s)
    edges = distance_edges(s)
    got = mass_by_distance(a, edges)  # (2, bins)
    # query i puts 1/(i+1) on each distance 0..i: bin [lo, hi) gets (min(hi, i+1) - lo)+ / (i+1)
    want = np.zeros(len(edges) - 1)
    for i in range(s):
        for b in range(len(edges) - 1):
            lo, hi = edges[b], edges[b + 1]
            want[b] += max(0, min(hi, i + 1) - lo) / (i + 1) / s
    np.testing.assert_allclose(got[0], want, rtol=1e-13)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-13)
    assert first_token_share(a)[0] == pytest.approx(np.mean(1 / np.arange(2, s + 1)), rel=1e-13)


def test_mass_by_distance_of_a_previous_token_head() -> None:
    s = 20
    a = np.zeros((1, s, s))
    a[0, 0, 0] = 1.0
    a[0, np.arange(1, s), np.arange(0, s - 1)] = 1.0  # every query on the token before it
    got = mass_by_distance(a, distance_edges(s))[0]
    assert got[0] == pytest.approx(1 / s) and got[1] == pytest.approx((s - 1) / s)
    assert got[2:].sum() == 0


def test_massive_slots_by_hand() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 2, 16))  # (tokens, heads, head_dim)
    x[:, 1, 3] *= 40.0  # one slot of head 1 far above its head's mean norm
    m = massive_slots(x)
    assert m[1].tolist() == [d == 3 for d in range(16)] and not m[0].any()
    norms = slot_norms(x)
    np.testing.assert_allclose(norms, np.sqrt((x**2).sum(axis=0)), rtol=1e-13)
    # the rule is "above 5 x the head's mean": exactly at it is not massive
    y = np.ones((4, 1, 6))
    y[:, 0, 0] = 5.0 * 6 / (6 - 5)  # norm_0 = 30·2; mean = (60 + 5·2)/6 ≈ 11.7: massive
    assert massive_slots(y)[0, 0] and not massive_slots(y)[0, 1:].any()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), layout=st.sampled_from(["half", "interleaved"]))
def test_pair_norm_means_ignore_any_rotation_of_the_pairs(seed: int, layout: str) -> None:
    """Turning each token's pair k by any angle (RoPE turns it by t·θ_k) keeps its norm."""
    rng = np.random.default_rng(seed)
    t, h, d = 7, 3, 8
    x = rng.normal(size=(t, h, d))
    rows = pair_rows(d, layout)
    ang = rng.uniform(0, 2 * np.pi, size=(t, 1, d // 2))
    y = x.copy()
    a, b = x[:, :, rows[:, 0]], x[:, :, rows[:, 1]]
    y[:, :, rows[:, 0]] = a * np.cos(ang) - b * np.sin(ang)
    y[:, :, rows[:, 1]] = b * np.cos(ang) + a * np.sin(ang)
    np.testing.assert_allclose(pair_norm_means(y, rows), pair_norm_means(x, rows), rtol=1e-12)
    want = np.array(
        [[np.mean(np.hypot(a[:, hh, k], b[:, hh, k])) for k in range(d // 2)] for hh in range(h)]
    )
    np.testing.assert_allclose(pair_norm_means(x, rows), want, rtol=1e-13)


# ------------------------------------------------------------------ against transformers

WORDS = ["[UNK]", "the", "clock", "has", "three", "hands", "a", "seat", "row", "river"]


def _tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return T.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")


def _tiny(kind: str) -> Any:
    torch.manual_seed({"llama-gqa": 1, "qwen2": 2, "phi": 3}[kind])
    common = dict(vocab_size=16, intermediate_size=8, num_hidden_layers=2)
    if kind == "llama-gqa":
        cfg = T.LlamaConfig(**common, hidden_size=64, num_attention_heads=8, num_key_value_heads=2)
        return T.LlamaForCausalLM(cfg)
    if kind == "qwen2":
        cfg = T.Qwen2Config(**common, hidden_size=48, num_attention_heads=6, num_key_value_heads=2)
        return T.Qwen2ForCausalLM(cfg)
    cfg = T.PhiConfig(**common, hidden_size=40, num_attention_heads=2, partial_rotary_factor=0.4)
    return T.PhiForCausalLM(cfg)


CASES = ["llama-gqa", "qwen2", "phi"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any, Path]]:
    root = tmp_path_factory.mktemp("activations")
    rnd = random.Random(0)
    text = root / "text.txt"
    text.write_text(" ".join(rnd.choice(WORDS[1:]) for _ in range(300)), encoding="utf-8")
    out = {}
    for kind in CASES:
        model = _tiny(kind).eval()
        model.save_pretrained(root / kind)
        _tokenizer().save_pretrained(root / kind)
        out[kind] = (root / kind, model, text)
    return out


def _transformers_pass(model: Any, ids: list[int]) -> tuple[list[Any], list[Any]]:
    """transformers' own attentions (output_attentions, eager) and each layer's q before RoPE
    (q_proj's output, split into heads): what posecards' numbers must equal."""
    model.config._attn_implementation = "eager"
    pre: list[Any] = []
    hooks = [
        layer.self_attn.q_proj.register_forward_hook(lambda _m, _a, out: pre.append(out))
        for layer in model.model.layers
    ]
    try:
        with torch.no_grad():
            res = model(input_ids=torch.tensor([ids]), output_attentions=True, use_cache=False)
    finally:
        for h in hooks:
            h.remove()
    return [a[0].double().numpy() for a in res.attentions], [p[0].double().numpy() for p in pre]


@pytest.mark.parametrize("kind", CASES)
def test_reading_equals_transformers_forward(
    saved: dict[str, tuple[Path, Any, Path]], kind: str
) -> None:
    root, model, text = saved[kind]
    ckpt = open_checkpoint(root)
    w = weights_reading(ckpt, find_positions(ckpt, InspectOptions()))
    a = activations_reading(ckpt, w, text)
    # the model's own tokenizer as transformers loads it from the folder (for Qwen2 it is not
    # the word-level one saved there: AutoTokenizer picks Qwen2's class for the same vocabulary)
    tok = T.AutoTokenizer.from_pretrained(str(root), local_files_only=True)
    ids = tok(text.read_text(encoding="utf-8"))["input_ids"]
    assert a.tokens == len(ids) >= 64 and a.text == "text.txt"
    attentions, pre_q = _transformers_pass(model, ids)
    assert a.layers == w.layers == (0, 1)
    s = len(ids)
    head_dim = w.head_dim
    for j, layer in enumerate(a.layers):
        att = attentions[layer]  # (heads, s, s)
        # mass by distance with plain loops over the rows
        edges = a.edges
        want = np.zeros((w.heads, len(edges) - 1))
        for i in range(s):
            for jj in range(i + 1):
                b = int(np.searchsorted(edges, i - jj, side="right") - 1)
                want[:, b] += att[:, i, jj] / s
        np.testing.assert_allclose(a.mass[j], want, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(a.first_token[j], att[:, 1:, 0].mean(axis=1), rtol=1e-5)
        # pair norms of the rotated q equal those of q_proj's output before RoPE, pairs
        # (k, k + rotated/2) of rotate_half in each head's first rotated slots
        q = pre_q[layer].reshape(s, w.heads, head_dim)  # (s, heads, head_dim)
        half = w.rotated_dim // 2
        want_q = np.array(
            [
                [np.mean(np.hypot(q[:, h, k], q[:, h, k + half])) for k in range(half)]
                for h in range(w.heads)
            ]
        )
        np.testing.assert_allclose(a.q_norm[j], want_q, rtol=2e-5)
        np.testing.assert_allclose(a.use[j].sum(axis=1), 1.0, rtol=1e-12)
    r = agreement(w, a)
    assert r.shape == (2,) and np.all(np.abs(r[np.isfinite(r)]) <= 1.0 + 1e-12)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "posecards", "inspect", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.e2e
def test_cli_writes_the_activations_into_the_json(
    saved: dict[str, tuple[Path, Any, Path]], tmp_path: Path
) -> None:
    root, _model, text = saved["llama-gqa"]
    out = tmp_path / "out"
    res = run_here(  # in this process: transformers is imported already
        *("inspect", str(root), "--text", str(text), "--format", "json", "--out", str(out)),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    docs = [p for p in out.rglob("*.json") if p.name != "manifest.json"]
    assert len(docs) == 1, docs
    doc = json.loads(docs[0].read_text(encoding="utf-8"))
    act = doc["activations"]
    assert act["tokens"] == 300 and act["text"] == "text.txt" and act["massive_factor"] == 5.0
    assert [x["index"] for x in act["layers"]] == [0, 1]
    assert len(act["layers"][0]["first_token_share"]) == 8
    assert len(act["layers"][0]["attention_by_distance"][0]) == len(act["distance_bins"]) - 1


@pytest.mark.e2e
def test_cli_bad_text_and_no_tokenizer_are_one_line_exit_2(
    saved: dict[str, tuple[Path, Any, Path]], tmp_path: Path
) -> None:
    root, model, _text = saved["qwen2"]
    res = _cli(
        str(root), "--text", str(tmp_path / "none.txt"), "--out", str(tmp_path / "o"), "--quiet"
    )
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "none.txt: no such file" in res.stderr and not (tmp_path / "o").exists()
    bare = tmp_path / "bare"
    model.save_pretrained(bare)  # no tokenizer files
    res = _cli(str(bare), "--activations", "--out", str(tmp_path / "o2"), "--quiet")
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "no tokenizer" in res.stderr and not (tmp_path / "o2").exists()


# ------------------------------------------------------------------------------- the card

CARD = "inspect-activations"


@pytest.fixture(scope="module")
def card_content(saved: dict[str, tuple[Path, Any, Path]]) -> tuple[Any, Any, Any, Any]:
    from posecards.content.activations import compute_activations_card

    root, _model, text = saved["llama-gqa"]
    ckpt = open_checkpoint(root)
    found = find_positions(ckpt, InspectOptions())
    w = weights_reading(ckpt, found)
    a = activations_reading(ckpt, w, text)
    return ckpt, found, (w, a), compute_activations_card(ckpt, w, a)


def test_card_numbers_are_the_readings(card_content: tuple[Any, Any, Any, Any]) -> None:
    _ckpt, _found, (w, a), content = card_content
    n = content.placeholders
    r = agreement(w, a)
    assert n["r_median"] == pytest.approx(float(np.median(r)), abs=1e-15)
    assert n["r_min"] == pytest.approx(float(r.min())) and n["r_max"] == pytest.approx(r.max())
    first = a.first_token.mean(axis=1)
    assert n["first_share_max"] == pytest.approx(100 * first.max())
    assert n["first_share_layer"] == int(np.argmax(first))
    np.testing.assert_allclose(content.figures["a-text"].use, a.use.mean(axis=1))
    np.testing.assert_allclose(content.figures["a-weights"].use, w.use.mean(axis=1))
    np.testing.assert_allclose(content.figures["a-distance"].mass.sum(axis=1), 1.0, rtol=1e-6)
    assert n["q_massive"] == int(a.q_massive.sum()) and n["tokens"] == 300
    has = "found" if n["q_massive"] + n["k_massive"] else "none"
    assert content.variants == {"thesis": has, "takeaways.massive": has}


@pytest.mark.slow
@pytest.mark.parametrize("size", ["slide", "4x3", "a4", "square"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_card_layout(card_content: tuple[Any, Any, Any, Any], lang: str, size: str) -> None:
    from posecards.config import Look
    from posecards.render.inspect import inspect_footer
    from posecards.render.measure import measure_card
    from posecards.render.text import load_card_text

    ckpt, found, _r, content = card_content
    footer = inspect_footer(ckpt, found, Look(), lang, weights=True)
    report = measure_card(
        CARD, content, lang, size, "light", footer=footer, text=load_card_text(CARD)
    )
    assert report.texts
    problems = report.problems()
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("theme_name", ["light", "dark"])
def test_card_contrast(card_content: tuple[Any, Any, Any, Any], theme_name: str) -> None:
    from posecards.config import Look
    from posecards.figures.style import card_style
    from posecards.render.compose import compose_card
    from posecards.render.contrast import MIN_TEXT_CONTRAST, text_contrasts
    from posecards.render.inspect import inspect_footer
    from posecards.render.text import fill_card, load_card_text

    ckpt, found, _r, content = card_content
    text = load_card_text(CARD)
    problems, measured = [], 0
    for lang in ("en", "zh"):
        with card_style(theme_name) as th:
            footer = inspect_footer(ckpt, found, Look(theme_name, "slide"), lang, weights=True)
            filled = fill_card(text, lang, content.numbers)
            fig = compose_card(filled, text, content.figures, th, "slide", footer)
            found_texts = text_contrasts(fig)
            measured += len(found_texts)
            problems += [
                f"{lang}: {c.describe()}" for c in found_texts if c.ratio < MIN_TEXT_CONTRAST
            ]
    assert measured > 40
    assert not problems, "\n".join(problems)


def test_a_model_too_big_for_memory_is_one_line(
    saved: dict[str, tuple[Path, Any, Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import posecards.model.activations as act
    from posecards.model.checkpoint import CheckpointError

    root, _model, text = saved["phi"]
    ckpt = open_checkpoint(root)
    w = weights_reading(ckpt, find_positions(ckpt, InspectOptions()))
    monkeypatch.setattr(act, "_available_bytes", lambda: 1024)
    with pytest.raises(CheckpointError, match=r"needs about 0\.\d GiB of memory; 0\.0 GiB is"):
        activations_reading(ckpt, w, text)
