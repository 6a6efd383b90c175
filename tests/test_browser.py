"""A real browser opens the built folder: headless Chromium (Debian's, installed by .ci/run) loads
index.html and every card page from disk, every image and inline SVG has a non-zero size, the
console shows no error, and nothing is requested from the network."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import launch_chromium

from posecards.config import CARD_IDS

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "build" / "test-artifacts" / "screenshots"


# [tag, width, height, loaded] of every img and svg element
_IMAGE_SIZES = """els => els.map(e => {
    const r = e.getBoundingClientRect();
    return [e.tagName, r.width, r.height, e.tagName === 'IMG' ? (e.complete && e.naturalWidth) : 1];
})"""


def _open_pages(browser: Any, pages: list[Path], root: Path, prefix: str = "") -> None:
    """Open each page in Chromium (one tab, a new document each): images and SVGs have a size,
    no console error, no network."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    for path in pages:
        errors.clear()
        requests.clear()
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        sizes = page.eval_on_selector_all("img, svg", _IMAGE_SIZES)
        assert sizes, f"{path.name}: no image"
        for tag, w, h, loaded in sizes:
            assert w > 0 and h > 0 and loaded, f"{path.name}: {tag} {w}x{h} {loaded}"
        assert not errors, f"{path.name}: {errors}"
        external = [u for u in requests if not u.startswith(("file:", "data:"))]
        assert not external, f"{path.name}: {external}"
        name = f"{path.parent.name}-{path.stem}.png" if path.parent != root else "index.png"
        _full_page_png(page, ARTIFACTS / f"{prefix}{name}")
        page.goto("about:blank")
    page.close()


def test_the_index_renders_offline(browser: Any, built: Path) -> None:
    _open_pages(browser, [built / "index.html"], built)
    assert (ARTIFACTS / "index.png").is_file()


def test_inspection_pages_render_offline(browser: Any, tmp_path: Path) -> None:
    from conftest import run_here
    from tiny_models import gpt2_model

    gpt2_model(0).save_pretrained(tmp_path / "gpt2")
    out = tmp_path / "out"
    # in this process: transformers is imported already (the files are `run`'s, test_inspect_cli)
    r = run_here("inspect", str(tmp_path / "gpt2"), "--out", str(out), "--format", "png,svg,html")
    assert r.returncode == 0, r.stderr
    pages = [out / "index.html", out / "en" / "gpt2.html", out / "zh" / "gpt2.html"]
    _open_pages(browser, pages, out, prefix="inspect-")


# --- card pages on a phone and a wide screen, with the fonts they carry (issue 11) ---------------

# the size in CSS px at which each text of the inline figures is drawn: its font size in the
# SVG's user units times the scale the SVG is drawn at
_FIGURE_TEXT_PX = """() => [...document.querySelectorAll('figure svg text, figure svg tspan')]
    .filter(t => t.textContent.trim())
    .map(t => {
        const m = t.getScreenCTM();
        return [parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b), t.textContent];
    })"""

# where every drawn text box is: equal in two runs only if every glyph has the same metrics
_TEXT_BOXES = """() => [...document.querySelectorAll('h1, h2, p, li, a, code, summary, svg text')]
    .map(e => { const r = e.getBoundingClientRect();
                return [e.tagName, r.x, r.y, r.width, r.height].join(' '); })"""


_FONTS_LOADED = """() => Promise.all([...document.fonts].map(f => f.load()))
    .then(() => document.fonts.ready)
    .then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))))"""


def _card_pages(built: Path) -> list[Path]:
    pages = sorted(built.glob("*/card-*.html"))
    assert len(pages) == 2 * len(CARD_IDS)
    return pages


