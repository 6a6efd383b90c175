"""The explorer page: every control by keyboard, views update, numbers shown agree with
Python, offline, 390 px wide, self-contained and small. Its math (window.posecards) against the
Python: tests/test_explore_math.py (under Node and in this page in Chromium).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from html import unescape
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from posecards.config import ExploreConfig
from posecards.encodings.alibi import alibi_slopes
from posecards.encodings.buckets import t5_relative_bucket
from posecards.encodings.rope_partial import head_inv_freq
from posecards.encodings.rope_scaling import rope_inv_freq
from posecards.encodings.similarity import offset_profile
from posecards.encodings.sinusoidal import wavelengths
from posecards.render.explore import explore_bytes

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "build" / "test-artifacts"


# ------------------------------------------------------------------------------------------
# one page with the explorer, in the session's browser (tests/conftest.py)
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def explore_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("explore") / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig()))
    return path


# tabs a test gave back when it passed (Page.close): opening a tab costs Chromium about 0.5 CPU s
# more than loading the page in one that is open; a test that fails keeps its tab
_IDLE: list[tuple[Any, Any]] = []  # (browser, page at about:blank)


class Page:
    """The explorer page loaded in a tab (a fresh document: a new tab, or an idle one that
    showed about:blank), recording console errors and requests."""

    def __init__(
        self, browser: Any, path: Path, width: int = 1440, lang: str = "en", fragment: str = ""
    ) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        idle = next((t for t in _IDLE if t[0] is browser), None)
        if idle is not None:
            _IDLE.remove(idle)
            self.page = idle[1]
            self.page.set_viewport_size({"width": width, "height": 1000})
        else:
            self.page = browser.new_page(viewport={"width": width, "height": 1000})
        self._browser = browser
        self._listeners = [
            ("console", lambda m: self.errors.append(m.text) if m.type == "error" else None),
            ("pageerror", lambda e: self.errors.append(str(e))),
            ("request", lambda r: self.requests.append(r.url)),
        ]
        for event, listener in self._listeners:
            self.page.on(event, listener)
        self.page.goto(path.as_uri() + fragment)
        self.page.wait_for_load_state("load")

    def close(self) -> None:
        """The test is done with the page: its tab, at about:blank with the pointer where a new
        tab has it, is the next Page's."""
        for event, listener in self._listeners:
            self.page.remove_listener(event, listener)
        self.page.mouse.move(0, 0)
        self.page.goto("about:blank")
        _IDLE.append((self._browser, self.page))


# ------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------
CONTROLS = ["lang", "theme", "base-exp", "base", "d", "layout", "ctx", "p", "play", "k",
            "preset", "rope-type", "partial", "factor", "orig", "test", "beta-fast", "beta-slow",
            "truncate", "low-ff", "high-ff", "calc-base", "mrope", "mrope-layout", "conv", "seed",
            "heads", "head", "nb", "md", "bidir"]  # fmt: skip


def _readouts(page: Any) -> dict[str, str]:
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('.readout, output')]"
        ".map(e => [e.id, e.textContent]))"
    )


def _canvases(page: Any) -> dict[str, int]:
    """A cheap fingerprint of every canvas's pixels."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('canvas')].map(c => {
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let h = 0;
            for (let i = 0; i < d.length; i += 7) h = (h * 31 + d[i]) | 0;
            return [c.id, h];
        }))"""
    )


def test_every_control_by_keyboard(browser: Any, explore_file: Path) -> None:
    pg = Page(browser, explore_file)
    page = pg.page
    # Tab reaches every control, in order, with a visible focus ring
    page.focus("#lang")
    reached = []
    for _ in range(80):
        el = page.evaluate(
            "() => [document.activeElement.id, getComputedStyle(document.activeElement).outlineStyle]"
        )
        if el[0] in CONTROLS and el[0] not in reached:
            reached.append(el[0])
            assert el[1] != "none", f"#{el[0]} has no visible focus"
        page.keyboard.press("Tab")
    visible = page.evaluate(
        "ids => ids.filter(id => !document.getElementById(id).closest('[hidden]'))", CONTROLS
    )
    assert set(visible) <= set(reached), set(visible) - set(reached)

    def press(control: str, key: str) -> None:
        page.focus(f"#{control}")
        page.keyboard.press(key)

    # every control changes what the page shows
    rope_controls = {
        "partial", "factor", "orig", "beta-fast", "beta-slow", "truncate", "low-ff", "high-ff"
    }  # fmt: skip
    for rope_type in ("yarn", "llama3", "dynamic", "longrope", "linear", "ntk", "proportional"):
        page.focus("#rope-type")
        page.select_option("#rope-type", rope_type)
        # what the page shows now: a move's "after" is the next move's "before" (an input
        # redraws at once, in update(); between two moves the test only reads the page)
        shown = None
        for control in CONTROLS:
            if control in ("lang", "theme", "play", "rope-type", "preset", "calc-base"):
                continue
            if rope_type != "yarn" and control not in rope_controls:
                continue
            if page.evaluate(f"() => !!document.getElementById('{control}').closest('[hidden]')"):
                continue
            before = shown if shown is not None else (_readouts(page), _canvases(page))
            if control in ("truncate", "bidir"):
                press(control, "Space")
            elif control in ("layout", "mrope", "mrope-layout", "conv"):
                last = page.evaluate(
                    f"(e => e.selectedIndex === e.options.length - 1)(document.getElementById('{control}'))"
                )
                press(control, "ArrowUp" if last else "ArrowDown")
            elif control == "base":
                page.focus("#base")
                page.keyboard.press("Control+a")
                page.keyboard.type("500000")
            elif control == "partial":  # it starts at its maximum, 1
                press(control, "ArrowLeft")
            elif page.evaluate(
                f"() => {{ const e = document.getElementById('{control}'); "
                "return e.type === 'range' && e.value === e.max; }"
            ):
                press(control, "ArrowLeft")  # moved to its end by the earlier rope types
            else:
                press(control, "ArrowRight" if control != "k" else "ArrowUp")
            after = shown = (_readouts(page), _canvases(page))
            assert after != before, f"{control} ({rope_type}) changed nothing"
    # the language and theme switches, and the animation
    before = _readouts(page)
    press("lang", "ArrowDown")
    assert page.evaluate("document.documentElement.lang") == "zh-Hans"
    assert _readouts(page) != before
    assert "位置编码" in page.inner_text("body")
    before_c = _canvases(page)
    press("theme", "ArrowDown")
    assert page.evaluate("document.body.dataset.theme") == "dark"
    assert _canvases(page) != before_c
    p0 = page.input_value("#p")
    press("play", "Enter")
    page.wait_for_function("p0 => document.getElementById('p').value !== p0", arg=p0, timeout=5000)
    press("play", "Enter")
    assert page.input_value("#p") != p0
    assert not pg.errors, pg.errors
    assert not [u for u in pg.requests if not u.startswith("file:")], pg.requests
    pg.close()


