"""Every model type of the installed transformers through `posecards inspect` (tests/zoo.py).

No model type is read wrong with exit 0 (a reading that differs from the reference fails), and
every outcome is the one recorded in tests/zoo_expected.json for this transformers version: a
model type read exactly stays exact, a refusal keeps its line, a new model type fails until it is
recorded (`python tests/zoo.py --write`).

What `make test` runs: every model type the record says posecards reads (exact or without a
reference), every model type the record does not name, and every REFUSED_SAMPLE-th recorded
refusal; `make zoo` (POSECARDS_FULL_ZOO=1) runs every refusal too, and so does a change of
transformers (the record's version must be the installed one, so a new transformers means a new
record, made over the whole zoo). The list is split in chunks that xdist spreads over the cores;
the fast lane (`make check`) runs one chunk.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import transformers as T
from zoo import expected, outcome, zoo

CHUNKS = 16
FAST_CHUNK = 5  # the chunk `make check` runs
REFUSED_SAMPLE = 8  # every 8th recorded refusal in `make test`; all with POSECARDS_FULL_ZOO=1


def _checked() -> list[str]:
    rows = expected().get("model_types", {})
    read = ("exact", "unreferenced")
    names = zoo()
    first = [t for t in names if t not in rows or rows[t]["outcome"] in read]
    refused = [t for t in names if t not in first]
    if os.environ.get("POSECARDS_FULL_ZOO") != "1":
        refused = refused[::REFUSED_SAMPLE]
    return first + refused


def _chunk(i: int) -> list[str]:
    return _checked()[i::CHUNKS]


@pytest.mark.parametrize(
    "chunk",
    [pytest.param(i, marks=() if i == FAST_CHUNK else pytest.mark.slow) for i in range(CHUNKS)],
)
def test_every_model_type_reads_as_recorded(chunk: int, tmp_path: Path) -> None:
    rows = expected()
    assert rows.get("transformers") == T.__version__, (
        "tests/zoo_expected.json was recorded with another transformers: rerun "
        "python tests/zoo.py --write and read the diff"
    )
    changed = []
    for t in _chunk(chunk):
        o = outcome(t, tmp_path / t)  # AssertionError here: a wrong reading with exit 0
        want = rows["model_types"].get(t)
        got = {"outcome": o.kind, "line": o.line}
        if want != got:
            changed.append(f"{t}: recorded {want}, now {got}")
    assert not changed, "\n".join(changed)


def test_the_record_counts() -> None:
    """What the record says of transformers 5.23's zoo (the note of issue 42 quotes it)."""
    rows = expected()["model_types"]
    kinds = [r["outcome"] for r in rows.values()]
    assert "WRONG" not in kinds
    assert set(rows) == set(zoo())
    assert kinds.count("exact") >= 306
