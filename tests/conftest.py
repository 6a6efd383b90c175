"""Test-wide settings: a private posecards cache per test session, hypothesis profiles, the
shared session fixtures (one full build, one headless Chromium)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# --- headless Chromium: Debian's, driven by playwright; one browser per test session ---------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]


def require_chromium() -> str:
    """Skip the calling test module where Chromium is missing; CI must have it."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            raise RuntimeError(
                "CI must run the browser test: install Debian's chromium (.ci/run does)"
            )
        pytest.skip("chromium is not installed here (CI installs it)", allow_module_level=True)
    return CHROMIUM


def fontless_env(tmp: Path, files: list[Path] | None = None) -> dict[str, str] | None:
    """On a machine with no system font at all, Chromium loads no web font either; give it
    fontconfig with matplotlib's STIX files only (no page glyph comes from them:
    test_browser.py checks every glyph is drawn by an embedded face), or with ``files``
    (LibreOffice: posecards' own font files). None where fonts exist."""
    listed = (
        subprocess.run(["fc-list"], capture_output=True, text=True)
        if shutil.which("fc-list")
        else None
    )
    if listed is not None and listed.stdout.strip():
        return None
    import matplotlib

    fonts = tmp / "stix-only"
    fonts.mkdir(parents=True, exist_ok=True)
    stix = sorted(Path(matplotlib.get_data_path(), "fonts", "ttf").glob("STIX*.ttf"))
    for f in files if files is not None else stix:
        if not (fonts / f.name).exists():
            (fonts / f.name).symlink_to(f)
    conf = tmp / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<fontconfig>'
        '<include ignore_missing="yes">/etc/fonts/conf.d</include>'
        f"<dir>{fonts}</dir><cachedir>{tmp / 'fc-cache'}</cachedir></fontconfig>\n",
        encoding="utf-8",
    )
    return {**os.environ, "FONTCONFIG_FILE": str(conf)}


def launch_chromium(playwright: Any, env: dict[str, str] | None = None) -> Any:
    """A new headless Chromium (the session's ``browser`` unless a test needs its own env)."""
    if env is None:
        env = fontless_env(Path(tempfile.mkdtemp(prefix="posecards-fc-")))
    return playwright.chromium.launch(
        executable_path=require_chromium(),
        args=CHROMIUM_ARGS,
        **({"env": env} if env is not None else {}),
    )


@pytest.fixture(scope="session")
def playwright_session() -> Iterator[Any]:
    """playwright's sync API, started once (it cannot be started twice in one thread)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_session: Any) -> Iterator[Any]:
    """One headless Chromium for the whole test session; tests open and close their pages."""
    b = launch_chromium(playwright_session)
    try:
        yield b
    finally:
        b.close()
