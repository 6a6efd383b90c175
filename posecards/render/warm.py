"""What every drawing process needs, loaded once: the fork server that starts the card, deck
and inspection processes (engine.executor, ``Plan.preload``) imports this module, and each
unit's process is forked from it with these modules imported and the font files opened,
instead of spending a second or two loading them again (and, for a plan that writes PDFs,
the CJK font's tables read for each unit's first PDF: render/warm_pdf.py).

Nothing is drawn, measured or parsed here (no text metrics, no mathtext, no layout): a unit's
bytes depend on its inputs only, and every unit starts from this same state.
"""

from __future__ import annotations

import importlib

MODULES = (
    "numpy",
    "numpy.random",
    "jinja2",
    "PIL.Image",
    "PIL.PngImagePlugin",
    "fontTools.subset",
    "fontTools.ttLib",
    "matplotlib.figure",
    "matplotlib.pyplot",
    "matplotlib.font_manager",
    "matplotlib.mathtext",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_svg",
    "matplotlib.backends.backend_pdf",
    "posecards.content",
    "posecards.figures",
    "posecards.figures.style",
    "posecards.render.build",
    "posecards.render.card_unit",
    "posecards.render.compose",
    "posecards.render.figure",
    "posecards.render.files",
    "posecards.render.footers",
    "posecards.render.text",
)


def _load() -> None:
    for name in MODULES:
        importlib.import_module(name)
    from PIL import Image

    Image.preinit()  # its common formats' plugins, as the first Image.open would import them
    from matplotlib.font_manager import get_font

    from posecards.fonts import font_entries

    # open each font file (matplotlib keeps the FT2Font per file; a unit sets its size itself)
    for entry in font_entries():
        get_font(entry.fname)


_load()
