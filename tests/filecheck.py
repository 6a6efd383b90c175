"""How other tools draw posecards' files: librsvg (rsvg-convert) for SVG, Ghostscript and poppler
for PDF, each into pixels compared with blurred RMS (0-255, RGB), so an anti-aliased edge does
not count but a box or a garbage glyph does. ``python tests/filecheck.py DIR`` prints the
numbers for every card of a build (the before/after table of issue 18)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BLUR = 2.0  # Gaussian radius in px before comparing: edges and hinting do not count


def _pixels(png: bytes, size: tuple[int, int] | None = None) -> np.ndarray:
    from PIL import Image, ImageFilter

    img = Image.open(io.BytesIO(png)).convert("RGBA")
    flat = Image.new("RGBA", img.size, (255, 255, 255, 255))
    flat.alpha_composite(img)
    out = flat.convert("RGB")
    if size is not None and out.size != size:
        out = out.resize(size, Image.Resampling.LANCZOS)
    return np.asarray(out.filter(ImageFilter.GaussianBlur(BLUR)), dtype=np.float64)


def blurred_rms(a: bytes, b: bytes) -> float:
    """RMS of two PNGs' blurred RGB pixels, ``b`` resampled to ``a``'s size if they differ."""
    from PIL import Image

    x = _pixels(a)
    size = Image.open(io.BytesIO(a)).size
    y = _pixels(b, size)
    return float(np.sqrt(np.mean((x - y) ** 2)))


def rsvg_png(svg: Path, width: int) -> bytes:
    """librsvg's drawing of an SVG, ``width`` pixels wide."""
    r = subprocess.run(
        ["rsvg-convert", "--width", str(width), "--keep-aspect-ratio", str(svg)],
        capture_output=True,
        check=True,
    )
    return r.stdout


def gs_png(pdf: Path, dpi: float) -> tuple[bytes, str]:
    """Ghostscript's drawing of a PDF's first page (and what it said on stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "page.png"
        r = subprocess.run(
            [
                "gs",
                "-q",
                "-dNOPAUSE",
                "-dBATCH",
                "-dSAFER",
                "-sDEVICE=png16m",
                "-dTextAlphaBits=4",
                "-dGraphicsAlphaBits=4",
                f"-r{dpi:g}",
                "-dFirstPage=1",
                "-dLastPage=1",
                f"-sOutputFile={out}",
                str(pdf),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.read_bytes(), r.stdout + r.stderr


def poppler_png(pdf: Path, dpi: float) -> tuple[bytes, str]:
    """poppler's drawing of a PDF's first page (and what it said on stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(
            ["pdftoppm", "-png", "-r", f"{dpi:g}", "-f", "1", "-l", "1", str(pdf), f"{tmp}/p"],
            capture_output=True,
            text=True,
            check=True,
        )
        (page,) = Path(tmp).glob("p*.png")
        return page.read_bytes(), r.stderr


def pdf_fonts(pdf: Path) -> tuple[list[list[str]], str]:
    """pdffonts' rows (name, type words ..., emb, sub, uni, object, generation) and stderr."""
    r = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True)
    rows = [line.split() for line in r.stdout.splitlines()[2:] if line.strip()]
    return rows, r.stderr


def tools_missing() -> list[str]:
    return [t for t in ("rsvg-convert", "gs", "pdftoppm", "pdffonts") if shutil.which(t) is None]


def report(folder: Path) -> list[str]:
    """One line per card: librsvg vs PNG, Ghostscript vs poppler (blurred RMS), placed size."""
    import re

    lines = []
    for png in sorted(folder.glob("*/card-*.png")):
        data = png.read_bytes()
        width = int.from_bytes(data[16:20], "big")
        row = [f"{png.parent.name}/{png.stem}"]
        svg = png.with_suffix(".svg")
        if svg.is_file():
            head = svg.read_text(encoding="utf-8")[:2000]
            m = re.search(r'<svg[^>]*width="([\d.]+)(\w*)"[^>]*height="([\d.]+)(\w*)"', head)
            size = f"{m.group(1)}{m.group(2)} x {m.group(3)}{m.group(4)}" if m else "?"
            row.append(f"svg {size} rsvg-vs-png {blurred_rms(data, rsvg_png(svg, width)):.1f}")
        pdf = png.with_suffix(".pdf")
        if pdf.is_file():
            from pypdf import PdfReader

            box = PdfReader(pdf).pages[0].mediabox
            dpi = 72.0 * width / float(box.width)
            g, _ = gs_png(pdf, dpi)
            p, warn = poppler_png(pdf, dpi)
            row.append(
                f"pdf {float(box.width):g} x {float(box.height):g} pt "
                f"gs-vs-poppler {blurred_rms(p, g):.1f} poppler-vs-png {blurred_rms(data, p):.1f}"
                + (f" poppler: {warn.strip().splitlines()[0]}" if warn.strip() else "")
            )
        lines.append("  ".join(row))
    return lines


if __name__ == "__main__":
    for line in report(Path(sys.argv[1])):
        print(line)
