"""The built pages as checkers and readers see them: html-validate (npm, pinned in
tests/node/package-lock.json; `make test` and .ci/run install it) reports no error on any page,
no inline SVG carries matplotlib's RDF metadata, every id is unique on its page (inline SVGs
included, which html-validate does not look into), and the figures' text is words that
find-in-page finds and a copy keeps ("key position n", not "k e y p o s i t i o n")."""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
NODE_TOOLS = ROOT / "tests" / "node"
HTML_VALIDATE = NODE_TOOLS / "node_modules" / ".bin" / "html-validate"
ID = re.compile(r'\bid="([^"]+)"')


def html_validate() -> Path:
    """The pinned html-validate. Only a machine without Node.js skips, and never CI."""
    if HTML_VALIDATE.is_file():
        return HTML_VALIDATE
    if os.environ.get("CI"):
        raise RuntimeError(f"CI must validate the pages: .ci/run runs npm ci --prefix {NODE_TOOLS}")
    if shutil.which("npm") is None:
        pytest.skip("Node.js/npm not installed here (CI installs them and html-validate)")
    raise RuntimeError(f"html-validate is not installed: run 'npm ci --prefix {NODE_TOOLS}'")


def pages_of(built: Path) -> list[Path]:
    return sorted(built.rglob("*.html"))


