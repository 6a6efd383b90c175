"""`posecards data rope-calculators`: the RoPE calculators for a user's head dim, base and context
(content/calculators.py), each number against an independent computation written here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import run
from typer.testing import CliRunner

from posecards.cli import app

runner = CliRunner()


def _calc(*args: str) -> dict:
    r = runner.invoke(app, ["data", "rope-calculators", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_llama2_settings() -> None:
    doc = _calc("--head-dim", "128", "--base", "10000", "--context", "4096", "--target", "16384")
    # Liu et al. at LLaMA 2's settings: 46 pairs turn in 4,096 tokens, d_extra = 92
    assert (doc["critical_dimension"], doc["turning_pairs"]) == (92, 46)
    assert doc["extrapolation_bound"] == pytest.approx(2 * math.pi * 1e4 ** (92 / 128), rel=1e-12)
    # Men et al.: B(m) = sum_i cos(m theta_i) over 0 <= m < 4096, brute force
    theta = 1e4 ** (-np.arange(64) / 64.0)
    b = np.cos(np.arange(4096)[:, None] * theta).sum(axis=1)
    first = int(np.flatnonzero(b < 0)[0])
    assert doc["base_bound_holds"] is False and doc["first_negative_distance"] == first
    assert doc["smallest_base"] is None  # only with --smallest-base
    # position interpolation's factor in closed form: (T - 1) / (L - 1)
    assert doc["factor_needed"]["linear"] == pytest.approx(16383 / 4095, rel=1e-8)
    assert set(doc["factor_needed"]) == {"linear", "ntk", "dynamic", "yarn", "llama3"}


def test_a_base_that_holds_and_the_smallest_base() -> None:
    doc = _calc("--head-dim", "16", "--base", "10000", "--context", "64", "--smallest-base")
    theta = 1e4 ** (-np.arange(8) / 8.0)
    b = np.cos(np.arange(64)[:, None] * theta).sum(axis=1)
    assert doc["base_bound_holds"] is bool((b >= 0).all())
    low = doc["smallest_base"]
    assert low is not None and (low <= 10000 or not doc["base_bound_holds"])
    bl = np.cos(np.arange(64)[:, None] * low ** (-np.arange(8) / 8.0)).sum(axis=1)
    assert (bl >= 0).all()
    assert doc["factor_needed"] == {} and doc["target"] is None


def test_csv_has_one_row_per_field() -> None:
    r = runner.invoke(app, ["data", "rope-calculators", "--format", "csv", "--context", "512"])
    assert r.exit_code == 0, r.output
    rows = r.stdout.strip().splitlines()
    crit = 2 * math.ceil(64 * math.log(512 / (2 * math.pi)) / math.log(1e4))  # 62
    assert rows[0] == "field,i,j,value" and f"critical_dimension,,,{crit}" in rows


@pytest.mark.parametrize(
    "args,part",
    [
        (["--head-dim", "0"], "--head-dim"),
        (["--context", "1"], "--context"),
        (["--context", "100", "--target", "50"], "--target"),
        (["--base", "1"], "--base"),
    ],
)
def test_bad_input_exits_2_naming_the_option(args: list[str], part: str) -> None:
    r = runner.invoke(app, ["data", "rope-calculators", *args])
    assert r.exit_code == 2 and part in r.output, r.output


def test_bad_input_is_one_line_in_a_fresh_process() -> None:
    r = run("data", "rope-calculators", "--head-dim", "7")
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("posecards: error: --head-dim"), r.stderr