@contextlib.contextmanager
def _opened(tab, path: Path, width: int, height: int, problems: list[str] | None = None):  # type: ignore[no-untyped-def]
    """Open a page in ``tab`` (a browser tab at about:blank) at a viewport, as a new document;
    fail on any request but the page itself. ``problems`` collects console errors and page
    errors. Afterwards the tab shows about:blank again: loading the next page in it costs
    Chromium about 0.5 CPU s less than opening a new tab."""
    tab.set_viewport_size({"width": width, "height": height})
    requests: list[str] = []
    listeners: list[tuple[str, Any]] = [("request", lambda r: requests.append(r.url))]
    if problems is not None:
        listeners += [
            ("console", lambda m: problems.append(m.text) if m.type == "error" else None),
            ("pageerror", lambda e: problems.append(str(e))),
        ]
    for event, listener in listeners:
        tab.on(event, listener)
    try:
        tab.goto(path.as_uri())
        tab.wait_for_load_state("load")
        # every embedded face loaded (data: URLs, no request), then one more frame of layout
        tab.evaluate(_FONTS_LOADED)
        assert [u for u in requests if u != path.as_uri()] == [], f"{path.name}: {requests}"
        yield tab
    finally:
        for event, listener in listeners:
            tab.remove_listener(event, listener)
        tab.goto("about:blank")


def _resize(page, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    """The same page at another viewport: laid out again, as a fresh load at that size is."""
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate(_FONTS_LOADED)


# the document's size as playwright's full-page screenshot measures it (screenshotter.ts), once
# the fonts are ready (as playwright waits before a screenshot)
_PAGE_SIZE = """async () => { await document.fonts.ready;
    const b = document.body, e = document.documentElement;
    return [Math.max(b.scrollWidth, e.scrollWidth, b.offsetWidth, e.offsetWidth, b.clientWidth,
                     e.clientWidth),
            Math.max(b.scrollHeight, e.scrollHeight, b.offsetHeight, e.offsetHeight,
                     b.clientHeight, e.clientHeight)]; }"""


def _full_page_png(page, path: Path | None = None) -> bytes:  # type: ignore[no-untyped-def]
    """The whole page as a PNG (written to ``path`` too): the Page.captureScreenshot call that
    playwright's ``screenshot(full_page=True)`` makes (the document's rectangle, drawn beyond the
    viewport), encoded with Chromium's fast zlib setting (optimizeForSpeed: a larger file, the
    same pixels, about 0.1 CPU s less a card page)."""
    import base64

    width, height = page.evaluate(_PAGE_SIZE)
    cdp = page.context.new_cdp_session(page)
    shot = cdp.send(
        "Page.captureScreenshot",
        {
            "format": "png",
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            "captureBeyondViewport": True,
            "optimizeForSpeed": True,
        },
    )
    cdp.detach()
    png = base64.b64decode(shot["data"])
    if path is not None:
        path.write_bytes(png)
    return png


def _glyph_fonts(page) -> dict[tuple[str, bool], int]:  # type: ignore[no-untyped-def]
    """Glyphs drawn per (font, is it a web font), as Chromium reports them for every element
    holding text (a text node or a ::before/::after box): every drawn glyph is counted."""
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.evaluate(_FONTS_LOADED)
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]
    ids: list[int] = []
    todo = [root]
    while todo:
        node = todo.pop()
        children = node.get("children", [])
        if (
            node.get("nodeType") == 1
            and node.get("nodeName") not in ("HEAD", "STYLE", "TITLE")
            and (node.get("pseudoElements") or any(c.get("nodeType") == 3 for c in children))
        ):
            ids.append(node["nodeId"])
        todo.extend(children)
    used: dict[tuple[str, bool], int] = {}
    for nid in ids:
        for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": nid})["fonts"]:
            key = (f["postScriptName"] or f["familyName"], f["isCustomFont"])
            used[key] = used.get(key, 0) + f["glyphCount"]
    cdp.detach()
    return used


