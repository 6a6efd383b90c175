"""The PDF deck: the slides' vector pages (each drawn by matplotlib with its fonts embedded)
merged into one file, every page scaled to 13.333 x 7.5 in (960 x 540 pt)."""

from __future__ import annotations

import io


def merge_pages(pages: list[tuple[bytes, float]]) -> bytes:
    """One page per (single-page PDF, scale factor), in order; deterministic bytes."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for data, scale in pages:
        page = writer.add_page(PdfReader(io.BytesIO(data)).pages[0])
        if abs(scale - 1.0) > 1e-12:
            page.scale_by(scale)
    # no dates, producer or random file id: the same slides give the same bytes
    writer._info = None
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()
