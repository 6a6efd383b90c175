"""Test-wide settings: a private posecards cache per test session, hypothesis profiles, the
shared session fixtures (one full build, one headless Chromium)."""

from __future__ import annotations

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
    "test_portability", "test_inspect_cli", "test_buildcache", "test_measure", "test_fonts",
    "test_reliability", "test_build", "test_deck", "test_browser", "test_figure_pages",
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
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the posecards command line in a fresh process (``env``: variables to set)."""
    return subprocess.run(
        [sys.executable, "-m", "posecards", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})},
        timeout=1800,
    )


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


def _full_build(folder: Path) -> None:
    """--jobs 2 from an empty cache of its own: every unit is rendered (test_build.py's
    --jobs test reads the log)."""
    r = run(
        *("build", "--out", str(folder / "out"), "--format", ALL_FORMATS, "--jobs", "2"),
        env={"POSECARDS_CACHE_DIR": str(folder / "cache")},
    )
    assert r.returncode == 0, r.stderr
    (folder / FULL_BUILD_LOG).write_text(r.stderr, encoding="utf-8")


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
