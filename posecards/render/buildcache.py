"""Content-addressed cache of build units: (inputs, posecards version, library versions) -> files.

A unit is one (card, language) render, or the HTML pages of a build. Its key hashes everything
its bytes depend on: the card's text file, the shared templates and style files, the posecards
sources, the library versions, and the options. A hit is used only if every stored file still
has the sha256 recorded for it; anything else is rebuilt, never trusted. Everything lives under
``<cache dir>/units`` (see posecards.cache) and is always safe to delete.

This module imports nothing heavy: a no-op rebuild runs on it alone.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import asdict, is_dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.cache import cache_dir, write_atomic
from posecards.fonts import font_inputs
from posecards.render.paths import data_dir

# Libraries whose versions can change output bytes.
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


@cache
def library_versions() -> tuple[tuple[str, str], ...]:
    out = []
    for name in LIBRARIES:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            out.append((name, "-"))
    return tuple(out)


def _digest_files(paths: Iterable[Path], root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(root)).encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


@cache
def shared_digest() -> str:
    """The code, style and templates every unit depends on (not the per-card text)."""
    code = [p for p in _PKG.rglob("*") if p.is_file() and p.suffix in (".py", ".mplstyle", ".toml")]
    templates = [p for p in data_dir("templates").rglob("*") if p.is_file()]
    return hashlib.sha256(
        (
            _digest_files(code, _PKG)
            + _digest_files(templates, data_dir("templates"))
            + json.dumps(library_versions())
            + json.dumps(font_inputs())
            + __version__
        ).encode()
    ).hexdigest()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cache
def shared_inputs() -> tuple[tuple[str, str], ...]:
    """(name, sha256) of every file all outputs are made from: posecards' code and style files
    ("posecards/..."), the templates ("templates/..."), the font files ("fonts/..."). Names do not depend on where posecards
    is installed, so a manifest written on one machine is checked on another."""
    out = []
    for p in sorted(_PKG.rglob("*")):
        rel = p.relative_to(_PKG)
        if p.is_file() and p.suffix in (".py", ".mplstyle", ".toml") and rel.parts[0] != "_data":
            out.append((f"posecards/{rel.as_posix()}", _sha(p)))
    root = data_dir("templates")
    out += [
        (f"templates/{p.relative_to(root).as_posix()}", _sha(p))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    ]
    out += font_inputs()
    return tuple(out)


def card_text_name(card: int | str) -> str:
    """How a recipe names a card's text file: ``cards/card3.toml``."""
    return f"cards/card{card}.toml" if isinstance(card, int) else f"cards/{card}.toml"


def card_text_digest(card: int | str) -> str:
    """sha256 of a card's text file (of nothing if it does not exist), followed by the data files
    the card reads besides its text (card 5: the measurements and the quoted table), so a changed
    results file makes card 5 stale in the cache and in ``--check``."""
    name = card_text_name(card).removeprefix("cards/")
    path = data_dir("cards") / name
    h = hashlib.sha256(path.read_bytes() if path.is_file() else b"")
    if isinstance(card, int):
        from posecards.content import card_inputs

        for extra in card_inputs(card):
            h.update(extra.read_bytes() if extra.is_file() else b"")
    return h.hexdigest()


def _plain(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot hash {type(obj).__name__}")


def _item(obj: Any) -> Any:
    """numpy scalars -> Python scalars (JSON)."""
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"cannot store {type(obj).__name__}")


def plain_numbers(numbers: Mapping[str, Any]) -> dict[str, Any]:
    """Numbers exactly as a cache hit returns them (a JSON round trip), so a hit and a miss
    fill the card text identically."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(numbers), default=_item))
    return loaded


def unit_key(kind: str, **parts: Any) -> str:
    """sha256 of the unit kind, its parts (options, per-card digests) and the shared digest."""
    blob = json.dumps({"kind": kind, **parts}, sort_keys=True, default=_plain)
    return hashlib.sha256(f"{blob}|{shared_digest()}".encode()).hexdigest()


def _root() -> Path | None:
    base = cache_dir()
    return None if base is None else base / "units"


def load(key: str) -> tuple[dict[str, bytes], dict[str, Any]] | None:
    """The unit's files and numbers, or None if missing or corrupt (a corrupt entry is removed)."""
    root = _root()
    if root is None:
        return None
    folder = root / key
    index_path = folder / "index.json"
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
        files = {}
        for i, (rel, digest) in enumerate(index["files"]):
            data = (folder / f"{i}.bin").read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                raise ValueError(f"corrupt cache entry {folder}/{i}.bin")
            files[rel] = data
        return files, dict(index["numbers"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(folder, ignore_errors=True)
        return None


def store(key: str, files: Mapping[str, bytes], numbers: Mapping[str, Any]) -> None:
    """Save a unit; a cache that cannot be written only costs time next run."""
    root = _root()
    if root is None:
        return
    folder = root / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
        entries = []
        for i, (rel, data) in enumerate(files.items()):
            write_atomic(folder / f"{i}.bin", data)
            entries.append((rel, hashlib.sha256(data).hexdigest()))
        index = {"files": entries, "numbers": dict(numbers)}
        # the index goes last: an entry without one is simply missing
        write_atomic(folder / "index.json", json.dumps(index, default=_item).encode("utf-8"))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
