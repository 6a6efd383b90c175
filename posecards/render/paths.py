"""Where card text and templates live: in the wheel (posecards/_data) or, from a checkout, the repo."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent


def data_dir(name: str) -> Path:
    """``cards`` or ``templates``: the installed copy if present, else the repository's folder."""
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"posecards data folder {name!r} not found next to {_PKG}")
