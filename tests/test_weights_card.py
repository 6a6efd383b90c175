"""The "how this model uses its frequencies" card (`posecards inspect --weights`): its numbers follow
the weights (a planted pair is found), it is laid out and legible in both languages and themes,
and the command writes the same bytes twice, with one line and exit 2 for a model without RoPE."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from conftest import run, run_here, tree
from gguf_files import smollm2_file

from posecards.config import Look
from posecards.content.weights import compute_weights_card, weights_reading
from posecards.model.checkpoint import open_checkpoint
from posecards.model.positions import find_positions
from posecards.render.inspect import inspect_footer
from posecards.render.text import load_card_text

CARD = "inspect-weights"


def _planted(folder: Path, pair: int, seed: int = 0) -> Any:
    """A tiny Llama whose q and k rows of pair ``pair`` (rows k and k + d/2 of every head) are
    20 times the others: that pair must be the one used most, in every layer and head."""
    torch.manual_seed(seed)
    cfg = T.LlamaConfig(
        vocab_size=16,
        hidden_size=64,
        intermediate_size=8,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    model = T.LlamaForCausalLM(cfg)
    d = cfg.head_dim
    with torch.no_grad():
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj):
                w = proj.weight.view(-1, d, cfg.hidden_size)
                w[:, pair] *= 20
                w[:, pair + d // 2] *= 20
    model.save_pretrained(folder)
    return model


def test_a_planted_pair_is_the_most_used(tmp_path: Path) -> None:
    _planted(tmp_path / "m", pair=3)
    ckpt = open_checkpoint(tmp_path / "m")
    found = find_positions(ckpt)
    w = weights_reading(ckpt, found)
    assert (w.use.argmax(axis=2) == 3).all()  # every layer and head
    content = compute_weights_card(ckpt, found, w)
    n = content.placeholders
    assert n["top_pair"] == 3 and n["first_top"] == 3 and n["last_top"] == 3
    # pair 3 of 8 is in the fastest quarter (pairs 0, 1) no more than in the slowest (6, 7)
    assert n["quarter"] == 2 and n["top_pct"] > 50
    np.testing.assert_allclose(w.use.sum(axis=2), 1.0, rtol=1e-12)
    # the layer map is the mean over heads of the shares
    np.testing.assert_allclose(content.figures["w-use"].use, w.use.mean(axis=1), rtol=1e-12)


@pytest.fixture(scope="module")
def smollm2_content() -> tuple[Any, Any, Any]:
    ckpt = open_checkpoint(smollm2_file())
    found = find_positions(ckpt)
    return ckpt, found, compute_weights_card(ckpt, found, weights_reading(ckpt, found))


def test_smollm2_card_numbers(smollm2_content: tuple[Any, Any, Any]) -> None:
    ckpt, found, content = smollm2_content
    n = content.placeholders
    assert (n["layers"], n["heads"], n["kv_heads"], n["pairs"], n["context"]) == (
        30,
        9,
        3,
        32,
        8192,
    )
    assert n["crit_dim"] == 40 and n["crit_pairs"] + n["rest_pairs"] == 32
    assert n["beyond"] == 12  # wavelengths 2π·1e5^(2k/64) > 8192 for k = 20 .. 31
    assert n["stored_layout"] == "interleaved" and n["layout"] == "half"
    # the base 1e5 is below Men et al.'s bound for 8192 tokens at d = 64: the card says "fails"
    assert n["min_base"] > n["base"]
    assert content.variants["panels.w-cos-sum.alt"] == "fails"
    assert content.variants["pitfalls.order"] == "gguf"
    assert min(content.figures["w-cos-sum"].model) < 0 <= min(content.figures["w-cos-sum"].minimum)


@pytest.mark.slow
@pytest.mark.parametrize("size", ["slide", "4x3", "a4", "square"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_weights_card_layout(smollm2_content: tuple[Any, Any, Any], lang: str, size: str) -> None:
    from posecards.render.measure import measure_card

    ckpt, found, content = smollm2_content
    footer = inspect_footer(ckpt, found, Look(), lang, weights=True)
    report = measure_card(
        CARD, content, lang, size, "light", footer=footer, text=load_card_text(CARD)
    )
    assert report.texts
    problems = report.problems()
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("theme_name", ["light", "dark"])
def test_weights_card_contrast(smollm2_content: tuple[Any, Any, Any], theme_name: str) -> None:
    from posecards.figures.style import card_style
    from posecards.render.compose import compose_card
    from posecards.render.contrast import MIN_TEXT_CONTRAST, text_contrasts
    from posecards.render.figure import draw_standalone
    from posecards.render.text import fill_card

    ckpt, found, content = smollm2_content
    text = load_card_text(CARD)
    problems, measured = [], 0
    for lang in ("en", "zh"):
        with card_style(theme_name) as th:
            footer = inspect_footer(ckpt, found, Look(theme_name, "slide"), lang, weights=True)
            filled = fill_card(text, lang, content.numbers)
            figs = [("card", compose_card(filled, text, content.figures, th, "slide", footer))]
            if lang == "en":
                figs += [
                    (fid, draw_standalone(fid, content.figures[fid], lang, theme_name, card=CARD))
                    for fid in text.figure_ids
                ]
            for name, fig in figs:
                found_texts = text_contrasts(fig)
                measured += len(found_texts)
                problems += [
                    f"{name} {lang}: {c.describe()}"
                    for c in found_texts
                    if c.ratio < MIN_TEXT_CONTRAST
                ]
    assert measured > 100
    assert not problems, "\n".join(problems)


@pytest.mark.e2e
def test_inspect_weights_is_deterministic_and_writes_its_json(tmp_path: Path) -> None:
    """Twice the same bytes: from a fresh `python -m posecards` and from this process
    (conftest.run_here, torch and transformers imported already)."""
    _planted(tmp_path / "m", pair=1)
    outs = []
    for i, how in enumerate((run, run_here)):
        out = tmp_path / f"out{i}"
        r = how(
            "inspect",
            str(tmp_path / "m"),
            "--weights",
            "--out",
            str(out),
            "--format",
            "png,json",
            cwd=tmp_path,
        )
        assert r.returncode == 0, r.stderr
        outs.append(tree(out))
    assert outs[0] == outs[1]
    doc = json.loads(outs[0]["m.json"])
    assert doc["schema"] == "posecards.inspect.weights" and doc["layout"] == "half"
    assert [la["top_pair"] for la in doc["layers"]] == [1, 1, 1]
    assert doc["kv_head_of_query_head"] == [0, 0, 1, 1]
    assert "en/m.png" in outs[0] and "zh/m.png" in outs[0]


@pytest.mark.e2e
def test_weights_of_a_model_without_rope_is_one_line_exit_2(tmp_path: Path) -> None:
    from tiny_models import gpt2_model

    gpt2_model(0).save_pretrained(tmp_path / "gpt2")
    out = tmp_path / "out"
    r = run("inspect", str(tmp_path / "gpt2"), "--weights", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "learned positions, not RoPE" in lines[0], r.stderr
    assert not out.exists()
