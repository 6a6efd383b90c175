"""Fonts that travel with the HTML pages: the faces the figures were drawn with, subset to the
characters each page draws in them, embedded as WOFF (zlib) data URLs in @font-face rules.

The embedded families get a "posecards " prefix, so no installed font of the same name can stand
in for them: a page looks the same on a machine without Noto Sans CJK or DejaVu Sans, and a
failed embed shows up as fallback (tests/test_browser.py checks that every glyph is drawn by an
embedded face). The face files are the ones matplotlib resolves under `card_style`, so the
inline SVG figures (svg.fonttype: none) are drawn with the same glyphs as the PNGs.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from typing import Literal

PREFIX = "posecards "
# the stack of page text (HTML and figures), in matplotlib's font.family order (figures/style.py)
PAGE_FAMILIES = ("Noto Sans CJK SC", "DejaVu Sans")
MONO_FAMILIES = ("DejaVu Sans Mono",)  # <code>: the TeX source of a formula
# HTML elements drawn bold by templates/card.css
_BOLD_TAGS = frozenset({"h1", "h2", "h3", "b", "strong", "th"})
_BOLD_CLASSES = frozenset({"current"})
# name table entries kept: names, version, and the licence (OFL / Bitstream Vera) with its URL
_NAME_IDS = (0, 1, 2, 3, 4, 5, 6, 13, 14)
# Layout tables are left out: matplotlib draws the figures without OpenType features (no GPOS
# kerning, no GSUB substitutions), so the browser draws their live text with the same advances
# as the PNGs; and reading Noto CJK's GSUB/GPOS was most of a subset's cost (issue 24).
_LAYOUT_TABLES = ("GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH")
# Vertical metrics are left out too: the pages are written horizontally (no writing-mode), and
# Noto CJK's vmtx is another table of 65,535 entries to read per subset.
_VERTICAL_TABLES = ("vhea", "vmtx", "VORG")
_UNUSED_TABLES = (*_LAYOUT_TABLES, *_VERTICAL_TABLES)


Style = Literal["normal", "italic", "oblique"]


@dataclass(frozen=True, order=True)
class Face:
    family: str  # as matplotlib names it, without PREFIX
    weight: int  # 400 or 700
    style: Style


def css_stack(families: Iterable[str] = PAGE_FAMILIES) -> str:
    """A CSS font-family list naming the embedded families."""
    return ", ".join(f'"{PREFIX}{f}"' for f in families)


_FAMILY = re.compile(r"font-family: ?([^;\"]*)")


def rename_svg_families(svg: str) -> str:
    """Point the font-family of matplotlib's SVG text at the embedded families."""

    def one(m: re.Match[str]) -> str:
        names = [n.strip().strip("'\"") for n in m.group(1).split(",")]
        return "font-family: " + ", ".join(f"'{PREFIX}{n}'" for n in names if n)

    return _FAMILY.sub(one, svg)


def _weight(value: str) -> int:
    v = value.strip().lower()
    if v in ("bold", "bolder"):
        return 700
    if v.isdigit():
        return 700 if int(v) >= 600 else 400
    return 400


def _style(value: str) -> Style:
    v = value.strip().lower()
    return "italic" if v == "italic" else "oblique" if v == "oblique" else "normal"


class _Runs(HTMLParser):
    """Characters of a page by the (family stack, weight, style) they are drawn with."""

    _VOID = frozenset({"meta", "link", "br", "img", "hr", "input", "wbr"})
    _HIDDEN = frozenset({"head", "title", "style", "script"})  # never drawn (SVG <title> is alt)

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, tuple[str, ...], int, Style]] = []
        self.runs: dict[tuple[tuple[str, ...], int, Style], set[str]] = {}
        self.hidden = 0

    def _top(self) -> tuple[tuple[str, ...], int, Style]:
        if self.stack:
            return self.stack[-1][1:]
        return PAGE_FAMILIES, 400, "normal"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._VOID:
            return
        a = {k: v or "" for k, v in attrs}
        families, weight, style = self._top()
        if tag == "code":
            families = (*MONO_FAMILIES, *PAGE_FAMILIES)
        if tag in _BOLD_TAGS or _BOLD_CLASSES & set(a.get("class", "").split()):
            weight = 700
        for decl in a.get("style", "").split(";"):
            key, _, value = decl.partition(":")
            key = key.strip()
            if key == "font-family":
                names = [n.strip().strip("'\"") for n in value.split(",")]
                families = tuple(n.removeprefix(PREFIX) for n in names if n)
            elif key == "font-weight":
                weight = _weight(value)
            elif key == "font-style":
                style = _style(value)
        if tag in self._HIDDEN:
            self.hidden += 1
        self.stack.append((tag, families, weight, style))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        return  # <path/>, <use/>, <rect/>: no text

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                self.hidden -= sum(1 for t, *_ in self.stack[i:] if t in self._HIDDEN)
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        chars = set(data) - {"\n", "\r", "\t", "\f"}  # spaces are drawn: their advance counts
        if chars:
            self.runs.setdefault(self._top(), set()).update(chars)


