"""The explorer page: its window.posecards API against posecards' Python math layer (randomized
cases from hypothesis, evaluated in headless Chromium in batches), and the page itself (every
control by keyboard, views update, numbers shown agree with Python, offline, 390 px wide).

Tolerances (the issue's): 1e-12 relative for frequencies, wavelengths and attention factors,
1e-14 relative for ALiBi slopes, exact for buckets, 1e-12 × max(1, |position|) absolute for
sin/cos values and the offset profile; errors: the same message. The worst error measured per
function is printed at the end (pytest -s) and written to build/test-artifacts/.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
from collections.abc import Callable, Iterator
from html import unescape
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.config import ExploreConfig
from posecards.encodings.alibi import alibi_slopes
from posecards.encodings.buckets import deberta_log_bucket, log_float32, t5_relative_bucket
from posecards.encodings.rope_partial import HEAD_ROPE_TYPES, head_inv_freq
from posecards.encodings.rope_scaling import ROPE_TYPES, rope_inv_freq
from posecards.encodings.similarity import offset_profile
from posecards.encodings.sinusoidal import pair_frequencies, sinusoidal_pe, wavelengths
from posecards.render.explore import explore_bytes

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "build" / "test-artifacts"
BATCH = settings(max_examples=12, deadline=None)
WORST: dict[str, float] = {}
COUNTS: dict[str, int] = {}


# ------------------------------------------------------------------------------------------
# one page with the explorer, in the session's browser (tests/conftest.py)
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def explore_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("explore") / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig()))
    return path


class Page:
    """A loaded explorer page that records console errors and requests."""

    def __init__(self, browser: Any, path: Path, width: int = 1440, lang: str = "en") -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": 1000})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")


@pytest.fixture(scope="session")
def api(browser: Any, explore_file: Path) -> Iterator[Page]:
    page = Page(browser, explore_file)
    yield page
    page.page.close()


_RUN = """calls => calls.map(([name, args]) => {
  try { return {ok: window.posecards[name](...args)}; }
  catch (e) { return {err: e.message, name: e.name}; }
})"""


def run_js(page: Page, calls: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """Evaluate a batch of API calls in one round trip."""
    out: list[dict[str, Any]] = page.page.evaluate(_RUN, [[n, a] for n, a in calls])
    assert not page.errors, page.errors
    return out


def run_py(fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    try:
        return {"ok": fn(*args)}
    except (ValueError, TypeError, OverflowError, ZeroDivisionError) as exc:
        return {"err": str(exc), "name": type(exc).__name__}


def note(name: str, err: float, n: int) -> None:
    WORST[name] = max(WORST.get(name, 0.0), err)
    COUNTS[name] = COUNTS.get(name, 0) + n


def _compared(name: str, errors: bool) -> int:
    return sum(v for k, v in COUNTS.items() if k.startswith(name) and ("(errors)" in k) == errors)


def covers(name: str, values: int = 101, errors: int = 6) -> Callable[[Any], Any]:
    """The decorated property test, over all its examples, compared at least ``values`` values
    and ``errors`` error messages of ``name`` (each test checks its own coverage)."""

    def wrap(test: Any) -> Any:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> None:
            before = (_compared(name, False), _compared(name, True))
            test(*args, **kwargs)
            got = (_compared(name, False) - before[0], _compared(name, True) - before[1])
            assert got[0] >= values, f"{name}: only {got[0]} values compared"
            assert got[1] >= errors, f"{name}: only {got[1]} error messages compared"

        return run

    return wrap


@pytest.fixture(scope="module", autouse=True)
def agreement_report() -> Iterator[None]:
    """After the module: the worst error per function measured by the tests that ran, written
    to build/test-artifacts/explore-agreement.txt (printed with pytest -s)."""
    yield
    lines = [f"{k:55s} worst {WORST[k]:.3e} over {COUNTS[k]} values" for k in sorted(WORST)]
    lines += [
        f"{k:55s} {v} messages identical" for k, v in sorted(COUNTS.items()) if "(errors)" in k
    ]
    if lines:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "explore-agreement.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print("\n" + "\n".join(lines))


def same_outcome(name: str, js: dict[str, Any], py: dict[str, Any], case: Any) -> bool:
    """True if both returned; asserts that errors agree (both raise, same message)."""
    if "err" in py or "err" in js:
        assert "err" in py and "err" in js, f"{name}{case}: python {py}, page {js}"
        assert js["err"] == py["err"], f"{name}{case}: page {js['err']!r} != python {py['err']!r}"
        COUNTS[f"{name} (errors)"] = COUNTS.get(f"{name} (errors)", 0) + 1
        return False
    return True


def rel_err(js: Any, py: Any) -> float:
    a = np.asarray(js, dtype=np.float64)
    b = np.asarray(py, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.size == 0:
        return 0.0
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    scale = np.where(b == 0, 1.0, np.abs(b))
    err = np.where(same, 0.0, np.abs(a - b) / scale)
    return float(np.max(err))


# ------------------------------------------------------------------------------------------
# strategies: valid and invalid arguments, typed as Python takes them
# ------------------------------------------------------------------------------------------
even_dims = st.integers(1, 128).map(lambda h: 2 * h)


def mostly(
    valid: st.SearchStrategy[Any], invalid: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """Valid values four times in five."""
    return st.one_of(valid, valid, valid, valid, invalid)


dims = mostly(even_dims, st.one_of(st.integers(-3, 9), st.sampled_from([2.5, True, None, "8"])))
bases = mostly(
    st.one_of(st.floats(1.0001, 1e8), st.sampled_from([500000.0, 10000.0])),
    st.sampled_from([1.0, 0.5, -10.0, math.nan, math.inf, None]),
)
layouts = mostly(st.sampled_from(["interleaved", "half"]), st.sampled_from(["Half", "rotate_half"]))
freqs = mostly(st.sampled_from(["paper", "paper", "tensor2tensor"]), st.just("t2t"))
positions = mostly(
    st.one_of(
        st.lists(st.floats(-5000, 5000), min_size=1, max_size=5),
        st.lists(st.integers(-100000, 100000), min_size=1, max_size=5),
        st.integers(1, 6),
    ),
    st.sampled_from([[], [1.0, math.nan], [math.inf], 0, -3]),
)


def _call(name: str, *args: Any) -> tuple[str, list[Any]]:
    return (name, list(args))


@covers("sinusoidalPE")
@BATCH
@given(
    st.lists(st.tuples(positions, dims, bases, layouts, freqs), min_size=10, max_size=25),
)
def test_sinusoidal_pe_agrees(api: Page, cases: list[tuple[Any, ...]]) -> None:
    js = run_js(api, [_call("sinusoidalPE", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(sinusoidal_pe, *case)
        if not same_outcome("sinusoidalPE", j, py, case):
            continue
        a, b = np.asarray(j["ok"], dtype=np.float64), py["ok"]
        pos = np.abs(np.asarray(case[0], dtype=np.float64).reshape(-1))
        if isinstance(case[0], int):
            pos = np.arange(case[0], dtype=np.float64)
        scale = np.maximum(1.0, pos)[:, None]  # (n, 1)
        err = float(np.max(np.abs(a - b) / scale))
        assert err <= 1e-12, f"sinusoidalPE{case}: {err}"
        note("sinusoidalPE (abs / max(1,|p|))", err, a.size)


@covers("wavelengths")
@BATCH
@given(st.lists(st.tuples(dims, bases, freqs), min_size=10, max_size=30))
def test_wavelengths_and_frequencies_agree(api: Page, cases: list[tuple[Any, ...]]) -> None:
    calls = [_call("wavelengths", *c) for c in cases] + [
        _call("pairFrequencies", *c) for c in cases
    ]
    js = run_js(api, calls)
    for i, case in enumerate(cases):
        for name, fn, j in (
            ("wavelengths", wavelengths, js[i]),
            ("pairFrequencies", pair_frequencies, js[len(cases) + i]),
        ):
            py = run_py(fn, *case)
            if same_outcome(name, j, py, case):
                err = rel_err(j["ok"], py["ok"])
                assert err <= 1e-12, f"{name}{case}: {err}"
                note(f"{name} (relative)", err, len(py["ok"]))


offsets = mostly(
    st.one_of(
        st.lists(st.floats(-20000, 20000), min_size=1, max_size=12),
        st.lists(st.integers(-5000, 5000), min_size=1, max_size=12),
        st.floats(-1000, 1000),
    ),
    st.sampled_from([[math.nan], [1.0, math.inf]]),
)


@covers("offsetProfile")
@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(offsets, dims, bases, freqs), min_size=20, max_size=40))
def test_offset_profile_agrees(api: Page, cases: list[tuple[Any, ...]]) -> None:
    js = run_js(api, [_call("offsetProfile", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(offset_profile, *case)
        if not same_outcome("offsetProfile", j, py, case):
            continue
        a = np.asarray(j["ok"], dtype=np.float64)
        b = np.asarray(py["ok"], dtype=np.float64)
        assert a.shape == b.shape
        scale = np.maximum(1.0, np.abs(np.asarray(case[0], dtype=np.float64)))
        err = float(np.max(np.abs(a - b) / scale))
        assert err <= 1e-12, f"offsetProfile{case}: {err}"
        note("offsetProfile (abs / max(1,|k|))", err, a.size)


def test_offset_profile_dense(api: Page) -> None:
    """Every whole offset up to 2048 at the page's own settings (d 512, several bases)."""
    ks = list(range(-2048, 2049))
    cases = [(ks, d, b) for d in (2, 512, 1024) for b in (100.0, 10000.0, 1e8)]
    js = run_js(api, [_call("offsetProfile", *c) for c in cases])
    scale = np.maximum(1.0, np.abs(np.asarray(ks, dtype=np.float64)))
    for case, j in zip(cases, js, strict=True):
        err = float(np.max(np.abs(np.asarray(j["ok"]) - offset_profile(*case)) / scale))
        assert err <= 1e-12, (case[1:], err)
        note("offsetProfile (abs / max(1,|k|))", err, len(ks))


