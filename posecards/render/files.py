"""Deterministic, atomic file output: same inputs give byte-identical files, and a failed write
never leaves a half-written file in place (write to a temporary name, then rename)."""

from __future__ import annotations

import functools
import html
import io
import re
import struct
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from posecards.mpl_internals import layout_engine_hidden, set_position_in_layout

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Metadata that would otherwise embed dates or tool versions into the files.
SAVE_METADATA: dict[str, dict[str, None]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
}


# Raster parts of a PDF (heatmaps are images) are resampled at print resolution.
PDF_RASTER_DPI = 300
# A PNG's pixels per physical inch at scale 1 (pHYs): a 1920-pixel slide card is placed at
# 13.333 in, the width of a 16:9 slide in PowerPoint and Keynote.
PNG_PPI = 144.0


# SVG text: "outline" draws every glyph as a path (the same in PowerPoint, Keynote, Inkscape and
# librsvg with no fonts installed) and keeps each text as the <title> of its group, so it can
# still be found and copied; "live" keeps <text> elements for editing where the fonts exist
# (the HTML pages inline live SVGs with their fonts embedded).
SVG_TEXT = ("outline", "live")


def placed_points(fig: Figure, print_width: float) -> tuple[float, float]:
    """(width, height) in points a figure is placed at when it is ``print_width`` inches wide:
    whole points across (960 for a slide, 720 for 4:3, 595 for A4, 540 for a square card), the
    height in proportion (to 0.01 pt)."""
    w, h = (float(v) for v in fig.get_size_inches())
    width = float(round(print_width * 72.0))
    return width, round(width * h / w, 2)


# Constrained layout's solver (kiwisolver) adds its terms in an order that depends on where its
# variables sit in memory, so two runs can place an axes a last bit apart (1 run in ~14 for card
# 1's counting figure: one pixel off). Positions are snapped to this grid (figure fraction) once
# the solver is done: a last-bit difference vanishes unless it straddles a grid midpoint
# (~1e-7 per value). 1e-9 of a 1920-pixel card is 2e-6 px: nothing moves that anyone can see.
LAYOUT_GRID = 1e-9


def _snapped(bbox: Any) -> Any:
    import numpy as np
    from matplotlib.transforms import Bbox

    return Bbox(
        np.round(np.asarray(bbox.get_points(), dtype=np.float64) / LAYOUT_GRID) * LAYOUT_GRID
    )


def freeze_layout(fig: Figure) -> None:
    """Run the figure's layout engine once (with the figure's own Agg renderer at its dpi),
    snap every subfigure box and axes position to LAYOUT_GRID and switch the engine off: every
    format encodes this one layout. A figure without an engine: nothing to do."""
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if engine is None or isinstance(engine, PlaceHolderLayoutEngine):
        return
    engine.execute(fig)
    stack = list(fig.subfigs)
    while stack:
        sub = stack.pop(0)
        sub.bbox_relative.set_points(_snapped(sub.bbox_relative).get_points())
        stack += sub.subfigs
    for ax in fig.get_axes():
        # as the engine itself sets them: set_position would take the axes out of the layout
        # (set_in_layout(False)), which a tight bounding box would then ignore
        set_position_in_layout(ax, _snapped(ax.get_position(original=True)), "original")
        set_position_in_layout(ax, _snapped(ax.get_position(original=False)), "active")
    fig.set_layout_engine("none")


@contextmanager
def without_pre_draw(fig: Figure) -> Iterator[None]:
    """savefig draws a figure that has a layout engine (even the placeholder freeze_layout
    leaves) once more, drawing disabled, before it encodes: a whole layout pass that a frozen
    layout does not need (the same bytes without it, in every format). The engine is hidden
    from savefig meanwhile."""
    if fig.get_layout_engine() is None:
        yield
        return
    with layout_engine_hidden(fig):
        yield


