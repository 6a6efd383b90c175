"""The suite says what it did not run: every skipped or xfailed test is listed at the end of a
run, and with POSECARDS_STRICT_SKIPS=1 (set by .ci/run) the run fails on any of them that
tests/expected_skips.toml does not allow, with its reason. tests/conftest.py registers these
hooks; under pytest-xdist they act in the controller, which sees every worker's reports."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ALLOWED_FILE = Path(__file__).resolve().with_name("expected_skips.toml")
STRICT_ENV = "POSECARDS_STRICT_SKIPS"
ALLOWED_ENV = "POSECARDS_EXPECTED_SKIPS"  # another allow-list file (tests/test_skipcheck.py)


@dataclass(frozen=True)
class NotRun:
    nodeid: str
    kind: str  # "skipped" or "xfailed"
    why: str  # the skip or xfail reason the test gave


def allowed() -> list[tuple[str, str]]:
    """(node id pattern, reason) of every test the allow-list lets CI leave unrun."""
    path = Path(os.environ.get(ALLOWED_ENV) or ALLOWED_FILE)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for entry in data.get("allowed", []):
        test, reason = entry.get("test"), entry.get("reason")
        if not isinstance(test, str) or not isinstance(reason, str) or not reason.strip():
            raise pytest.UsageError(f"{path}: every [[allowed]] needs a test and a reason")
        out.append((test, reason))
    return out


def _why(report: Any) -> str:
    if hasattr(report, "wasxfail"):
        return str(report.wasxfail)
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (file, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


_NOT_RUN: list[NotRun] = []


def _record(report: Any) -> None:
    if report.skipped:
        kind = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        item = NotRun(report.nodeid, kind, _why(report))
        if item not in _NOT_RUN:  # a module skipped by each worker that collects it
            _NOT_RUN.append(item)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _record(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _record(report)  # a module skipped as a whole (pytest.skip(allow_module_level=True))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def unexpected(not_run: list[NotRun], allow: list[tuple[str, str]]) -> list[NotRun]:
    return [n for n in not_run if not any(fnmatch.fnmatchcase(n.nodeid, p) for p, _ in allow)]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if _is_worker(config) or not _NOT_RUN:
        return
    allow = allowed()
    bad = unexpected(_NOT_RUN, allow)
    strict = os.environ.get(STRICT_ENV) == "1"
    terminalreporter.section("not run", sep="=")
    for n in sorted(_NOT_RUN, key=lambda n: n.nodeid):
        mark = "UNEXPECTED " if n in bad else ""
        terminalreporter.line(f"{mark}{n.kind} {n.nodeid}: {n.why}")
    allowed_names = ALLOWED_FILE.name
    if bad:
        verdict = "fails the run" if strict else f"would fail CI ({STRICT_ENV}=1)"
        terminalreporter.line(
            f"{len(bad)} of {len(_NOT_RUN)} not run and not allowed by {allowed_names}: {verdict}"
        )
    else:
        terminalreporter.line(f"{len(_NOT_RUN)} not run, each allowed by {allowed_names}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config) or os.environ.get(STRICT_ENV) != "1":
        return
    if unexpected(_NOT_RUN, allowed()) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
