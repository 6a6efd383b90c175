"""manifest.json: what a folder was made from (its recipe) and the sha256 of every file in it.
One schema for `posecards build`, `deck` and `inspect`:

    posecards, made_by          the version and the command that wrote the folder
    libraries                   name -> version of every library the bytes depend on
    fonts                       every font file drawn with: file, package, version, sha256
    cards, languages, formats,  the options the bytes depend on (those the command has)
    look, parameters
    (model)                     an inspection's model: weight files, what was found
    inputs                      name -> sha256 of every input: posecards/... code and style,
                                templates/..., cards/... texts
    units                       name -> {cards: texts it reads, recipe: sha256, files: [...]}
    files                       path -> sha256 of every file (the manifest aside)

A recipe is everything a unit's bytes depend on: the shared inputs, its texts, the posecards
and library versions and the options. Imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.engine.inputs import library_versions, shared_inputs, text_digest
from posecards.engine.units import Plan
from posecards.fonts import FONT_PACKAGES, font_records

MANIFEST = "manifest.json"


def inputs_now(plan: Plan) -> dict[str, str]:
    """name -> sha256 of every file the plan's outputs are made from."""
    inputs = dict(shared_inputs())
    for unit in plan.units:
        for name in unit.texts:
            if name not in inputs:
                inputs[name] = text_digest(plan.sources[name])
    return inputs


def recipe_digest(
    inputs: Mapping[str, str], options: Mapping[str, Any], libraries: Mapping[str, str]
) -> str:
    """sha256 of one unit's recipe: its inputs, the posecards and library versions, options."""
    blob = json.dumps(
        {
            "posecards": __version__,
            "libraries": dict(libraries),
            "inputs": dict(sorted(inputs.items())),
            "options": options,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def recipe(plan: Plan, inputs: Mapping[str, str]) -> dict[str, Any]:
    """The manifest without its ``files``: everything known before anything is rendered."""
    libraries = dict(library_versions(plan.libraries))
    shared = [n for n in inputs if not n.startswith("cards/")]
    return {
        "posecards": __version__,
        "made_by": plan.made_by,
        "libraries": libraries,
        "fonts": font_records(dict(library_versions(FONT_PACKAGES))),
        **plan.options,
        **plan.extra,
        "inputs": dict(sorted(inputs.items())),
        "units": {
            u.name: {
                "cards": list(u.texts),
                "recipe": recipe_digest(
                    {n: inputs[n] for n in [*shared, *u.texts]}, plan.options, libraries
                ),
                "files": sorted(u.files),
            }
            for u in sorted(plan.units, key=lambda u: u.name)
            if u.files
        },
    }


def manifest_bytes(plan: Plan, files: Mapping[str, bytes]) -> bytes:
    """The manifest of a folder holding ``files`` (the manifest itself aside)."""
    doc = recipe(plan, inputs_now(plan))
    doc["files"] = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest in ``out``, or None if there is none or it is not a posecards manifest."""
    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return None
    return doc


# option name (as a command line gives it) -> where the manifest records it
_RECORDED: dict[str, tuple[str, ...]] = {
    "cards": ("cards",),
    "langs": ("languages",),
    "formats": ("formats",),
    "theme": ("look", "theme"),
    "size": ("look", "size"),
    "scale": ("look", "scale"),
    "svg_text": ("look", "svg_text"),
    "d_model": ("parameters", "d_model"),
    "base": ("parameters", "base"),
    "positions": ("parameters", "positions"),
}
_TYPES: dict[str, Any] = {"cards": int, "scale": int, "d_model": int, "positions": int}


def recorded_options(doc: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any] | None:
    """The options ``names`` as a manifest records them, or None if it does not record them all."""
    out: dict[str, Any] = {}
    try:
        for name in names:
            value: Any = doc
            for key in _RECORDED[name]:
                value = value[key]
            kind = _TYPES.get(name, float if name == "base" else str)
            out[name] = tuple(kind(v) for v in value) if isinstance(value, list) else kind(value)
    except (KeyError, TypeError, ValueError):
        return None
    return out


def option_names(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The command-line names of the options a plan records."""
    return tuple(
        name
        for name, path in _RECORDED.items()
        if path[0] in options and (len(path) == 1 or path[1] in options[path[0]])
    )
