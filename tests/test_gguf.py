"""GGUF as an input of `posecards inspect`: the metadata gives the same position reading as the
config transformers 5.23.0 builds from the same file, the tensors are llama.cpp's dequantized
values, and q/k rows are de-permuted as transformers does. On the real SmolLM2 file and on small
files the tests write with the gguf package."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
import torch
import transformers as T
from conftest import run, run_here
from gguf_files import hf_state_to_gguf, llama_cpp_permute, smollm2_file, write_gguf
from hf_reference import hf_reading

from posecards.content.reading import kind_frequencies
from posecards.model.checkpoint import CheckpointError, open_checkpoint, read_tensor
from posecards.model.gguf import ARCHITECTURES, GgufError, read_header, unpermute_rows
from posecards.model.layers import read_layers
from posecards.model.positions import RopePositions, find_positions

T.logging.set_verbosity_error()


def _hf_config(path: Path) -> dict[str, Any]:
    """The config transformers builds from a GGUF file, as a config.json would hold it."""
    cfg = T.AutoConfig.from_pretrained(path.parent, gguf_file=path.name)
    return dict(cfg.to_dict())


def _same_reading(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Both configs read layer by layer alike, with the same frequencies per layer."""
    a, b = read_layers(ours), read_layers(theirs)
    assert a.model_type == b.model_type and a.num_layers == b.num_layers
    assert a.layers == b.layers
    assert a.rope.keys() == b.rope.keys()
    for key in a.rope:
        ka, kb = a.rope[key], b.rope[key]
        assert (ka.head_dim, ka.layout, ka.theta, ka.rope_type) == (
            kb.head_dim,
            kb.layout,
            kb.theta,
            kb.rope_type,
        )
        fa, fb = kind_frequencies(ka), kind_frequencies(kb)
        np.testing.assert_array_equal(fa.inv_freq, fb.inv_freq)
        assert fa.attention_factor == fb.attention_factor


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return smollm2_file()


def test_smollm2_metadata_gives_transformers_reading(
    smollm2: Path, smollm2_hf_config: dict[str, Any]
) -> None:
    ckpt = open_checkpoint(smollm2)
    assert ckpt.format == "gguf" and ckpt.gguf is not None and ckpt.gguf.permuted
    assert ckpt.config["num_attention_heads"] == 9 and ckpt.config["num_key_value_heads"] == 3
    assert ckpt.config["rope_theta"] == 100000.0 and ckpt.config["head_dim"] == 64
    assert ckpt.config["max_position_embeddings"] == 8192
    theirs = smollm2_hf_config  # _hf_config(smollm2), made once per run (conftest.py)
    _same_reading(dict(ckpt.config), theirs)
    found = find_positions(ckpt)
    assert isinstance(found, RopePositions)
    assert (found.base, found.head_dim, found.rotary_dim, found.layout) == (1e5, 64, 64, "half")
    ref = hf_reading(theirs)  # transformers' own rotary module (float32 buffer)
    ours = kind_frequencies(read_layers(ckpt.config).rope["rope"]).inv_freq
    np.testing.assert_allclose(ours, ref.inv_freq["rope"], rtol=2**-23)


def test_own_header_reader_agrees_with_gguf_reader(smollm2: Path) -> None:
    fields, tensors = read_header(smollm2)
    reader = gguf.GGUFReader(smollm2)
    assert [t.name for t in tensors] == [t.name for t in reader.tensors]
    for mine, theirs in zip(tensors, reader.tensors, strict=True):
        assert mine.begin == theirs.data_offset and mine.nbytes == theirs.n_bytes
        assert mine.qtype == theirs.tensor_type.name
        assert mine.shape == tuple(reversed(theirs.shape.tolist()))
    for key, field in reader.fields.items():
        if key.startswith(("llama.", "general.architecture", "general.name")):
            assert fields[key] == field.contents(), key


