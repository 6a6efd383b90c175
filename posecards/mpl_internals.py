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
import os
from collections import OrderedDict
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

# bumped each time only_fonts swaps the font manager's list in or out: part of the key of
# shared_text_metrics, so that no measure made with one list of fonts answers for another
_FONT_LISTS = [0]

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
    _FONT_LISTS[0] += 1
    font_manager.FontManager._findfont_cached.cache_clear()  # type: ignore[attr-defined]
    try:
        yield
    finally:
        fm.ttflist = saved
        _FONT_LISTS[0] += 1
        font_manager.FontManager._findfont_cached.cache_clear()  # type: ignore[attr-defined]


# the rcParams a font lookup reads (font_manager.FontManager.findfont, which keys its own cache
# on them)
FONT_LOOKUP_RC = tuple(
    f"font.{key}"
    for key in (
        "family",
        "style",
        "variant",
        "weight",
        "stretch",
        "size",
        "serif",
        "sans-serif",
        "cursive",
        "fantasy",
        "monospace",
    )
)
SHARED_LOOKUPS = 4096  # font lookups kept (least recently used dropped)


def _prop_fields(prop: FontProperties) -> tuple[Any, ...]:
    """Every field of a FontProperties (matplotlib 3.11 hashes and compares its eight: family
    list, style, variant, weight, stretch, file, size, math family), by its public getters."""
    return (
        tuple(prop.get_family()),
        prop.get_style(),
        prop.get_variant(),
        prop.get_weight(),
        prop.get_stretch(),
        prop.get_file(),
        prop.get_size_in_points(),
        prop.get_math_fontfamily(),
    )


def _rc_values(params: Any, keys: Sequence[str]) -> list[Any]:
    """The stored values of ``keys`` in rcParams (what ``rcParams[key]`` returns), lists as
    tuples (hashable); read straight from the dict: a key costs ~0.1 µs, not ~1 µs."""
    read = dict.__getitem__
    return [tuple(v) if isinstance(v, list) else v for v in [read(params, k) for k in keys]]


def _recall(
    memo: OrderedDict[tuple[Any, ...], Any],
    key: tuple[Any, ...],
    bound: int,
    make: Callable[[], Any],
) -> Any:
    """``memo[key]``, made by ``make()`` the first time; the least recently used entries are
    dropped beyond ``bound``."""
    found = memo.get(key)
    if found is None:
        found = memo[key] = make()
        while len(memo) > bound:
            memo.popitem(last=False)
    else:
        memo.move_to_end(key)
    return found


@contextlib.contextmanager
def shared_font_lookups() -> Iterator[None]:
    """For the block, the font files of a font's family list are looked up once per key
    (``FontManager._find_fonts_by_props``, which every measure and draw of a text line and
    every Text layout calls: 23,687 calls for 20 card draws, each copying the properties and
    asking findfont once per family, each findfont reading eleven rcParams and the
    environment to key its own cache).

    A lookup reads only its arguments (the font properties, every field by _prop_fields;
    fontext, directory, fallback_to_default, rebuild_if_missing), the font manager (the
    object, its list of fonts: only_fonts' generation and the list's length), FONT_LOOKUP_RC
    and the MPL_IGNORE_SYSTEM_FONTS variable: the key holds all of them, so a shared answer
    is the list matplotlib would return (a copy of it is returned). A family that is not
    found is warned about on the first lookup only. Bounded (SHARED_LOOKUPS), dropped with
    the block; a block inside another uses the outer block's memo.
    """
    import matplotlib as mpl
    from matplotlib import font_manager
    from matplotlib.font_manager import FontProperties

    manager: Any = font_manager.FontManager
    original = manager._find_fonts_by_props
    if getattr(original, "shared_by_posecards", False):  # inside another block: its memo
        yield
        return
    memo: OrderedDict[tuple[Any, ...], list[Any]] = OrderedDict()
    params: Any = mpl.rcParams
    rc = [k for k in FONT_LOOKUP_RC if k in params]

    def lookup(
        self: Any,
        prop: Any,
        fontext: str = "ttf",
        directory: Any = None,
        fallback_to_default: bool = True,
        rebuild_if_missing: bool = True,
    ) -> list[Any]:
        if type(prop) is not FontProperties:  # a pattern string, a path: matplotlib's way
            return original(self, prop, fontext, directory, fallback_to_default, rebuild_if_missing)  # type: ignore[no-any-return]
        key = (
            *_prop_fields(prop),
            fontext,
            directory,
            fallback_to_default,
            rebuild_if_missing,
            id(self),
            _FONT_LISTS[0],
            len(self.ttflist),
            os.environ.get("MPL_IGNORE_SYSTEM_FONTS"),
            *_rc_values(params, rc),
        )
        found = _recall(
            memo,
            key,
            SHARED_LOOKUPS,
            lambda: list(
                original(self, prop, fontext, directory, fallback_to_default, rebuild_if_missing)
            ),
        )
        return list(found)

    lookup.shared_by_posecards = True  # type: ignore[attr-defined]
    manager._find_fonts_by_props = lookup
    try:
        yield
    finally:
        manager._find_fonts_by_props = original


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


