"""manifest.json of a deck folder, and `posecards deck --check`, which judges the folder by its
recipe and the sha256 of its files without drawing: the same rules as `posecards build --check`
(posecards.render.manifest), with the deck's own units, text (``cards/deck.toml``) and the
libraries only the deck uses. Imports nothing heavy (no numpy, no matplotlib).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from importlib import metadata
from typing import Any

from posecards.config import DeckConfig
from posecards.render import buildcache
from posecards.render.manifest import (
    MANIFEST,
    Verdict,
    inputs_of,
    judge,
    manifest_bytes,
    no_manifest,
    options_differ,
    read_manifest,
)

MADE_BY = "posecards deck"
DECK_TEXT = "deck"  # cards/deck.toml: slide titles and speaker notes
DECK_LIBRARIES = ("python-pptx", "pypdf", "lxml")  # besides the drawing libraries of the cards


def deck_options(cfg: DeckConfig) -> dict[str, Any]:
    """The options a deck's bytes depend on, as the manifest records them."""
    return {
        "cards": list(cfg.cards),
        "languages": list(cfg.langs),
        "formats": list(cfg.formats),
        "theme": cfg.theme,
        "parameters": asdict(cfg.params),
    }


def deck_inputs(cfg: DeckConfig) -> dict[str, str]:
    """name -> sha256 (libraries: version) of everything the deck is made from."""
    inputs = inputs_of([*cfg.cards, DECK_TEXT])
    for name in DECK_LIBRARIES:
        try:
            inputs[f"libraries/{name}"] = metadata.version(name)
        except metadata.PackageNotFoundError:
            inputs[f"libraries/{name}"] = "-"
    return inputs


def planned_deck_units(cfg: DeckConfig) -> dict[str, tuple[list[str], list[str]]]:
    """Each unit of a deck build: the text files it reads and the files it writes, from the
    options and the text alone (the names ``build_deck`` produces; a test holds them together)."""
    from posecards.deck.notes import ANIMATIONS
    from posecards.deck.plan import FRAME_KINDS, plan_deck

    plan = plan_deck(cfg.cards)
    deck_text = buildcache.card_text_name(DECK_TEXT)
    every = [buildcache.card_text_name(c) for c in cfg.cards] + [deck_text]

    def pictures(lang: str, slides: list[Any]) -> list[str]:
        return [f"{lang}/slides/{s.stem}.{ext}" for s in slides for ext in ("png", "svg")]

    units: dict[str, tuple[list[str], list[str]]] = {}
    for lang in cfg.langs:
        for c in cfg.cards:
            units[f"card {c} slides ({lang})"] = (
                [buildcache.card_text_name(c), deck_text],
                pictures(lang, [s for s in plan if s.card == c]),
            )
        units[f"title and closing slides ({lang})"] = (
            every,
            pictures(lang, [s for s in plan if s.kind in FRAME_KINDS]),
        )
        assembled = [f"{lang}/deck.{fmt}" for fmt in ("pdf", "pptx") if fmt in cfg.formats]
        units[f"deck ({lang})"] = (every, [*assembled, f"{lang}/notes.json"])
    units["animations"] = (
        [],
        [
            f"{lang}/animations/{name}.{ext}"
            for lang in cfg.langs
            for name in ANIMATIONS
            for ext in ("gif", "png")
        ],
    )
    return units


def deck_manifest(cfg: DeckConfig, files: Mapping[str, bytes]) -> bytes:
    """The manifest of a `posecards deck` folder (``files`` without the manifest itself)."""
    return manifest_bytes(
        MADE_BY, deck_options(cfg), deck_inputs(cfg), planned_deck_units(cfg), files
    )


def recorded_deck_options(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The deck options a manifest records, or None if it does not record them all."""
    try:
        return {
            "cards": tuple(int(c) for c in doc["cards"]),
            "langs": tuple(str(x) for x in doc["languages"]),
            "formats": tuple(str(x) for x in doc["formats"]),
            "theme": str(doc["theme"]),
            "d_model": int(doc["parameters"]["d_model"]),
            "base": float(doc["parameters"]["base"]),
            "positions": int(doc["parameters"]["positions"]),
        }
    except (KeyError, TypeError, ValueError):
        return None


def check_deck(cfg: DeckConfig, given: Mapping[str, Any] | None = None) -> Verdict:
    """Judge the deck folder ``cfg.out`` against the recipe ``cfg`` asks for, without drawing.
    ``given``: the options set on the command line (see render.manifest.check_site)."""
    out = cfg.out
    verdict = Verdict()
    units = planned_deck_units(cfg)
    expected = sorted({f for _, made in units.values() for f in made})
    verdict.files = len(expected) + 1
    doc = read_manifest(out)
    if doc is None:
        no_manifest(verdict, out, expected, MADE_BY)
        return verdict
    if doc.get("made_by") != MADE_BY:
        raise ValueError(
            f"{out} was made by {doc.get('made_by')}; deck --check judges folders made by {MADE_BY}"
        )
    recorded = recorded_deck_options(doc)
    if recorded is None or "inputs" not in doc:
        verdict.add(f"{MANIFEST} does not record the deck's options and recipe", expected)
        return verdict
    options_differ(verdict, recorded, given, expected)
    if verdict.reasons:
        return verdict  # every file differs; listing them would hide the reason
    judge(verdict, out, doc, expected, deck_inputs(cfg), units)
    return verdict


def default_deck_options() -> dict[str, Any]:
    d = DeckConfig()
    return {
        "cards": d.cards,
        "langs": d.langs,
        "formats": d.formats,
        "theme": d.theme,
        "d_model": d.params.d_model,
        "base": d.params.base,
        "positions": d.params.positions,
    }
