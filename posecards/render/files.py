"""Deterministic, atomic file output: same inputs give byte-identical files, and a failed write
never leaves a half-written file in place (write to a temporary name, then rename)."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posecards.cache import write_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Metadata that would otherwise embed dates or tool versions into the files.
SAVE_METADATA: dict[str, dict[str, None]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
}


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


# Raster parts of a PDF (heatmaps are images) are resampled at print resolution.
PDF_RASTER_DPI = 300
# A PNG's pixels per physical inch at scale 1 (pHYs): a 1920-pixel slide card is placed at
# 13.333 in, the width of a 16:9 slide in PowerPoint and Keynote.
PNG_PPI = 144.0


def figure_bytes(
    fig: Figure,
    fmt: str,
    tight: bool = False,
    scale: int = 1,
    print_width: float | None = None,
) -> bytes:
    """Encode a figure deterministically as png, svg or pdf (``tight``: crop to the content).

    PNG: ``scale`` times the figure's pixels, tagged (pHYs) so that it is ``print_width``
    inches wide (default: PNG_PPI·scale pixels per inch). PDF: images at PDF_RASTER_DPI.
    """
    buf = io.BytesIO()
    kwargs: dict[str, Any] = {"format": fmt, "metadata": SAVE_METADATA[fmt]}
    if tight:
        kwargs.update(bbox_inches="tight", pad_inches=0.04)
    if fmt == "png" and scale != 1:
        kwargs["dpi"] = fig.dpi * scale
    if fmt == "pdf":
        kwargs["dpi"] = PDF_RASTER_DPI
    fig.savefig(buf, **kwargs)
    data = buf.getvalue()
    if fmt == "png":
        width_px = struct.unpack(">I", data[16:20])[0]
        ppi = width_px / print_width if print_width else PNG_PPI * scale
        data = png_with_ppi(data, ppi)
    return data


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
    fig: Figure, formats: Sequence[str], scale: int = 1, print_width: float | None = None
) -> dict[str, bytes]:
    """Encode one figure in several formats with the same layout.

    The layout is computed once by a canonical Agg draw at the figure's dpi (the PNG encoding
    when PNG is asked for at scale 1, which draws with Agg anyway, else a plain Agg draw) and then
    frozen, so the bytes of one format do not depend on which other formats, or which --scale,
    were asked for.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    out: dict[str, bytes] = {}
    if "png" in formats and scale == 1:
        out["png"] = figure_bytes(fig, "png", print_width=print_width)
    else:
        fig.canvas.draw()
    fig.set_layout_engine("none")
    for fmt in ("svg", "pdf"):
        if fmt in formats:
            out[fmt] = figure_bytes(fig, fmt)
    if "png" in formats and scale != 1:
        out["png"] = figure_bytes(fig, "png", scale=scale, print_width=print_width)
    return out
