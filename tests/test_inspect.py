"""`posecards inspect` reading layer: tiny models built with transformers, saved every way
save_pretrained (and torch.save) can, and compared with the models' own tensors and with
transformers' own RoPE and ALiBi code.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T
from tiny_models import LLAMA3_ROPE, gpt2_model, save_bin
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from posecards.content.inspect import compute_inspection
from posecards.content.reading import kind_frequencies
from posecards.encodings.cosine import cosine_similarity
from posecards.model.checkpoint import CheckpointError, open_checkpoint, read_tensor
from posecards.model.positions import (
    AlibiPositions,
    InspectOptions,
    LayeredPositions,
    LearnedPositions,
    RopePositions,
    find_positions,
)

T.logging.set_verbosity_error()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    root = tmp_path_factory.mktemp("models")
    out: dict[str, tuple[Path, Any]] = {}

    def keep(name: str, model: Any, **kw: Any) -> None:
        model.save_pretrained(root / name, **kw)
        out[name] = (root / name, model)

    keep("gpt2", gpt2_model(0))
    keep("gpt2-sharded", gpt2_model(1, n_layer=2), max_shard_size="20KB")
    keep("gpt2-bf16", gpt2_model(2).to(torch.bfloat16))
    keep("gpt2-f16", gpt2_model(3).to(torch.float16))
    bin_model = gpt2_model(4)
    save_bin(bin_model, root / "gpt2-bin")
    out["gpt2-bin"] = (root / "gpt2-bin", bin_model)
    save_bin(bin_model, root / "gpt2-bin-sharded", shards=3)
    out["gpt2-bin-sharded"] = (root / "gpt2-bin-sharded", bin_model)
    small = dict(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
    )
    torch.manual_seed(5)
    keep("bert", T.BertModel(T.BertConfig(**small, max_position_embeddings=64)))
    torch.manual_seed(6)
    keep("roberta", T.RobertaForMaskedLM(T.RobertaConfig(**small, max_position_embeddings=66)))
    torch.manual_seed(7)
    opt = T.OPTConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        ffn_dim=37,
        max_position_embeddings=64,
        word_embed_proj_dim=32,
    )
    keep("opt", T.OPTForCausalLM(opt))
    return out


def _config_only(root: Path, name: str, config: Any) -> Path:
    config.save_pretrained(root / name)
    return root / name


# ---------------------------------------------------------------- learned absolute tables


@pytest.mark.parametrize(
    "name", ["gpt2", "gpt2-sharded", "gpt2-bin", "gpt2-bin-sharded", "gpt2-bf16", "gpt2-f16"]
)
def test_gpt2_wpe_is_read_exactly(models: dict[str, tuple[Path, Any]], name: str) -> None:
    folder, model = models[name]
    ckpt = open_checkpoint(folder)
    found = find_positions(ckpt)
    assert isinstance(found, LearnedPositions)
    assert (found.tensor, found.offset, found.shape) == ("wpe.weight", 0, (64, 32))
    table = read_tensor(ckpt, found.tensor)
    expected = model.wpe.weight.detach().double().numpy()  # bf16/f16 -> float64 is exact
    assert table.dtype == np.float64
    np.testing.assert_array_equal(table, expected)


def test_a_sharded_checkpoint_reads_the_shard_that_holds_the_table(
    models: dict[str, tuple[Path, Any]],
) -> None:
    folder, _ = models["gpt2-sharded"]
    ckpt = open_checkpoint(folder)
    index = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    assert len(ckpt.weights) > 2
    assert ckpt.tensors["wpe.weight"].file.name == index["wpe.weight"]


def test_a_single_safetensors_file(models: dict[str, tuple[Path, Any]]) -> None:
    folder, model = models["gpt2"]
    ckpt = open_checkpoint(folder / "model.safetensors")
    found = find_positions(ckpt)
    assert ckpt.config["model_type"] == "gpt2"  # config.json beside the file is used
    np.testing.assert_array_equal(
        read_tensor(ckpt, found.tensor), model.wpe.weight.detach().double().numpy()
    )


def test_reader_agrees_with_the_safetensors_library(models: dict[str, tuple[Path, Any]]) -> None:
    from safetensors import safe_open

    for name in ("gpt2", "gpt2-bf16", "gpt2-f16"):
        path = models[name][0] / "model.safetensors"
        ckpt = open_checkpoint(path)
        with safe_open(str(path), "pt") as f:
            for key in f.keys():  # noqa: SIM118 (safe_open is not a dict)
                ref = f.get_tensor(key).double().numpy()
                np.testing.assert_array_equal(read_tensor(ckpt, key), ref)


def test_bert_roberta_opt_tables_and_offsets(models: dict[str, tuple[Path, Any]]) -> None:
    from transformers.models.opt.modeling_opt import OPTLearnedPositionalEmbedding
    from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

    bert_dir, bert = models["bert"]
    found = find_positions(open_checkpoint(bert_dir))
    assert isinstance(found, LearnedPositions)
    assert (found.tensor, found.offset) == ("embeddings.position_embeddings.weight", 0)

    rob_dir, rob = models["roberta"]
    ckpt = open_checkpoint(rob_dir)
    found = find_positions(ckpt)
    assert isinstance(found, LearnedPositions)
    assert found.tensor == "roberta.embeddings.position_embeddings.weight"
    # RoBERTa numbers the first real token padding_idx + 1: that row is position 0
    ids = torch.tensor([[5, 6, 7]])
    first = RobertaEmbeddings.create_position_ids_from_input_ids(ids, rob.config.pad_token_id)
    assert found.offset == int(first[0, 0]) == 2
    assert "pad_token_id" in found.config_keys
    np.testing.assert_array_equal(
        read_tensor(ckpt, found.tensor)[found.offset :],
        rob.roberta.embeddings.position_embeddings.weight.detach().double().numpy()[2:],
    )

    opt_dir, opt = models["opt"]
    found = find_positions(open_checkpoint(opt_dir))
    assert isinstance(found, LearnedPositions)
    layer = opt.model.decoder.embed_positions
    assert isinstance(layer, OPTLearnedPositionalEmbedding)
    assert found.offset == layer.offset == 2
    assert found.shape == (64 + 2, 32)


def test_heatmap_norms_and_profile_are_computed_from_the_table(
    models: dict[str, tuple[Path, Any]],
) -> None:
    folder, model = models["roberta"]
    ckpt = open_checkpoint(folder)
    found = find_positions(ckpt)
    content = compute_inspection(ckpt, found)
    w = model.roberta.embeddings.position_embeddings.weight.detach().double()[2:]  # (64, 32)
    sim = torch.nn.functional.cosine_similarity(w[:, None, :], w[None, :, :], dim=-1).numpy()
    data = content.figures["i-similarity"]
    np.testing.assert_array_equal(data.positions, np.arange(64.0))
    np.testing.assert_allclose(data.similarity, sim, atol=1e-14)
    np.testing.assert_allclose(content.figures["i-norms"].norm, w.norm(dim=1).numpy(), rtol=1e-14)
    g = content.figures["i-offset"].model
    direct = [np.diagonal(sim, k).mean() for k in range(64)]
    np.testing.assert_allclose(g, direct, atol=1e-13)
    assert content.numbers["g1"] == pytest.approx(direct[1], abs=1e-13)
    assert content.numbers["positions"] == 64 and content.numbers["offset"] == 2


def test_tensor_option_reads_any_table(models: dict[str, tuple[Path, Any]]) -> None:
    folder, model = models["gpt2"]
    ckpt = open_checkpoint(folder)
    found = find_positions(ckpt, InspectOptions(tensor="wte.weight", offset=3))
    assert isinstance(found, LearnedPositions)
    assert (found.offset, found.offset_rule, found.shape) == (3, "option", (50, 32))
    content = compute_inspection(ckpt, found)
    rows = model.wte.weight.detach().double().numpy()[3:]
    np.testing.assert_allclose(
        content.figures["i-similarity"].similarity, cosine_similarity(rows, rows), atol=1e-14
    )
    with pytest.raises(CheckpointError, match="--tensor 'nope' is not in"):
        find_positions(ckpt, InspectOptions(tensor="nope"))
    with pytest.raises(CheckpointError, match="a position table is 2-D"):
        find_positions(ckpt, InspectOptions(tensor="ln_f.weight"))
    with pytest.raises(CheckpointError, match="fewer than 2 positions"):
        find_positions(ckpt, InspectOptions(offset=63))


def test_large_tables_are_shown_subsampled(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    table = rng.normal(size=(1500, 8)).astype(np.float32)
    save_file({"wpe.weight": table}, str(tmp_path / "model.safetensors"))
    ckpt = open_checkpoint(tmp_path / "model.safetensors")
    content = compute_inspection(ckpt, find_positions(ckpt))
    pos = content.figures["i-similarity"].positions
    assert pos.size <= 512 and pos[1] - pos[0] == 3  # ceil(1500 / 512)
    rows = table.astype(np.float64)[pos.astype(int)]
    np.testing.assert_allclose(
        content.figures["i-similarity"].similarity, cosine_similarity(rows, rows), atol=1e-14
    )
    assert content.numbers["positions"] == 1500


# ---------------------------------------------------------------- RoPE


def _hf_inv_freq(folder: Path) -> tuple[np.ndarray, float, Any]:
    """inv_freq and attention factor as transformers computes them from the saved config."""
    config = T.AutoConfig.from_pretrained(folder)
    params = dict(config.rope_parameters or {})
    rope_type = params.get("rope_type", "default")
    if rope_type == "default":
        from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

        inv, att = GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        seq_len = None
        if rope_type in ("dynamic", "longrope"):
            orig = params.get("original_max_position_embeddings")
            seq_len = config.max_position_embeddings * (1 if orig else int(params["factor"]))
        inv, att = ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len)
    return inv.double().numpy(), float(att), config


LLAMA = dict(
    vocab_size=16,
    hidden_size=128,
    intermediate_size=8,
    num_hidden_layers=1,
    num_attention_heads=2,
)

ROPE_CASES: dict[str, dict[str, Any]] = {
    "default": dict(max_position_embeddings=4096, rope_parameters={"rope_type": "default"}),
    "llama3": dict(
        max_position_embeddings=131072,
        rope_parameters=dict(LLAMA3_ROPE),
    ),
    "yarn": dict(
        max_position_embeddings=32768,
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": 1000000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    ),
    "linear": dict(
        max_position_embeddings=4096, rope_parameters={"rope_type": "linear", "factor": 2.0}
    ),
    "dynamic": dict(
        max_position_embeddings=4096, rope_parameters={"rope_type": "dynamic", "factor": 4.0}
    ),
}


@pytest.mark.parametrize("case", sorted(ROPE_CASES))
def test_rope_numbers_equal_transformers(tmp_path: Path, case: str) -> None:
    folder = _config_only(tmp_path, case, T.LlamaConfig(**LLAMA, **ROPE_CASES[case]))
    ckpt = open_checkpoint(folder)
    assert ckpt.format == "none"  # RoPE needs config.json only
    found = find_positions(ckpt)
    assert isinstance(found, RopePositions)
    content = compute_inspection(ckpt, found)
    ref_inv, ref_att, config = _hf_inv_freq(folder)
    data = content.figures["i-ratios"]
    base = float(config.rope_parameters["rope_theta"])
    rtol = (math.log(base) + 8.0) * 2.0**-24  # transformers builds inv_freq in float32
    np.testing.assert_allclose(data.theta_scaled, ref_inv, rtol=rtol, atol=0)
    assert data.attention_factor == pytest.approx(ref_att, rel=1e-12)
    assert found.head_dim == 64 and found.layout == "half"
    params = ROPE_CASES[case]["rope_parameters"]
    orig = params.get("original_max_position_embeddings")
    max_pos = ROPE_CASES[case]["max_position_embeddings"]
    if orig is None and case == "linear":  # interpolation: max_position_embeddings is stretched
        orig = max_pos // int(params["factor"])
    assert found.trained_context == (orig or max_pos)
    wl = content.figures["i-wavelengths"]
    np.testing.assert_allclose(wl.scaled, 2 * np.pi / data.theta_scaled, rtol=1e-15)
    turns = content.figures["i-turns"].original
    assert content.numbers["turn_orig"] == int(np.sum(turns >= 1))
    # positions 0 .. N-1 span N - 1 steps: (N - 1)/λ turns, not N/λ
    np.testing.assert_allclose(turns, (found.trained_context - 1) / wl.original, rtol=1e-15)
    assert content.numbers["orig_ctx"] == found.trained_context


NEOX_PARTIAL = dict(  # GPT-NeoX rotating a quarter of each 32-slot head
    vocab_size=16,
    hidden_size=64,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=8,
    rotary_pct=0.25,
    max_position_embeddings=2048,
)


def test_partial_rotary_and_interleaved_layout(tmp_path: Path) -> None:
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    neox = T.GPTNeoXConfig(**NEOX_PARTIAL)
    folder = _config_only(tmp_path, "neox", neox)
    found = find_positions(open_checkpoint(folder))
    assert isinstance(found, RopePositions)
    assert (found.head_dim, found.rotary_dim, found.layout) == (32, 8, "half")
    content = compute_inspection(open_checkpoint(folder), found)
    ref, _ = GPTNeoXRotaryEmbedding.compute_default_rope_parameters(
        T.AutoConfig.from_pretrained(folder)
    )
    np.testing.assert_allclose(content.figures["i-ratios"].theta, ref.double(), rtol=1e-6)
    this = content.figures["i-layout"].this
    assert (this[8:] == -1).all() and this[:8].tolist() == [0, 1, 2, 3, 0, 1, 2, 3]

    gptj = T.GPTJConfig(vocab_size=16, n_embd=64, n_layer=1, n_head=2, rotary_dim=16)
    found = find_positions(open_checkpoint(_config_only(tmp_path, "gptj", gptj)))
    assert isinstance(found, RopePositions)
    assert (found.rotary_dim, found.layout) == (16, "interleaved")


def test_transformers_4_style_config(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    config = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "linear", "factor": 2.0, "some_future_key": 1},
    }
    (folder / "config.json").write_text(json.dumps(config))
    found = find_positions(open_checkpoint(folder))
    assert isinstance(found, RopePositions)
    assert found.rope_type == "linear" and found.ignored_keys == ("some_future_key",)
    assert (found.trained_context, found.scaled_context) == (2048, 4096)  # 4096 = stretched
    assert {"rope_theta", "rope_scaling.factor", "rope_scaling.type"} <= set(found.config_keys)
    assert "rope_scaling.some_future_key" not in found.config_keys
    content = compute_inspection(open_checkpoint(folder), found)
    np.testing.assert_allclose(content.figures["i-ratios"].ratio, 0.5, rtol=1e-15)


# ---------------------------------------------------------------- ALiBi


@pytest.mark.parametrize("heads", [4, 6, 12])
def test_bloom_slopes_equal_transformers(tmp_path: Path, heads: int) -> None:
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    folder = _config_only(tmp_path, "bloom", T.BloomConfig(hidden_size=heads * 4, n_head=heads))
    found = find_positions(open_checkpoint(folder))
    assert isinstance(found, AlibiPositions) and found.n_heads == heads
    content = compute_inspection(open_checkpoint(folder), found)
    ref = build_alibi_tensor(torch.ones(1, 3), heads, torch.float32)  # (H, 1, 3): m_h * j
    np.testing.assert_allclose(
        content.figures["i-slopes"].slope, ref[:, 0, 1].double(), rtol=2.0**-23
    )


@pytest.mark.parametrize(("heads", "max_bias"), [(4, 8), (6, 8), (12, 16)])
def test_mpt_slopes_equal_transformers(tmp_path: Path, heads: int, max_bias: int) -> None:
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    cfg = T.MptConfig(
        d_model=heads * 4,
        n_heads=heads,
        max_seq_len=128,
        attn_config={"alibi": True, "alibi_bias_max": max_bias},
    )
    folder = _config_only(tmp_path, "mpt", cfg)
    found = find_positions(open_checkpoint(folder))
    assert isinstance(found, AlibiPositions)
    assert (found.family, found.max_bias, found.context) == ("mpt", max_bias, 128)
    content = compute_inspection(open_checkpoint(folder), found)
    ref = build_mpt_alibi_tensor(heads, 3, alibi_bias_max=max_bias)  # (H, 1, 3): m_h (j - 2)
    np.testing.assert_allclose(
        content.figures["i-slopes"].slope, -ref[:, 0, 1].double(), rtol=2.0**-23
    )
    w = content.figures["i-weights"].weights
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-12)
    assert w.shape[1] == 128


# ---------------------------------------------------------------- what is not a checkpoint


def test_errors_say_what_was_looked_for(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="not a local path.*downloads nothing"):
        open_checkpoint("openai-community/gpt2")
    with pytest.raises(CheckpointError, match="does not exist"):
        open_checkpoint(str(tmp_path / "nope"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CheckpointError, match="no config.json and none of model.safetensors"):
        open_checkpoint(empty)
    (empty / "config.json").write_text('{"model_type": "mystery", "hidden_size": 8}')
    with pytest.raises(CheckpointError, match="no position encoding found.*looked for learned"):
        find_positions(open_checkpoint(empty))
    (empty / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!")
    with pytest.raises(CheckpointError, match="not a safetensors file"):
        open_checkpoint(empty)
    (empty / "model.safetensors").unlink()
    (empty / "pytorch_model.bin").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="cannot read pytorch_model.bin"):
        open_checkpoint(empty)
    (empty / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="config.json is not valid JSON"):
        open_checkpoint(empty)
    other = tmp_path / "weights.pt"
    other.write_bytes(b"x")
    with pytest.raises(CheckpointError, match="give a model folder"):
        open_checkpoint(other)


def test_a_truncated_safetensors_file_is_refused(
    models: dict[str, tuple[Path, Any]], tmp_path: Path
) -> None:
    data = (models["gpt2"][0] / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="lies outside the file"):
        open_checkpoint(tmp_path / "model.safetensors")


def test_falcon_alibi_is_named_not_misread(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "falcon", "alibi": True, "rope_theta": 10000.0})
    )
    with pytest.raises(CheckpointError, match="BLOOM and MPT configs only"):
        find_positions(open_checkpoint(tmp_path))


def test_a_table_with_nan_or_too_large_is_refused(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    table = np.ones((8, 4), dtype=np.float32)
    table[5, 2] = np.nan
    save_file({"wpe.weight": table}, str(tmp_path / "nan.safetensors"))
    ckpt = open_checkpoint(tmp_path / "nan.safetensors")
    with pytest.raises(ValueError, match="non-finite value \\(row 5\\)"):
        compute_inspection(ckpt, find_positions(ckpt))
    # a header that declares a huge table (data never read: the size check comes first)
    header = json.dumps(
        {"wpe.weight": {"dtype": "F32", "shape": [1 << 20, 1 << 8], "data_offsets": [0, 1 << 30]}}
    ).encode()
    path = tmp_path / "huge.safetensors"
    with path.open("wb") as fh:
        fh.write(len(header).to_bytes(8, "little") + header)
        fh.truncate(8 + len(header) + (1 << 30))
    with pytest.raises(CheckpointError, match="at most 134,217,728 values"):
        find_positions(open_checkpoint(path))


# ---------------------------------------------------------------- real-world config shapes


def _write_config(folder: Path, config: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _hf_theta(folder: Path, seq_len: int | None = None) -> np.ndarray:
    """inv_freq as transformers computes it for the config in ``folder`` (full attention)."""
    config = T.AutoConfig.from_pretrained(folder)
    params = dict(config.rope_parameters or {})
    if "full_attention" in params:
        params = params["full_attention"]
        inv, _ = ROPE_INIT_FUNCTIONS[params["rope_type"]](
            config, seq_len=seq_len, layer_type="full_attention"
        )
        return inv.double().numpy()
    rope_type = params.get("rope_type", "default")
    if rope_type == "default":
        from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

        return GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)[0].double().numpy()
    return ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len)[0].double().numpy()


def _theta(folder: Path) -> tuple[RopePositions, Any]:
    ckpt = open_checkpoint(folder)
    found = find_positions(ckpt)
    assert isinstance(found, RopePositions)
    return found, compute_inspection(ckpt, found)


LLAMA2 = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "max_position_embeddings": 4096,
    "rope_scaling": None,
}


def test_configs_without_rope_keys_use_hf_defaults(tmp_path: Path) -> None:
    found, content = _theta(_write_config(tmp_path / "llama2", LLAMA2))
    # LlamaConfig's defaults for what the file leaves out (the layer count is read too now)
    assert found.defaults == ("num_hidden_layers = 32", "rope_theta = 10000")
    assert found.rope_type == "default"
    np.testing.assert_allclose(
        content.figures["i-ratios"].theta_scaled, _hf_theta(tmp_path / "llama2"), rtol=1e-6
    )
    falcon = {
        "model_type": "falcon",
        "alibi": False,
        "hidden_size": 4544,
        "num_attention_heads": 71,
    }
    found, _ = _theta(_write_config(tmp_path / "falcon", falcon))
    assert (found.head_dim, found.trained_context) == (64, 2048)
    assert "max_position_embeddings = 2048" in found.defaults


def test_extended_context_rules(tmp_path: Path) -> None:
    qwen = {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    }
    found, content = _theta(_write_config(tmp_path / "qwen", qwen))
    assert (found.trained_context, found.scaled_context, found.context_rule) == (
        32768,
        131072,
        "original",
    )
    np.testing.assert_allclose(
        content.figures["i-ratios"].theta_scaled, _hf_theta(tmp_path / "qwen"), rtol=1e-6
    )
    linear = {
        **LLAMA2,
        "max_position_embeddings": 32768,
        "rope_scaling": {"type": "linear", "factor": 8},
    }
    found, _ = _theta(_write_config(tmp_path / "linear", linear))
    assert (found.trained_context, found.scaled_context, found.context_rule) == (
        4096,
        32768,
        "linear",
    )
    dynamic = {**LLAMA2, "rope_scaling": {"type": "dynamic", "factor": 2}}
    found, _ = _theta(_write_config(tmp_path / "dynamic", dynamic))
    assert (found.trained_context, found.scaled_context, found.context_rule) == (
        4096,
        8192,
        "extend",
    )


def test_gemma3_per_layer_type_parameters(tmp_path: Path) -> None:
    """Two RoPEs in one model: the layer-by-layer card, each kind as transformers holds it."""
    gemma = {
        "model_type": "gemma3_text",
        "head_dim": 256,
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "max_position_embeddings": 131072,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
    }
    found = find_positions(open_checkpoint(_write_config(tmp_path / "gemma3", gemma)))
    assert isinstance(found, LayeredPositions)
    kinds = found.reading.rope
    assert (kinds["full_attention"].rope_type, kinds["full_attention"].theta) == ("linear", 1e6)
    assert (kinds["sliding_attention"].rope_type, kinds["sliding_attention"].theta) == (
        "default",
        1e4,
    )
    assert "rope_parameters.full_attention.factor" in found.config_keys
    config = T.AutoConfig.from_pretrained(tmp_path / "gemma3")
    for lt, kind in kinds.items():
        fn = ROPE_INIT_FUNCTIONS.get(kind.rope_type)
        if fn is None:
            from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

            fn = Gemma3RotaryEmbedding.compute_default_rope_parameters
        ref, _ = fn(config, layer_type=lt)
        np.testing.assert_allclose(kind_frequencies(kind).inv_freq, ref.double(), rtol=2e-6)


def test_deepseek_rope_head_and_interleaved_layout(tmp_path: Path) -> None:
    """MLA: 64 of 192 slots rotate, interleaved; the layer-by-layer card."""
    ds = {
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "qk_rope_head_dim": 64,
        "max_position_embeddings": 163840,
        "rope_interleave": True,
        "rope_theta": 10000,
        "rope_scaling": {
            "type": "yarn",
            "factor": 40,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
        },
    }
    found = find_positions(open_checkpoint(_write_config(tmp_path / "ds", ds)))
    assert isinstance(found, LayeredPositions)
    kind = found.reading.rope["rope"]
    assert (kind.head_dim, kind.head_slots, kind.first_slot, kind.layout) == (
        64,
        192,
        128,
        "interleaved",
    )
    np.testing.assert_allclose(
        kind_frequencies(kind).inv_freq, _hf_theta(tmp_path / "ds"), rtol=1e-6
    )


def test_longrope_trained_frequencies_are_the_short_ones(tmp_path: Path) -> None:
    half = 48
    phi3 = {
        "model_type": "phi3",
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {
            "type": "longrope",
            "short_factor": [1.0 + 0.01 * i for i in range(half)],
            "long_factor": [1.0 + 1.3 * i for i in range(half)],
        },
    }
    folder = _write_config(tmp_path / "phi3", phi3)
    found, content = _theta(folder)
    assert (found.trained_context, found.scaled_context) == (4096, 131072)
    data = content.figures["i-ratios"]
    np.testing.assert_allclose(data.theta, _hf_theta(folder, seq_len=4096), rtol=1e-6)
    np.testing.assert_allclose(data.theta_scaled, _hf_theta(folder, seq_len=131072), rtol=1e-6)
    assert content.figures["i-wavelengths"].baseline == "short"


def test_zero_rows_are_blank_not_dissimilar(models: dict[str, tuple[Path, Any]]) -> None:
    folder, model = models["roberta"]
    ckpt = open_checkpoint(folder)
    found = find_positions(ckpt, InspectOptions(offset=0))  # keep RoBERTa's zero padding row 1
    content = compute_inspection(ckpt, found)
    assert content.numbers["zero_rows"] == 1
    sim = content.figures["i-similarity"].similarity
    assert np.isnan(sim[1]).all() and np.isnan(sim[:, 1]).all()
    assert content.figures["i-offset"].model[0] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("heads", "expected"), [(1, [1]), (2, [1, 2]), (3, [3, 1, 2]), (8, [1, 4, 8])]
)
def test_alibi_shows_the_steepest_a_middle_and_the_gentlest_head(
    tmp_path: Path, heads: int, expected: list[int]
) -> None:
    folder = _write_config(tmp_path / "bloom", {"model_type": "bloom", "n_head": heads})
    ckpt = open_checkpoint(folder)
    content = compute_inspection(ckpt, find_positions(ckpt))
    shown = content.figures["i-bias"].heads.astype(int).tolist()
    assert shown == expected
    slopes = content.figures["i-slopes"].slope
    assert slopes[shown[0] - 1] == slopes.max() and slopes[shown[-1] - 1] == slopes.min()
    assert content.numbers["n_shown"] == len(expected)


def test_mpt_attn_config_null_means_alibi_and_false_means_none(tmp_path: Path) -> None:
    mpt = {"model_type": "mpt", "d_model": 64, "n_heads": 4, "max_seq_len": 64, "attn_config": None}
    found = find_positions(open_checkpoint(_write_config(tmp_path / "a", mpt)))
    assert isinstance(found, AlibiPositions) and found.defaults == ("alibi_bias_max = 8",)
    off = {**mpt, "attn_config": {"alibi": False}}
    with pytest.raises(CheckpointError, match="no position encoding found"):
        find_positions(open_checkpoint(_write_config(tmp_path / "b", off)))


def test_hf_cache_snapshot_is_named_after_the_repo(
    models: dict[str, tuple[Path, Any]], tmp_path: Path
) -> None:
    import shutil

    snap = tmp_path / "hub" / "models--openai-community--gpt2" / "snapshots" / "607a30d783dfa66"
    shutil.copytree(models["gpt2"][0], snap)
    assert open_checkpoint(snap).name == "openai-community/gpt2"
    assert open_checkpoint(snap / "model.safetensors").name == "openai-community/gpt2"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"dtype": "F32", "shape": [2.5, 4], "data_offsets": [0, 32]}, "bad header entry"),
        ({"dtype": "F32", "shape": [2, 4], "data_offsets": "0,32"}, "bad header entry"),
        ({"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 1e400]}, "bad header entry"),
    ],
)
def test_malformed_safetensors_headers(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    header = json.dumps({"wpe.weight": entry}).encode()
    (tmp_path / "model.safetensors").write_bytes(
        len(header).to_bytes(8, "little") + header + bytes(64)
    )
    with pytest.raises(CheckpointError, match=message):
        open_checkpoint(tmp_path / "model.safetensors")


def test_overlapping_tensors_are_refused(tmp_path: Path) -> None:
    header = json.dumps(
        {
            "wpe.weight": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 32]},
            "h.0.x": {"dtype": "F32", "shape": [2, 4], "data_offsets": [16, 48]},
        }
    ).encode()
    (tmp_path / "model.safetensors").write_bytes(
        len(header).to_bytes(8, "little") + header + bytes(64)
    )
    with pytest.raises(CheckpointError, match="overlap"):
        open_checkpoint(tmp_path / "model.safetensors")


def test_llama31_card_says_original_context_and_counts_turns_over_n_minus_1() -> None:
    """original_max_position_embeddings is the pre-scaling context (Llama 3.1 was trained on
    128K tokens in continued pre-training), and positions 0..N-1 span (N - 1)/λ turns."""
    from posecards.render.text import fill_card, load_card_text

    folder = Path(__file__).resolve().parent.parent / "docs" / "examples" / "llama-3.1-8b"
    ckpt = open_checkpoint(folder)
    content = compute_inspection(ckpt, find_positions(ckpt))
    nums = content.numbers
    assert (nums["orig_ctx"], nums["scaled_ctx"]) == (8192, 131072)
    lam = 2 * math.pi * 500000.0 ** (np.arange(64) * 2 / 128)  # original wavelengths
    assert nums["turn_orig"] == int(np.sum(lam <= 8192 - 1))
    text = load_card_text("inspect-rope")
    for lang, wanted, banned in (
        ("en", "original (pre-scaling) context of 8,192", "trained context"),
        ("zh", "原始（缩放前）上下文", "训练上下文"),
    ):
        filled = fill_card(text, lang, nums)
        blob = " ".join(
            [filled.thesis, filled.formula_note]
            + [" ".join(p[1:]) for p in filled.panels]
            + [v for _, v in filled.takeaways + filled.pitfalls]
        )
        assert wanted in blob and banned not in blob, lang


# ---------------------------------------------------------------- card text: variants


def _fills_every_variant(content: Any) -> dict[str, str]:
    """Every field of the card's file with variants has a choice among the offered ones, and
    every variant of every field fills in both languages (the other choices held); returns the
    choices."""
    from posecards.content import VARIANTS
    from posecards.render.fields import Variants
    from posecards.render.text import fill_card, load_card_text

    text = load_card_text(content.card)
    choices = dict(content.numbers[VARIANTS])
    fields = [(k, t) for k, t in text.fields() if isinstance(t, Variants)]
    assert {k for k, _ in fields} == set(choices)
    for lang in ("en", "zh"):
        assert "{{" not in repr(fill_card(text, lang, content.numbers))
    for key, t in fields:
        assert choices[key] in t.names, key
        for variant in t.names:
            values = {**content.numbers, VARIANTS: {**choices, key: variant}}
            for lang in ("en", "zh"):
                assert "{{" not in repr(fill_card(text, lang, values))
    return choices


LEARNED_CHOICES = {  # model -> (thesis, takeaways.rows)
    "gpt2": ("from-zero", "none"),
    "opt": ("from-row", "fixed"),  # OPT adds 2 to every position id
    "roberta": ("from-row", "padding"),  # positions from pad_token_id + 1
}


@pytest.mark.parametrize("name", sorted(LEARNED_CHOICES))
def test_learned_card_variants(models: dict[str, tuple[Path, Any]], name: str) -> None:
    ckpt = open_checkpoint(models[name][0])
    content = compute_inspection(ckpt, find_positions(ckpt))
    choices = _fills_every_variant(content)
    assert (choices["thesis"], choices["takeaways.rows"]) == LEARNED_CHOICES[name]
    n = content.numbers
    assert (n["last"], n["last_row"]) == (n["positions"] - 1, n["offset"] + n["positions"] - 1)
    zeros = "zero-rows" if n["zero_rows"] else "no-zero-rows"
    assert choices["panels.i-norms.caption"] == zeros
    falls = "falls" if n["k_half"] >= 0 else "stays"
    assert choices["panels.i-similarity.caption"] == falls


@pytest.mark.parametrize(
    ("family", "heads", "max_bias", "note", "order", "source"),
    [
        ("bloom", 4, 8, "pow2", "sorted", "bloom"),
        ("bloom", 6, 8, "not-pow2", "unsorted", "bloom"),
        ("mpt", 8, 8, "pow2", "sorted", "mpt"),
        ("mpt", 12, 16, "not-pow2", "unsorted", "mpt-ported"),
    ],
)
def test_alibi_card_variants(
    tmp_path: Path, family: str, heads: int, max_bias: int, note: str, order: str, source: str
) -> None:
    if family == "bloom":
        cfg: Any = T.BloomConfig(hidden_size=heads * 4, n_head=heads)
    else:
        attn = {"alibi": True, "alibi_bias_max": max_bias}
        cfg = T.MptConfig(d_model=heads * 4, n_heads=heads, max_seq_len=128, attn_config=attn)
    ckpt = open_checkpoint(_config_only(tmp_path, family, cfg))
    content = compute_inspection(ckpt, find_positions(ckpt))
    choices = _fills_every_variant(content)
    assert choices["formula.note"] == note
    assert choices["panels.i-slopes.caption"] == order
    assert content.numbers["bias_source"] == source
    assert choices["takeaways.config"] == family
    assert choices["panels.i-bias.alt"] == "three"  # steepest, a middle and the gentlest
    assert choices["panels.i-reach.alt"] == ("context" if family == "mpt" else "no-context")


ROPE_CHOICES = {  # case -> (thesis, wavelengths alt, context note)
    "default": ("unscaled", "unscaled-one-context", "none"),
    "linear": ("scaled", "scaled-two-contexts", "linear"),
    "dynamic": ("scaled", "scaled-two-contexts", "extend-dynamic"),
    "yarn": ("scaled", "scaled-two-contexts", "original"),
    "llama3": ("scaled", "scaled-two-contexts", "original"),
}


@pytest.mark.parametrize("case", sorted(ROPE_CHOICES))
def test_rope_card_variants(tmp_path: Path, case: str) -> None:
    ckpt = open_checkpoint(_config_only(tmp_path, case, T.LlamaConfig(**LLAMA, **ROPE_CASES[case])))
    content = compute_inspection(ckpt, find_positions(ckpt))
    choices = _fills_every_variant(content)
    got = (choices["thesis"], choices["panels.i-wavelengths.alt"], content.numbers["context_note"])
    assert got == ROPE_CHOICES[case]
    assert choices["panels.i-layout.alt"] == "half"
    n = content.numbers
    assert n["never_turn"] == n["pairs"] - n["turn_orig"]
    assert n["divided_by"] == pytest.approx(1 / n["ratio_min"], rel=1e-15)


def test_rope_card_variants_partial_interleaved_longrope(tmp_path: Path) -> None:
    neox = T.GPTNeoXConfig(**NEOX_PARTIAL)
    ckpt = open_checkpoint(_config_only(tmp_path, "neox", neox))
    choices = _fills_every_variant(compute_inspection(ckpt, find_positions(ckpt)))
    assert (choices["thesis"], choices["panels.i-layout.alt"]) == (
        "unscaled-partial",
        "half-partial",
    )
    gptj = T.GPTJConfig(vocab_size=16, n_embd=64, n_layer=1, n_head=2, rotary_dim=16)
    ckpt = open_checkpoint(_config_only(tmp_path, "gptj", gptj))
    choices = _fills_every_variant(compute_inspection(ckpt, find_positions(ckpt)))
    assert choices["panels.i-layout.alt"] == "interleaved-partial"
    assert choices["panels.i-layout.caption"] == "interleaved"


def test_rope_card_names_every_rope_type_and_context_rule() -> None:
    """The [names] the title and the wavelength caption use cover every value the content can
    give them: each rope_type transformers knows, each context rule of model/positions.py."""
    from posecards.model.layers import CONFIG_ROPE_TYPES
    from posecards.render.text import load_card_text

    assert set(CONFIG_ROPE_TYPES) == {"default", *ROPE_INIT_FUNCTIONS}  # what transformers reads
    names = load_card_text("inspect-rope").source.names_in("en")
    assert set(names["rope_title"]) == set(CONFIG_ROPE_TYPES)
    assert set(names["context_note"]) == {"original", "linear", "extend", "extend-dynamic", "none"}
