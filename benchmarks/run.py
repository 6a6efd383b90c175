"""posecards benchmarks: wall times and peak memory measured side by side in one run.

Run with `make bench`. Every figure is the median of a few fresh processes; ratios compare
numbers from this same run, so a noisy machine affects both sides alike.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def peak_rss(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, peak RSS MiB) measured with /usr/bin/time-free getrusage on a lone child."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, capture_output=True); "
        "print(time.perf_counter() - t, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    out = subprocess.run(
        [PY, "-c", code, *cmd],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    ).stdout.split()
    return float(out[0]), float(out[1])


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


def main() -> None:
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
    noop = statistics.median(peak_rss([*build, "--jobs", "2"], env)[0] for _ in range(2))
    rows.append(("no-op rebuild / cold full build", f"{noop / cold_wall:.3f}", "≤ 0.03"))
    rows.append(("no-op rebuild / `import typer`", f"{noop / typer_import:.1f}", "≤ 5"))
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

    shutil.rmtree(tmp, ignore_errors=True)
    print(f"posecards benchmarks ({os.cpu_count()} cores, {REPEAT} repeats; medians)")
    print(f"`python -c 'import typer'`: {typer_import:.3f} s")
    print("| figure | measured | goal |")
    print("|---|---|---|")
    for name, value, goal in rows:
        print(f"| {name} | {value} | {goal} |")


if __name__ == "__main__":
    main()
