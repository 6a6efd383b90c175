"""The build cache: an unchanged input never rebuilds, a changed one always does, a corrupt entry
is rebuilt, and outputs are identical with and without the cache.

One build from an empty cache, in a process of its own (`first`); the tests start from copies of
its folder and cache and run their builds in this process (conftest.run_here: what a build
writes, not the process). test_cache_and_no_cache_give_identical_files compares the files of
those builds with the process's, byte for byte."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from conftest import run, run_here, tree

from posecards.config import BuildConfig, Look, PEParams
from posecards.engine import executor
from posecards.render.build import plan_build

# the quickest card to draw (card 4), with its pages: one card unit, the pages and the explorer
SMALL = ["--cards", "4", "--lang", "en", "--format", "svg,html"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("POSECARDS_CACHE_DIR", str(folder))
    return folder


def renders(stderr: str) -> int:
    return len(re.findall(r"rendered$", stderr, flags=re.M))


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """SMALL built once into an empty cache of its own: (DIR, cache). Tests copy the cache."""
    root = tmp_path_factory.mktemp("first")
    out, cache = root / "out", root / "cache"
    r = run("build", "--out", str(out), *SMALL, env={"POSECARDS_CACHE_DIR": str(cache)})
    assert r.returncode == 0 and renders(r.stderr) == 1, r.stderr
    return out, cache


def test_unchanged_never_rebuilds_changed_always_does(
    first: tuple[Path, Path], cache: Path, tmp_path: Path
) -> None:
    # SMALL built into an empty cache renders its one unit (asserted by `first`); a copy
    out = tmp_path / "out"
    shutil.copytree(first[0], out)
    shutil.copytree(first[1], cache)
    again = run_here("build", "--out", str(out), *SMALL)
    assert again.returncode == 0 and renders(again.stderr) == 0
    # judged up to date from DIR's manifest before the cache is even looked at
    assert "in the cache" not in again.stderr
    assert f"{out} is up to date" in again.stderr
    # another folder: every card render comes from the cache
    other = run_here("build", "--out", str(tmp_path / "other"), *SMALL)
    assert other.returncode == 0, other.stderr
    assert "1 of 1 card renders up to date in the cache" in other.stderr
    assert renders(other.stderr) == 0
    assert tree(tmp_path / "other") == tree(out)
    # without the cache: still up to date, nothing rendered
    shutil.rmtree(cache)
    again = run_here("build", "--out", str(out), *SMALL)
    assert again.returncode == 0 and renders(again.stderr) == 0, again.stderr
    assert f"{out} is up to date" in again.stderr
    # a changed parameter is a different key: rendered again, and the text follows it
    changed = run_here("build", "--out", str(out), *SMALL, "--base", "20000")
    assert changed.returncode == 0 and renders(changed.stderr) == 1
    assert "base = 20,000" in next((out / "en").glob("card-4-*.html")).read_text(encoding="utf-8")


def test_cache_and_no_cache_give_identical_files(
    first: tuple[Path, Path], cache: Path, tmp_path: Path
) -> None:
    a = first[0]  # built by a process of its own; b and c in this one (conftest.run_here)
    shutil.copytree(first[1], cache)
    b, c = tmp_path / "b", tmp_path / "c"
    r = run_here("build", "--out", str(b), *SMALL)
    assert r.returncode == 0 and renders(r.stderr) == 0, r.stderr  # from the cache
    r = run_here("build", "--out", str(c), *SMALL, "--no-cache")
    assert r.returncode == 0 and renders(r.stderr) == 1
    assert tree(a) == tree(b) == tree(c)


def test_corrupt_entry_is_rebuilt_not_trusted(
    first: tuple[Path, Path], cache: Path, tmp_path: Path
) -> None:
    shutil.copytree(first[1], cache)
    entries = list((cache / "units").rglob("*.bin"))
    assert entries
    for f in entries:
        f.write_bytes(b"\x00" + f.read_bytes()[1:])
    r = run_here("build", "--out", str(tmp_path / "again"), *SMALL)
    assert r.returncode == 0 and renders(r.stderr) == 1, r.stderr
    assert tree(tmp_path / "again") == tree(first[0])


def test_keys_follow_exactly_their_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    def keys(**change: object) -> dict[str, str | None]:
        fields = {"cards": (1, 2), "langs": ("en",), "formats": ("png",), **change}
        return executor.unit_keys(plan_build(BuildConfig(**fields)))  # type: ignore[arg-type]

    k = keys()
    assert all(k.values()) and len(set(k.values())) == len(k)
    assert keys() == k
    assert keys(langs=("zh",))["card 2 (zh)"] != k["card 2 (en)"]
    assert keys(look=Look(theme="dark"))["card 2 (en)"] != k["card 2 (en)"]
    assert keys(params=PEParams(base=10001.0))["card 2 (en)"] != k["card 2 (en)"]
    assert keys(formats=("png", "svg"))["card 2 (en)"] != k["card 2 (en)"]
    # the pages depend on every card they show, and the index on the pages
    pages = keys(formats=("png", "html"))
    based = keys(formats=("png", "html"), params=PEParams(base=10001.0))
    assert based["pages (en)"] != pages["pages (en)"] and based["index"] != pages["index"]
    # editing card 2's text changes card 2's key and no other card's
    real = executor.text_digest
    monkeypatch.setattr(
        executor,
        "text_digest",
        lambda paths: "edited" if paths[0].name == "card2.toml" else real(paths),
    )
    edited = keys()
    assert edited["card 2 (en)"] != k["card 2 (en)"]
    assert edited["card 1 (en)"] == k["card 1 (en)"]


def test_a_no_op_trusts_a_file_only_while_its_stat_is_unchanged(
    first: tuple[Path, Path], cache: Path, tmp_path: Path
) -> None:
    # a built folder and its cache (copies of `first`); a no-op build hashes its files (their
    # stats are the copies') and records their stats, once they are older than a clock tick
    # (site._RACY_NS: a file changed within it of the record is not trusted by its stat)
    out = tmp_path / "out"
    shutil.copytree(first[0], out)
    shutil.copytree(first[1], cache)
    time.sleep(0.1)
    r = run_here("build", "--out", str(out), *SMALL)
    assert r.returncode == 0 and f"{out} is up to date" in r.stderr and renders(r.stderr) == 0
    good = tree(out)
    # the same size and modification time, other bytes: the change time and the hash tell
    svg = next((out / "en").glob("card-4-*.svg"))
    st = svg.stat()
    data = bytearray(svg.read_bytes())
    data[-10] ^= 1
    svg.write_bytes(bytes(data))
    os.utime(svg, ns=(st.st_atime_ns, st.st_mtime_ns))
    r = run_here("build", "--out", str(out), *SMALL)
    assert r.returncode == 0 and "wrote 1 of" in r.stderr, r.stderr
    assert tree(out) == good
    # a copied folder (every stat new) is hashed once, found up to date, and nothing written
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    r = run_here("build", "--out", str(copy), *SMALL)
    assert r.returncode == 0 and f"{copy} is up to date" in r.stderr and renders(r.stderr) == 0
