"""Content-addressed cache of rendered units: (inputs, posecards version, library versions) -> files.

A unit's key hashes everything its bytes depend on: what it is (its render function), its job
(the options), the texts it reads, the keys of the units it needs, posecards' code, style and
templates, and the library versions. A hit is used only if every stored file still has the
sha256 recorded for it; anything else is rebuilt, never trusted. Everything lives under
``<cache dir>/units`` (see posecards.cache) and is always safe to delete.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.cache import cache_dir, write_atomic
from posecards.engine.inputs import library_versions, shared_inputs
from posecards.engine.units import Rendered, Unit, render_name


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


def plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values exactly as a cache hit returns them (a JSON round trip), so a hit and a miss
    give later units identical numbers."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(values), default=_item))
    return loaded


def unit_key(
    unit: Unit,
    texts: Mapping[str, str],
    needs: Sequence[str],
    libraries: tuple[str, ...],
) -> str:
    """sha256 of a unit: its render function, job, text digests (name -> sha256), the keys of
    the units it needs, and what every unit depends on."""
    blob = json.dumps(
        {
            "render": render_name(unit.render),
            "job": unit.job,
            "texts": dict(texts),
            "needs": list(needs),
            "shared": shared_inputs(),
            "libraries": library_versions(libraries),
            "posecards": __version__,
        },
        sort_keys=True,
        default=_plain,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _root() -> Path | None:
    base = cache_dir()
    return None if base is None else base / "units"


def load(key: str) -> Rendered | None:
    """The unit's result, or None if missing or corrupt (a corrupt entry is removed)."""
    root = _root()
    if root is None:
        return None
    folder = root / key
    try:
        index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        parts: dict[str, dict[str, bytes]] = {"files": {}, "helpers": {}}
        for i, (part, rel, digest) in enumerate(index["entries"]):
            data = (folder / f"{i}.bin").read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                raise ValueError(f"corrupt cache entry {folder}/{i}.bin")
            parts[part][rel] = data
        return Rendered(parts["files"], parts["helpers"], dict(index["meta"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(folder, ignore_errors=True)
        return None


def store(key: str, result: Rendered) -> None:
    """Save a unit's result; a cache that cannot be written only costs time next run."""
    root = _root()
    if root is None:
        return
    folder = root / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
        entries = []
        items = [("files", r, d) for r, d in result.files.items()]
        items += [("helpers", r, d) for r, d in result.helpers.items()]
        for i, (part, rel, data) in enumerate(items):
            write_atomic(folder / f"{i}.bin", data)
            entries.append((part, rel, hashlib.sha256(data).hexdigest()))
        index = {"entries": entries, "meta": dict(result.meta)}
        # the index goes last: an entry without one is simply missing
        write_atomic(folder / "index.json", json.dumps(index, default=_item).encode("utf-8"))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
