"""A real browser opens the built folder: headless Chromium (Debian's, installed by .ci/run) loads
index.html and every card page from disk, every image and inline SVG has a non-zero size, the
console shows no error, and nothing is requested from the network."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "build" / "test-artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

if CHROMIUM is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the browser test: install Debian's chromium (.ci/run does)")
    pytest.skip("chromium is not installed here (CI installs it)", allow_module_level=True)


def _open_pages(pages: list[Path], root: Path, prefix: str = "") -> None:
    """Open each page in Chromium: images and SVGs have a size, no console error, no network."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
            ],
        )
        try:
            for path in pages:
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                errors: list[str] = []
                requests: list[str] = []
                page.on(
                    "console",
                    lambda m, errs=errors: errs.append(m.text) if m.type == "error" else None,
                )
                page.on("pageerror", lambda e, errs=errors: errs.append(str(e)))
                page.on("request", lambda r, reqs=requests: reqs.append(r.url))
                page.goto(path.as_uri())
                page.wait_for_load_state("load")
                sizes = page.eval_on_selector_all(
                    "img, svg",
                    """els => els.map(e => {
                        const r = e.getBoundingClientRect();
                        return [e.tagName, r.width, r.height,
                                e.tagName === 'IMG' ? (e.complete && e.naturalWidth) : 1];
                    })""",
                )
                assert sizes, f"{path.name}: no image"
                for tag, w, h, loaded in sizes:
                    assert w > 0 and h > 0 and loaded, f"{path.name}: {tag} {w}x{h} {loaded}"
                assert not errors, f"{path.name}: {errors}"
                external = [u for u in requests if not u.startswith(("file:", "data:"))]
                assert not external, f"{path.name}: {external}"
                name = f"{path.parent.name}-{path.stem}.png" if path.parent != root else "index.png"
                page.screenshot(path=str(ARTIFACTS / f"{prefix}{name}"), full_page=True)
                page.close()
        finally:
            browser.close()


def test_every_page_renders_offline(built: Path) -> None:
    pages = [built / "index.html", *sorted(built.glob("*/card-*.html"))]
    assert len(pages) == 9
    _open_pages(pages, built)
    assert len(list(ARTIFACTS.glob("*.png"))) >= 9


def test_inspection_pages_render_offline(tmp_path: Path) -> None:
    from conftest import run
    from tiny_models import gpt2_model

    gpt2_model(0).save_pretrained(tmp_path / "gpt2")
    out = tmp_path / "out"
    r = run("inspect", str(tmp_path / "gpt2"), "--out", str(out), "--format", "png,svg,html")
    assert r.returncode == 0, r.stderr
    pages = [out / "index.html", out / "en" / "gpt2.html", out / "zh" / "gpt2.html"]
    _open_pages(pages, out, prefix="inspect-")
