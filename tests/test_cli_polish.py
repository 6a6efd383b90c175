"""Small things a newcomer meets first: list, pipes, figure ids, case, file names, progress."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_here
from typer.testing import CliRunner

from posecards.cli import app
from posecards.config import BuildConfig

runner = CliRunner()


def one_line_exit_2(r: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("posecards: error: "), r.stderr
    for part in parts:
        assert part in lines[0], lines[0]


def test_list_fills_the_placeholders_of_titles() -> None:
    r = runner.invoke(app, ["list"])
    assert r.exit_code == 0, r.output
    assert "{{" not in r.output
    assert (
        "c1-pe-table            The encoding itself, small enough to print: 10 positions × 8 dimensions"
        in r.output
    )


def test_a_closed_pipe_ends_quietly() -> None:
    # `posecards data c2-heatmap --format csv | head -1`: far more output than a pipe buffer
    proc = subprocess.Popen(
        [sys.executable, "-m", "posecards", "data", "c2-heatmap", "--format", "csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"field,")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert err == ""


def test_an_unknown_figure_id_names_the_nearest() -> None:
    for cmd in (["data", "c2-hetmap"], ["figure", "c2-hetmap", "-o", "x.png"]):
        r = run_here(*cmd)
        one_line_exit_2(r, "unknown figure id 'c2-hetmap'", "did you mean c2-heatmap")
    r = run_here("data", "zzzz")
    one_line_exit_2(r, "unknown figure id 'zzzz'", "'posecards list' shows all ids")


def test_choices_and_figure_ids_ignore_case() -> None:
    r = run_here("data", "C2-Heatmap", "--format", "JSON")
    assert r.returncode == 0, r.stderr
    assert r.stdout.lstrip().startswith("{")


def test_figure_into_a_folder_asks_for_a_file_name(tmp_path: Path) -> None:
    r = run_here("figure", "c2-heatmap", "-o", f"{tmp_path}/")
    one_line_exit_2(r, "is a folder; give a file name", f"{tmp_path / 'c2-heatmap'}.png")
    r = run_here("figure", "c2-heatmap", "-o", str(tmp_path / "newdir") + os.sep)
    one_line_exit_2(r, "is a folder; give a file name")


@pytest.mark.e2e
def test_the_first_build_says_what_the_long_step_is(tmp_path: Path) -> None:
    from posecards.engine.executor import run
    from posecards.render.build import plan_build

    said: list[str] = []

    class Seen(Exception):
        pass

    def progress(msg: str) -> None:
        said.append(msg)
        if "UMAP" in msg:
            raise Seen  # stop before anything is rendered

    cfg = BuildConfig(out=tmp_path, cards=(1,), langs=("en",), formats=("svg",))
    with pytest.raises(Seen):
        run(plan_build(cfg), progress, use_cache=False)
    assert "numba" in said[-1] and "first time" in said[-1]


BUG = (
    "import sys\n"
    "from typer.testing import CliRunner\n"
    "from posecards import commands\n"
    "from posecards.cli import app\n"
    "def broken(params):\n"
    "    return {}['no such key']\n"
    "commands.list_cards = broken\n"
    "r = CliRunner().invoke(app, sys.argv[1:])\n"
    "sys.stdout.write(r.stdout)\n"
    "sys.stderr.write(r.stderr)\n"
    "sys.exit(r.exit_code)\n"
)


def test_a_bug_says_it_is_an_internal_error() -> None:
    env = {k: v for k, v in os.environ.items() if k != "POSECARDS_DEBUG"}
    r = subprocess.run([sys.executable, "-c", BUG, "list"], capture_output=True, text=True, env=env)
    assert r.returncode == 70, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("posecards: internal error (KeyError: 'no such key'): ")
    assert "a bug in posecards, not a problem with your input" in lines[0]
    assert "--debug" in lines[0]
    for args, extra in ((["--debug", "list"], {}), (["list"], {"POSECARDS_DEBUG": "1"})):
        r = subprocess.run(
            [sys.executable, "-c", BUG, *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
        )
        assert r.returncode == 70
        assert "Traceback (most recent call last)" in r.stderr and "def broken" not in r.stdout
        assert "in broken" in r.stderr  # the frame of the bug
        assert r.stderr.strip().splitlines()[-1].startswith("posecards: internal error (KeyError")


def test_bad_input_is_not_an_internal_error_and_debug_shows_where() -> None:
    r = runner.invoke(app, ["data", "c2-heatmap", "--d-model", "7"])
    assert r.exit_code == 2 and r.stderr.startswith("posecards: error: --d-model")
    r = runner.invoke(app, ["--debug", "data", "c2-heatmap", "--d-model", "7"])
    assert r.exit_code == 2 and "Traceback" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("posecards: error: --d-model")


def test_inspect_sets_no_process_wide_warning_filter(tmp_path: Path) -> None:
    import warnings

    # what the command imports may set filters of its own at import time (numpy does)
    import posecards.commands  # noqa: F401
    import posecards.content.inspect  # noqa: F401
    import posecards.render.inspect  # noqa: F401

    before = list(warnings.filters)
    r = runner.invoke(app, ["inspect", str(tmp_path / "missing"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "does not exist" in r.stderr
    assert warnings.filters == before
