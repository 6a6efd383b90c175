"""CI fails on a skip it does not expect (tests/skipcheck.py, tests/expected_skips.toml): a
small suite of one pass, one skip, one module skipped whole and one xfail, run by pytest in a
fresh process with and without xdist."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from skipcheck import ALLOWED_ENV, ALLOWED_FILE, STRICT_ENV, allowed

HERE = Path(__file__).resolve().parent

SUITE = {
    "conftest.py": f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from skipcheck import (  # noqa: F401
    pytest_collectreport, pytest_runtest_logreport, pytest_sessionfinish, pytest_terminal_summary,
)
""",
    "test_some.py": """
import pytest

def test_runs():
    assert True

def test_needs_a_tool():
    pytest.skip("the tool is not installed")

@pytest.mark.xfail(reason="known to fail", strict=True)
def test_known():
    assert False
""",
    "test_browserish.py": """
import pytest
pytest.skip("no browser here", allow_module_level=True)

def test_page():
    pass
""",
}

ALLOW_ALL = """
[[allowed]]
test = "test_some.py::test_needs_a_tool"
reason = "the tool is optional"

[[allowed]]
test = "test_some.py::test_kno?n"
reason = "a known bug"

[[allowed]]
test = "test_browserish.py"
reason = "no browser"
"""


def _run(tmp: Path, *, strict: bool, allow: str, xdist: bool = False) -> tuple[int, str]:
    for name, text in SUITE.items():
        (tmp / name).write_text(text, encoding="utf-8")
    (tmp / "allowed.toml").write_text(allow, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in (STRICT_ENV, "PYTEST_ADDOPTS")}
    env[ALLOWED_ENV] = str(tmp / "allowed.toml")
    if strict:
        env[STRICT_ENV] = "1"
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    args += ["-n", "2"] if xdist else ["-p", "no:xdist"]
    r = subprocess.run(
        [*args, str(tmp)], capture_output=True, text=True, cwd=tmp, env=env, timeout=120
    )
    return r.returncode, r.stdout + r.stderr


def test_an_unexpected_skip_fails_a_strict_run(tmp_path: Path) -> None:
    code, out = _run(tmp_path, strict=True, allow="")
    assert code == 1, out
    assert "UNEXPECTED skipped test_some.py::test_needs_a_tool: the tool is not installed" in out
    assert "UNEXPECTED xfailed test_some.py::test_known: known to fail" in out
    assert "UNEXPECTED skipped test_browserish.py: no browser here" in out
    assert "3 of 3 not run and not allowed by expected_skips.toml: fails the run" in out


def test_allowed_skips_pass_a_strict_run(tmp_path: Path) -> None:
    code, out = _run(tmp_path, strict=True, allow=ALLOW_ALL)
    assert code == 0, out
    assert "3 not run, each allowed by expected_skips.toml" in out
    assert "UNEXPECTED" not in out


def test_one_skip_left_out_of_the_list_fails_with_xdist(tmp_path: Path) -> None:
    allow = ALLOW_ALL.replace('test = "test_browserish.py"', 'test = "test_other.py"')
    code, out = _run(tmp_path, strict=True, allow=allow, xdist=True)
    assert code == 1, out
    assert "UNEXPECTED skipped test_browserish.py: no browser here" in out
    assert "1 of 3 not run" in out


def test_elsewhere_the_run_lists_what_it_did_not_run(tmp_path: Path) -> None:
    code, out = _run(tmp_path, strict=False, allow="")
    assert code == 0, out
    assert "would fail CI (POSECARDS_STRICT_SKIPS=1)" in out


def test_the_allow_list_is_short_and_every_entry_has_a_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ALLOWED_ENV, raising=False)
    entries = allowed()
    assert len(entries) <= 5, "the allow-list is for a few tests with a reason, not a suite"
    root = HERE.parent
    for pattern, _reason in entries:
        assert (root / pattern.split("::")[0]).is_file(), (ALLOWED_FILE.name, pattern)


def test_ci_runs_the_suite_strictly() -> None:
    run = (HERE.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert f"{STRICT_ENV}=1 make test" in run
