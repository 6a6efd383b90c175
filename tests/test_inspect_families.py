"""`posecards inspect` reads every model family as transformers 5.23.0 runs it, layer by layer.

For every row of posecards/model/families.py and every config in docs/examples/, the reading
(posecards/model/layers.py, through the --format json document) is compared with transformers
itself (tests/hf_reference.py: AutoConfig.for_model, the model's own rotary module, each
attention module called on the meta device):

- per layer: attention kind, sliding window / chunk size, RoPE or none, which RoPE;
- per RoPE: inv_freq (transformers' float32 buffer against posecards' float64, rtol 2e-6), the
  factor on cos/sin (1e-12), the MRoPE axis of every frequency (exact);
- the softmax scale transformers hands the attention kernel in the first attention layer (1e-12);
- the family table's defaults against the config classes' own field defaults (exact).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from hf_reference import HFReading, hf_reading
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

from posecards.content.reading import inspection_json, reading_document
from posecards.encodings.mrope import mrope_position_ids
from posecards.encodings.query_temperature import query_temperature
from posecards.model.checkpoint import CheckpointError, open_checkpoint
from posecards.model.families import COMPOSITE, FAMILIES
from posecards.model.layers import read_layers
from posecards.model.positions import LayeredPositions, RopePositions, find_positions

T.logging.set_verbosity_error()

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*/config.json"))
# families whose transformers model has no rotary module to compare with (GPT-J, CodeGen build
# their sin/cos table inside the attention): read by posecards, not compared here
NO_ROTARY_MODULE = {"gptj", "codegen"}
OUTER = {inner: outer for outer, inner in COMPOSITE.items() if outer != "mistral3"}
# transformers' float32 inv_freq against posecards' float64: (ln b + 8) u (u = 2^-24) bounds
# the default, linear and yarn paths (derived in test_modern_math.hf_inv_freq_rtol),
# 1.5e-6 for base 1e7; llama3's medium band can reach kappa = 1 + (f-1) l / (h-l) times
# inv_freq's own error (4.3e-6 at worst for base 5e5), but these inputs are fixed: the largest gap
# measured over docs/examples is 3.2e-7 (Llama 3.1's llama3 band).
INV_FREQ_RTOL = 2e-6


def _hf_config(config: dict[str, Any]) -> dict[str, Any]:
    """The file transformers 5.23.0 is given. Llama 4 Scout's published attn_temperature_tuning
    is 4, which its strict Llama4TextConfig refuses (posecards reads it as true, as the attention
    code does, and notes it): transformers gets true."""
    out = json.loads(json.dumps(config))
    text = out.get("text_config", out)
    if isinstance(text.get("attn_temperature_tuning"), int) and not isinstance(
        text["attn_temperature_tuning"], bool
    ):
        text["attn_temperature_tuning"] = bool(text["attn_temperature_tuning"])
    return out


def compare(
    config: dict[str, Any], ref: HFReading | None = None, found: Any = None
) -> dict[str, Any]:
    """Assert posecards' reading of ``config`` equals transformers'; return the JSON document."""
    ref = ref or hf_reading(_hf_config(config))
    found = found if found is not None else find_positions_of(config)
    doc = json.loads(inspection_json("m", config, found))
    assert doc["num_layers"] == len(ref.layers) == len(doc["layers"])
    for mine, theirs in zip(doc["layers"], ref.layers, strict=True):
        got = (mine["attention"], mine["window"], mine["position"] == "rope", mine["rope"])
        want = (theirs.attention, theirs.window, theirs.rope, theirs.kind)
        assert got == want, f"layer {mine['index']}: posecards {got}, transformers {want}"
    used = {la.kind for la in ref.layers if la.kind is not None}
    assert set(doc["rope"]) == used
    for key in used:
        kind = doc["rope"][key]
        inv = np.array(kind["inv_freq"], dtype=np.float64)
        assert inv.shape == ref.inv_freq[key].shape
        np.testing.assert_allclose(inv, ref.inv_freq[key], rtol=INV_FREQ_RTOL, atol=0)
        assert (inv == 0).sum() == (ref.inv_freq[key] == 0).sum()  # proportional zeros
        assert kind["attention_factor"] == pytest.approx(ref.attention_factor[key], rel=1e-12)
        assert kind["rotated_pairs"] == int(np.count_nonzero(ref.inv_freq[key]))
        if key in ref.mrope_axes:
            assert kind["mrope_axes"] == ref.mrope_axes[key]
        else:
            assert kind["mrope_axes"] is None
    first = next((la for la in ref.layers if la.scaling is not None), None)
    if first is not None:
        assert doc["softmax_scale"] == pytest.approx(first.scaling, rel=1e-12)
    return doc


def find_positions_of(config: dict[str, Any]) -> Any:
    """find_positions for a config-only checkpoint (no file needed: a Checkpoint by hand)."""
    from posecards.model.checkpoint import Checkpoint

    ckpt = Checkpoint(Path("m"), "m", config, None, (), "none", {})
    return find_positions(ckpt)


# ---------------------------------------------------------------- the family table


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_family_defaults_are_the_config_class_defaults(model_type: str) -> None:
    fam = FAMILIES[model_type]
    cls = CONFIG_MAPPING[model_type]
    assert cls.__module__ == f"transformers.models.{fam.module}.configuration_{fam.module}"
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key, value in fam.defaults.items():
        assert key in fields, f"{model_type}: {key} is not a field of {cls.__name__}"
        assert fields[key].default == value, f"{model_type}.{key}"
    assert cls.default_theta == fam.theta


@pytest.mark.parametrize(
    "model_type", sorted(m for m in FAMILIES if m not in NO_ROTARY_MODULE and m != "glm4_moe")
)
def test_every_family_with_its_class_defaults_equals_transformers(model_type: str) -> None:
    compare({"model_type": OUTER.get(model_type, model_type)})


def test_glm4_moe_with_a_published_head_equals_transformers() -> None:
    # the class default (4096 / 96 = 42, factor 0.5: 21 rotated slots) is odd: refused below
    compare({"model_type": "glm4_moe", "head_dim": 128, "num_attention_heads": 96})
    with pytest.raises(CheckpointError, match="even number"):
        read_layers_json({"model_type": "glm4_moe"})


def read_layers_json(config: dict[str, Any]) -> dict[str, Any]:
    return reading_document("m", read_layers(config))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_published_configs_equal_transformers(path: Path) -> None:
    compare(json.loads(path.read_text()))


# random configs of each family: layer counts, layer patterns, windows, partial factors, scaling
@st.composite
def family_configs(draw: Any) -> dict[str, Any]:
    model_type = draw(
        st.sampled_from(sorted(m for m in FAMILIES if m not in NO_ROTARY_MODULE | {"glm4_moe"}))
    )
    fam = FAMILIES[model_type]
    text: dict[str, Any] = {"num_hidden_layers": draw(st.integers(1, 13))}
    if draw(st.booleans()):
        text["rope_theta"] = draw(st.sampled_from([1e4, 5e5, 1e6, 2e6]))
    if fam.layer_types in ("gemma3", "cohere2") and draw(st.booleans()):
        text["sliding_window_pattern"] = draw(st.integers(1, 5))
    if "sliding_window" in fam.defaults and draw(st.booleans()):
        # null only where the class's field type allows it (Gemma 4's is a plain int)
        field = {f.name: f for f in dataclasses.fields(CONFIG_MAPPING[model_type])}[
            "sliding_window"
        ]
        nullable = "None" in str(field.type)
        text["sliding_window"] = draw(st.sampled_from([None, 64, 1024] if nullable else [64, 1024]))
    if "use_sliding_window" in fam.defaults and draw(st.booleans()):
        text["use_sliding_window"] = True
        text["max_window_layers"] = draw(st.integers(0, 6))
    if fam.partial_in_default and draw(st.booleans()):
        text["partial_rotary_factor"] = draw(st.sampled_from([0.25, 0.5, 1.0]))
    if fam.rope_layers == "no_rope_layers" and draw(st.booleans()):
        text["no_rope_layer_interval"] = draw(st.integers(1, 4))
    if fam.mrope is None and fam.rotary == "one" and fam.rope == "generic" and draw(st.booleans()):
        text["max_position_embeddings"] = 32768
        text["rope_scaling"] = draw(
            st.sampled_from(
                [
                    {"rope_type": "linear", "factor": 4.0},
                    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192},
                    {
                        "rope_type": "llama3",
                        "factor": 8.0,
                        "low_freq_factor": 1.0,
                        "high_freq_factor": draw(st.sampled_from([1.0, 4.0])),
                        "original_max_position_embeddings": 8192,
                    },
                    {"rope_type": "dynamic", "factor": 2.0},
                ]
            )
        )
    outer = OUTER.get(model_type)
    if outer is not None:
        return {"model_type": outer, "text_config": text}
    return {"model_type": model_type, **text}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(family_configs())
def test_random_family_configs_equal_transformers(config: dict[str, Any]) -> None:
    try:
        ref = hf_reading(_hf_config(config))
    except Exception as exc:  # noqa: BLE001 -- transformers refuses the config itself
        with pytest.raises(CheckpointError):
            find_positions_of(config)
        assert str(exc)
        return
    compare(config, ref)


# ---------------------------------------------------------------- what the issue listed


def _example(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "docs" / "examples" / name / "config.json").read_text())


def test_text_config_models_are_found() -> None:
    for name, model_type in (
        ("gemma-3-27b-it", "gemma3_text"),
        ("llama-4-scout-17b-16e-instruct", "llama4_text"),
        ("qwen3-vl-8b-instruct", "qwen3_vl_text"),
    ):
        found = find_positions_of(_example(name))
        assert isinstance(found, LayeredPositions)
        assert found.reading.model_type == model_type
        assert found.reading.text_prefix == "text_config."


def test_qwen2_vl_legacy_mrope_type_is_default_rope_with_chunked_axes() -> None:
    doc = read_layers_json(_example("qwen2.5-vl-7b-instruct"))
    kind = doc["rope"]["rope"]
    assert kind["rope_type"] == "default"
    axes = kind["mrope_axes"]
    assert axes == ["t"] * 16 + ["h"] * 24 + ["w"] * 24


def test_gemma4_proportional_and_llama4_equal_factors_do_not_crash() -> None:
    doc = read_layers_json(_example("gemma-4-26b-a4b-it"))
    full = doc["rope"]["full_attention"]
    assert (full["rope_type"], full["head_dim"], full["rotated_pairs"]) == ("proportional", 512, 64)
    assert len(full["inv_freq"]) == 256 and full["inv_freq"][64:] == [0.0] * 192
    scout = read_layers_json(_example("llama-4-scout-17b-16e-instruct"))
    assert any("high_freq_factor 1 <= low_freq_factor 1" in n for n in scout["notes"])
    assert any("attn_temperature_tuning = 4" in n for n in scout["notes"])
    assert scout["query_scale"]["layers"] == [i for i in range(48) if (i + 1) % 4 == 0]


def test_glm4_9b_without_partial_rotary_factor() -> None:
    found = find_positions_of(_example("glm-4-9b-chat-hf"))
    assert isinstance(found, RopePositions)  # one RoPE everywhere: today's card
    assert (found.rotary_dim, found.rotary_dim // 2, found.layout) == (64, 32, "interleaved")
    assert "partial_rotary_factor = 0.5" in found.defaults


def test_deepseek_v3_interleaved_mla_and_mscale_in_the_softmax() -> None:
    doc = read_layers_json(_example("deepseek-v3"))
    kind = doc["rope"]["rope"]
    assert (kind["layout"], kind["head_dim"], kind["head_slots"], kind["first_rotated_slot"]) == (
        "interleaved",
        64,
        192,
        128,
    )
    assert kind["attention_factor"] == 1.0  # mscale / mscale_all_dim
    m = 0.1 * math.log(40) + 1
    assert doc["softmax_scale"] == pytest.approx(192**-0.5 * m * m, rel=1e-14)
    assert "defaults" in doc and "rope_interleave = True" in doc["defaults"]


def test_command_r7b_rotates_only_its_sliding_layers_interleaved() -> None:
    doc = read_layers_json(_example("c4ai-command-r7b-12-2024"))
    assert doc["rope"]["rope"]["layout"] == "interleaved"
    none = [la["index"] for la in doc["layers"] if la["position"] == "none"]
    assert none == [3, 7, 11, 15, 19, 23, 27, 31]
    assert all(doc["layers"][i]["attention"] == "full" for i in none)


def test_smollm3_no_rope_layers() -> None:
    doc = read_layers_json(_example("smollm3-3b"))
    assert sum(la["position"] == "rope" for la in doc["layers"]) == 27
    assert [la["index"] for la in doc["layers"] if la["position"] == "none"][:3] == [3, 7, 11]


# ---------------------------------------------------------------- MRoPE, temperature


@pytest.mark.parametrize(
    "name", ["qwen2.5-vl-7b-instruct", "qwen3-vl-8b-instruct"], ids=lambda n: n
)
def test_text_image_text_position_ids_equal_get_rope_index(name: str) -> None:
    config = _example(name)
    cfg = T.AutoConfig.for_model(**config)
    with torch.device("meta"):
        model = T.AutoModel.from_config(cfg)
    merge = cfg.vision_config.spatial_merge_size
    grid = (1, 6, 8)
    segments = [("text", 5), ("image", grid), ("text", 4)]
    n_image = grid[0] * (grid[1] // merge) * (grid[2] // merge)
    types = torch.tensor([[0] * 5 + [1] * n_image + [0] * 4])
    ref, _ = model.get_rope_index(
        torch.zeros_like(types), types, image_grid_thw=torch.tensor([list(grid)])
    )
    np.testing.assert_array_equal(mrope_position_ids(segments, merge), ref[:, 0].numpy())


def test_query_temperatures_read_as_transformers_reads_them() -> None:
    from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale

    scout = read_layers(_example("llama-4-scout-17b-16e-instruct")).temperature
    text = T.AutoConfig.for_model(
        **_hf_config(_example("llama-4-scout-17b-16e-instruct"))
    ).get_text_config()
    assert scout is not None
    assert (scout.scale, scout.floor_len, scout.shift) == (text.attn_scale, text.floor_scale, 1.0)
    ministral = read_layers(_example("ministral-3-8b-instruct-2512")).temperature
    assert ministral is not None and len(ministral.layers) == 34
    cfg = T.AutoConfig.for_model(**_example("ministral-3-8b-instruct-2512")).get_text_config()
    p = torch.tensor([[0, 16383, 16384, 40000, 262143]])
    ref = get_llama_4_attn_scale(
        p,
        cfg.rope_parameters["llama_4_scaling_beta"],
        cfg.rope_parameters["original_max_position_embeddings"],
    )
    mine = query_temperature(p[0].numpy(), ministral.scale, ministral.floor_len, ministral.shift)
    np.testing.assert_allclose(mine, ref[0, 0, :, 0].double().numpy(), rtol=1e-6)


# ---------------------------------------------------------------- bad and unknown configs


@pytest.mark.parametrize(
    ("config", "message", "transformers_fails"),
    [
        (
            {"model_type": "llama", "rope_scaling": {"rope_type": "ntk2", "factor": 2}},
            "unknown rope_type 'ntk2'",
            True,  # ROPE_INIT_FUNCTIONS has no 'ntk2'
        ),
        (
            {"model_type": "llama", "rope_scaling": {"rope_type": "ntk", "factor": 2}},
            "unknown rope_type 'ntk'",  # posecards' own scaling (card 4), not transformers'
            True,
        ),
        (
            {
                "model_type": "qwen2_vl",
                "rope_scaling": {"type": "mrope", "mrope_section": [16, 16, 16]},
            },
            "sums to 48, not head_dim/2 = 64",
            True,  # torch.split by a section that does not cover the 64 frequencies
        ),
        (
            {"model_type": "qwen2", "rope_parameters": {"full_attention": {"rope_theta": 1e4}}},
            "one rotary module for every layer",
            True,
        ),
        (
            {"model_type": "llama4", "text_config": {"attention_chunk_size": None}},
            "attention_chunk_size",
            False,  # only its forward raises (create_chunked_causal_mask)
        ),
        ({"model_type": "phi", "partial_rotary_factor": 0.3}, "even number", False),
        (
            {"model_type": "ministral3", "rope_parameters": {"rope_type": "default"}},
            "llama_4_scaling_beta",
            False,  # only its forward raises: 1 + None * ...
        ),
        ({"model_type": "llama", "num_hidden_layers": 0}, "num_hidden_layers", False),
        (
            {"model_type": "gemma3_text", "layer_types": ["full_attention"]},
            "layer_types has 1",
            True,
        ),
    ],
)
def test_bad_configs_are_one_checkpoint_error(
    config: dict[str, Any], message: str, transformers_fails: bool
) -> None:
    with pytest.raises(CheckpointError, match=message):
        read_layers_json(config)
    if transformers_fails:  # KeyError, torch's RuntimeError, huggingface_hub's validation error
        with pytest.raises(Exception):  # noqa: B017
            hf_reading(config)


def test_layer_types_of_a_class_without_them_are_not_read() -> None:
    """LlamaConfig has no layer_types field: config.json's is a plain attribute that no module
    reads, and a rope_parameters keyed by it is one flat dict with an unknown key."""
    config = {
        "model_type": "llama",
        "num_hidden_layers": 4,
        "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 2.0}},
        "layer_types": ["sliding_attention"] * 4,
    }
    doc = compare(config)
    assert doc["rope"]["rope"]["rope_type"] == "default"
    assert {"layer_types", "rope_parameters.full_attention"} <= set(doc["ignored_keys"])


def test_a_model_type_transformers_does_not_know_is_refused_not_guessed() -> None:
    config = {
        "model_type": "brand_new_lm",
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_hidden_layers": 12,
        "max_position_embeddings": 8192,
        "rope_theta": 1e6,
        "rotary_pct": 0.5,
    }
    with pytest.raises(
        CheckpointError, match="'brand_new_lm' is not a model type of transformers 5.23.0"
    ):
        find_positions_of(config)


def test_json_has_exactly_the_documented_keys() -> None:
    doc = read_layers_json(_example("gemma-3-27b-it"))
    required = {"model_type", "num_layers", "layers", "rope", "softmax_scale", "query_scale"}
    assert required <= set(doc)
    for la in doc["layers"]:
        assert set(la) == {"index", "attention", "window", "position", "rope"}
        assert la["attention"] in ("full", "sliding", "chunked", "linear")
        assert la["position"] in ("rope", "none", "alibi", "learned")
    for kind in doc["rope"].values():
        assert {
            "rope_type",
            "theta",
            "head_dim",
            "rotated_pairs",
            "layout",
            "inv_freq",
            "attention_factor",
            "mrope_axes",
        } <= set(kind)
        assert kind["layout"] in ("half", "interleaved")


def test_a_lone_config_json_is_read(tmp_path: Path) -> None:
    path = tmp_path / "gemma.json"
    path.write_text(json.dumps(_example("gemma-3-27b-it")))
    ckpt = open_checkpoint(path)
    assert (ckpt.name, ckpt.format, ckpt.weights) == ("gemma", "none", ())
    assert isinstance(find_positions(ckpt), LayeredPositions)
    folder = ROOT / "docs" / "examples" / "gemma-3-27b-it" / "config.json"
    assert open_checkpoint(folder).name == "gemma-3-27b-it"


# what the layers card says of each example (its content's choice of phrasing, per field)
LAYERS_CARD_CHOICES = {
    "gemma-3-27b-it": {
        "thesis": "all-several",
        "takeaways.layers": "all-two-reaches",
        "takeaways.spectrum": "all-turn",
        "panels.i-scales.caption": "one-factor",
    },
    "gemma-4-26b-a4b-it": {"thesis": "all-several", "takeaways.spectrum": "some-still"},
    "llama-4-scout-17b-16e-instruct": {
        "thesis": "some-none",
        "takeaways.layers": "some-none",
        "panels.i-scales.alt": "temperature",
        "panels.i-scales.caption": "one-factor-tau",
    },
    "qwen3-next-80b-a3b-instruct": {"takeaways.layers": "some-linear"},
    "deepseek-v3": {
        "thesis": "all-one",
        "takeaways.layers": "all-one-reach",
        "panels.i-head-slots.caption": "some-still",
        "pitfalls.defaults": "some",
    },
    "qwen2.5-vl-7b-instruct": {"pitfalls.keys": "none", "pitfalls.defaults": "none"},
    "ministral-3-8b-instruct-2512": {"panels.i-scales.caption": "one-factor-tau"},
}


@pytest.mark.parametrize("name", sorted(LAYERS_CARD_CHOICES), ids=lambda n: n)
def test_every_variant_of_the_layers_card_fills(name: str) -> None:
    """Each phrasing of cards/inspect-layers.toml, chosen in turn, fills in both languages; the
    content's choices name offered variants and are the ones that describe the model (layers
    without RoPE or not, linear layers, pairs that never turn, a query temperature)."""
    from posecards.content import VARIANTS
    from posecards.content.inspect import compute_inspection
    from posecards.render.fields import Variants
    from posecards.render.text import fill_card, load_card_text

    ckpt = open_checkpoint(ROOT / "docs" / "examples" / name / "config.json")
    content = compute_inspection(ckpt, find_positions(ckpt))
    text = load_card_text("inspect-layers")
    choices = dict(content.numbers[VARIANTS])
    assert LAYERS_CARD_CHOICES[name].items() <= choices.items()
    fields = [(k, t) for k, t in text.fields() if isinstance(t, Variants)]
    assert {k for k, _ in fields} == set(choices)
    for key, t in fields:
        assert choices[key] in t.names
        for variant in t.names:
            values = {**content.numbers, VARIANTS: {**choices, key: variant}}
            for lang in ("en", "zh"):
                assert "{{" not in repr(fill_card(text, lang, values))


# ---------------------------------------------------------------- the table against the probe


def _table_vs_probe(config: dict[str, Any]) -> None:
    """The family table (posecards' own account, read_layers) and transformers' own code (the
    probe, read_model) give the same reading: layers, frequencies, layout, softmax scale."""
    from posecards.model.probed import read_model

    table = reading_document("m", read_layers(config))
    probed = reading_document("m", read_model(config))
    assert probed["read_by"] == "transformers" and table["read_by"] == "table"
    assert table["layers"] == probed["layers"]
    assert table["softmax_scale"] == pytest.approx(probed["softmax_scale"], rel=1e-12)
    assert set(table["rope"]) == set(probed["rope"])
    for key, mine in table["rope"].items():
        theirs = probed["rope"][key]
        for field in ("layout", "head_slots", "first_rotated_slot", "rotated_pairs", "mrope_axes"):
            assert mine[field] == theirs[field], f"{key}.{field}"
        np.testing.assert_allclose(mine["inv_freq"], theirs["inv_freq"], rtol=1e-12, atol=0)
        assert mine["attention_factor"] == pytest.approx(theirs["attention_factor"], rel=1e-12)


@pytest.mark.parametrize("model_type", sorted(m for m in FAMILIES if m != "glm4_moe"))
def test_the_table_agrees_with_transformers_for_every_family(model_type: str) -> None:
    _table_vs_probe({"model_type": OUTER.get(model_type, model_type)})


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_the_table_agrees_with_transformers_for_published_configs(path: Path) -> None:
    _table_vs_probe(json.loads(path.read_text()))


def test_without_transformers_the_table_reads_its_families_and_refuses_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from posecards.model import probe

    monkeypatch.setattr(probe, "transformers_available", lambda: False)
    config = _example("llama-3.1-8b")
    doc = json.loads(inspection_json("m", config, find_positions_of(config)))
    assert (doc["read_by"], doc["transformers"]) == ("table", "5.23.0")
    with pytest.raises(
        CheckpointError,
        match=r"^model_type 'exaone4' is not in posecards' family table \(checked against transformers 5\.23\.0\); install transformers",
    ):
        find_positions_of({"model_type": "exaone4", "rope_theta": 1e4})


def test_a_gemma4_config_saved_by_transformers_reads_as_the_published_one(tmp_path: Path) -> None:
    # save_pretrained writes per_layer_config with zero-padded keys ("05")
    src = ROOT / "docs" / "examples" / "gemma-4-26b-a4b-it"
    T.AutoConfig.from_pretrained(src).save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    published = json.loads((src / "config.json").read_text())
    doc = json.loads(inspection_json("m", saved, find_positions_of(saved)))
    want = json.loads(inspection_json("m", published, find_positions_of(published)))
    for key in ("layers", "rope", "softmax_scale", "num_layers"):
        assert doc[key] == want[key], key
    read_layers(saved)  # the table reads the padded keys too


def test_hunyuan_ntk_alpha_is_refused_naming_the_factor() -> None:
    # HunYuan's rotary module reads rope_parameters.alpha (its own "ntk_alpha"); posecards does
    # not compute it: one line, with how far apart the frequencies are, never a drawn guess
    config = {
        "model_type": "hunyuan_v1_dense",
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0},
        "num_hidden_layers": 2,
        "head_dim": 128,
    }
    with pytest.raises(CheckpointError, match=r"differ by a factor of up to 1000\)$"):
        find_positions_of(config)


@pytest.mark.parametrize("model_type", ["gptj", "codegen"])
def test_gptj_and_codegen_divide_by_the_whole_head(model_type: str) -> None:
    # transformers: attn_weights / sqrt(head_dim) (GPTJAttention.scale_attn), not sqrt(rotary_dim)
    cfg = T.AutoConfig.for_model(model_type)
    head = cfg.n_embd // cfg.n_head
    assert cfg.rotary_dim < head
    doc = json.loads(inspection_json("m", cfg.to_dict(), find_positions_of(cfg.to_dict())))
    assert doc["softmax_scale"] == pytest.approx(head**-0.5, rel=1e-15)
    assert doc["rope"]["rope"]["rotated_pairs"] == cfg.rotary_dim // 2


def test_every_family_rule_has_its_reader() -> None:
    """The readers' registries cover every value the family table's typed columns allow (mypy
    checks the values; this, that none lacks its function), and each value is used."""
    from typing import get_args

    from posecards.model import families, layer_types, rope_parameters, scales

    assert set(layer_types._RULES) == set(get_args(families.LayerTypesRule))
    assert set(rope_parameters._RULES) == set(get_args(families.RopeRule))
    assert set(scales._RULES) == set(get_args(families.SoftmaxRule))
    # and every value is some family's: no rule without a row that needs it
    assert {f.layer_types for f in FAMILIES.values()} == set(get_args(families.LayerTypesRule))
    assert {f.rope for f in FAMILIES.values()} == set(get_args(families.RopeRule))
    assert {f.softmax for f in FAMILIES.values()} == set(get_args(families.SoftmaxRule))