@pytest.mark.parametrize("rope_type", ["yarn", "linear", "default"])
def test_the_rope_view_counts_the_angles_python_counts(
    browser: Any, explore_file: Path, rope_type: str
) -> None:
    """The RoPE view's readout: how many pairs reach, at test length T, angles they never
    reached over the training length L (card 4's rule: an unseen arc over UNSEEN_MIN rad),
    without scaling and with the chosen one, and the score factor: posecards' Python numbers
    (head_inv_freq, unseen_angles) for the page's controls."""
    from posecards.content.card4 import UNSEEN_MIN
    from posecards.encodings.unseen_angles import unseen_angles

    pg = Page(browser, explore_file)
    page = pg.page
    page.select_option("#rope-type", rope_type)
    page.evaluate("() => { for (const [id, v] of [['d', '128'], ['orig', '12'], ['test', '15']]) "
                  "{ const e = document.getElementById(id); e.value = v; "
                  "e.dispatchEvent(new Event('input')); } }")  # fmt: skip
    text = page.inner_text("#ro-rope")
    params: dict[str, Any] = {"rope_type": rope_type, "rope_theta": 10000.0}
    if rope_type != "default":
        params["factor"] = 8.0
    if rope_type == "yarn":
        params |= {"original_max_position_embeddings": 4096, "beta_fast": 32.0,
                   "beta_slow": 1.0, "truncate": True}  # fmt: skip
    plain = head_inv_freq(128, {"rope_type": "default", "rope_theta": 10000.0})[0]
    scaled, af = head_inv_freq(128, params)
    n0 = int(np.sum(unseen_angles(plain, plain, 4096, 32768) > UNSEEN_MIN))
    n1 = int(np.sum(unseen_angles(plain, scaled, 4096, 32768) > UNSEEN_MIN))
    assert "L = 4,096, tested on T = 32,768" in text, text
    assert f"{n0} of 64 pairs reach angles never seen" in text, text
    assert f", {n1} pairs do" in text, text
    assert f"squared, {af * af:.4f}" in text, text
    if rope_type == "yarn":
        assert n0 > 10 and n1 == 0  # YaRN at T = s·L: the slow pairs stay within training's arc
    assert not pg.errors, pg.errors
    pg.close()


_STATE = """() => ({
  values: Object.fromEntries([...document.querySelectorAll('#controls input, #controls select, .switches select')]
    .map(e => [e.id, e.type === 'checkbox' ? e.checked : e.value])),
  readouts: Object.fromEntries([...document.querySelectorAll('.readout, output, #preset-note')]
    .map(e => [e.id, e.textContent])),
  lang: document.documentElement.lang, theme: document.body.dataset.theme })"""


def test_a_copied_link_reopens_the_same_state_and_reset_clears_it(
    browser: Any, explore_file: Path
) -> None:
    """Controls moved, a preset chosen, the language and theme switched: the URL fragment holds
    it, and a new page opened with that link shows the same controls, readouts and note (and
    loads nothing); reset brings every control back to the page's defaults and clears the
    fragment."""
    pg = Page(browser, explore_file)
    page = pg.page
    fresh = page.evaluate(_STATE)
    page.select_option("#preset", "llama-3.1-8b")
    page.evaluate("() => { for (const [id, v] of [['k', '37'], ['test', '17'], ['heads', '8']]) "
                  "{ const e = document.getElementById(id); e.value = v; "
                  "e.dispatchEvent(new Event('input')); } }")  # fmt: skip
    page.select_option("#theme", "dark")
    page.select_option("#lang", "zh")
    moved = page.evaluate(_STATE)
    # the fragment is written once the controls rest (150 ms), whole: after the last move
    page.wait_for_function("() => location.hash.includes('lang=zh')", timeout=5000)
    fragment = page.evaluate("location.hash")
    assert "preset=llama-3.1-8b" in fragment and "k=37" in fragment and "lang=zh" in fragment
    assert moved["values"]["factor"] == "8" and moved != fresh
    again = Page(browser, explore_file, fragment=fragment)
    assert again.page.evaluate(_STATE) == moved
    assert again.page.evaluate("location.hash") == fragment
    assert not [u for u in again.requests if not u.startswith("file:")], again.requests
    assert not again.errors, again.errors
    again.close()
    page.click("#reset")
    page.wait_for_timeout(400)
    assert page.evaluate("location.hash") == ""
    assert page.evaluate(_STATE) == fresh
    assert not pg.errors, pg.errors
    pg.close()


