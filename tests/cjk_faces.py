"""Which face of the Noto Sans CJK collection a PDF's Chinese glyphs were drawn with.

Debian's NotoSansCJK-{Regular,Bold}.ttc holds the JP, KR, SC, TC and HK faces over one shared
CFF table named "NotoSansCJKjp-…", so a PDF that embeds glyphs from it names the font
NotoSansCJKjp whichever face was used, and pdffonts cannot tell. The faces differ in their cmaps:
many ideographs map to a different glyph (a regional form) in each. This module reads the glyphs
a PDF embeds for each ideograph (LibreOffice writes them as Type 1 fonts with a ToUnicode map)
and compares their outlines with each face's glyph for the same character.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

FACES = {0: "JP", 1: "KR", 2: "SC", 3: "TC", 4: "HK"}


def collection(weight: str) -> Path | None:
    """The Noto Sans CJK collection file fontconfig uses for ``weight`` (Regular, Bold)."""
    if shutil.which("fc-match") is None:
        return None
    out = subprocess.run(
        ["fc-match", "-f", "%{file}", f"Noto Sans CJK SC:{weight.lower()}"],
        capture_output=True,
        text=True,
    ).stdout
    path = Path(out)
    return path if path.suffix == ".ttc" and path.is_file() else None


def _outline(glyphs: Any, name: str) -> list[tuple[str, tuple[tuple[int, ...], ...]]]:
    from fontTools.pens.recordingPen import RecordingPen

    pen = RecordingPen()
    glyphs[name].draw(pen)
    return [
        (op, tuple(tuple(round(c) for c in pt) for pt in args))
        for op, args in pen.value
        if op not in ("closePath", "endPath")
    ]


@cache
def _faces(path: Path) -> dict[str, tuple[dict[int, str], Any]]:
    from fontTools.ttLib import TTFont

    out = {}
    for i, face in FACES.items():
        font = TTFont(str(path), fontNumber=i, lazy=True)
        out[face] = (font.getBestCmap(), font.getGlyphSet())
    return out


def _type1(stream: Any) -> Any:
    """An embedded Type 1 font program (/FontFile: cleartext, eexec part, trailer) as a font."""
    from fontTools.t1Lib import T1Font

    data = stream.get_data()
    n1, n2 = int(stream["/Length1"]), int(stream["/Length2"])
    pfb = b""
    for kind, seg in ((1, data[:n1]), (2, data[n1 : n1 + n2]), (1, data[n1 + n2 :])):
        pfb += bytes([0x80, kind]) + struct.pack("<I", len(seg)) + seg
    with tempfile.NamedTemporaryFile(suffix=".pfb", delete=False) as fh:
        fh.write(pfb + b"\x80\x03")
    font = T1Font(fh.name)
    font.parse()
    Path(fh.name).unlink()
    return font


def faces_of_ideographs(pdf: Path) -> dict[str, set[str]]:
    """For every ideograph whose glyph differs between the faces: the faces whose glyph the PDF
    drew it with (e.g. {"SC"}, or {"SC", "TC"} where those two agree)."""
    from pypdf import PdfReader

    found: dict[str, set[str]] = {}
    seen = set()
    for page in PdfReader(str(pdf)).pages:
        for ref in page["/Resources"].get_object().get("/Font", {}).values():
            font = ref.get_object()
            base = str(font["/BaseFont"])
            if "NotoSansCJK" not in base or base in seen or "/ToUnicode" not in font:
                continue
            seen.add(base)
            path = collection("Bold" if "Bold" in base else "Regular")
            desc = font["/FontDescriptor"].get_object()
            if path is None or "/FontFile" not in desc:
                continue
            program = _type1(desc["/FontFile"].get_object())
            encoding, strings = program["Encoding"], program["CharStrings"]
            cmap = font["/ToUnicode"].get_object().get_data().decode("latin-1")
            for code, uni in re.findall(r"<([0-9A-Fa-f]{2})>\s*<([0-9A-Fa-f]{4})>", cmap):
                ch = chr(int(uni, 16))
                if not "\u4e00" <= ch <= "\u9fff":
                    continue
                drawn = _outline(strings, encoding[int(code, 16)])
                faces = {
                    face
                    for face, (fcmap, glyphs) in _faces(path).items()
                    if ord(ch) in fcmap and _outline(glyphs, fcmap[ord(ch)]) == drawn
                }
                if faces != set(FACES.values()):  # a character whose faces differ
                    found[ch] = faces
    return found


def sc_and_jp_counts(pdf: Path) -> tuple[int, int]:
    """(ideographs drawn in the SC form and not the JP one, those in the JP form not the SC)."""
    faces = faces_of_ideographs(pdf).values()
    return (
        sum("SC" in f and "JP" not in f for f in faces),
        sum("JP" in f and "SC" not in f for f in faces),
    )
