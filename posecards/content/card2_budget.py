"""How much card 2 computes: a work budget of sines and cosines per panel, and sinusoidal rows
built in chunks, so that d_model = 65536 and 131072 positions stay fast and small
(``content/card2.py`` evaluates every picture at display resolution)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.config import PEParams
from posecards.encodings.sinusoidal import sinusoidal_pe

# Work budget: a panel evaluates at most about TRIG_BUDGET sines/cosines, so that d_model = 65536
# and 131072 positions stay fast; defaults (d_model = 512) are far below it.
TRIG_BUDGET = 2**22
# PE rows are built in chunks of at most this many float64 numbers
CHUNK_ELEMENTS = 2**20


def rows_within_budget(cost_per_row: int, most: int, least: int = 16) -> int:
    """How many rows of a given cost (sines/cosines per row) fit in TRIG_BUDGET, within bounds."""
    return max(least, min(most, TRIG_BUDGET // max(1, cost_per_row)))


def pe_columns(
    positions: npt.NDArray[np.float64],
    columns: npt.NDArray[np.int64] | None,
    params: PEParams,
    layout: str = "interleaved",
) -> npt.NDArray[np.float64]:
    """sinusoidal_pe(positions)[:, columns], built in chunks of rows to keep memory small."""
    d = params.d_model
    rows = max(1, CHUNK_ELEMENTS // d)
    parts = []
    for start in range(0, positions.shape[0], rows):
        pe = sinusoidal_pe(positions[start : start + rows], d, params.base, layout=layout)
        parts.append(pe if columns is None else pe[:, columns])
    return np.concatenate(parts, axis=0)  # (n, len(columns))


def row_dots(
    p0: float, positions: npt.NDArray[np.float64], params: PEParams
) -> npt.NDArray[np.float64]:
    """PE(p0)·PE(q) for every q in ``positions`` (actual vectors, chunked), shape (n,)."""
    ref = sinusoidal_pe(np.array([p0]), params.d_model, params.base)[0]  # (d,)
    rows = max(1, CHUNK_ELEMENTS // params.d_model)
    out = np.empty(positions.shape[0], dtype=np.float64)
    for start in range(0, positions.shape[0], rows):
        pe = sinusoidal_pe(positions[start : start + rows], params.d_model, params.base)
        out[start : start + rows] = pe @ ref
    return out