@pytest.mark.parametrize("card", [2, 3, 4, 6, 7, 8, 9, 10])
def test_a_card_page_link_opens_the_explorer_with_its_parameters(
    browser: Any, explore_file: Path, card: int
) -> None:
    """Each card page links to the explorer with that card's parameters (render/explore.card_link):
    opened, every control named in the link holds its value and the page shows the link's view
    at the top of the window (cards 2 and 7 show the page's first view); card 4's link shows its own
    setting (d 128, YaRN ×4 from 8,192, tested at 32,768), card 6's a model preset."""
    from urllib.parse import parse_qsl

    from posecards.config import PEParams
    from posecards.render.explore import card_link

    link = card_link(card, PEParams())
    assert link.startswith("../explore.html#")
    pg = Page(browser, explore_file, fragment=link.removeprefix("../explore.html"))
    state = pg.page.evaluate(_STATE)
    linked = dict(parse_qsl(link.split("#", 1)[1]))
    view = linked.pop("view", None)
    for key, value in linked.items():
        assert state["values"][key] == value, (card, key, value)
    where = pg.page.evaluate(
        "(v) => [document.getElementById(v).getBoundingClientRect().top, scrollY]", f"v-{view}"
    ) if view else None  # fmt: skip
    assert (view is None) == (card in (2, 7))
    if where:  # its top at the window's top (the page scrolled down to it)
        assert abs(where[0]) < 2 and where[1] > 500, (card, view, where)
    if card == 4:
        ro = state["readouts"]["ro-rope"]
        assert "L = 8,192, tested on T = 32,768" in ro and "yarn ×4.00" in ro, ro
    if card == 6:
        assert "gemma-4-26b-a4b-it/config.json" in state["readouts"]["preset-note"]
        assert state["values"]["rope-type"] == "proportional" and state["values"]["d"] == "512"
    assert not pg.errors, pg.errors
    pg.close()