@st.composite
def rope_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    valid = draw(st.booleans())  # half the cases: every argument valid

    def pick(ok: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return ok if valid else mostly(ok, bad)

    dim = draw(pick(even_dims, st.sampled_from([2, 0, 7, -4, 3.5])))
    base = draw(pick(st.floats(1.0001, 1e8), st.sampled_from([1.0, 0.5, math.nan, None])))
    rope_type = draw(pick(st.sampled_from(ROPE_TYPES), st.sampled_from(["dynamic_ntk", "", None])))
    key = draw(st.sampled_from(["rope_type", "rope_type", "rope_type", "type"]))
    sc: dict[str, Any] = {} if rope_type is None else {key: rope_type}
    half = dim // 2 if isinstance(dim, int) and dim > 0 else 1
    factor_st = pick(
        st.one_of(st.floats(0.25, 64), st.floats(1.0, 16)),
        st.sampled_from([None, 0.0, -2.0, math.inf]),
    )
    options: dict[str, st.SearchStrategy[Any]] = {
        "factor": factor_st,
        "original_max_position_embeddings": pick(
            st.one_of(st.integers(2, 200000), st.sampled_from([4096, 8192])),
            st.sampled_from([None, 0, -5, 1]),
        ),
        "beta_fast": pick(st.floats(0.5, 64), st.sampled_from([0, None])),
        "beta_slow": pick(st.floats(0.25, 8), st.sampled_from([0, None])),
        "mscale": st.one_of(st.floats(0.1, 2), st.sampled_from([0, None, 1.0])),
        "mscale_all_dim": st.one_of(st.floats(0.1, 2), st.sampled_from([0, None, 1.0])),
        "truncate": st.sampled_from([True, False, None]),
        "attention_factor": st.one_of(st.floats(0.5, 2), st.just(None)),
        "low_freq_factor": pick(st.floats(0.5, 4), st.sampled_from([None, 0.0])),
        "high_freq_factor": pick(st.floats(1, 8), st.sampled_from([None, 1.0])),
        "rope_theta": st.one_of(st.floats(2, 1e7), st.sampled_from([None, 1.0])),
        "partial_rotary_factor": st.sampled_from([1.0, 0.5, None, 0.0]),
        "short_factor": pick(
            st.lists(st.floats(0.5, 4), min_size=half, max_size=half),
            st.one_of(st.lists(st.floats(0.5, 4), min_size=1, max_size=3), st.just(None)),
        ),
        "long_factor": pick(
            st.lists(st.floats(1, 64), min_size=half, max_size=half),
            st.one_of(
                st.lists(st.sampled_from([1.0, -1.0, math.nan]), min_size=half, max_size=half),
                st.just(None),
            ),
        ),
        "bogus_key": st.just(1),
    }
    wanted = {
        "linear": ["factor"],
        "ntk": ["factor"],
        "dynamic": ["factor"],
        "yarn": ["factor", "original_max_position_embeddings", "beta_fast", "beta_slow"],
        "llama3": [
            "factor",
            "low_freq_factor",
            "high_freq_factor",
            "original_max_position_embeddings",
        ],
        "longrope": ["short_factor", "long_factor", "original_max_position_embeddings", "factor"],
    }.get(str(rope_type), [])
    for k in wanted:
        if valid or draw(st.integers(0, 9)) > 0:  # usually present
            sc[k] = draw(options[k])
    if not valid and draw(st.integers(0, 3)) == 0:  # now and then one more key, maybe wrong
        k = draw(st.sampled_from(sorted(options)))
        sc[k] = draw(options[k])
    if not valid and draw(st.integers(0, 30)) == 0:
        sc = draw(st.sampled_from([[1, 2], "yarn", 3]))  # not a dict
    seq_len = draw(
        pick(st.one_of(st.none(), st.integers(1, 400000)), st.sampled_from([0, -1, 2.5]))
    )
    mpe = draw(pick(st.one_of(st.none(), st.integers(1, 400000)), st.sampled_from([0, True])))
    return (dim, base, sc, seq_len, mpe)


@covers("ropeInvFreq")
@settings(max_examples=12, deadline=None)
@given(st.lists(rope_cases(), min_size=30, max_size=45))
def test_rope_inv_freq_agrees(api: Page, cases: list[tuple[Any, ...]]) -> None:
    js = run_js(api, [_call("ropeInvFreq", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(rope_inv_freq, *case)
        if not same_outcome("ropeInvFreq", j, py, case):
            continue
        inv, factor = py["ok"]
        rope_type = case[2].get("rope_type") or case[2].get("type") or "default"
        err = rel_err(j["ok"]["invFreq"], inv)
        assert err <= 1e-12, f"ropeInvFreq{case}: invFreq {err}"
        note(f"ropeInvFreq invFreq [{rope_type}] (relative)", err, len(inv))
        ferr = rel_err(j["ok"]["attentionFactor"], factor)
        assert ferr <= 1e-12, f"ropeInvFreq{case}: attention factor {ferr}"
        note("ropeInvFreq attentionFactor (relative)", ferr, 1)


def test_rope_inv_freq_real_configs(api: Page) -> None:
    """Published rope_parameters (Llama 3.1, Qwen2 YaRN, DeepSeek-V3, Phi-3 longrope, CodeLlama)."""
    phi_short = [1.0 + 0.01 * i for i in range(48)]
    phi_long = [1.0 + 0.5 * i for i in range(48)]
    cases: list[tuple[Any, ...]] = [
        (
            128,
            500000.0,
            {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
            None,
            131072,
        ),
        (
            128,
            1000000.0,
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
            None,
            131072,
        ),
        (
            64,
            10000.0,
            {
                "type": "yarn",
                "factor": 40.0,
                "beta_fast": 32,
                "beta_slow": 1,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
            },
            None,
            163840,
        ),
        (
            96,
            10000.0,
            {
                "rope_type": "longrope",
                "short_factor": phi_short,
                "long_factor": phi_long,
                "original_max_position_embeddings": 4096,
            },
            131072,
            131072,
        ),
        (128, 1000000.0, {"rope_type": "linear", "factor": 4.0}, None, None),
        (128, 10000.0, {"rope_type": "dynamic", "factor": 2.0}, 10000, 4096),
        (128, 10000.0, {"rope_type": "ntk", "factor": 8.0}, None, None),
    ]
    js = run_js(api, [_call("ropeInvFreq", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        inv, factor = rope_inv_freq(*case)
        assert "ok" in j, (case, j)
        assert rel_err(j["ok"]["invFreq"], inv) <= 1e-12
        assert rel_err(j["ok"]["attentionFactor"], factor) <= 1e-12


@st.composite
def head_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    """head_inv_freq: partial rotary and proportional RoPE on top of every scaling type."""
    valid = draw(st.booleans())

    def pick(ok: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return ok if valid else mostly(ok, bad)

    head = draw(
        pick(st.sampled_from([32, 64, 80, 96, 128, 256, 512]), st.sampled_from([7, 0, -8, 2.5]))
    )
    rope_type = draw(
        pick(st.sampled_from(HEAD_ROPE_TYPES), st.sampled_from(["mrope", "", None, 3]))
    )
    partial = draw(pick(st.sampled_from([None, 0.25, 0.4, 0.5, 0.75, 1.0, 0.3]),
                        st.sampled_from([0.0, 1.5, -0.25, "x", 1e-5, math.nan])))  # fmt: skip
    params: dict[str, Any] = {"rope_theta": draw(pick(st.sampled_from([1e4, 5e5, 1e6, 1e7]),
                                                      st.sampled_from([None, 1.0, 0.5])))}  # fmt: skip
    if rope_type is not None:
        params[draw(st.sampled_from(["rope_type", "rope_type", "type"]))] = rope_type
    if partial is not None:
        params["partial_rotary_factor"] = partial
    if rope_type not in (None, "default", ""):
        params["factor"] = draw(
            pick(st.sampled_from([1.0, 2.0, 8.0, 40.0]), st.sampled_from([0.0, None]))
        )
    if rope_type in ("yarn", "llama3", "longrope"):
        params["original_max_position_embeddings"] = 4096
    if rope_type == "llama3":
        params |= {"low_freq_factor": 1.0, "high_freq_factor": draw(st.sampled_from([1.0, 4.0]))}
    if rope_type == "longrope":
        p = partial if isinstance(partial, float) and 0 < partial <= 1 else 1.0
        d = int(head * p) if isinstance(head, int) and head > 0 else 2
        params |= {"short_factor": [1.0] * (d // 2), "long_factor": [2.0] * (d // 2)}
    if not valid and draw(st.integers(0, 3)) == 0:
        params[draw(st.sampled_from(["bogus", "beta_fast", "mscale"]))] = 1
    mpe = draw(st.sampled_from([None, 131072]))
    seq_len = draw(st.sampled_from([None, 8192, 200000]))
    in_default = draw(st.booleans())
    return (head, params, mpe, seq_len, in_default)


def _head_py(head: Any, params: dict[str, Any], mpe: Any, seq_len: Any, in_default: bool) -> Any:
    return head_inv_freq(
        head, params, max_position_embeddings=mpe, seq_len=seq_len, partial_in_default=in_default
    )


@covers("headInvFreq")
@settings(max_examples=12, deadline=None)
@given(st.lists(head_cases(), min_size=30, max_size=45))
def test_head_inv_freq_agrees(api: Page, cases: list[tuple[Any, ...]]) -> None:
    js = run_js(api, [_call("headInvFreq", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(_head_py, *case)
        if not same_outcome("headInvFreq", j, py, case):
            continue
        inv, factor = py["ok"]
        kind = case[1].get("rope_type") or case[1].get("type") or "default"
        err = rel_err(j["ok"]["invFreq"], inv)
        assert err <= 1e-12, f"headInvFreq{case}: invFreq {err}"
        note(f"headInvFreq invFreq [{kind}] (relative)", err, len(inv))
        assert rel_err(j["ok"]["attentionFactor"], factor) <= 1e-12


def test_head_inv_freq_real_configs(api: Page) -> None:
    """Card 6's heads: Phi-2, Qwen3-Next, Gemma 4's full layers, DeepSeek-V3's rope slice; the
    same p read as partial and as proportional; the misfits' messages."""
    cases: list[tuple[Any, ...]] = [
        (80, {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.4}, None, None, True),
        (256, {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25}, None, None, True),
        (512, {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25}, None, None, True),
        (512, {"rope_type": "default", "rope_theta": 1e6, "partial_rotary_factor": 0.25}, None, None, True),
        (64, {"type": "yarn", "rope_theta": 1e4, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
              "beta_fast": 32, "beta_slow": 1, "original_max_position_embeddings": 4096}, 163840, None, True),
        (128, {"rope_type": "linear", "rope_theta": 1e6, "factor": 8.0}, None, None, True),
        (128, {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5}, None, None, False),
        (64, {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.3}, None, None, True),
        (8, {"rope_type": "proportional", "rope_theta": 1e4, "partial_rotary_factor": 0.1}, None, None, True),
        (64, {"rope_type": "proportional", "rope_theta": 1e4, "beta_fast": 32}, None, None, True),
        (64, {"rope_type": "mrope", "rope_theta": 1e4}, None, None, True),
        (64, {"rope_type": "default"}, None, None, True),
    ]  # fmt: skip
    js = run_js(api, [_call("headInvFreq", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(_head_py, *case)
        if same_outcome("headInvFreq", j, py, case):
            assert rel_err(j["ok"]["invFreq"], py["ok"][0]) <= 1e-12, case
            assert j["ok"]["attentionFactor"] == pytest.approx(py["ok"][1], rel=1e-12)
    assert js[2]["ok"]["invFreq"].count(0) == 192  # Gemma 4: 192 of 256 pairs never turn
    assert "turns no pair" in js[8]["err"] and "must be an even number" in js[7]["err"]


@covers("alibiSlopes")
@BATCH
@given(
    st.lists(
        st.tuples(
            mostly(st.integers(1, 300), st.sampled_from([-3, 0, 2.5, True, None])),
            mostly(st.floats(0.5, 16), st.sampled_from([0.0, -1.0, math.nan, math.inf])),
        ),
        min_size=20,
        max_size=40,
    )
)
def test_alibi_slopes_agree(api: Page, cases: list[tuple[Any, ...]]) -> None:
    js = run_js(api, [_call("alibiSlopes", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(alibi_slopes, *case)
        if same_outcome("alibiSlopes", j, py, case):
            err = rel_err(j["ok"], py["ok"])
            assert err <= 1e-14, f"alibiSlopes{case}: {err}"
            note("alibiSlopes (relative)", err, len(py["ok"]))


relative = mostly(
    st.one_of(
        st.lists(st.integers(-5000, 5000), min_size=1, max_size=60),
        st.lists(st.integers(-(10**7), 10**7), min_size=1, max_size=10),
        st.integers(-3000, 3000),
    ),
    st.sampled_from([[1.5], [math.nan], [2.0, -3.0]]),
)


@covers("t5RelativeBucket", values=60)
@BATCH
@given(
    st.lists(
        st.tuples(
            relative,
            st.booleans(),
            mostly(st.integers(4, 300), st.sampled_from([0, 1, 2, 3, 2.5])),
            mostly(st.integers(1, 3000), st.sampled_from([0, -1])),
        ),
        min_size=15,
        max_size=30,
    )
)
def test_t5_buckets_agree(api: Page, cases: list[tuple[Any, ...]]) -> None:
    js = run_js(api, [_call("t5RelativeBucket", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(t5_relative_bucket, *case)
        if same_outcome("t5RelativeBucket", j, py, case):
            assert np.array_equal(np.asarray(j["ok"]), py["ok"]), f"t5RelativeBucket{case}"
            note("t5RelativeBucket (exact)", 0.0, np.asarray(py["ok"]).size)


@covers("debertaLogBucket", values=60)
@BATCH
@given(
    st.lists(
        st.tuples(
            relative,
            mostly(st.integers(2, 600), st.sampled_from([0, 1, 2.5])),
            mostly(st.integers(1, 3000), st.sampled_from([0, -1])),
        ),
        min_size=15,
        max_size=30,
    )
)
def test_deberta_buckets_agree(api: Page, cases: list[tuple[Any, ...]]) -> None:
    js = run_js(api, [_call("debertaLogBucket", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        py = run_py(deberta_log_bucket, *case)
        if same_outcome("debertaLogBucket", j, py, case):
            assert np.array_equal(np.asarray(j["ok"]), py["ok"]), f"debertaLogBucket{case}"
            note("debertaLogBucket (exact)", 0.0, np.asarray(py["ok"]).size)


# Configurations where the float32 rounding of the log decides buckets: a bucket edge lies
# (almost) exactly on an integer, so a log one ulp off moves a bucket (checked below).
T5_EDGES = [(False, 54, 343), (True, 96, 81), (False, 108, 294), (True, 144, 100), (True, 32, 128)]
DEBERTA_EDGES = [(6, 148), (16, 692), (18, 11), (22, 13), (24, 14), (256, 512)]
# float32 inputs n / mid of the buckets whose ln lies within 2^-44 of a point halfway between two
# float32s: float64 Math.log cannot settle their rounding, the page's exact BigInt log does
LOG_HARD = [127729.0, 439410.5, 495891.0, 613049.5, 145986.328125, 441861.65625, 584397.6875,
            142468.625, 177806.625, 156001.828125, 31437.15625, 43416.46875]  # fmt: skip


def test_logf32_is_the_correctly_rounded_log(api: Page) -> None:
    """The page's logf32 (Math.log, Math.fround, exact fallback) against Python's log_float32,
    both claimed correctly rounded: every float32 n / mid the bucket tests use, a sweep of
    float32 values, float64 values over the whole range, and the hard cases; the exact path
    alone (logf32Exact, BigInt) on all of them too."""
    rng = np.random.default_rng(1)
    n = np.arange(1, 20_001, dtype=np.float32)
    x = np.concatenate(
        [
            *(n[n >= mid] / np.float32(mid) for mid in (2, 3, 4, 5, 8, 12, 24, 36, 128)),
            np.float32(1.0) + np.arange(40_000, dtype=np.float32) * np.float32(0.37),
            np.array(LOG_HARD, dtype=np.float32),
        ]
    ).astype(np.float64)
    x = np.concatenate([x, np.exp(rng.uniform(-700, 700, 2000)), [5e-324, 1.7e308, 1 + 2**-52]])
    want = log_float32(x)
    # JSON text both ways (shortest round-trip digits: exact), far faster than playwright's
    # serialisation of a long list
    got = api.page.evaluate(
        "s => JSON.stringify(JSON.parse(s).map(v => window.posecards._internal.logf32(v)))",
        json.dumps(x.tolist()),
    )
    np.testing.assert_array_equal(np.asarray(json.loads(got), dtype=np.float32), want)
    sample = np.concatenate([x[::53], LOG_HARD])
    exact = api.page.evaluate(
        "xs => xs.map(v => window.posecards._internal.logf32Exact(v))", sample.tolist()
    )
    np.testing.assert_array_equal(np.asarray(exact, dtype=np.float32), log_float32(sample))
    # Math.log rounded once is not always enough: the hard cases are within the band
    y = np.log(np.asarray(LOG_HARD))
    assert np.all(
        (y * (1 - 2.0**-44)).astype(np.float32) != (y * (1 + 2.0**-44)).astype(np.float32)
    )
    note("logf32 (exact)", 0.0, x.size)


def _buckets_log_off(r: list[int], kind: str, config: tuple[Any, ...], ulps: int) -> np.ndarray:
    """The buckets of ``kind`` ("t5" or "deberta") with the float32 log of every position's
    input n / max_exact (or |r| / mid) moved one float32 step up (ulps=1) or down (-1)."""
    ra = np.asarray(r)
    if kind == "t5":
        bidirectional, nb, md = config
        side = nb // 2 if bidirectional else nb
        base = side // 2  # max_exact
        n = np.abs(ra) if bidirectional else np.maximum(-ra, 0)
        offset = np.where(bidirectional & (ra > 0), side, 0)
    else:
        bs, mp = config
        base = bs // 2  # mid
        n = np.abs(ra)
    x = np.maximum(n, base).astype(np.float32) / np.float32(base)
    log = np.nextafter(log_float32(x), np.float32(np.inf * ulps))
    if kind == "t5":
        scaled = log / log_float32(md / base) * np.float32(side - base)
        return offset + np.where(n < base, n, np.minimum(base + scaled.astype(np.int64), side - 1))
    den = log_float32(np.float32((mp - 1) / base))
    b = np.ceil(log / den * np.float32(base - 1)).astype(np.int64) + base
    return np.sign(ra) * np.where(n <= base, n, b)


def test_buckets_where_float32_rounding_matters(api: Page) -> None:
    far = [7640, 12264, 15902, 16696, 18138, 19638]  # where the rounding matters far out
    r = [*(-x for x in far), *range(-3000, 3001), *far]
    calls = [_call("t5RelativeBucket", r, b, nb, md) for b, nb, md in T5_EDGES]
    calls += [_call("debertaLogBucket", r, bs, mp) for bs, mp in DEBERTA_EDGES]
    js = run_js(api, calls)
    for (b, nb, md), j in zip(T5_EDGES, js, strict=False):
        assert np.array_equal(j["ok"], t5_relative_bucket(r, b, nb, md)), (b, nb, md)
    for (bs, mp), j in zip(DEBERTA_EDGES, js[len(T5_EDGES) :], strict=True):
        assert np.array_equal(j["ok"], deberta_log_bucket(r, bs, mp)), (bs, mp)
    # these configurations do tell float32 logs apart: with the log of each position's input
    # one ulp up, or one ulp down (a kernel that rounds the other way), buckets change in most
    # of them, so a page that rounded the log otherwise would fail above
    for ulps in (1, -1):
        changed = []
        for kind, fn, configs in (
            ("t5", t5_relative_bucket, T5_EDGES),
            ("deberta", deberta_log_bucket, DEBERTA_EDGES),
        ):
            for c in configs:
                moved = _buckets_log_off(r, kind, c, ulps) != fn(r, *c)
                assert moved.mean() < 0.01, (kind, c, ulps)  # the same rule at all other r
                if moved.any():
                    changed.append((kind, c))
        assert len(changed) >= 5, (ulps, changed)
    note("t5RelativeBucket (exact)", 0.0, len(r) * len(T5_EDGES))
    note("debertaLogBucket (exact)", 0.0, len(r) * len(DEBERTA_EDGES))


def test_python_reprs_in_messages(api: Page) -> None:
    """Messages print floats as Python does: 1e-05, -1e+16, -0.0, 'text', None, True."""
    cases: list[tuple[Any, ...]] = [(8, b) for b in (1e-5, -1e16, 0.0001, 1.0, -0.0, -1.5e300, 0.1)]
    js = run_js(api, [_call("wavelengths", *c) for c in cases])
    for case, j in zip(cases, js, strict=True):
        assert j["err"] == run_py(wavelengths, *case)["err"]


# ------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------
CONTROLS = ["lang", "theme", "base-exp", "base", "d", "layout", "ctx", "p", "play", "k",
            "rope-type", "partial", "factor", "orig", "beta-fast", "beta-slow", "truncate", "low-ff",
            "high-ff", "heads", "head", "nb", "md", "bidir"]  # fmt: skip


def _readouts(page: Any) -> dict[str, str]:
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('.readout, output')]"
        ".map(e => [e.id, e.textContent]))"
    )


def _canvases(page: Any) -> dict[str, int]:
    """A cheap fingerprint of every canvas's pixels."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('canvas')].map(c => {
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let h = 0;
            for (let i = 0; i < d.length; i += 7) h = (h * 31 + d[i]) | 0;
            return [c.id, h];
        }))"""
    )


def test_every_control_by_keyboard(browser: Any, explore_file: Path) -> None:
    pg = Page(browser, explore_file)
    page = pg.page
    # Tab reaches every control, in order, with a visible focus ring
    page.focus("#lang")
    reached = []
    for _ in range(80):
        el = page.evaluate(
            "() => [document.activeElement.id, getComputedStyle(document.activeElement).outlineStyle]"
        )
        if el[0] in CONTROLS and el[0] not in reached:
            reached.append(el[0])
            assert el[1] != "none", f"#{el[0]} has no visible focus"
        page.keyboard.press("Tab")
    visible = page.evaluate(
        "ids => ids.filter(id => !document.getElementById(id).closest('[hidden]'))", CONTROLS
    )
    assert set(visible) <= set(reached), set(visible) - set(reached)

    def press(control: str, key: str) -> None:
        page.focus(f"#{control}")
        page.keyboard.press(key)

    # every control changes what the page shows
    rope_controls = {
        "partial", "factor", "orig", "beta-fast", "beta-slow", "truncate", "low-ff", "high-ff"
    }  # fmt: skip
    for rope_type in ("yarn", "llama3", "dynamic", "longrope", "linear", "ntk", "proportional"):
        page.focus("#rope-type")
        page.select_option("#rope-type", rope_type)
        for control in CONTROLS:
            if control in ("lang", "theme", "play", "rope-type"):
                continue
            if rope_type != "yarn" and control not in rope_controls:
                continue
            if page.evaluate(f"() => !!document.getElementById('{control}').closest('[hidden]')"):
                continue
            before = (_readouts(page), _canvases(page))
            if control in ("truncate", "bidir"):
                press(control, "Space")
            elif control == "layout":
                last = page.evaluate("document.getElementById('layout').selectedIndex === 1")
                press(control, "ArrowUp" if last else "ArrowDown")
            elif control == "base":
                page.focus("#base")
                page.keyboard.press("Control+a")
                page.keyboard.type("500000")
            elif control == "partial":  # it starts at its maximum, 1
                press(control, "ArrowLeft")
            else:
                press(control, "ArrowRight" if control != "k" else "ArrowUp")
            after = (_readouts(page), _canvases(page))
            assert after != before, f"{control} ({rope_type}) changed nothing"
    # the language and theme switches, and the animation
    before = _readouts(page)
    press("lang", "ArrowDown")
    assert page.evaluate("document.documentElement.lang") == "zh-Hans"
    assert _readouts(page) != before
    assert "位置编码" in page.inner_text("body")
    before_c = _canvases(page)
    press("theme", "ArrowDown")
    assert page.evaluate("document.body.dataset.theme") == "dark"
    assert _canvases(page) != before_c
    p0 = page.input_value("#p")
    press("play", "Enter")
    page.wait_for_timeout(300)
    press("play", "Enter")
    assert page.input_value("#p") != p0
    assert not pg.errors, pg.errors
    assert not [u for u in pg.requests if not u.startswith("file:")], pg.requests
    page.close()


def test_numbers_on_the_page_are_pythons(browser: Any, explore_file: Path) -> None:
    """The readouts print what posecards' Python computes for the same controls."""
    pg = Page(browser, explore_file)
    page = pg.page
    page.fill("#base", "500000")
    page.dispatch_event("#base", "input")
    page.evaluate("() => { const d = document.getElementById('d'); d.value = '128'; "
                  "d.dispatchEvent(new Event('input')); }")  # fmt: skip
    page.evaluate("() => { const k = document.getElementById('k'); k.value = '37'; "
                  "k.dispatchEvent(new Event('input')); }")  # fmt: skip
    page.select_option("#rope-type", "llama3")
    text = _readouts(page)
    f = offset_profile([37], 128, 500000.0)[0]
    assert f"f(37) = {f:.4f}".replace("-", "\u2212") in text["ro-sim"]
    ctx = 1024
    turn = int(np.sum(wavelengths(128, 500000.0) <= ctx))
    assert text["ro-ladder"].startswith(f"{turn} of 64 pairs complete a full turn within 1,024")
    inv, af = rope_inv_freq(
        128,
        500000.0,
        {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 4096,
         "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    )  # fmt: skip
    kept = int(np.sum(inv == rope_inv_freq(128, 500000.0)[0]))
    assert f"Attention factor {af:.4f}" in text["ro-scaling"]
    assert f"{kept} of 64 pairs unchanged" in text["ro-scaling"]
    slopes = alibi_slopes(12)
    assert f"slope {slopes[0]:.4f}" in text["ro-alibi"]
    # Gemma 4's full layers: head 512 (d), theta 10^6, proportional, p = 0.25
    page.fill("#base", "1000000")
    page.dispatch_event("#base", "input")
    page.evaluate("() => { for (const [id, v] of [['d', '512'], ['partial', '0.25'], "
                  "['factor', '1']]) { const e = document.getElementById(id); e.value = v; "
                  "e.dispatchEvent(new Event('input')); } }")  # fmt: skip
    page.select_option("#rope-type", "proportional")
    text = _readouts(page)
    inv, _ = head_inv_freq(
        512, {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25, "factor": 1.0}
    )  # fmt: skip
    zero = int(np.sum(inv == 0))
    assert f"Only {inv.size - zero} of the 256 pairs turn." in text["ro-ladder"]
    assert f"{zero} pairs have frequency 0" in text["ro-scaling"]
    assert "head_inv_freq(512" in page.inner_text("#call-scaling")
    # the same p as partial rotary: 64 pairs turn, their slowest near 2 pi b
    page.select_option("#rope-type", "default")
    text = _readouts(page)
    assert "Only 64 of the 256 pairs turn." in text["ro-ladder"]
    t5 = t5_relative_bucket(-np.arange(0, 257), True, 32, 128)
    last = int(np.argmax(t5 == t5.max()))
    assert f"from distance {last} on" in text["ro-buckets"]
    assert not pg.errors, pg.errors
    page.close()


_HEAT_ROW_RUNS = """() => {
  const cv = document.getElementById('cv-heat');
  const px = cv.getContext('2d').getImageData(0, Math.floor(cv.height / 2), cv.width, 1).data;
  const runs = [];
  let start = Math.floor(cv.width * 0.3);
  for (let x = start + 1; x < Math.floor(cv.width * 0.85); x++) {
    const a = 4 * x, b = 4 * (x - 1);
    if (px[a] !== px[b] || px[a + 1] !== px[b + 1] || px[a + 2] !== px[b + 2]) {
      runs.push(x - start);
      start = x;
    }
  }
  return {width: cv.width, height: cv.height, runs: runs.slice(1)};
}"""


@pytest.mark.parametrize("d", [512, 64])
def test_the_heatmap_draws_no_column_too_narrow_to_show(
    browser: Any, explore_file: Path, d: int
) -> None:
    """Across the middle of the heatmap (where the slow pairs alternate sin ≈ 0 and cos ≈ 1 column
    by column) every run of one colour is at least 2 device pixels: no column is dropped and none
    beats against the pixel grid (moiré). Before, 512 columns in ~600 pixels drew runs of 1 and 2,
    and 1,024 positions in ~270 rows sampled the fast pairs every 4th position."""
    pg = Page(browser, explore_file, width=1920)
    page = pg.page
    page.evaluate(
        "d => { const e = document.getElementById('d'); e.value = String(d); "
        "e.dispatchEvent(new Event('input')); }",
        d,
    )
    got = page.evaluate(_HEAT_ROW_RUNS)
    assert len(got["runs"]) > 20, got  # the row crosses many columns
    assert min(got["runs"]) >= 2, got
    text = page.inner_text("#ro-heat")
    found = re.search(r"([\d,]+) of " + str(d) + " dimensions", text)
    assert found, text
    shown = int(found.group(1).replace(",", ""))
    assert shown <= got["width"] / 2.4 and shown % 2 == 0, (shown, text)
    assert shown == d or d == 512  # d = 64: every dimension fits
    # rows: the first positions only, at least 1.3 device pixels each (every 3rd position of a
    # longer context would alias the fast pairs)
    rows = re.search(r"The first ([\d,]+) of 1,024 positions", text)
    assert rows, text
    assert 100 < int(rows.group(1).replace(",", "")) <= got["height"] / 1.3, (rows.group(1), got)
    assert not pg.errors, pg.errors
    page.close()


@pytest.mark.parametrize(("width", "lang", "theme"), [(390, "en", "light"), (390, "zh", "dark"),
                                                      (1920, "zh", "light"), (1920, "en", "dark")])  # fmt: skip
def test_layout_phone_and_desktop(
    browser: Any, tmp_path: Path, width: int, lang: str, theme: str
) -> None:
    """No sideways scroll at 390 px, no text under 12 CSS px, no network; screenshots kept."""
    path = tmp_path / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig(lang=lang, theme=theme)))
    pg = Page(browser, path, width=width)
    page = pg.page
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    small = page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter(e =>
            e.childNodes.length && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())
            && e.getClientRects().length && parseFloat(getComputedStyle(e).fontSize) < 12)
          .map(e => e.tagName + '#' + e.id)"""
    )
    assert not small, small
    assert not pg.errors, pg.errors
    assert not [u for u in pg.requests if not u.startswith("file:")], pg.requests
    out = ARTIFACTS / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"explore-{width}-{lang}-{theme}.png"), full_page=True)
    page.close()


# the views each slider drives on a phone (explore.html.j2's data-views), checked by moving it
PHONE = {"width": 390, "height": 844}


def _fingerprints(page: Any) -> dict[str, str]:
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('canvas')]"
        ".map(c => [c.id, c.toDataURL()]))"
    )


def test_a_view_stays_on_screen_while_a_slider_moves_on_a_phone(
    browser: Any, tmp_path: Path
) -> None:
    """At 390 x 844 the first view starts in the first screen, and for every slider: with the
    slider scrolled into sight and its thumb held and dragged, a picture that the move redraws
    is on screen, uncovered (the controls are a sheet over the bottom; moving one brings a view
    it drives above it). The moment of dragging "p" is kept as a screenshot."""
    path = tmp_path / "explore.html"
    path.write_bytes(explore_bytes(ExploreConfig()))
    page = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    first = page.evaluate(
        "() => document.querySelector('section.view canvas').getBoundingClientRect().top"
    )
    sheet = page.evaluate("() => document.getElementById('controls').getBoundingClientRect().top")
    assert first < sheet < PHONE["height"], (first, sheet)
    sliders = page.evaluate(
        "() => [...document.querySelectorAll('input[type=range]')]"
        ".filter(e => !e.closest('[hidden]')).map(e => e.id)"
    )
    assert len(sliders) >= 12
    unseen = []
    for sid in sliders:
        page.evaluate(
            """id => { const el = document.getElementById(id);
                const sheet = document.getElementById('controls');
                sheet.scrollTop = el.offsetTop - sheet.clientHeight / 2; }""",
            sid,
        )
        before = _fingerprints(page)
        box = page.locator(f"#{sid}").bounding_box()
        assert box is not None and box["y"] + box["height"] <= PHONE["height"], sid
        x, y = box["x"] + box["width"] * 0.2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + box["width"] * 0.35, y, steps=4)
        changed = {k for k, v in _fingerprints(page).items() if before[k] != v}
        shown = page.evaluate(
            """ids => ids.filter(id => { const c = document.getElementById(id);
                const r = c.getBoundingClientRect(); let rows = 0;
                for (let y = Math.max(r.top, 0) + 1; y < Math.min(r.bottom, innerHeight); y += 4)
                  if (document.elementFromPoint(r.left + r.width / 2, y) === c) rows += 4;
                return rows >= Math.min(120, r.height / 2); })""",
            sorted(changed),
        )
        if sid == "p":
            out = ARTIFACTS / "screenshots"
            out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out / "explore-390-dragging-p.png"))
        page.mouse.up()
        assert changed, f"moving {sid} redrew nothing"
        if not shown:
            unseen.append((sid, sorted(changed)))
    assert not unseen, unseen
    page.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_colour_of_the_views_keeps_4_5_to_1(browser: Any, theme: str) -> None:
    """The canvases' text (every fillText, with the colour it is drawn in) and the page's own
    colours come from posecards/style/theme.toml and keep 4.5:1 on the background."""
    from dataclasses import asdict

    from posecards.figures._common import contrast_ratio
    from posecards.figures.style import theme as load_theme
    from posecards.render.contrast import hex_rgb

    th = load_theme(theme)
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.add_init_script(
        """window.__texts = [];
        const fill = CanvasRenderingContext2D.prototype.fillText;
        CanvasRenderingContext2D.prototype.fillText = function (t, ...a) {
          window.__texts.push([String(t), String(this.fillStyle), this.globalAlpha]);
          return fill.call(this, t, ...a); };"""
    )
    path = ROOT / "build" / "test-artifacts" / f"explore-{theme}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(explore_bytes(ExploreConfig(theme=theme)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    variables = page.evaluate(
        """() => { const cs = getComputedStyle(document.body);
            return Object.fromEntries(['--bg', '--text', '--muted', '--accent', '--warn', '--ok',
              '--box', '--edge'].map(v => [v, cs.getPropertyValue(v).trim().toLowerCase()])); }"""
    )
    colours = asdict(th)
    names = {"--bg": "background", "--edge": "box_edge"}
    for var, value in variables.items():
        assert value == colours[names.get(var, var[2:])].lower(), (theme, var, value)
    texts = page.evaluate("() => window.__texts")
    assert len(texts) > 50 and {t[0] for t in texts} >= {"0"}
    low = {
        (t[1], round(contrast_ratio(hex_rgb(t[1]), hex_rgb(th.background)), 2))
        for t in texts
        if t[2] == 1 and contrast_ratio(hex_rgb(t[1]), hex_rgb(th.background)) < 4.5
    }
    assert not low, (theme, low)
    assert all(t[2] == 1 for t in texts), "translucent text"
    page.close()


def test_page_is_deterministic_and_small() -> None:
    a = explore_bytes(ExploreConfig(lang="zh", theme="dark"))
    assert a == explore_bytes(ExploreConfig(lang="zh", theme="dark"))
    assert len(a) < 150 * 1024  # issue #41: one self-contained file under 150 KB
    html = unescape(a.decode("utf-8"))
    assert "script-src 'sha256-" in html and "default-src 'none'" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    data = json.loads(html.split('id="explore-data">', 1)[1].split("</script>", 1)[0])
    assert data["lang"] == "zh" and all(v["zh"] and v["en"] for v in data["strings"].values())


@pytest.mark.e2e
def test_explore_command(tmp_path: Path) -> None:
    from conftest import run

    out = tmp_path / "page.html"
    r = run("explore", "--out", str(out), "--lang", "zh", "--theme", "dark")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == explore_bytes(ExploreConfig(lang="zh", theme="dark"))
    for args, words in (
        (["--lang", "fr"], "--lang"),
        (["--theme", "blue"], "--theme"),
        (["--out", str(tmp_path)], "is a folder"),
        (["--out", str(tmp_path / "page.txt")], ".html"),
    ):
        bad = run("explore", *args)
        assert bad.returncode == 2, (args, bad.stderr)
        lines = bad.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in bad.stderr, bad.stderr
    assert not (tmp_path / "page.txt").exists()


@pytest.mark.e2e
def test_build_writes_the_explorer_and_links_it(tmp_path: Path) -> None:
    """`posecards build` adds DIR/explore.html (in the manifest) and links it from the index."""
    from posecards.config import BuildConfig
    from posecards.engine.executor import run
    from posecards.render.build import plan_build

    files = run(plan_build(BuildConfig(cards=(), langs=("en", "zh"), formats=("html",))))
    assert files["explore.html"] == explore_bytes(ExploreConfig(lang="en", theme="light"))
    assert 'href="explore.html"' in files["index.html"].decode("utf-8")
    assert "explore.html" in json.loads(files["manifest.json"])["files"]


def test_broken_explorer_text_is_one_line_exit_2(tmp_path: Path) -> None:
    """A missing Chinese text or a syntax error in cards/explore.toml: one line, exit 2."""
    cards = tmp_path / "cards"
    shutil.copytree(ROOT / "cards", cards)
    source = (ROOT / "cards" / "explore.toml").read_text(encoding="utf-8")
    for broken, words in (
        (source.replace('zh = "语言"\n', "", 1), "[lang_label]"),
        (source.replace("[intro]", "[intro", 1), "syntax error"),
    ):
        (cards / "explore.toml").write_text(broken, encoding="utf-8")
        out = tmp_path / "x.html"
        r = _run_env(out, cards)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and words in lines[0], r.stderr
        assert not out.exists()


def _run_env(out: Path, cards: Path) -> Any:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "posecards", "explore", "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "POSECARDS_CARDS_DIR": str(cards)},
        timeout=120,
    )
