"""Writing an output folder as one step that cannot be left half done, and remembering what
was written so that the next up-to-date test needs no hashing.

The record of a folder (``<cache dir>/sites/<hash of DIR's real path>.json``, outside DIR, like
the lock) holds each file's sha256 with its size, times and inode as they were right after it
was written or verified. A file whose stat is unchanged still has that sha256; a file whose stat
moved (edited, touched, copied, checked out) is hashed again. As git does with its index, a
file changed within the same clock tick as the record cannot be told by its times: such
"racy" entries are not trusted (see ``_RACY_NS``).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from posecards.cache import cache_dir, file_mode, write_atomic
from posecards.errors import PosecardsError

# a file whose change time is this close to the record's time is hashed again next time
_RACY_NS = 50_000_000
_COARSE_RACY_NS = 2_000_000_000  # file systems with whole-second (or 2 s) times


def safe_relative(rel: str) -> bool:
    """A manifest path: relative, no '..', no backslashes, no empty parts."""
    parts = rel.split("/")
    return (
        bool(rel)
        and not rel.startswith("/")
        and "\\" not in rel
        and all(p not in ("", ".", "..") for p in parts)
    )


def write_outputs(out: Path, files: Mapping[str, bytes]) -> list[str]:
    """Write the files whose content changed, as one step that cannot be left half done.

    Every new file is first written under a temporary name next to its target; only when all
    are written are they renamed into place, with SIGINT/SIGTERM held back for those renames.
    If anything fails before that, the temporary files are removed and DIR is unchanged.
    A file that cannot be written is bad input (one line): the folder is the user's.
    """
    try:
        return _write(out, files)
    except OSError as exc:
        raise PosecardsError(f"cannot write to {out}: {exc.strerror or exc}") from exc


def _write(out: Path, files: Mapping[str, bytes]) -> list[str]:
    changed = []
    for rel, data in files.items():
        if not safe_relative(rel):
            raise ValueError(f"refusing to write outside the output folder: {rel!r}")
        path = out / rel
        if not (path.is_file() and path.read_bytes() == data):
            changed.append(rel)
    staged: list[tuple[str, Path]] = []
    mode = file_mode()
    _fix_modes(out, [rel for rel in files if rel not in changed], mode)
    try:
        for rel in changed:
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((rel, Path(tmp_name)))
            os.fchmod(fd, mode)  # mkstemp makes 0600; a web server must be able to read it
            with os.fdopen(fd, "wb") as fh:
                fh.write(files[rel])
        held = {signal.SIGINT, signal.SIGTERM}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            for rel, staged_path in staged:
                os.replace(staged_path, out / rel)
            staged = []
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    finally:
        for _, leftover in staged:
            leftover.unlink(missing_ok=True)
    if changed:
        time.sleep(_RACY_NS / 1e9)  # so that the record below finds no racy entry
    remember(out, {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()})
    return changed


def _fix_modes(out: Path, unchanged: list[str], mode: int) -> None:
    """Files left 0600 by posecards 0.1.0 (written through mkstemp) get the umask's mode."""
    for rel in unchanged:
        path = out / rel
        try:
            if path.stat().st_mode & 0o777 == 0o600 and mode != 0o600:
                path.chmod(mode)
        except OSError:
            pass


# ------------------------------------------------------------------------- the stat record


def _record_path(out: Path) -> Path | None:
    base = cache_dir()
    if base is None:
        return None
    key = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:32]
    return base / "sites" / f"{key}.json"


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def remember(out: Path, digests: Mapping[str, str]) -> None:
    """Record the stat of the files of ``out`` whose bytes are known to have these sha256s;
    a record that cannot be written only costs hashing next time."""
    target = _record_path(out)
    if target is None:
        return
    now = time.time_ns()
    entries = {}
    for rel, digest in digests.items():
        st = _stat(out / rel)
        if st is None:
            continue
        racy = _COARSE_RACY_NS if st[1] % 1_000_000_000 == 0 else _RACY_NS
        if st[2] < now - racy:
            entries[rel] = [digest, *st]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, json.dumps({"out": str(out.resolve()), "files": entries}).encode())
    except OSError:
        pass


def changed_files(out: Path, digests: Mapping[str, str]) -> list[str]:
    """The files of ``out`` (path -> expected sha256) whose bytes are not the expected ones:
    missing, or hashed to another sha256. Only files whose stat moved since the record are
    hashed; the record is brought up to date."""
    target = _record_path(out)
    known: dict[str, list[object]] = {}
    if target is not None:
        try:
            known = json.loads(target.read_text(encoding="utf-8"))["files"]
        except (OSError, ValueError, KeyError, TypeError):
            known = {}
    bad, hashed = [], False
    for rel, digest in digests.items():
        entry = known.get(rel)
        if entry is not None and entry[0] == digest and entry[1:] == _stat(out / rel):
            continue
        hashed = True
        try:
            same = hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest
        except OSError:
            same = False
        if not same:
            bad.append(rel)
    if hashed and not bad:
        remember(out, digests)
    return bad