def test_pages_validate_clean(built: Path, tmp_path: Path) -> None:
    """Every page, the index and the explorer: 0 errors, 0 warnings (html-validate's recommended
    rules; long-title is off: a page's title is its card's title, and the pages are read
    offline, not in a search engine's result list)."""
    tool = html_validate()
    pages = pages_of(built)
    assert len(pages) >= 20
    report_file = tmp_path / "html-validate.json"
    r = subprocess.run(
        [str(tool), "--config", str(NODE_TOOLS / "htmlvalidate.json")]
        + ["--formatter", f"json={report_file}"]  # a file: node may cut a long piped stdout
        + [str(p) for p in pages],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(report_file.read_text(encoding="utf-8"))
    problems = [
        f"{Path(f['filePath']).relative_to(built)}:{m['line']}: {m['ruleId']}: {m['message']}"
        for f in report
        for m in f["messages"]
    ]
    assert not problems, "\n".join(problems)
    assert r.returncode == 0, r.stderr


def test_the_validator_is_not_vacuous(tmp_path: Path) -> None:
    """The same tool and configuration reject a page with a duplicate id and an inline style."""
    tool = html_validate()
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>t</title></head>'
        '<body><p id="a" style="color: red">x</p><p id="a">y</p></body></html>\n',
        encoding="utf-8",
    )
    r = subprocess.run(
        [str(tool), "--config", str(NODE_TOOLS / "htmlvalidate.json"), str(bad)],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    assert "no-dup-id" in r.stdout and "no-inline-style" in r.stdout


def test_inline_svgs_carry_no_metadata_and_ids_are_unique(built: Path) -> None:
    for page in pages_of(built):
        html = page.read_text(encoding="utf-8")
        assert "<metadata" not in html and "rdf:" not in html, page.name
        ids = collections.Counter(ID.findall(html))
        twice = [i for i, n in ids.items() if n > 1]
        assert not twice, (page.name, twice)
        # every reference points at an id of the page
        refs = set(re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', html))
        missing = {a or b for a, b in refs} - set(ids)
        assert not missing, (page.name, sorted(missing)[:5])


def test_inline_svg_writes_mathtext_as_words_in_reading_order() -> None:
    """One mathtext label as matplotlib writes it: one indented <tspan> per glyph, grouped by
    font; inlined, its glyphs are in reading order, one <tspan> per run of one font, each glyph
    keeping its own x, and two equal image ids are made distinct."""
    from matplotlib.figure import Figure

    from posecards.figures.style import card_style
    from posecards.render.files import figure_bytes
    from posecards.render.html import inline_svg

    with card_style("light"):
        fig = Figure(figsize=(3, 2))
        for ax in fig.subplots(1, 2):  # two equal pictures: matplotlib gives them one id
            ax.imshow([[0, 1], [1, 0]], interpolation="none")  # unsampled: equal bytes
        ax.set_xlabel("key position $n$ and $R_{m\\theta}\\,q$")
        svg = figure_bytes(fig, "svg", svg_text="live")  # what the pages inline
    raw = svg.decode()
    assert raw.count('id="image') == 2 and len(set(re.findall(r'id="(image[^"]+)"', raw))) == 1
    assert "<metadata>" in raw and "k</tspan>\n" in raw  # what matplotlib writes
    out = str(inline_svg(svg, "f", "alt"))
    assert "<metadata" not in out
    assert len(set(re.findall(r'id="(f-image[^"]+)"', out))) == 2
    label = re.search(r'<text xml:space="preserve">(.*?)</text>', out)
    assert label is not None
    words = re.sub(r"<[^>]+>", "", label[1])
    assert words == "key position n and Rmθq"  # mathtext's \, is a gap, not a glyph
    spans = re.findall(r'<tspan x="([^"]+)"[^>]*>([^<]*)</tspan>', label[1])
    assert all(len(x.split()) == len(text) for x, text in spans)
    xs = [float(v) for x, _ in spans for v in x.split()]
    assert xs == sorted(xs)


def test_figure_text_is_found_and_copied_as_words(browser: Any, built: Path) -> None:
    """Chromium's find-in-page (window.find) finds figure labels written with mathtext on the
    card pages, in both languages; a page of matplotlib's live-text SVG as it is does not (the
    check can fail)."""
    from conftest import require_chromium

    require_chromium()
    cases = [
        (next((built / "en").glob("card-3-*.html")), ["key position", "query position m"]),
        (next((built / "zh").glob("card-3-*.html")), ["键的位置 n", "查询的位置 m"]),
        (next((built / "en").glob("card-2-*.html")), ["bug: b−j/d per dimension j"]),
    ]
    for path, phrases in cases:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(path.as_uri())
        for phrase in phrases:
            found = page.evaluate("p => window.find(p, true, false, true)", phrase)
            assert found, (path.name, phrase)
        text = page.evaluate("() => document.querySelector('svg').parentElement.textContent")
        assert text
        page.close()
    # the same figure's live-text SVG as matplotlib writes it (what the pages inline, before
    # posecards.render.html.inline_svg)
    from posecards.config import PEParams
    from posecards.content import compute_card
    from posecards.figures.style import card_style
    from posecards.render.figure import draw_standalone
    from posecards.render.files import figure_bytes

    with card_style("light"):
        fig = draw_standalone(
            "c3-scores", compute_card(3, PEParams()).figures["c3-scores"], "en", "light"
        )
        raw = figure_bytes(fig, "svg", tight=True, svg_text="live").decode("utf-8")
    raw_page = built.parent / "raw-svg.html"
    raw_page.write_text(
        "<!DOCTYPE html><html><body>" + raw[raw.index("<svg") :] + "</body></html>",
        encoding="utf-8",
    )
    page = browser.new_page()
    page.goto(raw_page.as_uri())
    assert not page.evaluate("() => window.find('key position', true, false, true)")
    page.close()


_NAMES = st.one_of(
    st.sampled_from(["i", "d", "id", "url", "href", "p1", "clip0", "image1"]),
    st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True),
)


def _prefixed_by_replace(svg: str, prefix: str) -> str:
    """What inline_svg did before it prefixed in one pass: three replaces per id."""
    for old in sorted(set(ID.findall(svg)), key=len, reverse=True):
        new = f"{prefix}-{old}"
        svg = svg.replace(f'id="{old}"', f'id="{new}"')
        svg = svg.replace(f"url(#{old})", f"url(#{new})")
        svg = svg.replace(f'href="#{old}"', f'href="#{new}"')
    return svg


@given(names=st.lists(_NAMES, min_size=1, max_size=8, unique=True), prefix=_NAMES)
def test_inline_svg_prefixes_every_id_and_every_reference_to_it(
    names: list[str], prefix: str
) -> None:
    """Two inline SVGs must not share ids: each id, each url(#id) and each href="#id" gets the
    prefix, and nothing else changes (not a reference to an id the SVG does not define, not
    the attribute names); as the three replaces per id did."""
    from posecards.render.html import inline_svg

    body = "".join(
        f'<clipPath id="{n}"><rect/></clipPath><g clip-path="url(#{n})" data-n="{n}">'
        f'<use xlink:href="#{n}"/><use href="#{n}"/></g>'
        for n in names
    )
    # an upper-case name: never one of the generated ids
    tail = '<g fill="url(#Elsewhere)"/></svg>'
    svg = f'<svg viewBox="0 0 10 10" width="10pt" height="10pt">{body}{tail}'
    out = str(inline_svg(svg.encode(), prefix, "alt"))
    expected = "".join(
        f'<clipPath id="{prefix}-{n}"><rect/></clipPath><g clip-path="url(#{prefix}-{n})" '
        f'data-n="{n}"><use xlink:href="#{prefix}-{n}"/><use href="#{prefix}-{n}"/></g>'
        for n in names
    )
    assert expected + tail in out
    assert _prefixed_by_replace(body + tail, prefix) == expected + tail
