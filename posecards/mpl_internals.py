"""Every private matplotlib name posecards relies on, behind one door.

posecards' bytes are deterministic and its layout test measures what is drawn because a few
functions reach past matplotlib's public API. They all live here, each saying what it reaches
and why, so that nothing else in posecards names a private matplotlib object, attribute or
module (tests/test_mpl_internals.py scans the package for one). That test file also checks
every name used here against the installed matplotlib: its presence, its signature and, where
cheap, its behaviour, and fails with the name of the function here that needs a look.

Written against matplotlib 3.11 (3.11.2); pyproject.toml accepts ``>=3.11,<3.12`` because
matplotlib makes no promise about private names between minor versions.

matplotlib is imported inside the functions: importing this module costs nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

TESTED_WITH = "3.11"  # the matplotlib minor version every name below was read from

# ------------------------------------------------------------------------------ the font list


@contextlib.contextmanager
def only_fonts(entries: Sequence[Any]) -> Iterator[None]:
    """For the block, matplotlib's font manager knows only ``entries`` (FontEntry objects).

    ``FontManager.ttflist`` is the list ``findfont`` scores; ``findfont`` memoises its answers
    in the private ``FontManager._findfont_cached`` (an lru_cache), emptied on the way in and
    out so that no answer from before the block (an installed font) is used inside it, nor one
    from inside after it."""
    from matplotlib import font_manager

    fm = font_manager.fontManager
    saved = fm.ttflist
    fm.ttflist = list(entries)
    font_manager.FontManager._findfont_cached.cache_clear()  # type: ignore[attr-defined]
    try:
        yield
    finally:
        fm.ttflist = saved
        font_manager.FontManager._findfont_cached.cache_clear()  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- mathtext parses

# the rcParams a mathtext parse reads besides its arguments (matplotlib/_mathtext.py: the
# default and fallback fonts, each ``mathtext.<texfont>``; font_manager.get_font: hinting and
# kerning factors): part of the shared memo's key, so that an rc_context changing one inside
# the block parses afresh
MATH_PARSE_RC = (
    "mathtext.default",
    "mathtext.fallback",
    "mathtext.rm",
    "mathtext.it",
    "mathtext.bf",
    "mathtext.bfit",
    "mathtext.sf",
    "mathtext.tt",
    "mathtext.cal",
    "text.hinting_factor",
    "text.kerning_factor",
)


@contextlib.contextmanager
def shared_math_parses() -> Iterator[None]:
    """For the block, each mathtext expression is parsed once per key (the output kind, and
    what matplotlib keys its own cache on: expression, dpi, font properties, antialiasing,
    hinting; and MATH_PARSE_RC), whichever renderer asks.

    matplotlib keeps its parses per parser object in ``MathTextParser._parse_cached`` (an
    lru_cache of 50 around the parse, ``__wrapped__``; the parser's kind in
    ``_output_type``), and every renderer makes its own parser: a figure's PNG, SVG and PDF,
    each PDF page and each animation frame parsed the same labels again (a deck's animations:
    1,223 parses of 244 expressions, most of them evicted and parsed again). A parse depends
    only on its key (the fonts are fixed inside card_style), so sharing it gives the same
    boxes, the same glyphs, the same bytes; the memo is dropped with the block. A block inside
    another uses the outer block's memo.
    """
    import matplotlib as mpl
    from matplotlib import mathtext

    parser: Any = mathtext.MathTextParser
    cached = parser._parse_cached
    if getattr(cached, "shared_by_posecards", False):  # inside another block: its memo
        yield
        return
    parse = getattr(cached, "__wrapped__", None)  # matplotlib's parse, under its lru_cache
    if parse is None:  # a matplotlib that does not cache this way: keep its own cache
        yield
        return
    memo: dict[tuple[Any, ...], Any] = {}
    params: Any = mpl.rcParams
    rc = [k for k in MATH_PARSE_RC if k in params]

    def parse_once(self: Any, *args: Any) -> Any:
        key = (self._output_type, *args, *(params[k] for k in rc))
        if key not in memo:
            memo[key] = parse(self, *args)
        return memo[key]

    parse_once.shared_by_posecards = True  # type: ignore[attr-defined]
    parser._parse_cached = parse_once
    try:
        yield
    finally:
        parser._parse_cached = cached


# ------------------------------------------------------------------------------ text metrics


def text_metrics(
    renderer: RendererBase, text: str, prop: FontProperties, ismath: bool | str, dpi: float
) -> tuple[float, float, float]:
    """(width, height, descent) in pixels of one line, from matplotlib's own memo of text
    metrics per renderer (``matplotlib.text._get_text_metrics_with_cache``), which its layout
    fills: a line measured here and drawn later, or drawn and measured after, is laid out by
    FreeType once."""
    from matplotlib.text import _get_text_metrics_with_cache  # type: ignore[attr-defined]

    w, h, d = _get_text_metrics_with_cache(renderer, text, prop, ismath, dpi)
    return float(w), float(h), float(d)


def text_lines(t: Text, renderer: RendererBase) -> list[tuple[str, bool | str, float, float]]:
    """Each line of a text as matplotlib lays it out for ``renderer``: (the line after mathtext
    preprocessing, its math kind (False, True or "TeX"), x and y offset of the line in display
    pixels from the text's anchor), from ``Text._get_layout`` (3.11: bbox, a list of (line,
    (width, ascent, descent), (x, y)), descent) and ``Text._preprocess_math``."""
    text: Any = t
    _, info, _ = text._get_layout(renderer)
    out = []
    for line, _wad, (lx, ly) in info:
        clean, ismath = text._preprocess_math(line)
        out.append((str(clean), ismath, float(lx), float(ly)))
    return out


def draw_disabled(renderer: RendererBase) -> contextlib.AbstractContextManager[None]:
    """The renderer with its draw_* methods no-ops for the block (``_draw_disabled``): a
    figure's draw lays everything out (text positions, layout) and paints nothing."""
    r: Any = renderer
    return r._draw_disabled()  # type: ignore[no-any-return]


