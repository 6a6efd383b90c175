"""The package surface: version, lazy public API, light command-line start-up."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import posecards

ROOT = Path(__file__).resolve().parent.parent


def test_public_api_resolves_and_is_listed() -> None:
    for name in posecards._API:
        assert callable(getattr(posecards, name)) or isinstance(getattr(posecards, name), tuple)
        assert name in posecards.__all__
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        posecards.nope  # noqa: B018


def test_one_concept_one_definition() -> None:
    # house style: grep "def alibi_slopes" finds exactly one line
    sources = [p.read_text(encoding="utf-8") for p in (ROOT / "posecards").rglob("*.py")]
    for name in posecards._API:
        kw = "class" if name[0].isupper() and not name.isupper() else "def"
        if name.isupper():
            continue
        hits = sum(s.count(f"\n{kw} {name}(") + s.count(f"\n{kw} {name}:") for s in sources)
        assert hits == 1, f"{kw} {name} defined {hits} times"


def test_math_layer_imports_no_plotting_templating_or_cli() -> None:
    banned = (
        "matplotlib",
        "jinja2",
        "typer",
        "posecards.render",
        "posecards.figures",
        "posecards.cli",
    )
    for path in (ROOT / "posecards" / "encodings").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for b in banned:
            assert f"import {b}" not in text and f"from {b}" not in text, f"{path.name} imports {b}"


def test_version_is_single_sourced() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in meta["project"]["dynamic"]
    out = subprocess.run(
        [sys.executable, "-m", "posecards", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"posecards {posecards.__version__}"


def test_help_imports_no_heavy_library() -> None:
    code = (
        "import sys; from posecards.cli import app; from typer.testing import CliRunner; "
        "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0, r.output; "
        "assert 'build' in r.output; "
        "heavy = [m for m in ('torch', 'umap', 'matplotlib', 'numba', 'jinja2') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _contract_layers() -> list[set[str]]:
    """The layers of the import-linter `layers` contract in pyproject.toml, top first."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    return [{m.strip() for m in re.split(r"[|:]", layer)} for layer in layers]


def test_architecture_doc_draws_the_layer_contract() -> None:
    # docs/architecture.md's table lists the same layers, in the same order, as the contract
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text[text.index("| layer | where |") : text.index("## The engine")]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    documented = []
    for row in rows:
        where = row.split("|")[2]
        documented.append(
            {re.sub(r"\.py$", "", m).strip("/") for m in re.findall(r"`posecards/([^`]+)`", where)}
        )
    assert documented == _contract_layers()
    # and every package and module of posecards is in it (the contract is exhaustive)
    children = {p.stem for p in (ROOT / "posecards").iterdir() if p.suffix == ".py" or p.is_dir()}
    children -= {"__init__", "__pycache__", "_data", "style", "data", "explore_js"}  # no Python
    assert set().union(*documented) == children


def test_planning_loads_no_matplotlib_and_names_render_functions_that_exist() -> None:
    # the import-linter contract "planning imports no matplotlib", run: every plan of a build and
    # a deck is made without loading matplotlib, and each unit's Deferred render function
    # resolves to a function of that name once its module is imported
    code = (
        "import sys, importlib; from pathlib import Path; "
        "from posecards.config import BuildConfig, DeckConfig; "
        "from posecards.render.build import plan_build; "
        "from posecards.deck.build import plan_deck_build; "
        "import posecards.render.inspect, posecards.commands; "
        "plans = [plan_build(BuildConfig(out=Path('o'), formats=('png', 'svg', 'pdf', 'html'))), "
        "plan_deck_build(DeckConfig(out=Path('d')))]; "
        "assert 'matplotlib' not in sys.modules, 'planning loaded matplotlib'; "
        "refs = {(u.render.module, u.render.name) for p in plans for u in p.units}; "
        "assert all(callable(getattr(importlib.import_module(m), n)) for m, n in refs); "
        "print(len(refs))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (
        int(out.stdout) == 8
    )  # card, pages, index, explorer; card slides, frames, animations, deck
