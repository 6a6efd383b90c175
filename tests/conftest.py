"""Test-wide settings: a private posecards cache per test session, and hypothesis profiles."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# The UMAP cache of a test run lives in its own folder (shared by the build subprocesses).
os.environ.setdefault("POSECARDS_CACHE_DIR", tempfile.mkdtemp(prefix="posecards-test-cache-"))
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile("ci", deadline=None, print_blob=True)
settings.load_profile("ci")

ALL_FORMATS = "png,svg,pdf,html"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the posecards command line in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "posecards", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=1800,
    )


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One full default build (all cards, both languages, every format), shared by the tests."""
    out = tmp_path_factory.mktemp("build") / "out"
    r = run("build", "--out", str(out), "--format", ALL_FORMATS, "--jobs", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    return out