def test_numbers_on_the_page_are_pythons(browser: Any, explore_file: Path) -> None:
    """The readouts print what posecards' Python computes for the same controls."""
    pg = Page(browser, explore_file)
    page = pg.page
    page.fill("#base", "500000")
    page.dispatch_event("#base", "input")
    page.evaluate("() => { const d = document.getElementById('d'); d.value = '128'; "
                  "d.dispatchEvent(new Event('input')); }")  # fmt: skip
    page.evaluate("() => { const k = document.getElementById('k'); k.value = '37'; "
                  "k.dispatchEvent(new Event('input')); }")  # fmt: skip
    page.select_option("#rope-type", "llama3")
    text = _readouts(page)
    f = offset_profile([37], 128, 500000.0)[0]
    assert f"f(37) = {f:.4f}".replace("-", "\u2212") in text["ro-sim"]
    ctx = 1024
    turn = int(np.sum(wavelengths(128, 500000.0) <= ctx))
    assert text["ro-ladder"].startswith(f"{turn} of 64 pairs complete a full turn within 1,024")
    inv, af = rope_inv_freq(
        128,
        500000.0,
        {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 4096,
         "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    )  # fmt: skip
    kept = int(np.sum(inv == rope_inv_freq(128, 500000.0)[0]))
    assert f"cos/sin factor {af:.4f}" in text["ro-scaling"]
    assert f"by its square, {af * af:.4f}" in text["ro-scaling"]
    assert f"{kept} of 64 pairs unchanged" in text["ro-scaling"]
    slopes = alibi_slopes(12)
    assert f"slope {slopes[0]:.4f}" in text["ro-alibi"]
    # Gemma 4's full layers: head 512 (d), theta 10^6, proportional, p = 0.25
    page.fill("#base", "1000000")
    page.dispatch_event("#base", "input")
    page.evaluate("() => { for (const [id, v] of [['d', '512'], ['partial', '0.25'], "
                  "['factor', '1']]) { const e = document.getElementById(id); e.value = v; "
                  "e.dispatchEvent(new Event('input')); } }")  # fmt: skip
    page.select_option("#rope-type", "proportional")
    text = _readouts(page)
    inv, _ = head_inv_freq(
        512, {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25, "factor": 1.0}
    )  # fmt: skip
    zero = int(np.sum(inv == 0))
    assert f"Only {inv.size - zero} of the 256 pairs turn." in text["ro-ladder"]
    assert f"{zero} pairs have frequency 0" in text["ro-scaling"]
    assert "head_inv_freq(512" in page.inner_text("#call-scaling")
    # the same p as partial rotary: 64 pairs turn, their slowest near 2 pi b
    page.select_option("#rope-type", "default")
    text = _readouts(page)
    assert "Only 64 of the 256 pairs turn." in text["ro-ladder"]
    t5 = t5_relative_bucket(-np.arange(0, 257), True, 32, 128)
    last = int(np.argmax(t5 == t5.max()))
    assert f"from distance {last} on" in text["ro-buckets"]
    assert not pg.errors, pg.errors
    pg.close()


_HEAT_ROW_RUNS = """() => {
  const cv = document.getElementById('cv-heat');
  const px = cv.getContext('2d').getImageData(0, Math.floor(cv.height / 2), cv.width, 1).data;
  const runs = [];
  let start = Math.floor(cv.width * 0.3);
  for (let x = start + 1; x < Math.floor(cv.width * 0.85); x++) {
    const a = 4 * x, b = 4 * (x - 1);
    if (px[a] !== px[b] || px[a + 1] !== px[b + 1] || px[a + 2] !== px[b + 2]) {
      runs.push(x - start);
      start = x;
    }
  }
  return {width: cv.width, height: cv.height, runs: runs.slice(1)};
}"""


@pytest.mark.parametrize("d", [512, 64])
def test_the_heatmap_draws_no_column_too_narrow_to_show(
    browser: Any, explore_file: Path, d: int
) -> None:
    """Across the middle of the heatmap (where the slow pairs alternate sin ≈ 0 and cos ≈ 1 column
    by column) every run of one colour is at least 2 device pixels: no column is dropped and none
    beats against the pixel grid (moiré). Before, 512 columns in ~600 pixels drew runs of 1 and 2,
    and 1,024 positions in ~270 rows sampled the fast pairs every 4th position."""
    pg = Page(browser, explore_file, width=1920)
    page = pg.page
    page.evaluate(
        "d => { const e = document.getElementById('d'); e.value = String(d); "
        "e.dispatchEvent(new Event('input')); }",
        d,
    )
    got = page.evaluate(_HEAT_ROW_RUNS)
    assert len(got["runs"]) > 20, got  # the row crosses many columns
    assert min(got["runs"]) >= 2, got
    text = page.inner_text("#ro-heat")
    found = re.search(r"([\d,]+) of " + str(d) + " dimensions", text)
    assert found, text
    shown = int(found.group(1).replace(",", ""))
    assert shown <= got["width"] / 2.4 and shown % 2 == 0, (shown, text)
    assert shown == d or d == 512  # d = 64: every dimension fits
    # rows: the first positions only, at least 1.3 device pixels each (every 3rd position of a
    # longer context would alias the fast pairs)
    rows = re.search(r"The first ([\d,]+) of 1,024 positions", text)
    assert rows, text
    assert 100 < int(rows.group(1).replace(",", "")) <= got["height"] / 1.3, (rows.group(1), got)
    assert not pg.errors, pg.errors
    pg.close()


@pytest.mark.parametrize(("width", "lang", "theme"), [(390, "en", "light"), (390, "zh", "dark"),
                                                      (1920, "zh", "light"), (1920, "en", "dark")])  # fmt: skip
def test_layout_phone_and_desktop(
    browser: Any, tmp_path: Path, width: int, lang: str, theme: str
) -> None:
    """No sideways scroll at 390 px, no text under 12 CSS px, no network; screenshots kept."""
    path = tmp_path / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig(lang=lang, theme=theme)))
    pg = Page(browser, path, width=width)
    page = pg.page
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    small = page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter(e =>
            e.childNodes.length && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())
            && e.getClientRects().length && parseFloat(getComputedStyle(e).fontSize) < 12)
          .map(e => e.tagName + '#' + e.id)"""
    )
    assert not small, small
    assert not pg.errors, pg.errors
    assert not [u for u in pg.requests if not u.startswith("file:")], pg.requests
    out = ARTIFACTS / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"explore-{width}-{lang}-{theme}.png"), full_page=True)
    pg.close()


# the views each slider drives on a phone (explore.html.j2's data-views), checked by moving it
PHONE = {"width": 390, "height": 844}


def _fingerprints(page: Any) -> dict[str, str]:
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('canvas')]"
        ".map(c => [c.id, c.toDataURL()]))"
    )


def test_a_view_stays_on_screen_while_a_slider_moves_on_a_phone(
    browser: Any, tmp_path: Path
) -> None:
    """At 390 x 844 the first view starts in the first screen, and for every slider: with the
    slider scrolled into sight and its thumb held and dragged, a picture that the move redraws
    is on screen, uncovered (the controls are a sheet over the bottom; moving one brings a view
    it drives above it). The moment of dragging "p" is kept as a screenshot."""
    path = tmp_path / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig()))
    page = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    first = page.evaluate(
        "() => document.querySelector('section.view canvas').getBoundingClientRect().top"
    )
    sheet = page.evaluate("() => document.getElementById('controls').getBoundingClientRect().top")
    assert first < sheet < PHONE["height"], (first, sheet)
    sliders = page.evaluate(
        "() => [...document.querySelectorAll('input[type=range]')]"
        ".filter(e => !e.closest('[hidden]')).map(e => e.id)"
    )
    assert len(sliders) >= 12
    unseen = []
    for sid in sliders:
        page.evaluate(
            """id => { const el = document.getElementById(id);
                const sheet = document.getElementById('controls');
                sheet.scrollTop = el.offsetTop - sheet.clientHeight / 2; }""",
            sid,
        )
        before = _fingerprints(page)
        box = page.locator(f"#{sid}").bounding_box()
        assert box is not None and box["y"] + box["height"] <= PHONE["height"], sid
        x, y = box["x"] + box["width"] * 0.2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + box["width"] * 0.35, y, steps=4)
        changed = {k for k, v in _fingerprints(page).items() if before[k] != v}
        shown = page.evaluate(
            """ids => ids.filter(id => { const c = document.getElementById(id);
                const r = c.getBoundingClientRect(); let rows = 0;
                for (let y = Math.max(r.top, 0) + 1; y < Math.min(r.bottom, innerHeight); y += 4)
                  if (document.elementFromPoint(r.left + r.width / 2, y) === c) rows += 4;
                return rows >= Math.min(120, r.height / 2); })""",
            sorted(changed),
        )
        if sid == "p":
            out = ARTIFACTS / "screenshots"
            out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out / "explore-390-dragging-p.png"))
        page.mouse.up()
        assert changed, f"moving {sid} redrew nothing"
        if not shown:
            unseen.append((sid, sorted(changed)))
    assert not unseen, unseen
    page.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_colour_of_the_views_keeps_4_5_to_1(browser: Any, theme: str) -> None:
    """The canvases' text (every fillText, with the colour it is drawn in) and the page's own
    colours come from posecards/style/theme.toml and keep 4.5:1 on the background."""
    from dataclasses import asdict

    from posecards.figures._common import contrast_ratio
    from posecards.figures.style import theme as load_theme
    from posecards.render.contrast import hex_rgb

    th = load_theme(theme)
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.add_init_script(
        """window.__texts = [];
        const fill = CanvasRenderingContext2D.prototype.fillText;
        CanvasRenderingContext2D.prototype.fillText = function (t, ...a) {
          window.__texts.push([String(t), String(this.fillStyle), this.globalAlpha]);
          return fill.call(this, t, ...a); };"""
    )
    path = ROOT / "build" / "test-artifacts" / f"explore-{theme}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(explore_bytes(ExploreConfig(theme=theme)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    variables = page.evaluate(
        """() => { const cs = getComputedStyle(document.body);
            return Object.fromEntries(['--bg', '--text', '--muted', '--accent', '--warn', '--ok',
              '--box', '--edge'].map(v => [v, cs.getPropertyValue(v).trim().toLowerCase()])); }"""
    )
    colours = asdict(th)
    names = {"--bg": "background", "--edge": "box_edge"}
    for var, value in variables.items():
        assert value == colours[names.get(var, var[2:])].lower(), (theme, var, value)
    texts = page.evaluate("() => window.__texts")
    assert len(texts) > 50 and {t[0] for t in texts} >= {"0"}
    low = {
        (t[1], round(contrast_ratio(hex_rgb(t[1]), hex_rgb(th.background)), 2))
        for t in texts
        if t[2] == 1 and contrast_ratio(hex_rgb(t[1]), hex_rgb(th.background)) < 4.5
    }
    assert not low, (theme, low)
    assert all(t[2] == 1 for t in texts), "translucent text"
    page.close()


def test_page_is_deterministic_and_small() -> None:
    a = explore_bytes(ExploreConfig(lang="zh", theme="dark"))
    assert a == explore_bytes(ExploreConfig(lang="zh", theme="dark"))
    # issue #41: one self-contained file under 150 KB, read as 150,000 bytes (not KiB), in each
    # language and theme
    sizes = {
        (lang, theme): len(explore_bytes(ExploreConfig(lang=lang, theme=theme)))
        for lang in ("en", "zh")
        for theme in ("light", "dark")
    }
    assert max(sizes.values()) < 150_000, sizes
    html = unescape(a.decode("utf-8"))
    assert "script-src 'sha256-" in html and "default-src 'none'" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    data = json.loads(html.split('id="explore-data">', 1)[1].split("</script>", 1)[0])
    assert data["lang"] == "zh" and data["langs"] == ["en", "zh"]
    assert all(len(v) == 2 and all(v) for v in data["strings"].values())


@pytest.mark.e2e
def test_explore_command(tmp_path: Path) -> None:
    from conftest import run

    out = tmp_path / "page.html"
    r = run("explore", "--out", str(out), "--lang", "zh", "--theme", "dark")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == explore_bytes(ExploreConfig(lang="zh", theme="dark"))
    for args, words in (
        (["--lang", "fr"], "--lang"),
        (["--theme", "blue"], "--theme"),
        (["--out", str(tmp_path)], "is a folder"),
        (["--out", str(tmp_path / "page.txt")], ".html"),
    ):
        bad = run("explore", *args)
        assert bad.returncode == 2, (args, bad.stderr)
        lines = bad.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in bad.stderr, bad.stderr
    assert not (tmp_path / "page.txt").exists()


@pytest.mark.e2e
def test_build_writes_the_explorer_and_links_it(tmp_path: Path) -> None:
    """`posecards build` adds DIR/explore.html (in the manifest) and links it from the index."""
    from posecards.config import BuildConfig
    from posecards.engine.executor import run
    from posecards.render.build import plan_build

    files = run(plan_build(BuildConfig(cards=(), langs=("en", "zh"), formats=("html",))))
    assert files["explore.html"] == explore_bytes(ExploreConfig(lang="en", theme="light"))
    assert 'href="explore.html"' in files["index.html"].decode("utf-8")
    assert "explore.html" in json.loads(files["manifest.json"])["files"]


def test_broken_explorer_text_is_one_line_exit_2(tmp_path: Path) -> None:
    """A missing Chinese text or a syntax error in cards/explore.toml: one line, exit 2."""
    cards = tmp_path / "cards"
    shutil.copytree(ROOT / "cards", cards)
    source = (ROOT / "cards" / "explore.toml").read_text(encoding="utf-8")
    for broken, words in (
        (source.replace('zh = "语言"\n', "", 1), "[lang_label]"),
        (source.replace("[intro]", "[intro", 1), "syntax error"),
    ):
        (cards / "explore.toml").write_text(broken, encoding="utf-8")
        out = tmp_path / "x.html"
        r = _run_env(out, cards)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and words in lines[0], r.stderr
        assert not out.exists()


def _run_env(out: Path, cards: Path) -> Any:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "posecards", "explore", "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "POSECARDS_CARDS_DIR": str(cards)},
        timeout=120,
    )


AXE = ROOT / "tests" / "node" / "node_modules" / "axe-core" / "axe.min.js"


@pytest.mark.parametrize(("width", "lang", "theme"), [(1440, "en", "light"), (390, "zh", "dark")])
def test_axe_finds_no_violation(
    browser: Any, tmp_path: Path, width: int, lang: str, theme: str
) -> None:
    """axe-core (pinned in tests/node) on the page, every help opened and a preset chosen: no
    WCAG 2.1 A/AA violation."""
    if not AXE.is_file():
        pytest.fail("axe-core missing: npm ci --prefix tests/node (make test does)")
    path = tmp_path / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig(lang=lang, theme=theme)))
    pg = Page(browser, path, width=width)
    page = pg.page
    page.select_option("#preset", "gemma-3-27b-it:full_attention")
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
    )
    found = [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]]
    assert not found, found
    assert len(result["passes"]) > 10
    assert not pg.errors, pg.errors
    pg.close()


def test_values_on_hover_are_the_plotted_numbers(browser: Any, explore_file: Path) -> None:
    """The pointer over the RoPE view's angle plot shows, for the pair under it, the angle it
    reaches in training and at T, unscaled and scaled: posecards' angle_reach, as
    posecards.formatting.sig prints it."""
    from posecards.encodings.unseen_angles import angle_reach
    from posecards.formatting import sig

    pg = Page(browser, explore_file, width=1920, fragment="#preset=llama-3.1-8b&test=17")
    page = pg.page
    page.evaluate("document.getElementById('v-rope').scrollIntoView()")
    box = page.locator("#cv-unseen").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.8, box["y"] + box["height"] * 0.5)
    rows = page.inner_text("#tip").splitlines()
    found = re.match(r".* (\d+) · .* ([\d.]+)$", rows[0])
    assert found and len(rows) == 3, rows
    pair = int(found.group(1))
    params = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
              "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}  # fmt: skip
    plain = head_inv_freq(128, {"rope_type": "default", "rope_theta": 500000.0})[0]
    scaled = head_inv_freq(128, params)[0]
    want = [angle_reach(plain, 8192), angle_reach(plain, 131072), angle_reach(scaled, 131072)]
    assert [r.rsplit(" ", 1)[1] for r in rows] == [sig(w[pair], 4) for w in want], rows
    page.mouse.move(5, 5)
    assert page.evaluate("document.getElementById('tip').hidden")
    assert not pg.errors, pg.errors
    pg.close()


@pytest.mark.parametrize("conv", ["axial", "even_odd", "half_per_axis", "normalised"])
def test_the_2d_view_shows_the_axes_python_computes(
    browser: Any, explore_file: Path, conv: str
) -> None:
    """Each MRoPE model of the examples under both splits, and each vision convention of card 9,
    opened from a link: the readout's count and wavelength range per axis are mrope.mrope_axes'
    and rope_2d.step_angles' (as formatting.sig prints them), the note says whether the split is
    the model's own; choosing a model sets its own split."""
    from posecards.content import card9
    from posecards.encodings.mrope import mrope_axes
    from posecards.encodings.rope_2d import step_angles
    from posecards.formatting import sig
    from posecards.render.explore import axes2d_payload, load_strings

    def per_axis(axes: np.ndarray, wl: np.ndarray, names: list[str]) -> str:
        return "; ".join(
            f"{name} {int(np.sum(axes == a))} (wavelengths {sig(wl[axes == a].min())} … "
            f"{sig(wl[axes == a].max())})"
            if np.any(axes == a)
            else f"{name} none"
            for a, name in enumerate(names)
        )

    models = axes2d_payload(load_strings())["mrope"]
    assert {m["id"]: m["layout"] for m in models} == {
        "qwen2.5-vl-7b-instruct": "chunked", "qwen3-vl-8b-instruct": "interleaved"
    }  # fmt: skip
    d, grid = card9.ROPE_HEAD_DIM, card9.ROPE_GRID
    base = card9.ROPE_BASE[conv] or 10000.0
    step = np.maximum(step_angles(conv, d, base, 0, grid), step_angles(conv, d, base, 1, grid))
    vision_axes = np.repeat([0, 1], d // 4)
    vision = per_axis(vision_axes, 2 * np.pi / step, ["h (row)", "w (column)"])
    for m in models:
        theta = head_inv_freq(
            m["head_dim"], {"rope_type": "default", "rope_theta": m["rope_theta"]}
        )[0]
        for layout in ("chunked", "interleaved"):
            axes = mrope_axes(m["section"], theta.size, layout)
            pg = Page(
                browser,
                explore_file,
                fragment=f"#mrope={m['id']}&mrope-layout={layout}&conv={conv}",
            )
            text = pg.page.inner_text("#ro-axes2d")
            assert per_axis(axes, 2 * np.pi / theta, ["t (time)", "h (row)", "w (column)"]) in text
            assert vision in text, (text, vision)
            assert f"mrope_section [{', '.join(map(str, m['section']))}]" in text
            assert ("not this model's split" in text) == (layout != m["layout"]), text
            assert not pg.errors, pg.errors
            pg.close()
    pg = Page(browser, explore_file, fragment="#mrope-layout=chunked")
    pg.page.select_option("#mrope", "qwen3-vl-8b-instruct")
    assert pg.page.input_value("#mrope-layout") == "interleaved"
    assert "not this model's split" not in pg.page.inner_text("#ro-axes2d")
    pg.page.select_option("#lang", "zh")  # every option of the view's selects in the language
    strings = load_strings()
    options = pg.page.evaluate(
        "[...document.querySelectorAll('#mrope option, #mrope-layout option, #conv option')]"
        ".map(o => o.textContent)"
    )
    assert options == [strings[m["model"]]["zh"] for m in models] + [
        strings[k]["zh"] for k in ("mrope_chunked", "mrope_interleaved")
    ] + [strings[f"conv_{c}"]["zh"] for c in card9.ROPE_BASE]
    pg.close()


def test_hover_on_the_2d_view_names_the_pair_its_axis_and_wavelength(
    browser: Any, explore_file: Path
) -> None:
    """The pointer over a dot of the vision plot: its pair, the axis it follows and its wavelength
    in patch steps, 2π / step_angles (formatting.sig, 4 digits)."""
    from posecards.content import card9
    from posecards.encodings.rope_2d import step_angles
    from posecards.formatting import sig

    pg = Page(browser, explore_file, width=1920, fragment="#conv=even_odd")
    page = pg.page
    page.evaluate("document.getElementById('v-axes2d').scrollIntoView()")
    box = page.locator("#cv-vis2d").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.75, box["y"] + box["height"] * 0.5)
    rows = page.inner_text("#tip").splitlines()
    found = re.match(r"(h \(row\)|w \(column\)) · pair p (\d+) · .* ([\d,.]+)$", rows[0])
    assert found and len(rows) == 1, rows
    d = card9.ROPE_HEAD_DIM
    p = int(found.group(2))
    step = step_angles("even_odd", d, 10000.0, 0, 14) + step_angles("even_odd", d, 10000.0, 1, 14)
    assert found.group(1) == ("h (row)" if p < d // 4 else "w (column)")
    assert found.group(3) == sig(2 * np.pi / step[p], 4), rows
    assert not pg.errors, pg.errors
    pg.close()


def test_the_calculators_are_card_10s(browser: Any, explore_file: Path) -> None:
    """The calculators' readout is critical_dim's (turning pairs, d_extra, T_extra) for the
    controls' d, base and L; the button finds rope_base_bound.smallest_base and first_negative
    (as formatting.group prints them), in slices while the page stays live; moving L after a
    search brings the prompt back (a result is only ever shown for its own inputs)."""
    from posecards.encodings.critical_dim import (
        critical_dimension,
        extrapolation_bound,
        turning_pairs,
    )
    from posecards.encodings.rope_base_bound import first_negative, smallest_base
    from posecards.formatting import group

    pg = Page(browser, explore_file, fragment="#d=16&orig=8&base=3000")
    page = pg.page
    d, base, L = 16, 3000.0, 256
    text = page.inner_text("#ro-calc")
    assert (
        f"{turning_pairs(d, base, L)} of {d // 2} pairs complete a turn within L; the critical "
        f"dimension d_extra = {critical_dimension(d, base, L)}, and T_extra = 2π·b^(d_extra/d) = "
        f"{group(extrapolation_bound(d, base, L))} tokens"
    ) in text
    assert "Press" in page.inner_text("#ro-calc-base")
    page.click("#calc-base")
    page.wait_for_function(
        "document.getElementById('ro-calc-base').textContent.startsWith('Smallest')"
    )
    result = page.inner_text("#ro-calc-base")
    first = first_negative(L, d, base)
    verdict = "holds" if first is None else f"fails first at distance m = {group(first)}"
    assert f"at head dim {d}: {group(smallest_base(L, d))}. The base 3,000 {verdict}" in result, (
        result
    )
    page.evaluate("() => { const e = document.getElementById('orig'); e.value = '9'; "
                  "e.dispatchEvent(new Event('input')); }")  # fmt: skip
    assert "Press" in page.inner_text("#ro-calc-base")
    assert not pg.errors, pg.errors
    pg.close()


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_hover_on_the_heatmap_and_the_clocks_reads_the_cell_and_the_hand(
    browser: Any, explore_file: Path, layout: str
) -> None:
    """The pointer over a heatmap cell: its position, dimension (by the layout) and value, which
    is posecards' sinusoidal_pe there (formatting.num, 4 places); over the first clock: pair 0's
    angle p·ω₀ = p, its turns and (sin, cos)."""
    from posecards.encodings.sinusoidal import sinusoidal_pe
    from posecards.formatting import num, sig

    pg = Page(browser, explore_file, width=1920, fragment=f"#layout={layout}&d=64&p=37")
    page = pg.page
    page.evaluate("document.getElementById('v-heat').scrollIntoView()")
    box = page.locator("#cv-heat").bounding_box()
    assert box is not None
    seen = set()
    for fx, fy in ((0.3, 0.3), (0.55, 0.6), (0.8, 0.45)):
        page.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)
        text = page.inner_text("#tip")
        found = re.match(
            r"position p ([\d,]+) · dimension (\d+) \(pair (\d+), (sin|cos)\) · (.+)$", text
        )
        assert found, text
        p, dim, pair = (
            int(found.group(1).replace(",", "")),
            int(found.group(2)),
            int(found.group(3)),
        )
        assert dim == (
            2 * pair + (found.group(4) == "cos")
            if layout == "interleaved"
            else pair + 32 * (found.group(4) == "cos")
        )
        want = sinusoidal_pe([p], 64, 10000.0, layout)[0, dim]
        assert found.group(5) == num(want, 4).replace("-", "−"), (text, want)
        seen.add(dim)
    assert len(seen) == 3
    page.evaluate("document.getElementById('v-clocks').scrollIntoView()")
    box = page.locator("#cv-clocks").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 20, box["y"] + 20)
    text = page.inner_text("#tip")
    assert text.startswith(
        f"pair 0 at p = 37: angle {sig(37.0, 4)} rad = {sig(37 / (2 * np.pi), 4)} turns"
    )
    assert not pg.errors, pg.errors
    pg.close()