# -------------------------------------------------------------------------------- the layout


def set_position_in_layout(ax: Axes, bbox: Bbox, which: str) -> None:
    """Set an axes' ``which`` ("original" or "active") position as a layout engine does
    (``Axes._set_position``): the public set_position would also take the axes out of the
    layout (set_in_layout(False)), which a tight bounding box would then ignore."""
    place: Any = ax
    place._set_position(bbox, which=which)


@contextlib.contextmanager
def layout_engine_hidden(fig: Figure) -> Iterator[None]:
    """For the block, the figure has no layout engine (``Figure._layout_engine`` is None, which
    ``set_layout_engine`` cannot set back to the same engine object), so that savefig does not
    lay it out again before it encodes; the engine is back after the block."""
    place: Any = fig
    engine = place._layout_engine
    place._layout_engine = None
    try:
        yield
    finally:
        place._layout_engine = engine


def keep_title_positions(ax: Axes) -> None:
    """The axes' titles stay where they are on later draws (``Axes._autotitlepos`` False, as
    when a title's y is set by hand): matplotlib otherwise measures every tick label again on
    each draw to place them."""
    place: Any = ax
    place._autotitlepos = False


# ------------------------------------------------------------------------ PDF font embedding


@contextlib.contextmanager
def pdf_font_hooks(
    *,
    before_embed: Callable[[Any], None],
    subset_module: Callable[[Any], Any],
    font_order: Callable[[Any, int], Any],
) -> Iterator[None]:
    """For the block, matplotlib's PDF backend:

    - calls ``before_embed(font)`` on each subset fontTools font before it writes it
      (``matplotlib.backends._backend_pdf_ps.font_as_file``, which backend_pdf looks up on the
      module at each call);
    - subsets with ``subset_module(fontTools.subset)`` in place of fontTools.subset (the
      ``subset`` name of ``_backend_pdf_ps``, whose ``get_glyphs_subset`` calls its
      ``load_font``, ``Options`` and ``Subsetter``);
    - writes its fonts sorted by ``font_order(font path, subset number)`` instead of by full
      path: ``PdfFile.writeFonts`` is replaced by a copy of 3.11's (below), which reads the
      PdfFile's private ``_dviFontInfo``, ``_embedTeXFont``, ``_fontNames``,
      ``_write_afm_font`` and ``_character_tracker``.
    """
    from matplotlib.backends import _backend_pdf_ps, backend_pdf

    pdf_ps: Any = _backend_pdf_ps  # its `subset` is fontTools.subset, imported, not exported
    original_as_file: Callable[[Any], Any] = pdf_ps.font_as_file
    subset = pdf_ps.subset
    pdf_file: Any = backend_pdf.PdfFile
    write_fonts = pdf_file.writeFonts

    def font_as_file(font: Any) -> Any:
        before_embed(font)
        return original_as_file(font)

    def write_fonts_in_order(self: Any) -> None:
        """matplotlib 3.11's PdfFile.writeFonts (its debug logging left out) with the fonts
        in ``font_order``."""
        fonts = {}
        for pdfname, dvifont in sorted(self._dviFontInfo.items()):
            fonts[pdfname] = self._embedTeXFont(dvifont)
        for (filename, sub), fx in sorted(
            self._fontNames.items(), key=lambda kv: font_order(*kv[0])
        ):
            if filename.endswith(".afm"):
                fonts[fx] = self._write_afm_font(filename)
            else:
                charmap = self._character_tracker.used[filename][sub]
                fonts[fx] = self.embedTTF(filename, sub, charmap)
        self.writeObject(self.fontObject, fonts)

    pdf_ps.font_as_file = font_as_file
    pdf_ps.subset = subset_module(subset)
    pdf_file.writeFonts = write_fonts_in_order
    try:
        yield
    finally:
        pdf_ps.font_as_file = original_as_file
        pdf_ps.subset = subset
        pdf_file.writeFonts = write_fonts
