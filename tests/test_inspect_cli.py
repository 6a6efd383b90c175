"""`posecards inspect` from the command line: every kind of model builds a card, the bytes are
deterministic, bad input is one line with exit code 2, and a large checkpoint is not loaded.

The inspections run in this process (conftest.run_here: torch and transformers imported once,
not once a run). A fresh `python -m posecards` (conftest.run) makes the --jobs 2 inspection in
every format, which a run in this process must equal byte for byte, reads 11 of the 14 bad
inputs, and has its memory measured on the 4 GiB checkpoint."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as T
from conftest import ALL_FORMATS, run, run_here, tree
from tiny_models import LLAMA3_ROPE, gpt2_model, save_bin

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "llama-3.1-8b"


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("zoo")
    gpt2_model(0).save_pretrained(root / "gpt2")
    save_bin(gpt2_model(1), root / "gpt2-bin")
    torch.manual_seed(2)
    small = dict(vocab_size=50, hidden_size=32, num_hidden_layers=1, num_attention_heads=2)
    T.RobertaModel(
        T.RobertaConfig(**small, intermediate_size=37, max_position_embeddings=66)
    ).save_pretrained(root / "roberta")
    T.OPTModel(
        T.OPTConfig(**small, ffn_dim=37, max_position_embeddings=64, word_embed_proj_dim=32)
    ).save_pretrained(root / "opt")
    llama = dict(
        vocab_size=16,
        hidden_size=128,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
    )
    # weights saved too (as save_pretrained writes them): inspect reads only config.json
    T.LlamaForCausalLM(
        T.LlamaConfig(
            **llama,
            max_position_embeddings=32768,
            rope_parameters={
                "rope_type": "yarn",
                "rope_theta": 1000000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
        )
    ).save_pretrained(root / "llama-yarn")
    llama3 = T.LlamaForCausalLM(
        T.LlamaConfig(
            **llama,
            max_position_embeddings=131072,
            rope_parameters=dict(LLAMA3_ROPE),
        )
    )
    save_bin(llama3, root / "llama3-bin")
    T.BloomModel(
        T.BloomConfig(vocab_size=50, hidden_size=48, n_layer=1, n_head=12)
    ).save_pretrained(root / "bloom")
    T.MptForCausalLM(
        T.MptConfig(vocab_size=50, d_model=32, n_heads=4, max_seq_len=256)
    ).save_pretrained(root / "mpt", max_shard_size="20KB")
    return {p.name: p for p in root.iterdir()}


def _ok(*args: str) -> subprocess.CompletedProcess[str]:
    r = run_here("inspect", *args)
    assert r.returncode == 0, r.stderr
    return r


@pytest.mark.parametrize(
    ("name", "card", "page"),
    [  # the page (and its web fonts) once per kind of card: the other layouts draw the PNG
        ("gpt2-bin", "learned", True),
        ("roberta", "learned", False),
        ("opt", "learned", False),
        ("llama-yarn", "rope", True),
        ("llama3-bin", "rope", False),
        ("bloom", "alibi", True),
        ("mpt", "alibi", False),
    ],
)
def test_every_kind_builds_a_card(
    zoo: dict[str, Path], tmp_path: Path, name: str, card: str, page: bool
) -> None:
    out = tmp_path / "out"
    formats = "png,html" if page else "png"
    r = _ok(str(zoo[name]), "--out", str(out), "--format", formats, "--lang", "en", "--quiet")
    assert r.stderr == ""  # --quiet: not a line (fontTools once warned about a font's dates)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"]["found"]["kind"] == card
    stem = name.replace("_", "-")
    assert (out / "en" / f"{stem}.png").stat().st_size > 50_000
    if page:
        html = (out / "en" / f"{stem}.html").read_text()
        assert "config keys" in html  # the footer says what was read
    assert set(manifest["files"]) == {
        str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != "manifest.json"
    }
    assert any(f.endswith(".html") for f in manifest["files"]) == page


LAYERED = ROOT / "docs" / "examples" / "gemma-3-27b-it"


def test_a_layered_model_builds_its_card_and_json(tmp_path: Path) -> None:
    """A lone config.json of a model whose layers differ: the layer-by-layer card in both
    languages, and --format json beside it (listed in the manifest)."""
    out = tmp_path / "out"
    _ok(str(LAYERED / "config.json"), "--out", str(out), "--format", "png,json", "--quiet")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"]["found"]["kind"] == "layers"
    for lang in ("en", "zh"):
        assert (out / lang / "gemma-3-27b-it.png").stat().st_size > 50_000
    doc = json.loads((out / "gemma-3-27b-it.json").read_text())
    assert doc["model_type"] == "gemma3_text" and doc["num_layers"] == 62
    assert "gemma-3-27b-it.json" in manifest["files"]
    assert manifest["units"]["reading"]["files"] == ["gemma-3-27b-it.json"]
    # json alone: nothing drawn, the same document
    only = tmp_path / "only"
    _ok(str(LAYERED), "--out", str(only), "--format", "json", "--quiet")
    assert sorted(p.name for p in only.iterdir()) == ["gemma-3-27b-it.json", "manifest.json"]
    assert (only / "gemma-3-27b-it.json").read_bytes() == (out / "gemma-3-27b-it.json").read_bytes()


def test_run_here_hears_the_drawing_processes_and_leaves_this_one_as_it_was(
    zoo: dict[str, Path], tmp_path: Path
) -> None:
    """What the tests here rely on in conftest.run_here: the stderr of the processes a command
    starts is captured (PYTHONVERBOSE=1 makes every new Python list its imports there: the
    drawing processes' fork server imports posecards.engine.forked, which this process never
    imports), so an empty stderr means none of them said a word; and after a run that failed
    and runs that read through transformers (which sets its own logging level) and drew, this
    process has its folder, environment, arguments, streams, warning filters and loggers back."""
    import logging
    import warnings

    def state() -> tuple[object, ...]:
        return (
            os.getcwd(),
            dict(os.environ),
            sys.argv[:],
            sys.warnoptions[:],
            sys.stdout,
            sys.stderr,
            warnings.filters[:],
            transformers_log.level,
        )

    transformers_log = logging.getLogger("transformers")
    level = transformers_log.level
    transformers_log.setLevel(logging.INFO)  # not ERROR, which a reading by transformers sets
    try:
        before = state()
        bad = run_here("inspect", "./nowhere", cwd=tmp_path, env={"POSECARDS_RUN_HERE_PROBE": "1"})
        assert (bad.returncode, bad.stdout, bad.stderr.count("\n")) == (2, "", 1), bad.stderr
        assert bad.stderr.startswith("posecards: error: ") and "does not exist" in bad.stderr
        config = ROOT / "docs" / "examples" / "llama-3.1-8b" / "config.json"
        _ok(str(config), "--out", str(tmp_path / "json"), "--format", "json", "--quiet")
        assert "posecards.engine.forked" not in sys.modules
        drew = run_here(
            *("inspect", str(zoo["roberta"]), "--out", "out", "--format", "png", "--lang", "en"),
            "--quiet",
            cwd=tmp_path,
            env={"PYTHONVERBOSE": "1"},
        )
        assert drew.returncode == 0, drew.stderr
        assert (tmp_path / "out" / "en" / "roberta.png").is_file()  # --out from the given folder
        assert "import 'posecards.engine.forked'" in drew.stderr
        assert state() == before
    finally:
        transformers_log.setLevel(level)


def test_json_for_learned_and_alibi_models(zoo: dict[str, Path], tmp_path: Path) -> None:
    for name, position in (("gpt2", "learned"), ("bloom", "alibi")):
        out = tmp_path / name
        _ok(str(zoo[name]), "--out", str(out), "--format", "json", "--quiet")
        doc = json.loads((out / f"{name}.json").read_text())
        assert doc["rope"] == {} and doc["query_scale"] is None
        assert {la["position"] for la in doc["layers"]} == {position}
        assert doc["num_layers"] == len(doc["layers"]) >= 1


@pytest.fixture(scope="module")
def gpt2_all_formats(zoo: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gpt2 inspected in every format with --jobs 2 by a fresh `python -m posecards`: compared
    with --jobs 1 in this process below, and the earlier outputs the bad-input tests copy into
    their DIR (one inspection for both)."""
    out = tmp_path_factory.mktemp("gpt2-all") / "out"
    args = ("--out", str(out), "--format", ALL_FORMATS, "--jobs", "2", "--quiet")
    r = run("inspect", str(zoo["gpt2"]), *args)
    assert r.returncode == 0, r.stderr
    return out