def test_a_drag_redraws_the_views_on_screen_and_the_rest_when_it_ends(
    browser: Any, explore_file: Path
) -> None:
    """While the base slider is dragged (pointer down on it), the views off screen wait and the
    heatmap on screen follows; when the pointer comes up, every view shows what a page opened
    with the same base shows (readouts and pixels)."""
    pg = Page(browser, explore_file, width=1920)
    page = pg.page
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(200)  # the observer's first report
    before = _readouts(page)
    page.evaluate(
        """() => { const el = document.getElementById('base-exp');
        el.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
        for (const v of ['4.5', '5', '5.5']) { el.value = v; el.dispatchEvent(new Event('input')); } }"""
    )
    waiting = page.evaluate("window.posecardsExplorer.waiting()")
    assert {"rope", "calc"} <= set(waiting) and "heat" not in waiting, waiting
    during = _readouts(page)
    assert during["ro-heat"] != before["ro-heat"] and during["ro-rope"] == before["ro-rope"]
    page.evaluate("window.dispatchEvent(new PointerEvent('pointerup'))")
    assert page.evaluate("window.posecardsExplorer.waiting()") == []
    after = (_readouts(page), _canvases(page))
    fresh = Page(browser, explore_file, width=1920, fragment="#base-exp=5.5&base=316000")
    assert fresh.page.input_value("#base") == page.input_value("#base") == "316000"
    assert (_readouts(fresh.page), _canvases(fresh.page)) == after
    assert not pg.errors and not fresh.errors, (pg.errors, fresh.errors)
    fresh.close()
    pg.close()


