"""Where card text and templates live: in the wheel (posecards/_data) or, from a checkout, the repo."""

from __future__ import annotations

import os
from pathlib import Path

from posecards.errors import PosecardsError

_PKG = Path(__file__).resolve().parent
# the look of every figure: card.mplstyle, the theme styles, theme.toml and roles.toml
STYLE_DIR = _PKG / "style"
# the explorer's JavaScript (math.js mirrors posecards/encodings; page.js draws), inlined in the page
EXPLORE_JS_DIR = _PKG / "explore_js"


def data_dir(name: str) -> Path:
    """``cards``, ``templates`` or ``examples``: the installed copy if present, else the
    repository's folder.

    ``POSECARDS_CARDS_DIR`` points ``cards`` at a folder of your own (edited card text).
    """
    if name == "cards" and (own := os.environ.get("POSECARDS_CARDS_DIR")):
        if not Path(own).is_dir():
            raise PosecardsError(f"POSECARDS_CARDS_DIR={own} is not a folder")
        return Path(own)
    # "examples": the example configs (docs/examples/ in a checkout)
    here = _PKG.parent / ("docs/examples" if name == "examples" else name)
    for candidate in (_PKG / "_data" / name, here):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"posecards data folder {name!r} not found next to {_PKG}")