def text_runs(page: str) -> dict[tuple[tuple[str, ...], int, Style], set[str]]:
    """The characters of a page grouped by (family stack, weight, style), head excluded."""
    parser = _Runs()
    parser.feed(page)
    parser.close()
    return parser.runs


@cache
def _face_file(face: Face) -> tuple[str, int] | None:
    """The font file (and index in a collection) matplotlib draws `face` with inside
    card_style, or None: one of the files posecards names (posecards.fonts.face_path), never
    a font found by family name."""
    from posecards.fonts import face_path

    path = face_path(face.family, face.weight, face.style)
    return None if path is None else (str(path), 0)


@cache
def _cmap(face: Face) -> frozenset[int]:
    """The code points `face`'s file has glyphs for, as FreeType reads its Unicode cmap (the
    same set as fontTools' best cmap, read in C: 0.05 s for Noto CJK instead of 0.7 s)."""
    from matplotlib.ft2font import FT2Font

    where = _face_file(face)
    if where is None:
        return frozenset()
    return frozenset(FT2Font(where[0], face_index=where[1]).get_charmap())


def assign_faces(
    runs: Mapping[tuple[tuple[str, ...], int, Style], set[str]],
) -> dict[Face, set[str]]:
    """Per character, the first family of its stack that has a glyph for it (as browsers and
    matplotlib fall back); characters no family has are left out (the browser test finds them)."""
    out: dict[Face, set[str]] = {}
    for (families, weight, style), chars in sorted(runs.items()):
        for ch in sorted(chars):
            for fam in families:
                face = Face(fam, weight, style)
                if ord(ch) in _cmap(face):
                    out.setdefault(face, set()).add(ch)
                    break
    return out


@cache
def _subset_woff(face: Face, chars: frozenset[str]) -> bytes:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    from posecards.fonts import quiet_font_dates

    where = _face_file(face)
    assert where is not None  # only faces with a cmap get characters
    # lazy: only the tables a subset keeps are read; the head/CFF boxes are the full font's
    font = TTFont(
        where[0], fontNumber=where[1], recalcTimestamp=False, recalcBBoxes=False, lazy=True
    )
    for tag in _UNUSED_TABLES:  # before the subsetter reads them
        if tag in font:
            del font[tag]
    opts = subset.Options()
    opts.name_IDs = list(_NAME_IDS)
    opts.hinting = False
    opts.desubroutinize = True
    opts.drop_tables = [*opts.drop_tables, "FFTM", *_UNUSED_TABLES]  # FFTM: FontForge times
    opts.layout_features = []
    opts.flavor = "woff"
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=sorted(ord(c) for c in chars))
    buf = io.BytesIO()
    with quiet_font_dates():
        sub.subset(font)
        font.flavor = "woff"
        font.save(buf)
    return buf.getvalue()


def font_face_css(*pages: str) -> str:
    """@font-face rules embedding, for each face the pages use, the glyphs they draw with it:
    one subset per face for all of them, so pages that share their rules (a build's pages of
    one language: render/html.embed_fonts) cost one subset per face, not one per page."""
    runs: dict[tuple[tuple[str, ...], int, Style], set[str]] = {}
    for page in pages:
        for key, chars in text_runs(page).items():
            runs.setdefault(key, set()).update(chars)
    rules = []
    for face, chars in sorted(assign_faces(runs).items()):
        data = base64.b64encode(_subset_woff(face, frozenset(chars))).decode("ascii")
        rules.append(
            f'@font-face {{ font-family: "{PREFIX}{face.family}"; font-weight: {face.weight}; '
            f"font-style: {face.style}; font-display: block; "
            f'src: url(data:font/woff;base64,{data}) format("woff"); }}'
        )
    return "\n".join(rules)


def page_chars(page: str) -> set[str]:
    """Every character a page draws (tests compare it with the embedded fonts' coverage)."""
    return set().union(*text_runs(page).values())
