"""Deterministic, atomic file output: same inputs give byte-identical files, and a failed write
never leaves a half-written file in place (write to a temporary name, then rename)."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Metadata that would otherwise embed dates or tool versions into the files.
SAVE_METADATA: dict[str, dict[str, None]] = {
    "png": {"Software": None},
    "svg": {"Date": None},
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


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """Encode a figure deterministically as png, svg or pdf."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata=SAVE_METADATA[fmt])
    return buf.getvalue()
