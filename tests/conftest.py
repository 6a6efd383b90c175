"""Test-wide settings: a private posecards cache per test session, hypothesis profiles, the
shared session fixtures (one full build, one headless Chromium)."""

from __future__ import annotations

import gc
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# with POSECARDS_TEST_CPU=FILE, the CPU seconds of every test (tests/cputime.py)
from cputime import pytest_collection_finish, pytest_runtest_protocol  # noqa: F401 (hooks)
from hypothesis import settings

# every skipped or xfailed test listed at the end; with POSECARDS_STRICT_SKIPS=1 (.ci/run) one
# that tests/expected_skips.toml does not allow fails the run
from skipcheck import (  # noqa: F401 (pytest hooks)
    pytest_collectreport,
    pytest_runtest_logreport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)

# The UMAP cache of a test run lives in its own folder (shared by the build subprocesses).
os.environ.setdefault("POSECARDS_CACHE_DIR", tempfile.mkdtemp(prefix="posecards-test-cache-"))
os.environ.setdefault("MPLBACKEND", "Agg")
# The suite starts over 150 Python processes (builds, their drawing processes,
# command lines). Where the environment sets PYTHONDONTWRITEBYTECODE (this machine's does), each
# compiled posecards and the test modules from source again; now the first compiles them into
# __pycache__ (git-ignored) and the others load that: 930 -> 907 CPU s of a run (vmstat, one run
# each, 2026-12-04).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
# Automatic garbage collection in a test process: after 20,000 new objects rather than 700, and
# what exists once the tests are collected (torch, transformers, matplotlib, the test modules)
# left out of the scans (gc.freeze in _frozen_imports). A drawn card or a model read through
# transformers makes hundreds of thousands of objects: tests/test_contrast, test_inspect_zoo,
# test_card1, test_card9, test_inspect_families and test_compose spent 21.5 s of their 143 CPU s
# in collections with the defaults, 6.6 s so (gc.callbacks, pytest -n 0, 2026-12-04). The drawing
# code's own collections (garbage.collections_at_fixed_points) are unchanged; the processes
# the tests start keep Python's defaults.
gc.set_threshold(20_000, 10, 10)
# what the shared full build runs with, fixed now: its thread may start the build while a test's
# run_here has changed os.environ (POSECARDS_CARDS_DIR to a broken card text, say) or the folder
SESSION_ENV, SESSION_CWD = dict(os.environ), Path.cwd()

settings.register_profile("ci", deadline=None, print_blob=True)
settings.load_profile("ci")

ALL_FORMATS = "png,svg,pdf,html"

# markers (pyproject.toml): `make check` deselects e2e, browser and slow
BROWSER_FIXTURES = {"browser", "playwright_session"}
E2E_FIXTURES = {"built", "deck_built"}
E2E_MODULES = {  # every test here runs the command line on real work
    "test_browser", "test_build", "test_buildcache", "test_check", "test_deck", "test_fonts",
    "test_inspect_cli", "test_portability", "test_reliability",
}  # fmt: skip
SLOW_MODULES = {"test_layout", "test_compose", "test_measure"}


# pytest-xdist (make test: --dist loadscope --no-loadscope-reorder, scheduler below): the tests
# of a module run on one worker (its module fixtures are made once), the costliest modules first
# so that both cores stay busy to the end; the modules of many independent drawing tests are
# handed out one test at a time, last; a module not named here runs between the two.
# The shared full build (`built`) starts in the background as each worker's session begins
# (_start_shared_build below), so the modules that read it come after about 300 CPU seconds
# of modules that do not: by then it is made and no worker waits for it.
FIRST = (  # most expensive first, the readers of the shared build after enough other work
    "test_portability", "test_inspect_cli", "test_buildcache", "test_measure",
    "test_reliability", "test_build", "test_fonts", "test_deck", "test_browser",
    "test_figure_pages",
    "test_check", "test_explore", "test_explore_math", "test_projection",
)  # fmt: skip
SPREAD = {
    "test_layout", "test_contrast", "test_compose", "test_inspect_families", "test_inspect_zoo",
    "test_card1", "test_card2", "test_card3", "test_card4", "test_card5", "test_card6",
    "test_card7",
}  # fmt: skip


