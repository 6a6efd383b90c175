"""A heatmap's cells in an SVG are drawn as the PNG draws them, by every tool (issue 36, point 10):
the SVG embeds the data grid itself (one block of equal pixels per cell, marked
image-rendering: pixelated), not a raster resampled at the SVG's dpi; and since librsvg 2.54
ignores image-rendering and smooths every raster, each cell is a whole block of pixels wide, so
its smoothing touches only the blocks' edges."""

from __future__ import annotations

import base64
import io
import os
import re
import subprocess

import numpy as np
import pytest
from filecheck import tools_missing
from PIL import Image

from posecards.render import files
from posecards.render.files import SHARP_MAX_FACTOR, SHARP_MIN_SIDE, figure_bytes

CELLS = 24  # a checkerboard of CELLS x CELLS cells, black and white


def checkerboard_figure() -> object:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 4), dpi=100)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    board = np.indices((CELLS, CELLS)).sum(axis=0) % 2  # (CELLS, CELLS)
    ax.imshow(board, cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    ax.set_axis_off()
    return fig


def embedded_rasters(svg: bytes) -> list[np.ndarray]:
    out = []
    for m in re.finditer(rb"data:image/png;base64,([A-Za-z0-9+/=\s]+)\"", svg):
        with Image.open(io.BytesIO(base64.b64decode(b"".join(m.group(1).split())))) as im:
            out.append(np.asarray(im.convert("L")))
    return out


def test_the_svg_embeds_the_cells_as_whole_blocks() -> None:
    fig = checkerboard_figure()
    png = figure_bytes(fig, "png")  # type: ignore[arg-type]
    svg = figure_bytes(fig, "svg")  # type: ignore[arg-type]
    (raster,) = embedded_rasters(svg)
    k = raster.shape[0] // CELLS
    assert raster.shape == (CELLS * k, CELLS * k)
    assert k == min(SHARP_MAX_FACTOR, -(-SHARP_MIN_SIDE // CELLS)) > 1
    cells = raster[::k, ::k]  # (CELLS, CELLS) one pixel per cell
    assert set(np.unique(raster)) == {0, 255}
    assert np.array_equal(np.repeat(np.repeat(cells, k, axis=0), k, axis=1), raster)
    assert np.array_equal(cells > 0, np.indices((CELLS, CELLS)).sum(axis=0) % 2 == 1)
    assert b"image-rendering:pixelated" in svg
    # the PNG and PDF are drawn as before: the interpolation is restored after the SVG
    assert fig.axes[0].images[0].get_interpolation() == "nearest"  # type: ignore[attr-defined]
    assert figure_bytes(fig, "png") == png  # type: ignore[arg-type]


def _exact_share(svg: bytes, width: int = 1600) -> float:
    """Share of the board's pixels that librsvg draws pure black or pure white."""
    png = subprocess.run(
        ["rsvg-convert", "--width", str(width), "--keep-aspect-ratio"],
        input=svg,
        capture_output=True,
        check=True,
    ).stdout
    with Image.open(io.BytesIO(png)) as im:
        g = np.asarray(im.convert("RGBA"))
    inner = g[int(width * 0.12) : int(width * 0.88), int(width * 0.12) : int(width * 0.88)]
    grey = inner[..., 0]
    return float(np.mean((grey == 0) | (grey == 255)))


def test_librsvg_draws_the_cells_sharp(monkeypatch: pytest.MonkeyPatch) -> None:
    if missing := tools_missing():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must have {missing} (.ci/run installs them)")
        pytest.skip(f"{missing} not installed")
    sharp = _exact_share(figure_bytes(checkerboard_figure(), "svg"))  # type: ignore[arg-type]
    # the same SVG with the data grid but without whole blocks: librsvg smooths it to greys
    monkeypatch.setattr(files, "sharp_cells", lambda svg: svg)
    smooth = _exact_share(figure_bytes(checkerboard_figure(), "svg"))  # type: ignore[arg-type]
    # measured with librsvg 2.54.7: 0.88 (only the blocks' edges blend) against 0.00004
    assert sharp > 0.8, sharp
    assert smooth < 0.01, smooth
