"""Deterministic, atomic file output: same inputs give byte-identical files, and a failed write
never leaves a half-written file in place (write to a temporary name, then rename)."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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

    The layout is computed once by a canonical Agg draw and then frozen, so the bytes of one
    format do not depend on which other formats were asked for.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    fig.set_layout_engine("none")
    return {fmt: figure_bytes(fig, fmt) for fmt in ("png", "svg", "pdf") if fmt in formats}