@pytest.mark.parametrize(
    ("d", "base", "seed"), [(512, 10000.0, 0), (64, 500.0, 7), (1024, 500000.0, 99), (4, 2.5, 41)]
)
def test_the_four_terms_are_card_8s_split_of_a_seeded_draw(
    browser: Any, explore_file: Path, d: int, base: float, seed: int
) -> None:
    """The four-terms view: each term's rms in its table is score_terms.seeded_score_terms' (card
    8's shapes: its tokens, d_head and content rms, the controls' d, base and seed), as
    formatting.num prints them; the rows are card 8's SCHEME_KINDS in card 8's words; the
    readout names the shapes; the seed moves with the link and back to 0 on reset."""
    from posecards.content import card8
    from posecards.encodings.score_terms import seeded_score_terms
    from posecards.formatting import num, sig
    from posecards.render.text import load_card_text

    pg = Page(browser, explore_file, fragment=f"#d={d}&base={base:g}&seed={seed}")
    page = pg.page
    rows = page.evaluate(
        "() => [...document.querySelectorAll('#terms-table tr')]"
        ".map(r => [...r.cells].map(c => c.textContent))"
    )
    t = seeded_score_terms(
        card8.TERMS_TOKENS, d, card8.TERMS_HEAD, base, seed, card8.TERMS_CONTENT_RMS
    )
    maps = (t.cc, t.cp, t.pc, t.pp)
    rms = [float(np.sqrt(np.mean(m**2))) for m in maps]
    labels = load_card_text(8).labels
    assert rows[0] == ["", "cc", "cp", "pc", "pp"]
    assert rows[-1] == [labels["rms"].en] + [num(v, 2) for v in rms], rows[-1]
    assert rows[1:-1] == [
        [labels[f"scheme_{s}"].en] + [labels[k].en for k in kinds]
        for s, kinds in card8.SCHEME_KINDS.items()
    ]
    top = max(float(np.max(np.abs(m))) for m in maps)
    assert page.inner_text("#ro-terms") == (
        f"Seed {seed}: {card8.TERMS_TOKENS} tokens, d_model {d}, d_head {card8.TERMS_HEAD}, "
        f"content rms {num(card8.TERMS_CONTENT_RMS, 3)} (a sinusoid's); colours span "
        f"±{sig(top, 3)}."
    )
    # hover on the cc map's cell (query 0, key 0): its value
    page.eval_on_selector("#cv-terms", "c => c.scrollIntoView()")
    box = page.eval_on_selector("#cv-terms", "c => c.getBoundingClientRect().toJSON()")
    page.mouse.move(box["x"] + 32, box["y"] + 30)
    assert page.inner_text("#tip") == f"cc · query i = 0 · key j = 0 · {sig(t.cc[0, 0], 4)}"
    page.click("#reset")
    assert page.input_value("#seed") == "0"
    assert not pg.errors, pg.errors
    pg.close()


