"""The build cache: an unchanged input never rebuilds, a changed one always does, a corrupt entry
is rebuilt, and outputs are identical with and without the cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run, tree

from posecards.config import Look, PEParams
from posecards.render import buildcache
from posecards.render.build import CardJob

SMALL = ["--cards", "2", "--lang", "en", "--format", "svg,html"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("POSECARDS_CACHE_DIR", str(folder))
    return folder


def renders(stderr: str) -> int:
    return len(re.findall(r"rendered$", stderr, flags=re.M))


def test_unchanged_never_rebuilds_changed_always_does(cache: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run("build", "--out", str(out), *SMALL)
    assert first.returncode == 0 and renders(first.stderr) == 1, first.stderr
    again = run("build", "--out", str(out), *SMALL)
    assert again.returncode == 0 and renders(again.stderr) == 0
    assert "1 of 1 card renders up to date" in again.stderr
    assert f"{out} is up to date" in again.stderr
    # a changed parameter is a different key: rendered again, and the text follows it
    changed = run("build", "--out", str(out), *SMALL, "--base", "20000")
    assert changed.returncode == 0 and renders(changed.stderr) == 1
    assert "base = 20,000" in next((out / "en").glob("card-2-*.html")).read_text(encoding="utf-8")


def test_cache_and_no_cache_give_identical_files(cache: Path, tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert run("build", "--out", str(a), *SMALL, "--quiet").returncode == 0
    assert run("build", "--out", str(b), *SMALL, "--quiet").returncode == 0  # from the cache
    r = run("build", "--out", str(c), *SMALL, "--no-cache")
    assert r.returncode == 0 and renders(r.stderr) == 1
    assert tree(a) == tree(b) == tree(c)


def test_corrupt_entry_is_rebuilt_not_trusted(cache: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("build", "--out", str(out), *SMALL, "--quiet").returncode == 0
    good = tree(out)
    for f in (cache / "units").rglob("*.bin"):
        f.write_bytes(b"\x00" + f.read_bytes()[1:])
    r = run("build", "--out", str(tmp_path / "again"), *SMALL)
    assert r.returncode == 0 and renders(r.stderr) == 1, r.stderr
    assert tree(tmp_path / "again") == good


def test_keys_follow_exactly_their_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    job = CardJob(2, "en", ("png",), Look(), PEParams())

    def key(j: CardJob) -> str:
        return buildcache.unit_key("card", job=j, text=buildcache.card_text_digest(j.card))

    k = key(job)
    assert key(CardJob(2, "en", ("png",), Look(), PEParams())) == k
    assert key(CardJob(2, "zh", ("png",), Look(), PEParams())) != k
    assert key(CardJob(2, "en", ("png",), Look(theme="dark"), PEParams())) != k
    assert key(CardJob(2, "en", ("png",), Look(), PEParams(base=10001.0))) != k
    assert key(CardJob(2, "en", ("png", "svg"), Look(), PEParams())) != k
    k1 = key(CardJob(1, "en", ("png",), Look(), PEParams()))
    # editing card 2's text changes card 2's key and no other card's
    real = buildcache.card_text_digest
    monkeypatch.setattr(buildcache, "card_text_digest", lambda c: "edited" if c == 2 else real(c))
    assert key(job) != k
    assert key(CardJob(1, "en", ("png",), Look(), PEParams())) == k1