def test_all_formats_deterministic_and_default_out(
    zoo: dict[str, Path], gpt2_all_formats: Path, tmp_path: Path
) -> None:
    """--jobs 2 and --jobs 1 write the same bytes, and so do a fresh process (`run`) and this one
    (`run_here`, which the other tests use); without --out, the files go to out/inspect/<model>
    under the working folder."""
    a = gpt2_all_formats
    r = run_here(
        "inspect", str(zoo["gpt2"]), "--format", ALL_FORMATS, "--jobs", "1", "--quiet", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    b = tmp_path / "out" / "inspect" / "gpt2"
    ta, tb = tree(a), tree(b)
    assert ta == tb
    for lang in ("en", "zh"):
        for ext in ("png", "svg", "pdf", "html"):
            assert f"{lang}/gpt2.{ext}" in ta
        for fid in ("i-similarity", "i-norms", "i-offset", "i-sinusoidal"):
            assert f"{lang}/figures/{fid}.png" in ta
    assert "model.safetensors" in ta["en/gpt2.html"].decode()


# bad inputs that are read through transformers (about 4 CPU s each for importing it in a fresh
# process): in this process; the other cases through a fresh `python -m posecards`
READ_BY_TRANSFORMERS = {"{empty}", "{bad_rope}", "{bad_mrope}"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["openai-community/gpt2"], "is not a local path; posecards inspect reads only local"),
        (["gpt2-nowhere"], "is not a local path"),
        (["./missing-folder"], "does not exist"),
        (["{gpt2}", "--tensor", "nope"], "--tensor 'nope' is not in gpt2"),
        (["{gpt2}", "--tensor", "ln_f.bias"], "a position table is 2-D"),
        (["{gpt2}", "--offset", "-1"], "--offset must be 0 or more, got -1"),
        (["{gpt2}", "--offset", "63"], "fewer than 2 positions"),
        (["{bloom}", "--offset", "2"], "--offset applies to a learned position table"),
        (["{gpt2}", "--format", "gif"], "--format: unknown value 'gif'"),
        (["{gpt2}", "--theme", "blue"], "--theme: unknown value 'blue'"),
        (["{gpt2}", "--jobs", "0"], "--jobs must be from 1 to 64, got 0"),
        (["{empty}"], "no position encoding found"),
        (["{bad_rope}"], "unknown rope_type 'ntk2'"),
        (["{bad_mrope}"], "mrope_section [16, 16, 16] sums to 48, not head_dim/2 = 64"),
    ],
)
def test_bad_input_is_one_line_and_leaves_dir_alone(
    zoo: dict[str, Path],
    gpt2_all_formats: Path,
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    out = tmp_path / "out"
    shutil.copytree(gpt2_all_formats, out)  # an earlier inspection's outputs in DIR
    before = tree(out)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text('{"model_type": "mystery"}')
    bad_rope = tmp_path / "bad_rope.json"
    bad_rope.write_text(
        '{"model_type": "llama", "rope_scaling": {"rope_type": "ntk2", "factor": 2}}'
    )
    bad_mrope = tmp_path / "bad_mrope.json"
    bad_mrope.write_text(
        json.dumps(
            {"model_type": "qwen2_vl", "rope_scaling": {"type": "mrope", "mrope_section": [16] * 3}}
        )
    )
    paths = {
        "{gpt2}": str(zoo["gpt2"]),
        "{bloom}": str(zoo["bloom"]),
        "{empty}": str(empty),
        "{bad_rope}": str(bad_rope),
        "{bad_mrope}": str(bad_mrope),
    }
    how = run_here if READ_BY_TRANSFORMERS.intersection(args) else run
    r = how("inspect", *[paths.get(a, a) for a in args], "--out", str(out), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("posecards: error: "), r.stderr
    assert message in lines[0]
    assert "Traceback" not in r.stderr
    assert tree(out) == before


def _sparse_checkpoint(folder: Path, big_bytes: int) -> tuple[Path, np.ndarray]:
    """A safetensors file with a small wpe table and a huge tensor of holes (no disk used)."""
    folder.mkdir()
    table = np.random.default_rng(0).normal(size=(1024, 64)).astype("<f4")
    n_big = big_bytes // 4
    header = {
        "wpe.weight": {"dtype": "F32", "shape": [1024, 64], "data_offsets": [0, table.nbytes]},
        "h.0.big.weight": {
            "dtype": "F32",
            "shape": [n_big // 1024, 1024],
            "data_offsets": [table.nbytes, table.nbytes + n_big * 4],
        },
    }
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path = folder / "model.safetensors"
    with path.open("wb") as fh:
        fh.write(struct.pack("<Q", len(raw)) + raw + table.tobytes())
        fh.truncate(8 + len(raw) + table.nbytes + n_big * 4)
    (folder / "config.json").write_text('{"model_type": "gpt2", "n_positions": 1024}')
    return path, table


def test_a_4_gib_checkpoint_is_not_loaded(tmp_path: Path) -> None:
    big = 4 << 30
    path, table = _sparse_checkpoint(tmp_path / "huge", big)
    assert path.stat().st_size > big
    out = tmp_path / "out"
    # peak resident memory of the inspect process and of its drawing processes
    probe = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:])\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    cmd = [sys.executable, "-c", probe, sys.executable, "-m", "posecards", "inspect"]
    r = subprocess.run(
        [*cmd, str(path.parent), "--out", str(out), "--format", "png", "--lang", "en", "--quiet"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=600,
    )
    code, peak_kib = (int(x) for x in r.stdout.split())
    assert code == 0, r.stderr
    # reading the 4 GiB tensor would need 4 GiB at least; the table is 256 KiB
    assert peak_kib < 1024 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"]["found"]["tensor"] == "wpe.weight"


@pytest.mark.parametrize(
    "example", ["llama-3.1-8b", "llama-4-scout-17b-16e-instruct"], ids=lambda e: e
)
def test_readme_example_card_is_a_fresh_render(tmp_path: Path, example: str) -> None:
    """The example cards in the README show what this build draws: same size, and pixels within
    a small tolerance (as matplotlib's own image tests compare), not bit for bit: the last bits
    of a rendering vary between CPUs (an anti-aliased edge moves by 1/255), the picture does not.
    A changed number, word or curve moves far more than the tolerance (see the second half)."""
    from matplotlib.testing.compare import calculate_rms
    from PIL import Image

    out = tmp_path / "out"
    folder = ROOT / "docs" / "examples" / example
    _ok(str(folder), "--out", str(out), "--format", "png", "--lang", "en", "--quiet")
    stem = example.replace(".", "-")
    committed = ROOT / "docs" / "img" / f"inspect-{stem}.png"
    fresh = np.asarray(Image.open(out / "en" / f"{stem}.png").convert("RGB"), dtype=float)
    old = np.asarray(Image.open(committed).convert("RGB"), dtype=float)
    assert fresh.shape == old.shape, f"{committed.name} is stale: run 'make example'"
    rms = calculate_rms(fresh, old)
    assert rms < RMS_TOLERANCE, f"{committed.name} differs (RMS {rms:.2f}): run 'make example'"
    # the tolerance is far below what a one-word change of the card costs
    shifted = fresh.copy()
    shifted[40:80, 60:400] = 255 - shifted[40:80, 60:400]  # a title's worth of changed pixels
    assert calculate_rms(shifted, old) > 10 * RMS_TOLERANCE


# RMS over all pixels and channels, on a 0-255 scale (matplotlib's image comparison)
RMS_TOLERANCE = 0.5


def test_one_language_alone_gets_its_pages_and_index(tmp_path: Path) -> None:
    """--lang zh --format html: the Chinese page and an index with the Chinese footer (the
    index used to ask for the English footer, which a Chinese-only inspection has not: an
    internal error)."""
    out = tmp_path / "out"
    config = ROOT / "docs" / "examples" / "llama-3.1-8b" / "config.json"
    _ok(str(config), "--out", str(out), "--lang", "zh", "--format", "html", "--quiet")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html")) == [
        "index.html",
        "zh/llama-3-1-8b.html",
    ]
    assert "<footer>模型 llama-3.1-8b · 读取 config.json" in (out / "index.html").read_text(
        encoding="utf-8"
    )


def test_a_learned_table_without_its_weights(tmp_path: Path) -> None:
    """config.json alone of a model that adds a learned table: the table's rows, width and
    offset come from transformers' own code (RoBERTa: position p reads row p + pad_token_id + 1;
    BART: p + 2 in the encoder and the decoder); no card is drawn (one line, exit 2), since the
    table's values are the checkpoint's."""
    roberta = tmp_path / "roberta"
    roberta.mkdir()
    T.RobertaConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=70,
        pad_token_id=5,
    ).to_json_file(str(roberta / "config.json"))
    bart = tmp_path / "bart"
    bart.mkdir()
    T.BartConfig(max_position_embeddings=40, d_model=16).to_json_file(str(bart / "config.json"))
    out = tmp_path / "out"
    _ok(str(roberta), "--out", str(out), "--format", "json", "--quiet")
    doc = json.loads((out / "roberta.json").read_text())
    table = doc["position_table"]
    assert (table["tensor"], table["shape"], table["offset"]) == (
        "embeddings.position_embeddings.weight",
        [70, 32],
        5 + 1,
    )
    assert table["values_read"] is False and doc["read_by"] == "transformers"
    assert doc["layers"] == [] and doc["num_layers"] is None and doc["softmax_scale"] is None
    _ok(str(bart), "--out", str(tmp_path / "bart-out"), "--format", "json", "--quiet")
    doc = json.loads((tmp_path / "bart-out" / "bart.json").read_text())
    assert [
        (t["tensor"], t["shape"], t["offset"], t["added_by"]) for t in doc["position_tables"]
    ] == [
        ("encoder.embed_positions.weight", [42, 16], 2, "encoder"),
        ("decoder.embed_positions.weight", [42, 16], 2, "decoder"),
    ]
    drawn = run_here("inspect", str(roberta), "--out", str(tmp_path / "card"), "--quiet")
    assert drawn.returncode == 2
    line = drawn.stderr.strip()
    assert "\n" not in line and "row p + 6" in line and "--format json" in line
    assert not (tmp_path / "card").exists()