# the rcParams an Agg measure of one line reads besides its arguments: the font lookup's
# (FONT_LOOKUP_RC), font_manager.get_font's last-resort font, backend_agg's hinting flag and
# mathtext's parse (text.antialiased and MATH_PARSE_RC, whose hinting and kerning factors
# get_font reads too)
TEXT_METRICS_RC = (
    *FONT_LOOKUP_RC,
    "font.enable_last_resort",
    "text.hinting",
    "text.antialiased",
    *MATH_PARSE_RC,
)
SHARED_METRICS = 16384  # measures kept (least recently used dropped): ~20 cards' worth


@contextlib.contextmanager
def shared_text_metrics() -> Iterator[None]:
    """For the block, a line of text is measured by FreeType once per key for every Agg
    renderer, not once per renderer.

    matplotlib keeps its measures (``matplotlib.text._get_text_metrics_with_cache``, which
    Text layout, offsetbox and text_metrics call through the module) per renderer object, and
    a figure drawn on a new canvas (the layout and contrast checks' draw after a card's
    composition; each card of a build) measured again every line the composer had measured.
    An Agg measure (``RendererAgg.get_text_width_height_descent``) reads only: the string,
    the math flag, the renderer's dpi, the font properties (family list, style, variant,
    weight, stretch, file, size in points, math family: every field of FontProperties, by
    _prop_fields), the fonts the family list resolves to (the font manager object, its list --
    only_fonts' generation and the list's length --, MPL_IGNORE_SYSTEM_FONTS and the lookup's
    rcParams) and TEXT_METRICS_RC; the key holds all of them, so a shared measure is the
    number the renderer would compute. Other renderers (SVG, PDF) and usetex keep
    matplotlib's own cache. Bounded (SHARED_METRICS entries), dropped with the block; a
    block inside another uses the outer block's memo.
    """
    import matplotlib as mpl
    from matplotlib import font_manager
    from matplotlib import text as mtext
    from matplotlib.backends.backend_agg import RendererAgg

    place: Any = mtext
    original = place._get_text_metrics_with_cache
    if getattr(original, "shared_by_posecards", False):  # inside another block: its memo
        yield
        return
    memo: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
    params: Any = mpl.rcParams
    rc = [k for k in TEXT_METRICS_RC if k in params]

    def metrics(renderer: Any, text: str, fontprop: Any, ismath: Any, dpi: Any) -> Any:
        if type(renderer) is not RendererAgg or ismath == "TeX":
            return original(renderer, text, fontprop, ismath, dpi)
        fm = font_manager.fontManager
        key = (
            os.environ.get("MPL_IGNORE_SYSTEM_FONTS"),
            text,
            ismath,
            renderer.dpi,
            dpi,
            *_prop_fields(fontprop),
            id(fm),
            _FONT_LISTS[0],
            len(fm.ttflist),
            *_rc_values(params, rc),
        )
        return _recall(
            memo, key, SHARED_METRICS, lambda: original(renderer, text, fontprop, ismath, dpi)
        )

    metrics.shared_by_posecards = True  # type: ignore[attr-defined]
    place._get_text_metrics_with_cache = metrics
    try:
        yield
    finally:
        place._get_text_metrics_with_cache = original


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