@dataclass
class Visit:
    """What Chromium showed of one card page: with the system's fonts at 1440, 390 and 1920 px
    wide, and at 1440 px with every system font hidden."""

    problems: list[str]  # console and page errors
    images: list[list[Any]]  # [tag, width, height, loaded] of every img and svg
    boxes: list[str]  # every text box at 1440 px
    pixels: np.ndarray  # the full page at 1440 px, (h, w, 3) uint8
    faces: list[list[str]]  # [family, status] of every face in document.fonts
    body_font: str
    svg_font: str
    phone_width: int  # the document's scroll width at a 390 px viewport
    phone_right: float  # where the rightmost box ends there
    wide_width: int
    figure_text_px: list[list[Any]]  # [px, text] of every figure text at 1920 px
    glyphs: dict[tuple[str, bool], int]
    boxes_no_fonts: list[str] = field(default_factory=list)
    pixels_no_fonts: np.ndarray | None = None


def _visit(tab, path: Path) -> Visit:  # type: ignore[no-untyped-def]
    """One card page in ``tab`` with the system's fonts, at 1440, 390 and 1920 px."""
    name = f"{path.parent.name}-{path.stem}"
    problems: list[str] = []
    with _opened(tab, path, 1440, 1000, problems) as page:
        images = page.eval_on_selector_all("img, svg", _IMAGE_SIZES)
        boxes = page.evaluate(_TEXT_BOXES)
        png = _full_page_png(page, ARTIFACTS / f"{name}.png")
        faces = page.evaluate("[...document.fonts].map(f => [f.family, f.status])")
        body_font = page.evaluate("getComputedStyle(document.body).fontFamily")
        svg_font = page.eval_on_selector("figure svg text", "t => getComputedStyle(t).fontFamily")
        _resize(page, 390, 844)
        phone_width = page.evaluate("document.documentElement.scrollWidth")
        right = page.eval_on_selector_all(
            "svg, figure, aside, p, li, h1, table",
            "els => els.map(e => e.getBoundingClientRect().right)",
        )
        _full_page_png(page, ARTIFACTS / f"{name}-390.png")
        _resize(page, 1920, 1080)
        wide_width = page.evaluate("document.documentElement.scrollWidth")
        figure_text_px = page.evaluate(_FIGURE_TEXT_PX)
        glyphs = _glyph_fonts(page)  # opens every <details>: last
    return Visit(
        problems, images, boxes, _pixels(png), faces, body_font, svg_font, phone_width,
        max(right), wide_width, figure_text_px, glyphs,
    )  # fmt: skip


