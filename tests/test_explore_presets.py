"""The explorer's model presets (render/explore.presets): one per example config posecards ships
and per RoPE kind of that model. Each equals transformers 5.23.0's own rotary module built from
the same config (tests/hf_reference.py: the inv_freq buffer and the cos/sin factor), and
choosing it on the page sets every control so that the page's head_inv_freq call is posecards'
reading of that config (same keys, same frequencies)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from posecards.config import ExploreConfig
from posecards.encodings.rope_partial import head_inv_freq
from posecards.model.layers import read_layers
from posecards.paths import data_dir
from posecards.render.explore import axes2d_payload, explore_bytes, load_strings, presets

PRESETS = presets(load_strings())
EXAMPLES = data_dir("examples")


def _config(preset: dict[str, Any]) -> dict[str, Any]:
    folder = preset["source"].split("/")[-2]
    out: dict[str, Any] = json.loads((EXAMPLES / folder / "config.json").read_text("utf-8"))
    return out


def _python(preset: dict[str, Any]) -> tuple[np.ndarray, float]:
    return head_inv_freq(
        preset["head_dim"],
        preset["parameters"],
        max_position_embeddings=preset["max_position_embeddings"],
        partial_in_default=preset["partial_in_default"],
    )


def test_a_preset_for_every_rope_of_every_example() -> None:
    """Every example folder, every RoPE kind of its reading, once; the Llama 3.1 and Gemma 3
    global-layer presets hold the keys a student looks for."""
    want = set()
    for folder in sorted(EXAMPLES.iterdir()):
        if (folder / "config.json").is_file():
            reading = read_layers(json.loads((folder / "config.json").read_text("utf-8")))
            want |= {folder.name if k == "rope" else f"{folder.name}:{k}" for k in reading.rope}
    assert {p["id"] for p in PRESETS} == want and len(PRESETS) == len(want) >= 13
    by_id = {p["id"]: p for p in PRESETS}
    assert by_id["llama-3.1-8b"]["parameters"] == {
        "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192,
    }  # fmt: skip
    gemma = by_id["gemma-3-27b-it:full_attention"]
    assert gemma["parameters"]["rope_type"] == "linear" and gemma["parameters"]["factor"] == 8.0
    assert gemma["head_dim"] == 128


@pytest.mark.parametrize("preset", PRESETS, ids=[p["id"] for p in PRESETS])
def test_every_preset_is_what_transformers_computes(preset: dict[str, Any]) -> None:
    """posecards' reading of the preset (head_inv_freq) against transformers' rotary module built
    from the config itself: inv_freq (a float32 buffer: 1e-6 relative) and the cos/sin factor."""
    from hf_reference import hf_reading

    config = _config(preset)
    text = config.get("text_config", config)
    if "attn_temperature_tuning" in text:
        # Llama 4 Scout's file has the integer 4; transformers 5.23.0's strict config class wants
        # a bool (its attention module tests it for truth only; the rotary module never reads it)
        text["attn_temperature_tuning"] = bool(text["attn_temperature_tuning"])
    hf = hf_reading(config)
    kind = preset["id"].split(":")[1] if ":" in preset["id"] else "rope"
    inv, factor = _python(preset)
    np.testing.assert_allclose(inv, hf.inv_freq[kind], rtol=1e-6, atol=0)
    assert factor == pytest.approx(hf.attention_factor[kind], rel=1e-6)


def test_choosing_a_preset_sets_every_control(browser: Any, tmp_path: Path) -> None:
    """Each preset chosen on the page: the page's head_inv_freq call holds every key of the
    reading with its value, its frequencies and factor are posecards' (1e-12), the note names
    the model and its source, and says nothing was approximated; moving a control by hand
    leaves the preset."""
    path = tmp_path / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig()))
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    for preset in PRESETS:
        page.select_option("#preset", preset["id"])
        call = page.evaluate("() => window.posecardsExplorer.ropeCall()")
        head, params, _, _, in_default = call
        assert head == preset["head_dim"] and in_default == preset["partial_in_default"]
        for key, value in preset["parameters"].items():
            assert params.get(key, True if key == "truncate" else None) == value, (
                preset["id"],
                key,
            )
        got = page.evaluate("c => window.posecards.headInvFreq(...c)", call)
        inv, factor = _python(preset)
        np.testing.assert_allclose(got["invFreq"], inv, rtol=1e-12, atol=0)
        assert got["attentionFactor"] == pytest.approx(factor, rel=1e-12)
        assert page.input_value("#layout") == preset["layout"]
        note = page.inner_text("#preset-note")
        assert preset["source"] in note and "cannot hold" not in note, note
    # a hand on a control: the settings are the user's own
    page.focus("#d")
    page.keyboard.press("ArrowRight")
    assert page.input_value("#preset") == ""
    assert "Your own settings" in page.inner_text("#preset-note")
    assert not errors, errors
    page.close()


MROPE = axes2d_payload(load_strings())["mrope"]


@pytest.mark.parametrize("model", MROPE, ids=[m["id"] for m in MROPE])
def test_every_mrope_model_is_what_transformers_turns(model: dict[str, Any]) -> None:
    """The 2-D view's MRoPE models: the axis of every frequency (mrope_axes of the preset's
    section and split) is the one that turns it in transformers' rotary module built from the
    config (a position id of 1 on that axis alone), and the frequencies are its inv_freq."""
    from hf_reference import hf_reading

    from posecards.encodings.mrope import mrope_axes

    hf = hf_reading(_config(model))
    inv = head_inv_freq(
        model["head_dim"], {"rope_type": "default", "rope_theta": model["rope_theta"]}
    )[0]
    np.testing.assert_allclose(inv, hf.inv_freq["rope"], rtol=1e-6, atol=0)
    axes = mrope_axes(model["section"], inv.size, model["layout"])
    assert ["thw"[a] for a in axes] == hf.mrope_axes["rope"]