@pytest.mark.parametrize("width", [1920, 390])
def test_every_option_fits_its_select(browser: Any, explore_file: Path, width: int) -> None:
    """A closed <select> shows its chosen option in one line: in both languages, no option of
    any control is wider than its select's box less the padding and the arrow (40 px), so no
    model, layout or convention is shown cut (the 400 px control column at 1920 px, the phone's
    sheet at 390)."""
    pg = Page(browser, explore_file, width=width)
    page = pg.page
    for lang in ("en", "zh"):
        page.select_option("#lang", lang)
        cut = page.evaluate(
            """() => [...document.querySelectorAll('#controls select')].flatMap(e => {
                const g = document.createElement('canvas').getContext('2d');
                g.font = getComputedStyle(e).font;
                return [...e.options].filter(o => g.measureText(o.text).width > e.clientWidth - 40)
                  .map(o => [e.id, o.text]); })"""
        )
        assert not cut, (lang, cut)
    assert not pg.errors, pg.errors
    pg.close()


def test_no_text_under_18_px_at_1920_by_1080(browser: Any, explore_file: Path) -> None:
    """The product's rule for a room: at 1920 x 1080 no text under 18 CSS px, in both languages.
    Every element that shows text (its own text nodes, a form control's value or options, the
    hover tip), with every <details> help open, none of them cut; and every canvas text, by the
    font each fillText is drawn in (recorded by a wrapped CanvasRenderingContext2D.fillText)."""
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.add_init_script(
        """window.__fonts = [];
        const fill = CanvasRenderingContext2D.prototype.fillText;
        CanvasRenderingContext2D.prototype.fillText = function (t, ...a) {
          window.__fonts.push([String(t), this.font]);
          return fill.call(this, t, ...a); };"""
    )
    page.goto(explore_file.as_uri())
    page.wait_for_load_state("load")
    for lang in ("en", "zh"):
        page.select_option("#lang", lang)
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        small = page.evaluate(
            """() => [...document.querySelectorAll('body *')].filter(e =>
                (e.id === 'tip' || e.getClientRects().length)
                && ([...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())
                    || e.matches('input, select, option, button'))
                && parseFloat(getComputedStyle(e).fontSize) < 18)
              .map(e => [e.tagName + '#' + e.id + '.' + e.className,
                         e.textContent.trim().slice(0, 40), getComputedStyle(e).fontSize])"""
        )
        assert not small, (lang, small)
        # and the larger type cuts nothing: no block of text is wider than its own box
        cut = page.evaluate(
            """() => [...document.querySelectorAll('body *')].filter(e => e.getClientRects().length
                && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())
                && getComputedStyle(e).display !== 'inline' && e.scrollWidth > e.clientWidth + 1)
              .map(e => [e.tagName + '#' + e.id, e.textContent.trim().slice(0, 40)])"""
        )
        assert not cut, (lang, cut)
        texts = page.evaluate("() => window.__fonts.splice(0)")
        assert len({t for t, _ in texts}) > 50 and "0" in {t for t, _ in texts}, (lang, texts)
        px = [(t, f, re.findall(r"(\d+(?:\.\d+)?)px", f)) for t, f in texts]
        assert all(len(m) == 1 for _, _, m in px), {f for _, f, m in px if len(m) != 1}
        under = sorted({(f, t) for t, f, m in px if float(m[0]) < 18})
        assert not under, (lang, under[:10])
    assert not errors, errors
    page.close()