@pytest.fixture(scope="module")
def visits(
    browser: Any, playwright_session: Any, built: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[Path, Visit]:
    """Every card page visited once per browser; the tests below read what was seen."""
    import matplotlib

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for stale in ARTIFACTS.glob("*-card-*.png"):  # an earlier run's: only this run's count
        stale.unlink()
    out: dict[Path, Visit] = {}
    tab = browser.new_page()
    try:
        for path in _card_pages(built):
            out[path] = _visit(tab, path)
    finally:
        tab.close()

    # a machine without posecards' fonts: the system's fontconfig rules (hinting, subpixel
    # positioning: they move glyphs) but no Noto CJK and no DejaVu Sans, only the STIX fonts
    # matplotlib ships (with no font at all, Chromium refuses web fonts too)
    tmp = tmp_path_factory.mktemp("no-fonts")
    other = tmp / "other-fonts"
    other.mkdir()
    for f in sorted(Path(matplotlib.get_data_path(), "fonts", "ttf").glob("STIX*.ttf")):
        (other / f.name).symlink_to(f)
    hidden = tmp / "fonts.conf"
    hidden.write_text(
        '<?xml version="1.0"?>\n<fontconfig>'
        '<include ignore_missing="yes">/etc/fonts/conf.d</include>'
        f"<dir>{other}</dir><cachedir>{tmp / 'fc-cache'}</cachedir>"
        "</fontconfig>\n",
        encoding="utf-8",
    )
    no_fonts = launch_chromium(playwright_session, {**os.environ, "FONTCONFIG_FILE": str(hidden)})
    try:
        tab = no_fonts.new_page()
        for path, visit in out.items():
            with _opened(tab, path, 1440, 1000) as page:
                visit.boxes_no_fonts = page.evaluate(_TEXT_BOXES)
                visit.pixels_no_fonts = _pixels(_full_page_png(page))
    finally:
        no_fonts.close()
    return out


def test_card_pages_render_offline(visits: dict[Path, Visit]) -> None:
    """Every image and inline SVG has a size, no console error, nothing requested but the page."""
    for path, v in visits.items():
        assert v.images, f"{path.name}: no image"
        for tag, w, h, loaded in v.images:
            assert w > 0 and h > 0 and loaded, f"{path.name}: {tag} {w}x{h} {loaded}"
        assert not v.problems, f"{path.name}: {v.problems}"
    assert len(list(ARTIFACTS.glob("*-card-*.png"))) >= 2 * len(visits)


def test_card_pages_fit_a_phone_and_read_on_a_wide_screen(visits: dict[Path, Visit]) -> None:
    """390 px: nothing wider than the screen; 1920 px: the smallest figure text is >= 12 px."""
    smallest: dict[str, float] = {}
    for path, v in visits.items():
        name = f"{path.parent.name}-{path.stem}"
        assert v.phone_width <= 390, f"{name}: {v.phone_width} px wide at a 390 px viewport"
        assert v.phone_right <= 390, f"{name}: something ends at {v.phone_right} px"
        assert v.wide_width <= 1920
        assert len(v.figure_text_px) > 50, f"{name}: no figure text found"
        px, text = min(v.figure_text_px)
        smallest[name] = px
        assert px >= 12.0, f"{name}: figure text {text!r} drawn at {px:.1f} px at 1920"
    print("smallest figure text at 1920 px:", smallest)


def test_card_pages_carry_their_fonts(visits: dict[Path, Visit]) -> None:
    """Every glyph of a card page (text and inline figures) is drawn by a font embedded in it,
    the figures' SVG text names the embedded families, and with every system font hidden from
    Chromium the page lays out exactly as it does here."""
    for path, v in visits.items():
        assert v.faces and all(f.startswith("posecards ") for f, _ in v.faces), v.faces
        assert {"posecards Noto Sans CJK SC", "posecards DejaVu Sans"} <= {
            f for f, status in v.faces if status == "loaded"
        }, v.faces
        assert v.body_font.startswith('"posecards Noto Sans CJK SC"'), v.body_font
        assert v.svg_font.startswith('"posecards '), v.svg_font
        system = {k: n for k, n in v.glyphs.items() if not k[1]}
        assert not system, f"{path.name}: drawn with system fonts {system}"
        assert sum(v.glyphs.values()) > 1000, v.glyphs
        assert v.boxes_no_fonts == v.boxes, f"{path.name} reflows"
        # issue 18: no pixel comes from a system font. Two Chromium processes rasterise the same
        # page with a last-bit difference here and there (one channel off by 1, at a different
        # pixel each run); a glyph from another font moves hundreds of pixels by far more.
        a, b = v.pixels_no_fonts, v.pixels
        assert a is not None and a.shape == b.shape, f"{path.name}: sizes differ"
        diff = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=-1)  # (h, w)
        assert diff.max() <= RASTER_NOISE, f"{path.name}: pixels differ by {diff.max()}"
        assert (diff > 0).sum() <= RASTER_NOISE_PIXELS, f"{path.name}: {(diff > 0).sum()} differ"


RASTER_NOISE = 2  # levels of 255 per channel
RASTER_NOISE_PIXELS = 50  # of about 6 million on a card page


def _pixels(png: bytes) -> np.ndarray:
    """A screenshot's RGB pixels (its PNG encoding aside): (height, width, 3) uint8."""
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
