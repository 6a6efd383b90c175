"""Property: whatever values a user types, the command line either succeeds with valid output or
fails with exit code 2 and one line naming the problem; never a traceback."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from posecards.cli import app
from posecards.config import MAX_D_MODEL, MAX_POSITIONS

runner = CliRunner()

numbers = st.one_of(
    st.integers(-10, 10),
    st.integers(2, 2048),
    st.integers(MAX_D_MODEL - 2, MAX_D_MODEL + 4),
    st.just(MAX_POSITIONS + 1),
)
floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(1.0001, 1e7),
    st.sampled_from([1.0, 0.5, -3.0, 10000.0]),
)
words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    figure=st.sampled_from(["c2-similarity", "c3-decay", "c4-buckets", "c4-alibi", "c9-x", "nope"]),
    fmt=st.one_of(st.sampled_from(["csv", "json"]), words),
    d_model=st.one_of(st.integers(2, 96).map(lambda x: 2 * x), numbers),
    base=floats,
    positions=st.one_of(st.integers(2, 300), numbers),
)
def test_data_command_never_tracebacks(
    figure: str, fmt: str, d_model: int, base: float, positions: int
) -> None:
    args = ["data", figure, "--format", fmt, "--d-model", str(d_model), "--base", repr(base)]
    args += ["--positions", str(positions)]
    r = runner.invoke(app, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    if r.exit_code == 0:
        assert math.isfinite(base) and base > 1 and d_model % 2 == 0
        if fmt.strip() == "json":  # the only other valid value is "csv"
            json.loads(r.stdout)
        else:
            assert r.stdout.startswith("field,i,j,value\n")
    else:
        assert r.exit_code == 2, r.output
        lines = [ln for ln in r.stderr.strip().splitlines() if ln]
        assert len(lines) == 1 and lines[0].startswith("posecards: error: "), r.stderr


@settings(max_examples=60, deadline=None)
@given(
    cards=st.one_of(st.sampled_from(["", "0", "5", "1,9", "x"]), words),
    lang=st.one_of(st.sampled_from(["fr", "", "en,de"]), words),
    fmt=st.one_of(st.sampled_from(["gif", "", "png,jpg"]), words),
    theme=st.one_of(st.sampled_from(["blue", ""]), words),
    size=st.one_of(st.sampled_from(["a3", "16x9"]), words),
)
def test_bad_build_options_are_one_line_exit_2(
    cards: str, lang: str, fmt: str, theme: str, size: str
) -> None:
    args = ["build", "--out", "/nonexistent-posecards-test/out", "--check"]
    args += ["--cards", cards, "--lang", lang, "--format", fmt, "--theme", theme, "--size", size]
    valid = (
        set(filter(None, (c.strip() for c in cards.split(",")))) <= {"1", "2", "3", "4"}
        and any(c.strip() for c in cards.split(","))
        and set(filter(None, (x.strip().lower() for x in lang.split(",")))) <= {"en", "zh"}
        and any(x.strip() for x in lang.split(","))
        and set(filter(None, (x.strip().lower() for x in fmt.split(","))))
        <= {"png", "svg", "pdf", "html"}
        and any(x.strip() for x in fmt.split(","))
        and theme.strip().lower() in ("light", "dark")  # choices are case-insensitive
        and size.strip().lower() in ("slide", "4x3", "a4", "square")
    )
    if valid:
        return  # a real build: covered by the build tests
    r = runner.invoke(app, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("posecards: error: "), r.stderr
