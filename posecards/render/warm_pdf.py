"""What a drawing process that writes PDFs needs besides render/warm.py, loaded once: the CJK
font's tables as a PDF subset reads them (posecards.pdf_fonts.parse_pdf_font_ahead), in the fork
server of a plan that writes PDFs (``WARM_PDF`` in its ``preload``), so that each unit's first
PDF does not read them again (about 0.18 s a unit). A plan without PDFs does not pay for it.
"""

from __future__ import annotations


def _load() -> None:
    from posecards.pdf_fonts import parse_pdf_font_ahead

    try:
        parse_pdf_font_ahead()
    except Exception:  # only a speed-up: the first PDF of a unit then reads the file
        # (an error here would stop the fork server, and every unit with it)
        pass


_load()
