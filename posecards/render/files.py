"""Deterministic, atomic file output: same inputs give byte-identical files, and a failed write
never leaves a half-written file in place (write to a temporary name, then rename)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

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


def figure_bytes(fig: Figure, fmt: str, tight: bool = False) -> bytes:
    """Encode a figure deterministically as png, svg or pdf (``tight``: crop to the content)."""
    buf = io.BytesIO()
    if tight:
        fig.savefig(
            buf, format=fmt, metadata=SAVE_METADATA[fmt], bbox_inches="tight", pad_inches=0.04
        )
    else:
        fig.savefig(buf, format=fmt, metadata=SAVE_METADATA[fmt])
    return buf.getvalue()


def figure_bytes_multi(fig: Figure, formats: Sequence[str]) -> dict[str, bytes]:
    """Encode one figure in several formats with the same layout.

    The layout is computed once by a canonical Agg draw at the figure's dpi (the PNG encoding
    when PNG is asked for, which draws with Agg anyway, else a plain Agg draw) and then frozen,
    so the bytes of one format do not depend on which other formats were asked for.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    out: dict[str, bytes] = {}
    if "png" in formats:
        out["png"] = figure_bytes(fig, "png")
    else:
        fig.canvas.draw()
    fig.set_layout_engine("none")
    for fmt in ("svg", "pdf"):
        if fmt in formats:
            out[fmt] = figure_bytes(fig, fmt)
    return out