def test_a_t5_relative_bias_from_its_config(tmp_path: Path) -> None:
    """config.json alone of a T5: the buckets of each stack's bias, as transformers computes them
    (the encoder's bidirectional, the decoder's not); no card (one line, exit 2)."""
    from posecards.encodings.buckets import t5_relative_bucket

    t5 = tmp_path / "t5"
    t5.mkdir()
    cfg = T.T5Config(
        d_model=16,
        d_kv=4,
        d_ff=8,
        num_layers=2,
        num_heads=3,
        relative_attention_num_buckets=16,
        relative_attention_max_distance=40,
    )
    cfg.to_json_file(str(t5 / "config.json"))
    _ok(str(t5), "--out", str(tmp_path / "out"), "--format", "json", "--quiet")
    doc = json.loads((tmp_path / "out" / "t5.json").read_text())
    assert [(b["module"], b["bidirectional"]) for b in doc["relative_bias"]] == [
        ("encoder.block.0.layer.0.SelfAttention", True),
        ("decoder.block.0.layer.0.SelfAttention", False),
    ]
    assert {(b["num_buckets"], b["max_distance"], b["heads"]) for b in doc["relative_bias"]} == {
        (16, 40, 3)
    }
    # the decoder's buckets from the document are transformers' own
    model = T.T5Model(cfg)
    rel = torch.arange(-50, 50)
    want = (
        model.decoder.block[0]
        .layer[0]
        .SelfAttention._relative_position_bucket(
            rel, bidirectional=False, num_buckets=16, max_distance=40
        )
    )
    assert np.array_equal(t5_relative_bucket(rel.numpy(), False, 16, 40), want.numpy())
    drawn = run_here("inspect", str(t5), "--out", str(tmp_path / "card"), "--quiet")
    assert drawn.returncode == 2
    line = drawn.stderr.strip()
    assert "\n" not in line and "16 buckets" in line and "--format json" in line