def _rank(item: pytest.Item) -> int:
    module = item.path.stem
    if module in FIRST:
        return FIRST.index(module)
    return len(FIRST) + (module in SPREAD)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        module = item.path.stem
        if names & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if names & E2E_FIXTURES or module in E2E_MODULES:
            item.add_marker(pytest.mark.e2e)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    items.sort(key=_rank)  # stable: a module's tests keep their order


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Work units for xdist: a module, or a single test of a SPREAD module, in collection order.
    (xdist's loadgroup marks do not reach its scheduler with pytest 9, whose node ids are no
    longer the attribute xdist rewrites.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ModulesThenTests(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return nodeid if Path(module).stem in SPREAD else module

    return ModulesThenTests(config, log)


def run(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    base: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the posecards command line in a fresh process (``env``: variables to set over
    ``base``, os.environ unless given)."""
    return subprocess.run(
        [sys.executable, "-m", "posecards", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**(os.environ if base is None else base), "PYTHONWARNINGS": "ignore", **(env or {})},
        timeout=1800,
    )


def run_here(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`run` without a new Python: ``python -m posecards ARGS`` executed in this process (runpy:
    posecards.cli.main with its error handling, one line and exit 2, 70 for a bug), without
    importing torch and transformers again (about 3.5 CPU s a run of `inspect`).

    As `run` gives them: the exit code; the text written on file descriptors 1 and 2 by this
    process and by the processes it starts (the drawing processes inherit them); ``cwd``, and
    ``env`` with PYTHONWARNINGS=ignore (in os.environ and sys.warnoptions, which the drawing
    processes inherit; warnings ignored here). Restored afterwards, even on failure: the working
    folder, os.environ, sys.argv and sys.warnoptions, the warning filters, matplotlib's rcParams,
    the stream and level of every logger that existed before, torch's random state; a fork server
    the command left running is stopped. `inspect` draws in fresh processes (the engine's), so
    its pictures do not depend on what this process drew before.

    For what a command writes. A test of the process itself (its exit and stderr on bad input
    with the interpreter's own warnings, memory, signals, imports) uses `run`; test_inspect_cli.py
    checks that both write the same bytes."""
    import contextlib
    import io
    import locale
    import logging
    import runpy
    import traceback
    import warnings

    encoding = locale.getpreferredencoding(False)  # what `run` decodes a process's output with
    saved_env = dict(os.environ)
    saved_argv, saved_warnoptions, saved_cwd = sys.argv, sys.warnoptions[:], os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    everyone = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    loggers = [lg for lg in everyone if isinstance(lg, logging.Logger)]
    saved_loggers = [(lg, lg.level, lg.disabled, lg.propagate, lg.handlers[:]) for lg in loggers]
    handlers = [h for lg in loggers for h in lg.handlers if isinstance(h, logging.StreamHandler)]
    saved_handlers = [(h, h.stream) for h in handlers]
    torch = sys.modules.get("torch")
    torch_rng = torch.get_rng_state() if torch is not None else None
    sys.stdout.flush()
    sys.stderr.flush()
    captured = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]  # closed by _read_text
    saved_fds = [os.dup(1), os.dup(2)]
    code: int = 0
    try:
        for f, fd in zip(captured, (1, 2), strict=True):
            os.dup2(f.fileno(), fd)
        sys.stdout = io.TextIOWrapper(
            open(1, "wb", closefd=False), encoding=encoding, line_buffering=True
        )
        sys.stderr = io.TextIOWrapper(
            open(2, "wb", closefd=False),
            encoding=encoding,
            errors="backslashreplace",
            line_buffering=True,
        )
        for h, stream in saved_handlers:  # a handler made for stderr writes to this stderr
            if stream in (saved_streams[1], sys.__stderr__):
                h.setStream(sys.stderr)
            elif stream in (saved_streams[0], sys.__stdout__):
                h.setStream(sys.stdout)
        os.environ.update({"PYTHONWARNINGS": "ignore", **(env or {})})
        sys.warnoptions.append("ignore")
        sys.argv = ["posecards", *args]  # runpy puts posecards/__main__.py first, as -m does
        if cwd is not None:
            os.chdir(cwd)
        with warnings.catch_warnings(), contextlib.ExitStack() as stack:
            warnings.simplefilter("ignore")
            if (mpl := sys.modules.get("matplotlib")) is not None:  # (inspect draws elsewhere)
                stack.enter_context(mpl.rc_context())
            try:
                runpy.run_module("posecards", run_name="__main__", alter_sys=True)
            except SystemExit as exc:  # how click ends the command, as the interpreter reads it
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    code = 1
            except Exception:  # an uncaught exception: its traceback and exit code 1
                traceback.print_exc()
                code = 1
    finally:
        with contextlib.suppress(ValueError):  # a stream the command closed
            sys.stdout.flush()
            sys.stderr.flush()
        sys.stdout, sys.stderr = saved_streams
        for fd, saved in zip((1, 2), saved_fds, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        os.chdir(saved_cwd)
        for key in [k for k in os.environ if k not in saved_env]:
            del os.environ[key]
        os.environ.update({k: v for k, v in saved_env.items() if os.environ.get(k) != v})
        sys.argv, sys.warnoptions[:] = saved_argv, saved_warnoptions
        for lg, level, disabled, propagate, lg_handlers in saved_loggers:
            lg.setLevel(level)
            lg.disabled, lg.propagate, lg.handlers[:] = disabled, propagate, lg_handlers
        for h, stream in saved_handlers:
            h.setStream(stream)
        if torch_rng is not None and torch is not None:
            torch.set_rng_state(torch_rng)
        from multiprocessing import forkserver

        stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
        if stop is not None:  # started with this run's environment: the next run starts its own
            stop()
        out, err = (_read_text(f, encoding) for f in captured)
    return subprocess.CompletedProcess(["posecards", *args], code, out, err)


def _read_text(f: Any, encoding: str) -> str:
    """The file's bytes as ``subprocess.run(text=True)`` gives a pipe's: decoded, newlines
    translated."""
    f.seek(0)
    text = f.read().decode(encoding).replace("\r\n", "\n").replace("\r", "\n")
    f.close()
    return str(text)


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory,
    worker_id: str,
    name: str,
    make: Callable[[Path], None],
) -> Path:
    """A folder ``make`` fills once per test run, shared by every pytest-xdist worker.

    Without xdist (worker "master") it is a fresh temporary folder. Under xdist the workers'
    temporary folders share one parent that is new for each run; the first worker to get here
    makes the folder under a file lock while the others wait for it, so the run pays once.
    """
    if worker_id == "master":
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    from filelock import FileLock

    folder = tmp_path_factory.getbasetemp().parent / name
    done = folder / ".made"
    with FileLock(f"{folder}.lock"):
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


FULL_BUILD_LOG = "build.log"  # beside the shared full build's out/: its progress lines
FULL_BUILD_CACHE = "cache"  # beside it: the posecards cache it was built with, from empty


def _full_build(folder: Path) -> None:
    """--jobs 2 from an empty cache of its own: every unit is rendered (test_build.py's
    --jobs test reads the log)."""
    r = run(
        *("build", "--out", str(folder / "out"), "--format", ALL_FORMATS, "--jobs", "2"),
        cwd=SESSION_CWD,
        env={"POSECARDS_CACHE_DIR": str(folder / FULL_BUILD_CACHE)},
        base=SESSION_ENV,
    )
    assert r.returncode == 0, r.stderr
    (folder / FULL_BUILD_LOG).write_text(r.stderr, encoding="utf-8")


@pytest.fixture(scope="session", autouse=True)
def _frozen_imports() -> None:
    """What a test process holds before its first test (imports, collected tests) is never
    garbage: no automatic collection scans it again (see gc.set_threshold above)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def _start_shared_build(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> None:
    """Under xdist, where a collected test reads the shared full build, make it in a thread
    (its --jobs 2 processes do the work) while this worker runs other modules: the first
    worker to take the file lock builds, `built` finds it made (or waits for the lock). A
    failed build here leaves no ``.made``: `built` then builds again and fails with its
    message. Its CPU is charged to the test that runs when it ends (tests/cputime.py)."""
    if worker_id == "master" or not any(
        "built" in getattr(item, "fixturenames", ()) for item in request.session.items
    ):
        return
    import threading

    tmp_path_factory.getbasetemp()  # made here, not raced for by the thread and a test
    threading.Thread(
        target=once_per_run,
        args=(tmp_path_factory, worker_id, "build", _full_build),
        name="shared-build",
        daemon=True,
    ).start()


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """One full default build (all cards, both languages, every format), shared by the tests
    (and by pytest-xdist's workers: made once per run)."""
    return once_per_run(tmp_path_factory, worker_id, "build", _full_build) / "out"


@pytest.fixture(scope="session")
def computed_cards() -> dict[int, Any]:
    """Every card's content with the default parameters (compute_card), once per test process:
    tests/test_layout.py and tests/test_contrast.py draw them (handed out one test at a time,
    both run on each worker)."""
    from posecards.config import CARD_IDS, PEParams
    from posecards.content import compute_card

    return {c: compute_card(c, PEParams()) for c in CARD_IDS}


# the SmolLM2 GGUF file's tensors as transformers 5.23.0's GGUF loading gives them (dequantized by
# the gguf package, q/k de-permuted by LlamaTensorProcessor): the reference of tests/test_gguf.py
# and tests/test_weights.py, which each loaded the whole file again (about 15 CPU s each)
SMOLLM2_LAYERS = (0, 7, 14, 29)
SMOLLM2_TENSORS = ("self_attn.q_proj.weight", "self_attn.k_proj.weight", "input_layernorm.weight")


def _smollm2_reference(folder: Path) -> None:
    import numpy as np
    import torch
    import transformers as T
    from gguf_files import smollm2_file
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    path = smollm2_file()
    cfg = T.AutoConfig.from_pretrained(path.parent, gguf_file=path.name)
    with torch.device("meta"):
        model = T.AutoModelForCausalLM.from_config(cfg)
    tensors = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=model)["tensors"]
    keep = [f"model.layers.{i}.{t}" for i in SMOLLM2_LAYERS for t in SMOLLM2_TENSORS]
    np.savez(folder / "tensors.npz", **{k: tensors[k].numpy() for k in keep})
    # the config transformers builds from the file, as a config.json would hold it (to_dict)
    (folder / "config.pickle").write_bytes(pickle.dumps(dict(cfg.to_dict())))


@pytest.fixture(scope="session")
def _smollm2_hf(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    return once_per_run(tmp_path_factory, worker_id, "smollm2-hf", _smollm2_reference)


@pytest.fixture(scope="session")
def smollm2_hf_tensors(_smollm2_hf: Path) -> dict[str, Any]:
    """Layers SMOLLM2_LAYERS of the SmolLM2 file as transformers loads them (numpy, the dtype
    transformers gives), loaded once per test run for every worker."""
    import numpy as np

    with np.load(_smollm2_hf / "tensors.npz") as npz:
        return {k: npz[k] for k in npz.files}


@pytest.fixture(scope="session")
def smollm2_hf_config(_smollm2_hf: Path) -> dict[str, Any]:
    """The config transformers 5.23.0 builds from the SmolLM2 file
    (``AutoConfig.from_pretrained(folder, gguf_file=...).to_dict()``), read from the file with the
    tensors above (each such read parses the file's 49,152 tokens and 48,900 merges in Python:
    about 2.4 CPU s)."""
    return dict(pickle.loads((_smollm2_hf / "config.pickle").read_bytes()))


# --- headless Chromium: Debian's, driven by playwright; one browser per test session ---------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]


def require_chromium() -> str:
    """Skip the calling test module where Chromium is missing; CI must have it."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            raise RuntimeError(
                "CI must run the browser test: install Debian's chromium (.ci/run does)"
            )
        pytest.skip("chromium is not installed here (CI installs it)", allow_module_level=True)
    return CHROMIUM


def fontless_env(tmp: Path, files: list[Path] | None = None) -> dict[str, str] | None:
    """On a machine with no system font at all, Chromium loads no web font either; give it
    fontconfig with matplotlib's STIX files only (no page glyph comes from them:
    test_browser.py checks every glyph is drawn by an embedded face), or with ``files``
    (LibreOffice: posecards' own font files). None where fonts exist."""
    listed = (
        subprocess.run(["fc-list"], capture_output=True, text=True)
        if shutil.which("fc-list")
        else None
    )
    if listed is not None and listed.stdout.strip():
        return None
    import matplotlib

    fonts = tmp / "stix-only"
    fonts.mkdir(parents=True, exist_ok=True)
    stix = sorted(Path(matplotlib.get_data_path(), "fonts", "ttf").glob("STIX*.ttf"))
    for f in files if files is not None else stix:
        if not (fonts / f.name).exists():
            (fonts / f.name).symlink_to(f)
    conf = tmp / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<fontconfig>'
        '<include ignore_missing="yes">/etc/fonts/conf.d</include>'
        f"<dir>{fonts}</dir><cachedir>{tmp / 'fc-cache'}</cachedir></fontconfig>\n",
        encoding="utf-8",
    )
    return {**os.environ, "FONTCONFIG_FILE": str(conf)}


def launch_chromium(playwright: Any, env: dict[str, str] | None = None) -> Any:
    """A new headless Chromium (the session's ``browser`` unless a test needs its own env)."""
    if env is None:
        env = fontless_env(Path(tempfile.mkdtemp(prefix="posecards-fc-")))
    return playwright.chromium.launch(
        executable_path=require_chromium(),
        args=CHROMIUM_ARGS,
        **({"env": env} if env is not None else {}),
    )


@pytest.fixture(scope="session")
def playwright_session() -> Iterator[Any]:
    """playwright's sync API, started once (it cannot be started twice in one thread)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_session: Any) -> Iterator[Any]:
    """One headless Chromium for the whole test session; tests open and close their pages."""
    b = launch_chromium(playwright_session)
    try:
        yield b
    finally:
        b.close()
