"""The content-addressed cache: same input hits, changed input misses, corrupt entries recompute."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from posecards.cache import array_key, memo_array


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("POSECARDS_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_hit_miss_and_corruption(cache: Path) -> None:
    calls: list[int] = []

    def compute(v: float) -> np.ndarray:
        calls.append(1)
        return np.full((3, 2), v)

    x = np.arange(6.0).reshape(3, 2)
    k = array_key("t", [x], seed=0)
    a = memo_array("t", k, lambda: compute(1.0))
    b = memo_array("t", k, lambda: compute(2.0))
    assert len(calls) == 1 and np.array_equal(a, b)  # unchanged input: never recomputed
    # a changed input (one ulp) or parameter is a different key: always recomputed
    k2 = array_key("t", [np.nextafter(x, 10)], seed=0)
    k3 = array_key("t", [x], seed=1)
    assert len({k, k2, k3}) == 3
    memo_array("t", k2, lambda: compute(3.0))
    assert len(calls) == 2
    # corrupt every stored entry: it is recomputed, not trusted
    for f in (cache / "t").glob("*.npy"):
        f.write_bytes(f.read_bytes()[:-8] + b"garbage!")
    c = memo_array("t", k, lambda: compute(4.0))
    assert len(calls) == 3 and np.all(c == 4.0)


def test_off_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSECARDS_CACHE_DIR", "off")
    calls: list[int] = []
    for _ in range(2):
        memo_array("t", "k", lambda: (calls.append(1), np.zeros(1))[1])
    assert len(calls) == 2
