"""The PDF deck: the slides' vector pages (drawn by matplotlib with their fonts embedded)
merged into one file, every page scaled to 13.333 x 7.5 in (960 x 540 pt).

The pages of one build unit (a card's slides in one language, or the title and closing slides)
are written into one PDF (``PageBook``): matplotlib then embeds each font once per unit instead
of once per slide. Subsetting the CJK font is the costliest step of drawing a slide.
"""

from __future__ import annotations

import io
from typing import Any


class PageBook:
    """Vector pages written one figure at a time into one in-memory PDF."""

    def __init__(self) -> None:
        from matplotlib.backends.backend_pdf import PdfPages

        from posecards.render.files import SAVE_METADATA

        self._buf = io.BytesIO()
        self._pdf = PdfPages(self._buf, metadata=SAVE_METADATA["pdf"])
        self.pages = 0

    def add(self, fig: Any, dpi: float) -> int:
        """Write ``fig`` (already laid out) as the next page; its 0-based page number."""
        from posecards.render.files import without_pre_draw

        with without_pre_draw(fig):
            self._pdf.savefig(fig, dpi=dpi)
        self.pages += 1
        return self.pages - 1

    def close(self) -> bytes:
        self._pdf.close()
        return self._buf.getvalue()


def merge_pages(pages: list[tuple[bytes, int, float]]) -> bytes:
    """One page per (PDF, page number, scale factor), in order; deterministic bytes. Pages
    taken from the same PDF share its embedded fonts."""
    from posecards.render.files import scaled_pdf_pages

    return scaled_pdf_pages(pages)