def figure_bytes(
    fig: Figure,
    fmt: str,
    tight: bool = False,
    scale: int = 1,
    print_width: float | None = None,
    svg_text: str = "outline",
    dpi: float | None = None,
) -> bytes:
    """Encode a figure deterministically as png, svg or pdf (``tight``: crop to the content).

    PNG: ``scale`` times the figure's pixels, tagged (pHYs) so that it is ``print_width``
    inches wide (default: PNG_PPI·scale pixels per inch). SVG and PDF: the same layout, placed
    at ``print_width`` inches if given (SVG width/height in pt over the same viewBox; the PDF
    page scaled); SVG text per ``svg_text`` (SVG_TEXT). PDF: images at PDF_RASTER_DPI.
    ``dpi``: pixels per inch of the images inside an SVG (default: the style's).
    """
    import matplotlib as mpl

    if svg_text not in SVG_TEXT:
        raise ValueError(f"svg_text must be one of {', '.join(SVG_TEXT)}, got {svg_text!r}")
    buf = io.BytesIO()
    kwargs: dict[str, Any] = {"format": fmt, "metadata": SAVE_METADATA[fmt]}
    if tight:
        kwargs.update(bbox_inches="tight", pad_inches=0.04)
    if fmt == "png" and scale != 1:
        kwargs["dpi"] = fig.dpi * scale
    if fmt == "pdf":
        kwargs["dpi"] = PDF_RASTER_DPI
    if fmt == "svg" and dpi is not None:
        kwargs["dpi"] = dpi
    freeze_layout(fig)
    fonttype = "none" if svg_text == "live" else "path"
    with (
        mpl.rc_context({"svg.fonttype": fonttype}),
        without_pre_draw(fig),
        cells_as_data(fig, fmt),
    ):
        fig.savefig(buf, **kwargs)
    data = buf.getvalue()
    if fmt == "png":
        width_px = struct.unpack(">I", data[16:20])[0]
        ppi = width_px / print_width if print_width else PNG_PPI * scale
        data = png_with_ppi(data, ppi)
    elif fmt == "svg":
        data = sharp_cells(numbered_clip_ids(data))
        if svg_text == "outline":
            data = findable_svg(data)
        if print_width:
            data = placed_svg(data, *placed_points(fig, print_width))
    elif fmt == "pdf" and print_width:
        width_pt = float(fig.get_size_inches()[0]) * 72.0
        data = scaled_pdf_pages([(data, 0, placed_points(fig, print_width)[0] / width_pt)])
    return data


@contextmanager
def cells_as_data(fig: Figure, fmt: str) -> Iterator[None]:
    """SVG: a heatmap drawn cell by cell (interpolation "nearest") is embedded as its data, one
    pixel a cell, placed by a transform (matplotlib's interpolation "none", which also marks it
    image-rendering: pixelated), not resampled at the SVG's dpi into uneven 2- and 3-pixel cells
    (moiré on card 2's similarity map). PNG and PDF are drawn as before."""
    if fmt != "svg":
        yield
        return
    from matplotlib.image import AxesImage

    images = [im for im in fig.findobj(AxesImage) if im.get_interpolation() == "nearest"]
    for im in images:
        im.set_interpolation("none")
    try:
        yield
    finally:
        for im in images:
            im.set_interpolation("nearest")


# Each cell of an embedded heatmap becomes a block of pixels this wide at least (up to
# SHARP_MAX_FACTOR): a renderer that ignores image-rendering: pixelated and smooths the raster
# (librsvg 2.54 does) then blends only the blocks' one-pixel edges, and the cells keep the
# colours the PNG shows.
SHARP_MIN_SIDE = 1024  # pixels along the raster's longer side
SHARP_MAX_FACTOR = 16
_PIXELATED_IMAGE = re.compile(
    rb'<image\b[^>]*?image-rendering:pixelated[^>]*>|<image\b[^>]*?base64,[^"]*"[^>]*?'
    rb"image-rendering:pixelated[^>]*>"
)
_BASE64_PNG = re.compile(rb'(data:image/png;base64,)([A-Za-z0-9+/=\s]+)(")')


def sharp_cells(svg: bytes) -> bytes:
    """The SVG with every pixelated image's raster scaled up by a whole factor, nearest
    neighbour (each cell a block of equal pixels), in the same box: see SHARP_MIN_SIDE."""

    def image(m: re.Match[bytes]) -> bytes:
        return _BASE64_PNG.sub(
            lambda png: png.group(1) + _sharp_png(png.group(2)) + png.group(3), m.group(0)
        )

    return _PIXELATED_IMAGE.sub(image, svg)


