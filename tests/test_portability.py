"""Another CPU, same cards: a site built with this machine's SIMD kernels switched off (numpy's
dispatch targets, torch's ATen kernels, OpenBLAS's core type) shows the same text and numbers as
a native build, has the same recipes, and is judged fresh by a native `--check` with an empty
cache. See docs/portability.md for running the whole suite as another CPU."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

# cards 1-3: UMAP (card 1), float32 and rounding-level numbers (card 2), projections (card 3);
# one language (the numbers do not depend on it)
OPTS = ["--cards", "1,2,3", "--lang", "en", "--format", "html", "--jobs", "2", "--quiet"]


def other_cpu_env() -> dict[str, str]:
    """Environment that makes this machine compute like a CPU without its SIMD extensions."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    found = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    env = {"ATEN_CPU_CAPABILITY": "default"}
    if found:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(found)
    if platform.machine() in ("x86_64", "AMD64"):
        env["OPENBLAS_CORETYPE"] = "Haswell"
    return env


def posecards(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "posecards", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **env},
        timeout=1200,
    )


class _Text(HTMLParser):
    """The text a reader sees (and a screen reader reads) on a page, inline SVGs left out."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.svg = 0
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg":
            self.svg += 1
        if tag in ("style", "script"):
            self.skip += 1
        for name, value in attrs:
            if name in ("alt", "aria-label", "title") and value:
                self.parts.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self.svg -= 1
        if tag in ("style", "script"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.svg and not self.skip and data.strip():
            self.parts.append(data.strip())


def visible_text(page: Path) -> list[str]:
    p = _Text()
    p.feed(page.read_text(encoding="utf-8"))
    return p.parts


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same small site built natively and as another CPU, each with its own empty cache
    (nothing computed on one may be reused by the other); the caches are kept beside them."""
    root = tmp_path_factory.mktemp("portability")
    for name, env in (("native", {}), ("other", other_cpu_env())):
        cache = root / f"{name}-cache"
        r = posecards(
            "build",
            "--out",
            str(root / name),
            *OPTS,
            env={**env, "POSECARDS_CACHE_DIR": str(cache)},
        )
        assert r.returncode == 0, r.stderr
    return root / "native", root / "other"


def test_the_umap_picture_is_the_same_on_both_cpus(sites: tuple[Path, Path]) -> None:
    # card 1's UMAP layout, as cached by each build: identical arrays, not just similar ones
    import numpy as np

    native, other = (
        [np.load(p) for p in sorted((s.parent / f"{s.name}-cache" / "umap").glob("*.npy"))]
        for s in sites
    )
    assert len(native) == len(other) == 1
    np.testing.assert_array_equal(native[0], other[0])


def test_emulation_really_changes_the_cpu() -> None:
    code = "import numpy, json; print(json.dumps(numpy._core._multiarray_umath.__cpu_features__))"
    r = posecards_python(code, other_cpu_env())
    native = posecards_python(code, {})
    disabled = other_cpu_env().get("NPY_DISABLE_CPU_FEATURES", "").split()
    assert all(not json.loads(r)[f] for f in disabled)
    assert all(json.loads(native)[f] for f in disabled)


def posecards_python(code: str, env: dict[str, str]) -> str:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    ).stdout


def test_a_site_built_on_another_cpu_checks_fresh_here(sites: tuple[Path, Path]) -> None:
    _, other = sites
    empty = tempfile.mkdtemp(prefix="posecards-empty-cache-")
    r = posecards("build", "--out", str(other), "--check", env={"POSECARDS_CACHE_DIR": empty})
    assert r.returncode == 0, r.stdout + r.stderr
    assert not any(Path(empty).iterdir()), "--check computed something"


def test_same_recipes_on_both_cpus(sites: tuple[Path, Path]) -> None:
    native, other = (json.loads((s / "manifest.json").read_text()) for s in sites)
    assert native["units"].keys() == other["units"].keys()
    for name, unit in native["units"].items():
        assert unit["recipe"] == other["units"][name]["recipe"], name
        assert unit["files"] == other["units"][name]["files"], name
    assert native["inputs"] == other["inputs"]


def test_the_pages_say_the_same_on_both_cpus(sites: tuple[Path, Path]) -> None:
    native, other = sites
    pages = sorted(p.relative_to(native) for p in native.rglob("*.html"))
    from posecards.render.text import load_card_text

    figure_pages = sum(len(load_card_text(c).figures) for c in (1, 2, 3))
    # cards 1-3 and their figure pages, the index and the explorer
    assert len(pages) == 3 + figure_pages + 2
    for rel in pages:
        a, b = visible_text(native / rel), visible_text(other / rel)
        assert a == b, (rel, [(x, y) for x, y in zip(a, b, strict=False) if x != y][:3])
    # the float32 demonstration and the rounding-level numbers are among them
    card2 = " ".join(visible_text(next((native / "en").glob("card-2-*.html"))))
    assert re.search(r"max \d\.\d×10⁻[⁰-⁹]+ rad \(p = [\d,]+, i = \d+\)", card2), card2
    assert "< 10⁻" in card2
