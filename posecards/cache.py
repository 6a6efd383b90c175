"""A content-addressed cache for expensive, deterministic results (the UMAP projection).

key = sha256(kind, inputs, posecards version, versions of the libraries the result depends on).
An entry is an ``.npy`` file plus the sha256 of its bytes; an entry whose bytes do not match is
recomputed, never trusted. The cache lives in ``$POSECARDS_CACHE_DIR`` or the user cache folder
(``$XDG_CACHE_HOME/posecards``, else ``~/.cache/posecards``) and is always safe to delete.
``POSECARDS_CACHE_DIR=off`` disables it. Besides it, small memos (font hashes, the deck text's
parsed data) that ``--check`` reads but never writes (``memos_read_only``).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from posecards._version import __version__

if TYPE_CHECKING:  # numpy is imported lazily: the no-op build path must stay light
    import numpy as np
    import numpy.typing as npt


# False while ``--check`` runs: it judges a folder and writes nothing, not even a memo
_WRITE_MEMOS: contextvars.ContextVar[bool] = contextvars.ContextVar("memos", default=True)


@contextlib.contextmanager
def memos_read_only() -> Iterator[None]:
    """For the block, memos are read but never written (``memos_writable`` is False)."""
    token = _WRITE_MEMOS.set(False)
    try:
        yield
    finally:
        _WRITE_MEMOS.reset(token)


def memos_writable() -> bool:
    return _WRITE_MEMOS.get()


def cache_dir() -> Path | None:
    env = os.environ.get("POSECARDS_CACHE_DIR")
    if env == "off":
        return None
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "posecards"


def _versions(libraries: Sequence[str]) -> dict[str, str]:
    from importlib import metadata  # lazily: the no-op rebuild path imports this module

    out = {"posecards": __version__}
    for name in libraries:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "-"
    return out


def array_key(kind: str, arrays: Sequence[npt.NDArray[np.generic]], **params: object) -> str:
    """sha256 over the kind, the exact bytes, dtypes and shapes of the inputs, and ``params``."""
    import numpy as np

    h = hashlib.sha256(kind.encode())
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    h.update(json.dumps(params, sort_keys=True, default=str).encode())
    return h.hexdigest()


def memo_array(
    kind: str,
    key: str,
    compute: Callable[[], npt.NDArray[np.float64]],
    libraries: Sequence[str] = (),
) -> npt.NDArray[np.float64]:
    """Return the cached array for (kind, key, versions) or compute, store and return it."""
    import numpy as np

    root = cache_dir()
    if root is None:
        return compute()
    versions = json.dumps(_versions(libraries), sort_keys=True)
    full = hashlib.sha256(f"{key}|{versions}".encode()).hexdigest()
    path = root / kind / f"{full}.npy"
    digest = path.with_suffix(".sha256")
    try:
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() == digest.read_text().strip():
            return np.asarray(np.load(io.BytesIO(data), allow_pickle=False), dtype=np.float64)
    except (OSError, ValueError):
        pass  # missing or corrupt: recompute below
    result = np.asarray(compute(), dtype=np.float64)
    buf = io.BytesIO()
    np.save(buf, result, allow_pickle=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for target, payload in (
            (path, buf.getvalue()),
            (digest, hashlib.sha256(buf.getvalue()).hexdigest().encode()),
        ):
            write_atomic(target, payload)
    except OSError:
        pass  # a read-only cache folder only costs time
    return result


def file_mode() -> int:
    """The mode a plain ``open()`` would give a new file: 0o666 minus the umask (0644 under 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (making its folder) through a temporary file in the same folder
    and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


def write_atomic(target: Path, payload: bytes) -> None:
    """Write through a temporary file in the same folder and a rename; the file gets the mode
    the umask gives new files (mkstemp alone would leave it 0600)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
