"""Fonts that travel with the HTML pages (posecards/render/webfonts.py): which faces a page
draws with, subsets that cover every character it draws, stable bytes, and the CSP that lets
data: fonts in. The browser side (glyphs really drawn by these faces) is in test_browser.py."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest

from posecards.config import CARD_IDS
from posecards.render.html import CSP, FACES_SLOT, embed_fonts, inline_svg
from posecards.render.webfonts import (
    PREFIX,
    Face,
    assign_faces,
    font_face_css,
    page_chars,
    text_runs,
)

_FACE = re.compile(
    r'@font-face \{ font-family: "([^"]+)"; font-weight: (\d+); font-style: (\w+); '
    r'font-display: block; src: url\(data:font/woff;base64,([A-Za-z0-9+/=]+)\) format\("woff"\); \}'
)

PAGE = """<!DOCTYPE html><html><head><title>ignored 標</title><style>p { x: "忽" }</style></head>
<body><h1>位置编码 Bold</h1><p>Plain 注意力 p = 0.973, 1.1×10⁻¹⁶</p>
<details><summary>TeX</summary><code>\\omega_i = b^{-2i/d}</code></details>
<svg viewBox="0 0 10 10"><title>alt 隐</title>
<text style="font-size: 12px; font-family: 'Noto Sans CJK SC', 'DejaVu Sans'">位置 p</text>
<text style="font-weight: 700; font-family: 'Noto Sans CJK SC', 'DejaVu Sans'">标题</text>
<g style="font-size: 8.4px; font-family: 'DejaVu Sans'; font-style: oblique"><text>θ</text></g>
</svg></body></html>"""


def _faces(css: str) -> dict[Face, set[int]]:
    from fontTools.ttLib import TTFont

    out = {}
    for family, weight, style, data in _FACE.findall(css):
        font = TTFont(io.BytesIO(base64.b64decode(data)))
        assert font.flavor == "woff"
        assert family.startswith(PREFIX)
        out[Face(family.removeprefix(PREFIX), int(weight), style)] = set(font.getBestCmap())  # type: ignore[arg-type]
    return out


def test_runs_follow_tags_and_svg_styles() -> None:
    runs = text_runs(PAGE)
    drawn = page_chars(PAGE)
    # the head, the SVG's <title> (alt text) and CSS are never drawn
    assert not {"標", "忽", "隐"} & drawn
    assert {"位", "置", "编", "码", "B"} <= runs[
        (("Noto Sans CJK SC", "DejaVu Sans"), 700, "normal")
    ]
    assert "标" in runs[(("Noto Sans CJK SC", "DejaVu Sans"), 700, "normal")]
    assert runs[(("DejaVu Sans",), 400, "oblique")] == {"θ"}
    assert (
        "ω" not in drawn
        and "\\" in runs[(("DejaVu Sans Mono", "Noto Sans CJK SC", "DejaVu Sans"), 400, "normal")]
    )
    assert " " in drawn  # spaces are drawn: their width comes from the font too


def test_every_drawn_character_is_in_an_embedded_face_of_its_stack() -> None:
    css = font_face_css(PAGE)
    faces = _faces(css)
    assert Face("Noto Sans CJK SC", 400, "normal") in faces
    assert Face("DejaVu Sans", 400, "oblique") in faces
    for (families, weight, style), chars in text_runs(PAGE).items():
        for ch in chars:
            have = [f for f in families if ord(ch) in faces.get(Face(f, weight, style), set())]
            assert have, f"{ch!r} ({families}, {weight}, {style}) is in no embedded face"
    # a subset holds what the page draws, not the whole font
    assert len(faces[Face("Noto Sans CJK SC", 400, "normal")]) < 80
    # first family that has the glyph wins, as in matplotlib and the browser
    assigned = assign_faces(text_runs(PAGE))
    assert "θ" in assigned[Face("DejaVu Sans", 400, "oblique")]
    assert "位" not in assigned.get(Face("DejaVu Sans", 400, "normal"), set())


def test_embedding_is_deterministic_and_never_simhei() -> None:
    from posecards.render import webfonts

    first = font_face_css(PAGE)
    webfonts._subset_woff.cache_clear()
    assert font_face_css(PAGE) == first
    files = {webfonts._face_file(f) for f in _faces(first)}
    assert all(f is not None and "simhei" not in f[0].lower() for f in files), files


def _drafts() -> list[str]:
    # two pages as card_page/figure_page make them: the slot in the head's <style>, where it is
    # never drawn; the second page draws characters the first does not
    first = PAGE.replace("<head>", f"<head><style>{FACES_SLOT}</style>", 1)
    return [first, first.replace("位置编码", "旋转位置")]


def test_pages_of_a_group_share_one_subset_per_face_that_covers_them_all() -> None:
    from posecards.render import webfonts

    drafts = _drafts()
    webfonts._subset_woff.cache_clear()
    pages = embed_fonts(drafts)
    # one subset per face for the group: as many subsets made as faces embedded
    faces = _faces(pages[0])
    assert webfonts._subset_woff.cache_info().misses == len(faces)
    # every page carries the same rules: those of all the group's pages together
    rules = [_FACE.findall(p) for p in pages]
    assert rules[0] == rules[1] and "".join(map(str, rules[0])) != ""
    assert font_face_css(*drafts) in pages[0]
    assert FACES_SLOT not in pages[0] and FACES_SLOT not in pages[1]
    # and each page draws only glyphs its faces have, the other page's too
    bold = faces[Face("Noto Sans CJK SC", 700, "normal")]  # the <h1>s
    assert {ord(c) for c in "位置编码旋转"} <= bold
    for page in pages:
        for (families, weight, style), chars in text_runs(page).items():
            for ch in chars:
                assert any(ord(ch) in faces.get(Face(f, weight, style), set()) for f in families)


def test_same_pages_give_the_same_bytes_in_a_fresh_process() -> None:
    import json
    import subprocess
    import sys

    from posecards.render import webfonts

    webfonts._subset_woff.cache_clear()
    here = embed_fonts(_drafts())
    code = (
        "import json, sys; from posecards.render.html import embed_fonts; "
        "print(json.dumps(embed_fonts(json.load(sys.stdin))))"
    )
    there = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(_drafts()),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(there) == here


def test_a_page_without_its_slot_is_an_internal_error() -> None:
    with pytest.raises(RuntimeError, match="internal error: a page has 0 font slots"):
        embed_fonts([PAGE])


def test_face_coverage_is_the_fonts_best_cmap() -> None:
    """Which face draws a character is decided from FreeType's reading of the cmap: the same
    code points as fontTools' best cmap (the subsetter's)."""
    from fontTools.ttLib import TTFont

    from posecards.render import webfonts

    for face in (Face("Noto Sans CJK SC", 400, "normal"), Face("DejaVu Sans Mono", 400, "normal")):
        where = webfonts._face_file(face)
        assert where is not None
        best = set(TTFont(where[0], fontNumber=where[1], lazy=True).getBestCmap())
        assert webfonts._cmap(face) == best and len(best) > 3000


def test_svg_text_names_the_embedded_families() -> None:
    svg = (
        b'<?xml version="1.0"?>\n<svg width="10pt" height="10pt" viewBox="0 0 10 10">'
        b"<text style=\"font-size: 12px; font-family: 'Noto Sans CJK SC', 'DejaVu Sans'\">x</text>"
        b"<text style=\"font-family: 'DejaVu Sans'; font-style: oblique\">y</text></svg>"
    )
    out = str(inline_svg(svg, "f1", "alt"))
    assert "font-family: 'posecards Noto Sans CJK SC', 'posecards DejaVu Sans'" in out
    assert "font-family: 'posecards DejaVu Sans'; font-style: oblique" in out


def test_csp_lets_data_fonts_in_and_nothing_from_the_network() -> None:
    rules = dict(r.strip().split(" ", 1) for r in CSP.split(";"))
    assert "data:" in rules["font-src"].split()
    assert rules["default-src"] == "'none'"
    assert "http" not in CSP


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_built_pages_carry_every_glyph_they_draw(built: Path, lang: str) -> None:
    pages = sorted((built / lang).glob("card-*.html"))
    assert len(pages) == len(CARD_IDS)
    for path in pages:
        html = path.read_text(encoding="utf-8")
        faces = _faces(html)
        assert faces, f"{path.name}: no embedded font"
        for (families, weight, style), chars in text_runs(html).items():
            missing = {
                ch
                for ch in chars
                if not any(ord(ch) in faces.get(Face(f, weight, style), set()) for f in families)
            }
            assert not missing, f"{path.name}: {sorted(missing)} in no embedded face"
        # fonts travel, but the page stays a page: CJK subsets keep it small
        assert len(html.encode("utf-8")) < 1_000_000, path.name


def test_built_pages_of_a_language_share_their_fonts(built: Path) -> None:
    """Issue 24: the fonts of a language's pages are subset once for all of them, so every
    card and figure page of a language embeds the very same @font-face rules."""
    for lang in ("en", "zh"):
        pages = sorted((built / lang).glob("card-*.html")) + sorted(
            (built / lang / "figures").glob("*.html")
        )
        assert len(pages) > len(CARD_IDS)
        rules = {tuple(_FACE.findall(p.read_text(encoding="utf-8"))) for p in pages}
        assert len(rules) == 1 and next(iter(rules)), lang