@functools.lru_cache(maxsize=32)
def _sharp_png(data: bytes) -> bytes:
    """One embedded raster (base64 PNG) scaled up as sharp_cells says, base64 again. Memoized:
    a heatmap's raster is the same in a figure's outlined and live SVGs and on its card (one
    pixel a cell), and its PNG at compress level 9 took 0.1-0.3 s each time."""
    import base64

    from PIL import Image

    raw = base64.b64decode(b"".join(data.split()))
    with Image.open(io.BytesIO(raw)) as img:
        img.load()
        k = min(SHARP_MAX_FACTOR, -(-SHARP_MIN_SIDE // max(img.size)))
        if k <= 1:
            return data
        big = img.resize((img.width * k, img.height * k), Image.Resampling.NEAREST)
    out = io.BytesIO()
    big.save(out, format="PNG", optimize=False, compress_level=9)
    return base64.b64encode(out.getvalue())


# matplotlib names a clip path p + a hash of its box at full float precision, so boxes equal to
# the printed digits but a last bit apart (layouts of two runs) get other names
_CLIP_ID = re.compile(rb'(?<=id=")p[0-9a-f]{10}(?=")|(?<=url\(#)p[0-9a-f]{10}(?=\))')


def numbered_clip_ids(svg: bytes) -> bytes:
    """The SVG with its clip paths named clip0, clip1 ... in order of first mention."""
    names: dict[bytes, bytes] = {}

    def name(m: re.Match[bytes]) -> bytes:
        return names.setdefault(m.group(0), b"clip%d" % len(names))

    return _CLIP_ID.sub(name, svg)


_TEXT_COMMENT = re.compile(rb'(<g id="text_\d+">\s*)<!-- (.*?) -->', re.S)


def findable_svg(svg: bytes) -> bytes:
    """An outlined SVG with each text's string as the <title> of its group (matplotlib writes
    it as a comment there): searchable, copyable and read aloud, drawn by no one."""

    def title(m: re.Match[bytes]) -> bytes:
        # matplotlib XML-escapes the comment (& < >): the string itself, escaped once for <title>
        text = html.unescape(m.group(2).decode("utf-8"))
        return m.group(1) + f"<title>{html.escape(text, quote=False)}</title>".encode()

    return _TEXT_COMMENT.sub(title, svg)


_SVG_SIZE = re.compile(rb'(<svg [^>]*?)width="[^"]*" height="[^"]*"')


def placed_svg(svg: bytes, width_pt: float, height_pt: float) -> bytes:
    """The SVG with its width and height set to the placed size in points (the viewBox, and so
    the drawing, unchanged)."""
    size = f'width="{width_pt:g}pt" height="{height_pt:g}pt"'.encode()
    out, n = _SVG_SIZE.subn(lambda m: m.group(1) + size, svg, count=1)
    assert n == 1, "no <svg width height> found"
    return out


def scaled_pdf_pages(pages: Sequence[tuple[bytes, int, float]]) -> bytes:
    """One PDF of the given pages (PDF bytes, page number, scale factor), in order, each scaled
    (content and page box) by its factor; deterministic bytes. Pages taken from the same PDF
    share its embedded fonts."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    readers: dict[bytes, PdfReader] = {}
    for data, number, factor in pages:
        if data not in readers:
            readers[data] = PdfReader(io.BytesIO(data))
        page = writer.add_page(readers[data].pages[number])
        if abs(factor - 1.0) > 1e-12:
            page.scale_by(factor)
    # no dates, producer or random file id: the same pages give the same bytes
    writer._info = None
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def png_with_ppi(data: bytes, ppi: float) -> bytes:
    """The PNG with its physical pixel size (pHYs chunk) set to ``ppi`` pixels per inch."""
    per_metre = round(ppi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", per_metre, per_metre, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body))
    out = [data[:8]]
    pos, placed = 8, False
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        end = pos + 12 + length
        if kind == b"pHYs":
            out.append(chunk)
            placed = True
        else:
            out.append(data[pos:end])
            if kind == b"IHDR" and b"pHYs" not in data:
                out.append(chunk)
                placed = True
        pos = end
    assert placed
    return b"".join(out)


def figure_bytes_multi(
    fig: Figure,
    formats: Sequence[str],
    scale: int = 1,
    print_width: float | None = None,
    svg_text: str = "outline",
) -> dict[str, bytes]:
    """Encode one figure in several formats with the same layout. "svg" follows ``svg_text``;
    "svg-live" is the live-text SVG the HTML pages inline (the same bytes as "svg" when
    ``svg_text`` is "live"). SVG and PDF are placed at ``print_width`` inches if given.

    The layout is computed once with the figure's Agg renderer at its dpi, snapped and frozen
    (freeze_layout), then drawn once with Agg (the PNG encoding when PNG is asked for at scale 1,
    else a plain Agg draw), so the bytes of one format do not depend on which other formats, or
    which --scale, were asked for, nor on where the solver's variables sat in memory.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    freeze_layout(fig)
    out: dict[str, bytes] = {}
    if "png" in formats and scale == 1:
        out["png"] = figure_bytes(fig, "png", print_width=print_width)
    else:
        fig.canvas.draw()  # the same first draw as the PNG's (what a draw sets, it sets for all)
    if "svg" in formats:
        out["svg"] = figure_bytes(fig, "svg", print_width=print_width, svg_text=svg_text)
    if "svg-live" in formats:
        if svg_text == "live" and "svg" in out:
            out["svg-live"] = out["svg"]
        else:
            out["svg-live"] = figure_bytes(fig, "svg", print_width=print_width, svg_text="live")
    if "pdf" in formats:
        out["pdf"] = figure_bytes(fig, "pdf", print_width=print_width)
    if "png" in formats and scale != 1:
        out["png"] = figure_bytes(fig, "png", scale=scale, print_width=print_width)
    return out
