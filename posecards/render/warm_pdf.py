"""What a drawing process that writes PDFs needs besides render/warm.py, loaded once: the
modules a PDF imports, and the tables of the fonts every card's PDF subsets as a subset reads
them, a copy for each subset (posecards.pdf_fonts.parse_pdf_font_ahead: the CJK file and DejaVu
Sans, upright and oblique, twice each). Loaded in the fork server of a plan that writes PDFs
(``WARM_PDF`` in its ``preload``), so that each unit's first PDF does not read them again (about
0.3 s a unit). A plan without PDFs does not pay for it.
"""

from __future__ import annotations

import importlib

# what a PDF imports besides render/warm.py's: the CFF-to-TrueType conversion
# (pdf_fonts.cff_to_truetype) and pypdf, which places the pages (render/files.scaled_pdf_pages)
MODULES = (
    "fontTools.cffLib.transforms",
    "fontTools.pens.cu2quPen",
    "fontTools.pens.ttGlyphPen",
    "fontTools.ttLib.tables._l_o_c_a",
    "pypdf",
)


def _load() -> None:
    for name in MODULES:
        importlib.import_module(name)
    from posecards.pdf_fonts import parse_pdf_font_ahead

    try:
        parse_pdf_font_ahead()
    except Exception:  # only a speed-up: the first PDF of a unit then reads the file
        # (an error here would stop the fork server, and every unit with it)
        pass


_load()
