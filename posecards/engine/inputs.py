"""What outputs are made from: posecards' code and style, the templates, the texts a unit reads,
and the versions of the libraries that can change bytes. Recipes (manifest.json) and cache keys
are made from these; names never depend on where posecards is installed.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from posecards.fonts import font_inputs
from posecards.paths import data_dir

# Libraries whose versions can change output bytes (a plan may add its own: the deck's).
LIBRARIES = (
    "numpy",
    "torch",
    "matplotlib",
    "umap-learn",
    "numba",
    "pynndescent",
    "scikit-learn",
    "jinja2",
    "markupsafe",
    "pillow",
    "fonttools",
    "mplfonts",
)
_PKG = Path(__file__).resolve().parent.parent


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@cache
def _installed() -> dict[str, str]:
    """normalised name -> version of every distribution on sys.path, read from the names of
    their ``.dist-info`` folders (``numpy-2.4.6.dist-info``), the first on the path winning, as
    importlib.metadata finds them; without importing it and its e-mail parser, which would cost a
    no-op rebuild more than all its hashing."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for folder in names:
            if folder.endswith(".dist-info") and "-" in folder:
                name, version = folder[: -len(".dist-info")].split("-", 1)
                found.setdefault(_normal(name), version)
    return found


@cache
def library_versions(names: tuple[str, ...] = LIBRARIES) -> tuple[tuple[str, str], ...]:
    """(name, version) of each library, "-" where it is not installed."""
    installed = _installed()
    return tuple((name, installed.get(_normal(name), "-")) for name in names)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cache
def shared_inputs() -> tuple[tuple[str, str], ...]:
    """(name, sha256) of every file all outputs are made from: posecards' code and style files
    ("posecards/..."), the templates ("templates/..."), the font files ("fonts/...": sha256
    memoised by size and mtime, posecards.fonts). Names do not depend on where posecards
    is installed, so a manifest written on one machine is checked on another."""
    out = []
    for p in sorted(_PKG.rglob("*")):
        rel = p.relative_to(_PKG)
        if p.is_file() and p.suffix in (".py", ".mplstyle", ".toml") and rel.parts[0] != "_data":
            out.append((f"posecards/{rel.as_posix()}", sha256_file(p)))
    root = data_dir("templates")
    out += [
        (f"templates/{p.relative_to(root).as_posix()}", sha256_file(p))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    ]
    out += font_inputs()
    return tuple(out)


def text_name(card: int | str) -> str:
    """How a recipe names a text file: ``cards/card3.toml``, ``cards/deck.toml``."""
    return f"cards/card{card}.toml" if isinstance(card, int) else f"cards/{card}.toml"


def text_digest(paths: Iterable[Path]) -> str:
    """sha256 of a text file (of nothing if it does not exist), followed by the data files read
    with it (card 5: the measurements and the quoted table), so a changed results file makes
    card 5 stale in the cache and in ``--check``."""
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes() if p.is_file() else b"")
    return h.hexdigest()
