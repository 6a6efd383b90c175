"""The installed transformers' whole model zoo through `posecards inspect` (tests/test_inspect_zoo.py).

For every ``model_type`` of ``CONFIG_MAPPING``: the class's default config is written as a user
would get it (``AutoConfig.for_model(t).to_json_file``), read by posecards (``open_checkpoint`` →
``find_positions`` → the ``--format json`` document), and, where posecards reads it, compared
with the reference (``tests/hf_reference.py``: transformers' own rotary module and each attention
module called on the meta device, layer by layer). The outcome of a model type is one of:

- ``exact``: posecards reads it and the reading equals the reference's (RoPE and layers:
  ``hf_reading``; a learned table read from config.json alone: ``hf_tables``, its rows, width
  and offset; T5-style biases: ``hf_biases``, the bucket of every query-key pair; BLOOM/MPT:
  ``hf_alibi``, the slopes, layer count and softmax scale);
- ``unreferenced``: posecards reads it; the reference cannot drive this model (its own line);
- ``refused``: posecards says in one line why it does not read it (exit 2);
- ``no-config``: transformers cannot even write its default config.

``python tests/zoo.py --write`` records every outcome in ``tests/zoo_expected.json`` (with the
transformers version): the test fails on any model type whose outcome changes, and on any model
type that file does not name (a new model in a future transformers is a failing row).
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "zoo_expected.json"


@dataclass(frozen=True)
class Outcome:
    kind: str  # exact, unreferenced, refused, no-config
    line: str  # the refusal or the reference's error; "" for exact


def zoo() -> list[str]:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return sorted(CONFIG_MAPPING.keys())


def outcome(model_type: str, folder: Path) -> Outcome:
    """The outcome of one model type, without automatic garbage collection (as the probe and
    the reference run: garbage.no_automatic_collection)."""
    from posecards.garbage import no_automatic_collection

    with no_automatic_collection():
        return _outcome(model_type, folder)


def _outcome(model_type: str, folder: Path) -> Outcome:
    import transformers as T
    from hf_reference import hf_reading
    from test_inspect_families import _hf_config, compare

    from posecards.model.checkpoint import CheckpointError, open_checkpoint
    from posecards.model.positions import find_positions

    T.logging.set_verbosity_error()
    warnings.filterwarnings("ignore")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        T.AutoConfig.for_model(model_type).to_json_file(str(folder / "config.json"))
    except Exception as exc:  # noqa: BLE001 -- transformers' own error
        return Outcome("no-config", f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
    try:
        ckpt = open_checkpoint(folder)
        found = find_positions(ckpt)
    except CheckpointError as exc:
        line = str(exc)
        assert "\n" not in line and line, f"{model_type}: a refusal is one line: {line!r}"
        return Outcome("refused", line)
    config = json.loads((folder / "config.json").read_text())
    if getattr(found, "measured", None) is not None:
        return _tables_outcome(config, found)
    if found.kind == "alibi":
        return _alibi_outcome(config, found)
    try:
        ref = hf_reading(_hf_config(config))
    except Exception as exc:  # noqa: BLE001 -- the reference cannot drive this model
        return Outcome("unreferenced", f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
    compare(config, ref, found)  # AssertionError: a wrong reading with exit 0
    return Outcome("exact", "")


def _tables_outcome(config: dict[str, Any], found: Any) -> Outcome:
    """A learned table read from config.json alone: its rows, width and offset against the
    tables transformers' own model looks up for positions (tests/hf_reference.hf_tables)."""
    from hf_reference import hf_tables

    from posecards.content.reading import inspection_json

    doc = json.loads(inspection_json("m", config, found))
    if found.kind == "relative":
        return _biases_outcome(config, found, doc)
    try:
        ref = hf_tables(config)
    except Exception as exc:  # noqa: BLE001 -- the reference cannot drive this model
        return Outcome("unreferenced", f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
    mine = [(t["tensor"], t["shape"], t["offset"]) for t in doc["position_tables"]]
    theirs = [(f"{t.name}.weight", [t.rows, t.width], t.offset) for t in ref]
    assert mine == theirs, f"posecards {mine}, transformers {theirs}"
    assert doc["position_table"] == doc["position_tables"][0]
    assert doc["layers"] == [] and doc["num_layers"] is None and doc["softmax_scale"] is None
    return Outcome("exact", "")


def _biases_outcome(config: dict[str, Any], found: Any, doc: dict[str, Any]) -> Outcome:
    """T5-style biases read from config.json alone: posecards' buckets from the document's
    parameters (encodings.t5_relative_bucket) against the rows transformers' compute_bias looks
    up for every (query, key) pair of a 300 x 300 grid (tests/hf_reference.hf_biases)."""
    import numpy as np
    from hf_reference import hf_biases

    from posecards.encodings.buckets import t5_relative_bucket

    try:
        ref = hf_biases(config)
    except Exception as exc:  # noqa: BLE001 -- the reference cannot drive this model
        return Outcome("unreferenced", f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
    mine = doc["relative_bias"]
    assert [b["module"] for b in mine] == [b.name for b in ref]
    q = np.arange(300)
    for b, theirs in zip(mine, ref, strict=True):
        got = t5_relative_bucket(
            q[None, :] - q[:, None], b["bidirectional"], b["num_buckets"], b["max_distance"]
        )
        assert np.array_equal(got, theirs.buckets), f"{b['module']}: buckets differ"
        assert b["heads"] == theirs.heads
    assert doc["layers"] == [] and doc["num_layers"] is None and doc["softmax_scale"] is None
    return Outcome("exact", "")


def _alibi_outcome(config: dict[str, Any], found: Any) -> Outcome:
    """BLOOM, MPT: the slopes posecards draws (encodings.alibi_slopes of the document's heads
    and max_bias), the layer count and the softmax scale against the model's own ALiBi tensor
    and attention modules (tests/hf_reference.hf_alibi)."""
    import numpy as np
    from hf_reference import hf_alibi

    from posecards.content.reading import inspection_json
    from posecards.encodings.alibi import alibi_slopes

    doc = json.loads(inspection_json("m", config, found))
    ref = hf_alibi(config)
    mine = alibi_slopes(doc["alibi"]["heads"], doc["alibi"]["max_bias"])
    np.testing.assert_allclose(mine, ref.slopes, rtol=1e-6, atol=0)  # float32 slopes
    assert doc["num_layers"] == ref.layers == len(doc["layers"])
    assert {la["position"] for la in doc["layers"]} == {"alibi"}
    assert doc["softmax_scale"] == pytest_approx(ref.scaling)
    return Outcome("exact", "")


def pytest_approx(x: float) -> Any:
    import pytest

    return pytest.approx(x, rel=1e-12)


def expected() -> dict[str, Any]:
    return json.loads(EXPECTED.read_text()) if EXPECTED.exists() else {}


def write() -> None:
    import transformers as T

    sys.path.insert(0, str(HERE))
    rows: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in zoo():
            try:
                o = outcome(t, Path(tmp) / t)
            except AssertionError as exc:
                o = Outcome("WRONG", str(exc).splitlines()[0] if str(exc) else "assertion")
            rows[t] = {"outcome": o.kind, "line": o.line}
            print(f"{o.kind:13} {t}", flush=True)
    doc = {"transformers": T.__version__, "model_types": rows}
    EXPECTED.write_text(json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        sys.exit("usage: python tests/zoo.py --write")
