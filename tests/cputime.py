"""Where the suite's time goes, in CPU seconds (a shared machine makes wall time say little).

With ``POSECARDS_TEST_CPU=FILE`` set, every pytest process (each xdist worker) appends one JSON
line per test to ``FILE.<worker>.jsonl``: its node id, the CPU seconds (user + system) of the
test process and of the processes it ran and waited for (a build's workers included: the build
reaps them), and its wall seconds. A session fixture is charged to the first test that asks for
it; each process's start and collection (importing the test modules) is a row of its own.

Not counted: a process nobody in the tree waits for. Chromium's page processes (renderers) are
reaped by init once the browser exits, so the browser tests' own work is missing: on 2026-12-04
test_browser.py and test_explore.py cost about 69 and 58 CPU s with them (measured with the test
process made a child subreaper, PR_SET_CHILD_SUBREAPER) against 41 and 22 here. The machine's
total (vmstat's user + system over the run) is the figure to compare whole runs by.
``python tests/cputime.py FILE`` prints the totals per module and the costliest tests::

    POSECARDS_TEST_CPU=/tmp/cpu python -m pytest -n auto --dist loadscope --no-loadscope-reorder
    python tests/cputime.py /tmp/cpu

tests/conftest.py registers the hook; without the variable it does nothing.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

CPU_ENV = "POSECARDS_TEST_CPU"


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _write(row: list[object]) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "master")
    with open(f"{os.environ[CPU_ENV]}.{worker}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    """The process's start and collection (importing every test module), as a row of its own."""
    if os.environ.get(CPU_ENV):
        own, children = _cpu()
        _write(["(start and collection)", own, children, 0.0])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    out = os.environ.get(CPU_ENV)
    if not out:
        yield
        return
    own0, children0 = _cpu()
    wall0 = time.perf_counter()
    yield
    own1, children1 = _cpu()
    _write([item.nodeid, own1 - own0, children1 - children0, time.perf_counter() - wall0])


def report(prefix: str, top: int = 40) -> str:
    rows = []
    for path in sorted(Path(prefix).parent.glob(Path(prefix).name + ".*.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    modules: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for nodeid, own, children, wall in rows:
        m = modules[nodeid.split("::", 1)[0]]
        m[0] += 1
        m[1] += own + children
        m[2] += wall
    total = sum(m[1] for m in modules.values())
    lines = [f"{len(rows)} tests, {total:.0f} CPU s", "   CPU s  share  tests  module"]
    for name, (n, cpu, _) in sorted(modules.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{cpu:8.1f} {cpu / total:6.1%} {n:6d}  {name}")
    lines.append(f"\nthe {top} costliest tests (CPU s: own + children)")
    for nodeid, own, children, _ in sorted(rows, key=lambda r: -(r[1] + r[2]))[:top]:
        lines.append(f"{own + children:8.1f}  {nodeid}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(sys.argv[1]))
