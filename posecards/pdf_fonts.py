"""How posecards' fonts are embedded in a PDF: every subset with TrueType outlines, without the
tables a PDF never reads, in an order that does not depend on where the files lie.

matplotlib's PDF backend subsets each font it drew with (fontTools) and embeds it as TrueType
(FontFile2, CIDFontType2; ``pdf.fonttype`` 42). ``truetype_pdf_fonts`` changes three things
for the duration of a block (``posecards.figures.style.card_style``), through the hooks of
``posecards.mpl_internals.pdf_font_hooks``:

- the CJK font's CFF outlines become TrueType outlines (``cff_to_truetype``);
- the font is loaded without ``PDF_UNUSED_TABLES`` before it is subset, or taken as parsed
  ahead in the fork server (``parse_pdf_font_ahead``, render/warm_pdf.py);
- the fonts are written CJK file first, then by file name (``pdf_font_order``).

The font files themselves are posecards/fonts.py's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from posecards.fonts import cjk_drawn_path, font_file, quiet_font_dates


def cff_to_truetype(font: Any) -> None:
    """Give a (subset) OpenType font with CFF outlines TrueType outlines instead, in place:
    every cubic curve becomes quadratic splines within 1/1000 em (fontTools' cu2qu), in the
    same glyph order and with the same metrics. A PDF embeds a font as TrueType (FontFile2,
    CIDFontType2) with matplotlib's Type 42: with CFF data inside, Ghostscript draws garbage
    and poppler warns of a mismatch; with glyf outlines every reader draws it."""
    from fontTools.pens.cu2quPen import Cu2QuPen
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib import newTable

    if "CFF " not in font:
        return
    order = font.getGlyphOrder()
    glyphs = font.getGlyphSet()
    glyf = newTable("glyf")
    glyf.glyphOrder = order
    glyf.glyphs = {}
    for name in order:
        pen = TTGlyphPen(glyphs)
        # CFF contours run counter-clockwise, TrueType's clockwise
        glyphs[name].draw(Cu2QuPen(pen, max_err=1.0, reverse_direction=True))
        glyph = pen.glyph()
        glyph.recalcBounds(glyf)
        glyf.glyphs[name] = glyph
    font["loca"] = newTable("loca")
    font["glyf"] = glyf
    maxp = font["maxp"]
    maxp.tableVersion = 0x00010000
    for attr in (
        "maxPoints",
        "maxContours",
        "maxCompositePoints",
        "maxCompositeContours",
        "maxComponentDepth",
        "maxTwilightPoints",
        "maxStorage",
        "maxFunctionDefs",
        "maxInstructionDefs",
        "maxStackElements",
        "maxSizeOfInstructions",
        "maxComponentElements",
    ):
        setattr(maxp, attr, 0)
    maxp.maxZones = 1
    maxp.recalc(font)  # points and contours of the new outlines
    post = font["post"]
    post.formatType = 2.0
    post.extraNames = []
    post.mapping = {}
    post.glyphOrder = order
    for tag in ("CFF ", "VORG"):
        if tag in font:
            del font[tag]
    font["head"].glyphDataFormat = 0
    font.sfntVersion = "\0\1\0\0"


# Tables a PDF never reads from an embedded font: PDF text is placed glyph by glyph (no OpenType
# layout: the glyphs matplotlib drew are the glyphs shown) and written horizontally. Left out
# before matplotlib subsets a font for a PDF, so its subsetter neither reads Noto CJK's GSUB
# and vmtx nor adds the glyphs GSUB reaches (alternates: 227 more for card 2's Chinese text,
# each converted to TrueType outlines for nothing).
PDF_UNUSED_TABLES = ("GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH", "vhea", "vmtx", "VORG")


# The fonts as the PDF backend is about to subset them, their tables read already: parsed in the
# fork server of a plan that writes PDFs (render/warm_pdf.py), so that the first PDF of each
# process finds them read (the CJK file's second copy alone is about 0.1 s of each card unit).
# matplotlib subsets a file once for the characters it draws with codes below 256 and once more
# for up to 256 others (Greek, the minus sign, Chinese: the "fi" ligature too), so every card's
# PDF subsets each of these files twice (a Chinese card with more than 256 others: three times).
# A subset changes the font it is given, so each copy serves one subset; later ones load the
# file as usual.
PARSED_AHEAD_COPIES = 2
_PARSED_AHEAD: dict[str, list[Any]] = {}


def parsed_ahead_files() -> tuple[Path, ...]:
    """The files every card's PDF subsets: the CJK file as drawn, DejaVu Sans and its oblique."""
    sans = ("DejaVuSans.ttf", "DejaVuSans-Oblique.ttf")
    return (cjk_drawn_path(), *(font_file(name).path for name in sans))


def _load_pdf_font(subset: Any, fontfile: Any, options: Any, *args: Any, **kwargs: Any) -> Any:
    """fontTools.subset.load_font as matplotlib's PDF backend calls it, without
    PDF_UNUSED_TABLES."""
    font = subset.load_font(fontfile, options, *args, **kwargs)
    for tag in PDF_UNUSED_TABLES:
        if tag in font:
            del font[tag]
    return font


def parse_pdf_font_ahead() -> None:
    """Read the tables of each of parsed_ahead_files() that a PDF subset reads (every table it
    keeps; cmap's subtables, and for CFF outlines the charset and top dict; the glyph order:
    the same objects it would read lazily, so the same subset bytes), PARSED_AHEAD_COPIES
    copies of each, for the next PDF this process writes."""
    from fontTools import subset

    for file in parsed_ahead_files():
        path = str(file)
        for _ in range(PARSED_AHEAD_COPIES):
            _PARSED_AHEAD.setdefault(path, []).append(_parse(subset, path))


def _parse(subset: Any, path: str) -> Any:
    options = subset.Options(glyph_names=True, recommended_glyphs=True)
    options.font_number = 0  # as matplotlib asks for it (the face index)
    font = _load_pdf_font(subset, path, options)
    for tag in font.keys():
        if tag != "GlyphOrder":
            font[tag]
    for table in font["cmap"].tables:
        table.cmap  # noqa: B018 (the property decompiles the subtable)
    if "CFF " in font:
        cff = font["CFF "].cff
        top = cff[cff.fontNames[0]]
        top.CharStrings  # noqa: B018
    font.getReverseGlyphMap()
    return font


class _TrimmedSubset:
    """fontTools.subset as matplotlib's PDF backend uses it, the font loaded without
    PDF_UNUSED_TABLES (matplotlib's own subsetting options unchanged), or parsed ahead."""

    def __init__(self, subset: Any) -> None:
        self._subset = subset

    def __getattr__(self, name: str) -> Any:
        return getattr(self._subset, name)

    def load_font(self, fontfile: Any, options: Any, *args: Any, **kwargs: Any) -> Any:
        as_ahead = not (args or kwargs or options.recalc_bounds or options.recalc_timestamp)
        fonts = _PARSED_AHEAD.get(str(fontfile)) if as_ahead and options.font_number == 0 else None
        if fonts:
            font = fonts.pop(0)
            if not fonts:
                del _PARSED_AHEAD[str(fontfile)]
            return font
        return _load_pdf_font(self._subset, fontfile, options, *args, **kwargs)


@contextlib.contextmanager
def truetype_pdf_fonts() -> Iterator[None]:
    """For the block: matplotlib's PDF backend embeds every font subset with TrueType outlines
    (the CJK font's CFF outlines converted by cff_to_truetype, only the glyphs a PDF uses) and
    without the tables a PDF never reads (PDF_UNUSED_TABLES), with no warning about old font
    dates (quiet_font_dates), its fonts written in an order that does not depend on where the
    files lie (pdf_font_order)."""
    from posecards.mpl_internals import pdf_font_hooks

    with (
        pdf_font_hooks(
            before_embed=cff_to_truetype, subset_module=_TrimmedSubset, font_order=pdf_font_order
        ),
        quiet_font_dates(),
    ):
        yield


def pdf_font_order(path: Any, sub: int) -> tuple[int, str, int, int]:
    """Where a font file (a matplotlib FontPath and a subset number) comes in a PDF: the CJK
    file first, then by file name. matplotlib sorts by full path, so the bytes depended on
    whether the cache (which holds the CJK file posecards draws with) sorts before the folder
    matplotlib is installed in."""
    file = Path(str(path))
    return (
        0 if file == cjk_drawn_path() else 1,
        file.name,
        int(getattr(path, "face_index", 0)),
        sub,
    )
