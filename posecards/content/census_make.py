"""Writes ``posecards/data/census.json``: what the models of the installed transformers and the
published configs posecards ships chose for position, as posecards reads them.

    python -m posecards.content.census_make            # writes the file (about 5 min, 1 core)
    python -m posecards.content.census_make --out F    # elsewhere

For every ``model_type`` of transformers' ``CONFIG_MAPPING``, the class's default config is
written as a user would get it (``AutoConfig.for_model(t).to_json_file``) and read the way
``posecards inspect DIR --format json`` reads it (``open_checkpoint`` → ``find_positions`` →
``inspection_json``: the probe of ``model/probe/``, which runs transformers' own code). A default
config is not a trained model: its numbers are what transformers' config class fills in. The same
reading is made of every ``docs/examples/*/config.json`` (published configs, key for key).

transformers is needed here only: ``posecards build`` reads the file (``content/census.py``),
never transformers. ``tests/test_census.py`` recounts it by a script of its own.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

from posecards.content.census import CENSUS_FILE, classify, counts, refusal_reason

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "docs" / "examples"


def _text_model(model_type: str) -> tuple[str, int | None, int | None]:
    """The text model's ``model_type`` (the config the probe reads text with), its
    ``max_position_embeddings`` and ``original_max_position_embeddings`` (from ``rope_parameters``
    where a scaling names it), as the config class fills them."""
    import transformers as T

    from posecards.model.probe.model import text_config

    text, _ = text_config(T.AutoConfig.for_model(model_type))
    keys = ("max_position_embeddings", "rope_parameters", "rope_scaling")
    # attributes, not to_dict(): a class may keep one out of its dict (Bailing hybrid)
    return (str(text.model_type), *_max_positions({k: getattr(text, k, None) for k in keys}))


def _published_max_position(path: Path, text_type: str) -> tuple[int | None, int | None]:
    """As ``_text_model``, for a published config.json, key for key (its text part); a key it
    leaves out gets the default of the text model's config class."""
    config = json.loads(path.read_text())
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    mpe, orig = _max_positions(text)
    if mpe is None:
        _, mpe, _ = _text_model(text_type)
    return mpe, orig


def _max_positions(text: dict[str, Any]) -> tuple[int | None, int | None]:
    mpe = text.get("max_position_embeddings")
    params = text.get("rope_parameters") or text.get("rope_scaling") or {}
    nested = [v for v in params.values() if isinstance(v, dict)] if isinstance(params, dict) else []
    originals = [
        p.get("original_max_position_embeddings") for p in (nested or [params]) if p is not None
    ]
    orig = next((o for o in originals if isinstance(o, int)), None)
    return (mpe if isinstance(mpe, int) else None), orig


def _read(folder: Path) -> dict[str, Any] | str:
    """The ``--format json`` document of a folder, or the one-line refusal."""
    from posecards.content.reading import inspection_json
    from posecards.model.checkpoint import CheckpointError, open_checkpoint
    from posecards.model.positions import find_positions

    try:
        ckpt = open_checkpoint(folder)
        found = find_positions(ckpt)
    except CheckpointError as exc:
        return str(exc)
    config = json.loads((folder / "config.json").read_text())
    doc: dict[str, Any] = json.loads(inspection_json("m", config, found))
    return doc


def _zoo(tmp: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Each model type's record (read) or refusal line (not read)."""
    import transformers as T
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    T.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    warnings.filterwarnings("ignore")
    read: dict[str, dict[str, Any]] = {}
    refused: dict[str, str] = {}
    for t in sorted(CONFIG_MAPPING.keys()):
        folder = tmp / t
        folder.mkdir(parents=True)
        try:
            T.AutoConfig.for_model(t).to_json_file(str(folder / "config.json"))
        except Exception as exc:  # noqa: BLE001 -- transformers cannot write its default
            refused[t] = f"transformers cannot write its default config ({type(exc).__name__})"
            continue
        doc = _read(folder)
        if isinstance(doc, str):
            refused[t] = doc
            continue
        text_type, mpe, orig = _text_model(t)
        read[t] = {**classify(doc, mpe, orig), "text_model_type": text_type}
        print(f"{read[t]['position']:9} {t}", flush=True)
    return read, refused


def _shipped(tmp: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for folder in sorted(p.parent for p in EXAMPLES.glob("*/config.json")):
        doc = _read(folder)
        if isinstance(doc, str):
            raise SystemExit(f"{folder.name}: posecards does not read it: {doc}")
        limits = _published_max_position(folder / "config.json", doc["model_type"])
        out[folder.name] = classify(doc, *limits)
    return out


def _bound(rec: dict[str, Any]) -> None:
    """Men et al.'s bound for a RoPE record: whether sum_i cos(m theta_i) stays >= 0 over its
    trained context (``max_position_embeddings``) with its base and its rotated pairs'
    frequencies (unscaled). Precomputed here: 20 s for the zoo, too slow for every build."""
    if rec["position"] != "rope" or not rec["max_position_embeddings"]:
        return
    from posecards.encodings.rope_base_bound import base_holds

    dim = 2 * int(rec["rotated_pairs"])
    rec["base_holds"] = base_holds(int(rec["max_position_embeddings"]), dim, float(rec["theta"]))


def make() -> dict[str, Any]:
    import transformers as T

    with tempfile.TemporaryDirectory() as tmp:
        read, refused = _zoo(Path(tmp) / "zoo")
        shipped = _shipped(Path(tmp))
    # one entry per text model: a composite config (llava) whose text model is another type's
    # (llama) is listed under it, not counted twice; the text model's own default wins
    for rec in (*read.values(), *shipped.values()):
        _bound(rec)
    groups: dict[str, list[str]] = {}
    for t, rec in read.items():
        groups.setdefault(rec["text_model_type"] or t, []).append(t)
    models: dict[str, dict[str, Any]] = {}
    for key, types in groups.items():
        own = key if key in types else types[0]
        models[key] = {**read[own], "read_from": own, "also": sorted(set(types) - {own})}
    not_read: dict[str, list[str]] = {}
    for t, line in refused.items():
        not_read.setdefault(refusal_reason(line), []).append(t)
    return {
        "transformers": T.__version__,
        "model_types": len(read) + len(refused),  # every key of CONFIG_MAPPING
        "models": dict(sorted(models.items())),
        "not_read": {k: sorted(v) for k, v in sorted(not_read.items())},
        "refusals": dict(sorted(refused.items())),
        "shipped": shipped,
        "counts": counts(models),
        "shipped_counts": counts(shipped),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m posecards.content.census_make")
    ap.add_argument("--out", type=Path, default=CENSUS_FILE)
    args = ap.parse_args(argv)
    doc = make()
    text = json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {len(doc['models'])} text models read")


if __name__ == "__main__":
    main()
