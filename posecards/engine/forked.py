"""Imported first by the fork server the drawing processes are forked from (executor).

A process the pool starts while a build is being stopped (an error, Ctrl-C, SIGTERM) can find
the pool's queue gone when it unpickles what it was started with; multiprocessing would then
print that FileNotFoundError's traceback from the new process, after posecards has said its one
line. Such a process never received a unit: it has nothing to report.
"""

from __future__ import annotations

import os
import sys
import traceback
from types import TracebackType

_default = sys.excepthook


def _quiet_when_the_pool_is_gone(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    last = traceback.extract_tb(tb)[-1:] if tb is not None else []
    where = [os.path.normpath(f.filename).split(os.sep)[-2:] for f in last]
    if issubclass(kind, FileNotFoundError) and where == [["multiprocessing", "synchronize.py"]]:
        return
    _default(kind, value, tb)


sys.excepthook = _quiet_when_the_pool_is_gone
