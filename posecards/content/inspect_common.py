"""What every inspection card shares: its text file's name, the numbers of its footer (model,
config keys read, defaults used), and the limits on what a figure shows."""

from __future__ import annotations

from typing import Any

import numpy as np

from posecards.model.checkpoint import Checkpoint
from posecards.model.names import display_name
from posecards.model.positions import Found

HEATMAP_MOST = 512  # rows of a similarity heatmap shown at most (a regular subsample)
CURVE_MOST = 2048  # points of a line plot at most
SINUSOID_BASE = 10000.0
ALIBI_LEN = 16  # tokens of the shown bias matrices
WEIGHTS_LEN = 2048  # keys of the attention-weight curves when the config names no context
HALF = 0.5  # the similarity level whose first crossing is reported


def card_name(found: Found) -> str:
    """The card text file (without .toml) for this kind of position encoding."""
    return f"inspect-{found.kind}"


def first_below(values: np.ndarray, level: float) -> int:
    """First index where ``values`` < level, or -1 if never."""
    hits = np.flatnonzero(values < level)
    return int(hits[0]) if hits.size else -1


def common_numbers(ckpt: Checkpoint, found: Found) -> dict[str, Any]:
    return {
        "model": display_name(ckpt.name),
        "config_keys": ", ".join(found.config_keys) if found.config_keys else "none",
        "defaults": ", ".join(found.defaults),
    }