def test_smollm2_tensors_dequantized_and_unpermuted_as_transformers(
    smollm2: Path, smollm2_hf_tensors: dict[str, np.ndarray]
) -> None:
    """Every tensor of the file as transformers' GGUF loading gives it (conftest.py:
    smollm2_hf_tensors, loaded once per run)."""
    ckpt = open_checkpoint(smollm2)
    for layer in (0, 14, 29):
        for short, hf, heads in (("attn_q", "q_proj", 9), ("attn_k", "k_proj", 3)):
            raw = read_tensor(ckpt, f"blk.{layer}.{short}.weight")  # (heads·64, 576)
            ref = smollm2_hf_tensors[f"model.layers.{layer}.self_attn.{hf}.weight"]
            np.testing.assert_array_equal(unpermute_rows(raw, heads), ref.astype(np.float64))
            # and the permutation is a real one: without undoing it the rows differ
            assert not np.array_equal(raw, ref.astype(np.float64))
        norm = read_tensor(ckpt, f"blk.{layer}.attn_norm.weight")
        ref_norm = smollm2_hf_tensors[f"model.layers.{layer}.input_layernorm.weight"]
        np.testing.assert_array_equal(norm, ref_norm.astype(np.float64))


def test_unpermute_inverts_llama_cpp_permutation() -> None:
    rng = np.random.default_rng(0)
    for heads, d in ((1, 2), (3, 8), (4, 64)):
        w = rng.standard_normal((heads * d, 5))
        p = llama_cpp_permute(w, heads)
        np.testing.assert_array_equal(unpermute_rows(p, heads), w)
        # pair k of head h: HF rows (h·d + k, h·d + k + d/2) are file rows (h·d + 2k, h·d + 2k + 1)
        for h in range(heads):
            for k in range(d // 2):
                np.testing.assert_array_equal(p[h * d + 2 * k], w[h * d + k])
                np.testing.assert_array_equal(p[h * d + 2 * k + 1], w[h * d + k + d // 2])
    with pytest.raises(ValueError, match="heads"):
        unpermute_rows(np.zeros((6, 2)), 4)


# One small file per architecture: metadata as llama.cpp writes it, the sizes consistent with the
# config class's head_dim default (transformers maps key_length for only some architectures)
_SIZES = {
    "block_count": 2,
    "embedding_length": 64,
    "feed_forward_length": 32,
    "attention.head_count": 4,
    "attention.head_count_kv": 2,
    "vocab_size": 32,
}
ARCH_CASES: dict[str, dict[str, Any]] = {
    "llama": {
        **_SIZES,
        "context_length": 4096,
        "rope.freq_base": 500000.0,
        "rope.dimension_count": 16,
    },
    "qwen2": {**_SIZES, "context_length": 32768, "rope.freq_base": 1000000.0},
    "qwen2moe": {**_SIZES, "context_length": 8192, "rope.freq_base": 1000000.0},
    "qwen3": {
        **_SIZES,
        "embedding_length": 512,
        "context_length": 40960,
        "rope.freq_base": 1000000.0,
        "attention.key_length": 128,
    },
    "qwen3moe": {
        **_SIZES,
        "context_length": 40960,
        "rope.freq_base": 1000000.0,
        "attention.key_length": 32,
    },
    "phi3": {**_SIZES, "context_length": 4096, "rope.freq_base": 10000.0},
    "starcoder2": {**_SIZES, "context_length": 16384, "rope.freq_base": 100000.0},
    "gemma2": {
        **_SIZES,
        "context_length": 8192,
        "rope.freq_base": 10000.0,
        "attention.key_length": 256,
        "attention.sliding_window": 4096,
    },
    "gemma3": {
        **_SIZES,
        "block_count": 7,
        "context_length": 131072,
        "rope.freq_base": 1000000.0,
        "attention.key_length": 256,
        "attention.sliding_window": 1024,
    },
}


def test_every_mapped_architecture_has_a_case() -> None:
    assert set(ARCH_CASES) == set(ARCHITECTURES)


# rope.freq_base that transformers 5.23.0 does not read for an architecture (its
# GGUF_CONFIG_MAPPING has no entry; posecards reads the model's own): the class default it keeps
TRANSFORMERS_DROPS_THETA: dict[str, float] = {"starcoder2": 10000.0}


@pytest.mark.parametrize("arch", sorted(ARCH_CASES))
def test_written_gguf_reads_as_transformers_config(tmp_path: Path, arch: str) -> None:
    path = write_gguf(tmp_path / f"{arch}.gguf", arch, ARCH_CASES[arch])
    ckpt = open_checkpoint(path)
    theirs = _hf_config(path)
    assert ckpt.config["model_type"] == theirs["model_type"]
    if arch in TRANSFORMERS_DROPS_THETA:  # still dropped by transformers
        theta = theirs["rope_parameters"]["rope_theta"]
        assert theta == TRANSFORMERS_DROPS_THETA[arch] != ckpt.config["rope_theta"]
        theirs["rope_parameters"]["rope_theta"] = ckpt.config["rope_theta"]
    _same_reading(dict(ckpt.config), theirs)


def test_a_llama_file_named_mistral_is_a_mistral(tmp_path: Path) -> None:
    meta = ARCH_CASES["llama"]
    for name, model_type in (("mistral", "mistral"), ("Mistral 7B", "llama")):
        path = write_gguf(tmp_path / f"{name}.gguf", "llama", meta, name=name)
        assert open_checkpoint(path).config["model_type"] == model_type
        assert _hf_config(path)["model_type"] == model_type


def test_rope_scaling_keys_become_rope_parameters(tmp_path: Path) -> None:
    """llama.cpp's rope.scaling.* keys are the model's own rope_scaling (transformers 5.23.0 drops
    them for these architectures: the test says so, so that a change there is seen)."""
    meta = {
        **ARCH_CASES["qwen2"],
        "rope.scaling.type": "yarn",
        "rope.scaling.factor": 4.0,
        "rope.scaling.original_context_length": 32768,
        "context_length": 131072,
    }
    path = write_gguf(tmp_path / "yarn.gguf", "qwen2", meta)
    ckpt = open_checkpoint(path)
    assert ckpt.config["rope_scaling"] == {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 32768,
    }
    assert _hf_config(path)["rope_parameters"].get("rope_type") == "default"
    theirs = _hf_config(path)
    theirs["rope_parameters"] = {**theirs["rope_parameters"], **ckpt.config["rope_scaling"]}
    _same_reading(dict(ckpt.config), theirs)


@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_written_llama_tensors_unpermute_to_the_hf_weights(tmp_path: Path, n_kv: int) -> None:
    torch.manual_seed(n_kv)
    cfg = T.LlamaConfig(
        vocab_size=16,
        hidden_size=64,
        intermediate_size=8,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=n_kv,
    )
    model = T.LlamaForCausalLM(cfg)
    meta = {**ARCH_CASES["llama"], "attention.head_count_kv": n_kv}
    tensors = hf_state_to_gguf(model.state_dict(), 4, n_kv, permute=True)
    path = write_gguf(tmp_path / "l.gguf", "llama", meta, tensors)
    ckpt = open_checkpoint(path)
    state = model.state_dict()
    for i in range(2):
        q = unpermute_rows(read_tensor(ckpt, f"blk.{i}.attn_q.weight"), 4)
        k = unpermute_rows(read_tensor(ckpt, f"blk.{i}.attn_k.weight"), n_kv)
        np.testing.assert_array_equal(q, state[f"model.layers.{i}.self_attn.q_proj.weight"])
        np.testing.assert_array_equal(k, state[f"model.layers.{i}.self_attn.k_proj.weight"])


def test_a_folder_with_one_gguf_is_read(tmp_path: Path) -> None:
    write_gguf(tmp_path / "one.gguf", "qwen2", ARCH_CASES["qwen2"])
    assert open_checkpoint(tmp_path).format == "gguf"
    write_gguf(tmp_path / "two.gguf", "qwen2", ARCH_CASES["qwen2"])
    with pytest.raises(CheckpointError, match="2 GGUF files"):
        open_checkpoint(tmp_path)


def test_unmappable_architecture_is_one_line_exit_2(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "mamba.gguf", "mamba", {"block_count": 2, "context_length": 64})
    with pytest.raises(GgufError, match="'mamba' is not one posecards maps"):
        open_checkpoint(path)
    r = run("inspect", str(path), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "mamba.gguf" in lines[0] and "'mamba'" in lines[0]
    assert not (tmp_path / "out").exists()


def test_per_layer_head_counts_and_rope_freqs_are_refused(tmp_path: Path) -> None:
    meta = {**ARCH_CASES["llama"], "attention.head_count_kv": [2, 4]}
    path = write_gguf(tmp_path / "varied.gguf", "llama", meta)
    with pytest.raises(GgufError, match="head_count_kv is a list"):
        open_checkpoint(path)
    freqs = {"rope_freqs.weight": np.ones(8)}
    path = write_gguf(tmp_path / "l31.gguf", "llama", ARCH_CASES["llama"], freqs)
    with pytest.raises(GgufError, match="rope_freqs.weight"):
        open_checkpoint(path)


@pytest.mark.e2e
def test_inspect_smollm2_gguf_builds_its_card(smollm2: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run_here("inspect", str(smollm2), "--out", str(out), "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (out / "smollm2-135m-instruct-q4-1.json").is_file(), os.listdir(out)


def _llama_gguf(path: Path, qtype: Any = None) -> Path:
    """A tiny llama GGUF with q/k/norm tensors of one layer (float32, or q as ``qtype`` bytes)."""
    rng = np.random.default_rng(0)
    meta = {**ARCH_CASES["llama"], "block_count": 1, "embedding_length": 256}
    tensors = {
        "blk.0.attn_q.weight": rng.standard_normal((64, 256)),
        "blk.0.attn_k.weight": rng.standard_normal((32, 256)),
        "blk.0.attn_norm.weight": np.ones(256),
    }
    raw = None
    if qtype is not None:  # K-quants come in blocks of 256 values
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        data = np.zeros((64, 256 // block * size), dtype=np.uint8)  # (rows, bytes per row)
        raw = {"blk.0.attn_q.weight": (data, data.shape, qtype)}
        del tensors["blk.0.attn_q.weight"]
    return write_gguf(path, "llama", meta, tensors, raw=raw)


def _cut(src: Path, dst: Path, keep: int) -> Path:
    dst.write_bytes(src.read_bytes()[:keep])
    return dst


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("header-cut", "truncated"),
        ("data-cut", "lies outside the file"),
        ("garbage", "no GGUF magic"),
        ("version", "version 7"),
        ("q8_k", "Q8_K, which the gguf package cannot dequantize"),
    ],
)
def test_bad_gguf_is_one_line_exit_2_nothing_written(
    tmp_path: Path, case: str, message: str
) -> None:
    good = _llama_gguf(tmp_path / "good.gguf")
    size = good.stat().st_size
    bad = tmp_path / f"{case}.gguf"
    if case == "header-cut":
        _cut(good, bad, 200)
    elif case == "data-cut":
        _cut(good, bad, size - 1000)
    elif case == "garbage":
        bad.write_bytes(b"not a gguf file at all" * 10)
    elif case == "version":
        data = bytearray(good.read_bytes())
        data[4:8] = (7).to_bytes(4, "little")
        bad.write_bytes(bytes(data))
    else:
        _llama_gguf(bad, gguf.GGMLQuantizationType.Q8_K)
    out = tmp_path / "out"
    # Q8_K is refused when the tensor is read, after the model was read through transformers
    # (about 5 CPU s of imports in a fresh process): in this process, as tests/test_inspect_cli.py
    # runs its bad inputs read by transformers; the other cases through a fresh `python -m`
    how = run_here if case == "q8_k" else run
    r = how("inspect", str(bad), "--weights", "--out", str(out), "--quiet", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and bad.name in lines[0] and message in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()
