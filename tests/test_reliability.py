"""Bad card text, interrupted and concurrent builds, and unsafe text: one clear line and exit 2,
or a clean stop, and never a half-written output folder.

The interrupted, killed and concurrent builds and the one-line errors of a bad --out or
POSECARDS_CARDS_DIR are processes of their own (`run`, Popen); the other builds are about what
they write and run in this process (conftest.run_here)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run, run_here, tree

from posecards.paths import data_dir

SMALL = ["--cards", "2", "--lang", "en", "--format", "svg,html"]


@pytest.fixture
def cards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private, editable copy of the card sources, used by the builds of this test."""
    folder = tmp_path / "cards"
    shutil.copytree(data_dir("cards"), folder)
    monkeypatch.setenv("POSECARDS_CARDS_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def _previous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SMALL built once (default cards: made before a test's `cards` fixture, a narrower scope)."""
    assert "POSECARDS_CARDS_DIR" not in os.environ
    out = tmp_path_factory.mktemp("previous") / "out"
    r = run_here("build", "--out", str(out), *SMALL, "--quiet")
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def previous(_previous: Path, tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """An output folder holding an earlier build (default cards): a copy of `_previous`."""
    out = tmp_path / "out"
    shutil.copytree(_previous, out)
    return out, tree(out)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def one_line_exit_2(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    # progress lines ("[  1.2s] ...") may come first; the error is one line, and the last
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("[")]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("posecards: error: ")
    assert r.stderr.strip().splitlines()[-1] == lines[0]
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        ("[thesis]", "[thesis", ("card2.toml", "syntax error", "line")),
        ("[labels.", "[[labels.", ("card2.toml",)),
        ("zh = ", "zh_missing = ", ("card2.toml", "has no 中文 (zh) text")),
        (
            "[panels.c2-heatmap]",
            "[panels.c2-nope]",
            ("card2.toml", "unknown figure id 'c2-nope'", "line"),
        ),
        ("{{ f1", "{{ no_such_number", ("card2.toml", "placeholder 'no_such_number' has no value")),
        ("{{ f1", "{{ f1 | nofilter }} {{ f1", ("card2.toml",)),
    ],
)
def test_bad_card_text_is_one_line_and_leaves_dir_alone(
    cards: Path,
    previous: tuple[Path, dict[str, bytes]],
    old: str,
    new: str,
    needles: tuple[str, ...],
) -> None:
    out, before = previous
    edit(cards / "card2.toml", old, new)
    r = run_here("build", "--out", str(out), *SMALL)
    one_line_exit_2(r, *needles)
    assert tree(out) == before


def test_markup_in_card_text_stays_text(cards: Path, tmp_path: Path) -> None:
    evil = "<script>alert(\\\"x\\\")</script> & 'q'"
    path = cards / "card2.toml"
    text = path.read_text(encoding="utf-8")
    start = text.index("[thesis]")
    en = text.index("en = ", start)
    end = text.index("\n", en)
    path.write_text(text[:en] + f'en = "{evil}"' + text[end:], encoding="utf-8")
    out = tmp_path / "evil"
    r = run_here("build", "--out", str(out), *SMALL, "--format", "svg,html", "--quiet")
    assert r.returncode == 0, r.stderr
    page = next((out / "en").glob("card-2-*.html")).read_text(encoding="utf-8")
    svg = next((out / "en").glob("card-2-*.svg")).read_text(encoding="utf-8")
    assert "<script" not in page and "<script" not in svg
    assert "&lt;script&gt;alert(" in page
    assert "&lt;script&gt;alert(" in svg


def test_sigterm_mid_build_leaves_previous_outputs(previous: tuple[Path, dict[str, bytes]]) -> None:
    out, before = previous
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "posecards",
            "build",
            "--out",
            str(out),
            *SMALL,
            "--no-cache",
            "--base",
            "777",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # terminate once rendering has started (not after a fixed sleep: on an idle machine the
    # small build can finish within seconds)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "rendering" in line:
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, rest = proc.communicate(timeout=120)
    err = "".join(seen) + rest
    assert proc.returncode != 0, err
    assert "interrupted" in err and "Traceback" not in err
    assert tree(out) == before
    assert not list(out.rglob("*.tmp"))


def test_two_builds_at_once_do_not_corrupt(tmp_path: Path) -> None:
    out = tmp_path / "shared"
    quickest = ["--cards", "4", "--lang", "en", "--format", "svg,html"]  # card 4: half card 2's CPU
    cmd = [sys.executable, "-m", "posecards", "build", "--out", str(out), *quickest, "--quiet"]
    a = subprocess.Popen([*cmd, "--base", "1000"], stderr=subprocess.PIPE, text=True)
    b = subprocess.Popen([*cmd, "--base", "2000"], stderr=subprocess.PIPE, text=True)
    assert a.wait(timeout=600) == 0 and b.wait(timeout=600) == 0
    man = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for rel, digest in man["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest, rel


def test_check_never_writes(tmp_path: Path) -> None:
    out = tmp_path / "nothing"
    r = run_here("build", "--out", str(out), *SMALL, "--check")
    assert r.returncode == 1
    assert not out.exists()


def test_out_under_a_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    r = run("build", "--out", str(f / "sub"), *SMALL)
    one_line_exit_2(r, "cannot write to --out", "is not a folder")


def test_missing_cards_dir_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSECARDS_CARDS_DIR", str(tmp_path / "none"))
    r = run("build", "--out", str(tmp_path / "o"), *SMALL)
    one_line_exit_2(r, "POSECARDS_CARDS_DIR")
    assert os.listdir(tmp_path) == []


def test_template_error_names_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jinja2

    from posecards.render import html

    folder = tmp_path / "templates"
    shutil.copytree(data_dir("templates"), folder)
    page = folder / "index.html.j2"
    page.write_text(page.read_text(encoding="utf-8") + "\n{% for x in %}\n", encoding="utf-8")
    broken = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=True)
    monkeypatch.setattr(html, "env", lambda: broken)
    with pytest.raises(html.TemplateProblem, match=r"templates/index\.html\.j2 line \d+: "):
        html.index_page(entries=[], footer="", theme={})


def test_a_killed_worker_fails_the_build_cleanly(previous: tuple[Path, dict[str, bytes]]) -> None:
    out, before = previous
    proc = subprocess.Popen(
        [sys.executable, "-m", "posecards", "build", "--out", str(out), *SMALL, "--no-cache"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def kids(pid: int) -> list[int]:
        path = Path(f"/proc/{pid}/task/{pid}/children")
        try:
            return [int(x) for x in path.read_text().split()]
        except OSError:
            return []

    def workers() -> list[int]:
        found = []
        for pid in kids(proc.pid):  # the render workers, not the resource tracker
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in cmd:  # spawned
                found.append(pid)
            elif b"forkserver" in cmd:  # forked from the fork server: its children
                found += kids(pid)
        return found

    children: list[int] = []
    deadline = time.monotonic() + 60
    while not children and time.monotonic() < deadline:
        time.sleep(0.3)
        children = workers()
    assert children, "no worker process appeared"
    time.sleep(2)
    os.kill(children[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("posecards: error: ")
    assert tree(out) == before
