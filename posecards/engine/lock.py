"""One build at a time per output folder: an advisory lock that lives outside DIR.

The lock file is in the temporary folder, named by the hash of DIR's real path, so taking it
writes nothing into DIR (``--check`` must not write there). A second build into the same DIR
waits for the first; if it waited longer than ``timeout`` seconds it gives up with a message.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from posecards.errors import PosecardsError


class BuildLockedError(PosecardsError):
    """Another posecards build holds the output folder."""


@contextlib.contextmanager
def build_lock(out: Path, wait: bool = True, timeout: float = 3600.0) -> Iterator[None]:
    key = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:24]
    folder = Path(tempfile.gettempdir()) / "posecards-locks"
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / f"{key}.lock", os.O_CREAT | os.O_RDWR, 0o666)
    try:
        start = time.monotonic()
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait or time.monotonic() - start > timeout:
                    raise BuildLockedError(
                        f"another posecards build is writing {out}; try again when it is done"
                    ) from None
                if not announced:
                    import sys

                    print(f"posecards: waiting for another build into {out}", file=sys.stderr)
                    announced = True
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)
