"""manifest.json: what a build was made from (its recipe) and the sha256 of every file it wrote;
and ``--check``, which judges an output folder against it without drawing anything.

A recipe is everything an output's bytes depend on: the card text (``cards/card3.toml``), the
templates, posecards' code and style files, the posecards version, the versions of the libraries
that draw (numpy, matplotlib, ...), and the build options. ``--check`` recomputes the recipes
(hashing a few dozen small files) and verifies each file's sha256, so it runs in about a second,
on any CPU: it never compares the last bits a CPU's libm produced, only what the folder was made
from and whether its files are still the ones written. Each stale line says why.

This module imports nothing heavy (no numpy, no matplotlib).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.config import BuildConfig, Look, PEParams
from posecards.fonts import FONT_INPUT_PREFIX, font_records
from posecards.render import buildcache

MANIFEST = "manifest.json"
PAGES = "pages"
EXPLORE = "explore"


def card_unit(card: int | str, lang: str) -> str:
    """The name of the unit that makes one card's files in one language: ``card 3 (en)``."""
    return f"card {card} ({lang})"


def unit_of(rel: str, units: Mapping[str, Sequence[str]]) -> str:
    """Which unit made a file, given each unit's files."""
    for name, files in units.items():
        if rel in files:
            return name
    raise KeyError(rel)


def options_of(cfg: BuildConfig) -> dict[str, Any]:
    """The build options a site's bytes depend on, as recorded in the manifest."""
    return {
        "cards": list(cfg.cards),
        "languages": list(cfg.langs),
        "formats": list(cfg.formats),
        "look": asdict(cfg.look),
        "parameters": asdict(cfg.params),
    }


def inputs_of(cards: Sequence[int | str]) -> dict[str, str]:
    """name -> sha256 of every file the outputs are made from (code, style, templates, and the
    text of the given cards)."""
    inputs = dict(buildcache.shared_inputs())
    for c in cards:
        inputs[buildcache.card_text_name(c)] = buildcache.card_text_digest(c)
    return inputs


def recipe_digest(inputs: Mapping[str, str], options: Mapping[str, Any]) -> str:
    """sha256 of one unit's recipe: its inputs, the posecards and library versions, its options."""
    blob = json.dumps(
        {
            "posecards": __version__,
            "libraries": dict(buildcache.library_versions()),
            "inputs": dict(sorted(inputs.items())),
            "options": options,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def manifest_bytes(
    made_by: str,
    options: Mapping[str, Any],
    inputs: Mapping[str, str],
    units: Mapping[str, tuple[Sequence[str], Sequence[str]]],
    files: Mapping[str, bytes],
    extra: Mapping[str, Any] | None = None,
) -> bytes:
    """The manifest of a folder. ``units``: name -> (card text names it reads, files it made)."""
    shared = [n for n in inputs if not n.startswith("cards/")]
    doc: dict[str, Any] = {
        "posecards": __version__,
        "made_by": made_by,
        "libraries": dict(buildcache.library_versions()),
        **options,
        **(extra or {}),
        "fonts": font_records(),
        "inputs": dict(sorted(inputs.items())),
        "units": {
            name: {
                "cards": list(texts),
                "recipe": recipe_digest(
                    {n: inputs[n] for n in [*shared, *texts]},
                    options,
                ),
                "files": sorted(f for f in made if f in files),
            }
            for name, (texts, made) in units.items()
        },
        "files": {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())},
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def build_manifest(cfg: BuildConfig, files: Mapping[str, bytes]) -> bytes:
    """The manifest of a `posecards build` (``files`` without the manifest itself)."""
    units = planned_units(cfg)
    return manifest_bytes(
        "posecards build",
        options_of(cfg),
        inputs_of(texts_of(cfg)),
        {name: (texts, made) for name, (texts, made) in units.items()},
        files,
    )


def planned_units(cfg: BuildConfig) -> dict[str, tuple[list[str], list[str]]]:
    """Each unit of a build: the card texts it reads and the files it writes, worked out from
    the options and the card text alone (the same names ``build_outputs`` produces; a test
    holds the two together)."""
    from posecards.render.text import load_card_text

    units: dict[str, tuple[list[str], list[str]]] = {}
    stems = {}
    for c in cfg.cards:
        text = load_card_text(c)
        stem = f"card-{c}-{text.slug}"
        stems[c] = stem
        fids = list(text.figure_ids)  # on the card and figure pages only
        for lang in cfg.langs:
            made = [f"{lang}/{stem}.{fmt}" for fmt in ("pdf", "png", "svg") if fmt in cfg.formats]
            made += [
                f"{lang}/figures/{fid}.{fmt}"
                for fid in fids
                for fmt in ("png", "svg")
                if fmt in cfg.formats
            ]
            units[card_unit(c, lang)] = ([buildcache.card_text_name(c)], made)
    if "html" in cfg.formats:
        pages = ["index.html"] + [
            f"{lang}/{stems[c]}.html" for c in cfg.cards for lang in cfg.langs
        ]
        # a page for each figure that is not on its card (linked from the card page)
        pages += [
            f"{lang}/figures/{p.id}.html"
            for c in cfg.cards
            for p in load_card_text(c).figures
            for lang in cfg.langs
        ]
        units[PAGES] = ([buildcache.card_text_name(c) for c in cfg.cards], pages)
        # the interactive explorer: its own text file (cards/explore.toml), templates and code
        units[EXPLORE] = ([buildcache.card_text_name(EXPLORE)], ["explore.html"])
    return units


def texts_of(cfg: BuildConfig) -> list[int | str]:
    """The text files a build reads: its cards', and the explorer's when it writes HTML."""
    texts: list[int | str] = list(cfg.cards)
    return texts + [EXPLORE] if "html" in cfg.formats else texts


# ----------------------------------------------------------------------------------- --check


@dataclass
class Verdict:
    """The outcome of a check: why files are stale (one line each) and how many files are."""

    reasons: list[str] = field(default_factory=list)
    stale: set[str] = field(default_factory=set)
    files: int = 0

    def add(self, reason: str, files: Sequence[str] | set[str]) -> None:
        self.reasons.append(reason)
        self.stale.update(files)


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest in ``out``, or None if there is none or it is not a posecards manifest."""
    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return None
    return doc


def recorded_options(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The build options a manifest records, or None if it does not record them all."""
    try:
        return {
            "cards": tuple(int(c) for c in doc["cards"]),
            "langs": tuple(str(x) for x in doc["languages"]),
            "formats": tuple(str(x) for x in doc["formats"]),
            "theme": str(doc["look"]["theme"]),
            "size": str(doc["look"]["size"]),
            "scale": int(doc["look"].get("scale", 1)),
            "svg_text": str(doc["look"].get("svg_text", "outline")),
            "d_model": int(doc["parameters"]["d_model"]),
            "base": float(doc["parameters"]["base"]),
            "positions": int(doc["parameters"]["positions"]),
        }
    except (KeyError, TypeError, ValueError):
        return None


def _option_word(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _sha_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _few(names: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _count(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def check_site(cfg: BuildConfig, given: Mapping[str, Any] | None = None) -> Verdict:
    """Judge the folder ``cfg.out`` against the recipe ``cfg`` asks for, without drawing.

    ``given``: the options set on the command line (name -> value); a given option that differs
    from what the manifest records is reported as such ("built with --theme dark; asked for
    light"), since every file would then differ.
    """
    out = cfg.out
    verdict = Verdict()
    units = planned_units(cfg)
    expected = sorted({f for _, made in units.values() for f in made})
    verdict.files = len(expected) + 1
    doc = read_manifest(out)
    if doc is None:
        no_manifest(verdict, out, expected, "posecards build")
        return verdict
    if doc.get("made_by", "posecards build") != "posecards build":
        raise ValueError(
            f"{out} was made by {doc.get('made_by')}; build --check judges folders made by "
            "posecards build"
        )
    if "inputs" not in doc:
        verdict.add(
            f"{MANIFEST} records no recipes (written by an older posecards): build again", expected
        )
        return verdict
    recorded = recorded_options(doc)
    if recorded is None:
        verdict.add(f"{MANIFEST} does not record the build options", expected)
        return verdict
    options_differ(verdict, recorded, given, expected)
    if verdict.reasons:
        return verdict  # every file differs; listing them would hide the reason
    judge(verdict, out, doc, expected, inputs_of(texts_of(cfg)), units)
    return verdict


def no_manifest(verdict: Verdict, out: Path, expected: Sequence[str], made_by: str) -> None:
    """A folder without a (readable) manifest: every expected file is missing or unjudged."""
    if not (out / MANIFEST).exists():
        verdict.add(f"missing: {MANIFEST} (no {made_by} in {out})", [])
    else:
        verdict.add(f"unreadable: {MANIFEST}", [])
    for rel in expected:
        if not (out / rel).is_file():
            verdict.add(f"missing: {rel}", [rel])
        else:
            verdict.stale.add(rel)


def options_differ(
    verdict: Verdict,
    recorded: Mapping[str, Any],
    given: Mapping[str, Any] | None,
    expected: Sequence[str],
) -> None:
    """An option given on the command line that differs from the recorded one makes every file
    stale, with one line saying so ("built with --theme dark; asked for light")."""
    for name, value in (given or {}).items():
        if name in recorded and recorded[name] != value:
            flag = "--lang" if name == "langs" else f"--{name.replace('_', '-')}"
            verdict.add(
                f"built with {flag} {_option_word(recorded[name])}; asked for {_option_word(value)}",
                expected,
            )


def judge(
    verdict: Verdict,
    out: Path,
    doc: Mapping[str, Any],
    expected: Sequence[str],
    now: Mapping[str, str],
    units: Mapping[str, tuple[Sequence[str], Sequence[str]]],
) -> None:
    """Add to ``verdict`` why files of ``out`` are stale: what they were made from (the
    versions and ``now``, the sha256 of every input, against the manifest ``doc``), and the
    files themselves (``expected``: every file the folder should hold; ``units``: name ->
    (card texts it reads, files it makes))."""
    if doc.get("posecards") != __version__:
        verdict.add(f"posecards version changed: {doc.get('posecards')} -> {__version__}", expected)
    libs_then = doc.get("libraries") or {}
    libs_now = dict(buildcache.library_versions())
    moved = [
        f"{k} {libs_then.get(k, '-')} -> {v}" for k, v in libs_now.items() if libs_then.get(k) != v
    ]
    if moved:
        verdict.add(f"library versions changed: {_few(moved)}", expected)
    then = doc.get("inputs") or {}
    changed = sorted(n for n in set(now) | set(then) if now.get(n) != then.get(n))
    shared = [n for n in changed if not n.startswith("cards/")]
    for kind, prefix in (
        ("fonts changed", FONT_INPUT_PREFIX),
        ("templates changed", "templates/"),
        ("style changed", "posecards/style/"),
        ("code changed", "posecards/"),
    ):
        names = [n for n in shared if n.startswith(prefix)]
        shared = [n for n in shared if not n.startswith(prefix)]
        if names:
            if prefix == FONT_INPUT_PREFIX:  # the file name alone: NotoSansCJKsc-Regular.otf
                names = [n.removeprefix(prefix) for n in names]
            verdict.add(f"{kind}: {_few(names)}", expected)
    if shared:
        verdict.add(f"inputs changed: {_few(shared)}", expected)
    for name in (n for n in changed if n.startswith("cards/")):
        hit = sorted({f for texts, made in units.values() if name in texts for f in made})
        verdict.add(f"card text changed: {name} ({_count(len(hit))})", hit)
    # the files themselves
    recorded_files: Mapping[str, Any] = doc["files"]
    verdict.files = len(set(expected) | set(recorded_files)) + 1
    for rel in expected:
        if rel not in recorded_files:
            verdict.add(f"not in the build: {rel}", [rel])
            continue
        digest = _sha_file(out / rel)
        if digest is None:
            verdict.add(f"missing: {rel}", [rel])
        elif digest != recorded_files[rel]:
            verdict.add(f"edited after the build: {rel}", [rel])
    for rel in sorted(set(recorded_files) - set(expected)):
        verdict.add(f"no longer made: {rel}", [rel])


def verify_files(out: Path, doc: Mapping[str, Any]) -> list[str]:
    """Files whose bytes are not the ones the manifest records (for tests and tools)."""
    return [rel for rel, digest in doc["files"].items() if _sha_file(out / rel) != digest]


def default_options() -> dict[str, Any]:
    d = BuildConfig()
    return {
        "cards": d.cards,
        "langs": d.langs,
        "formats": d.formats,
        "theme": Look().theme,
        "size": Look().size,
        "scale": Look().scale,
        "svg_text": Look().svg_text,
        "d_model": PEParams().d_model,
        "base": PEParams().base,
        "positions": PEParams().positions,
    }


# ------------------------------------------------------------------------- --check --render

# PNG: root-mean-square difference of the pixel values (0-255, all channels), as matplotlib's
# own image tests compare; an anti-aliased edge moved by a CPU's last bits stays far below it,
# a changed word or number does not.
PNG_RMS_TOLERANCE = 1.0
_SVG_ID = re.compile(rb'(?<=id=")[^"]+|(?<=url\(#)[^)]+|(?<=xlink:href="#)[^"]+|(?<=href="#)[^"]+')


def normalise_svg(data: bytes) -> bytes:
    """SVG (or HTML with inline SVG) with generated ids (hashes of path data, which move with
    the last bits of a coordinate) renamed in order of first appearance; the ids do not matter
    to what is drawn."""
    names: dict[bytes, bytes] = {}

    def rename(m: re.Match[bytes]) -> bytes:
        return names.setdefault(m.group(0), b"id%d" % len(names))

    return _SVG_ID.sub(rename, data)


def png_rms(a: bytes, b: bytes) -> float:
    """RMS difference of two PNGs' pixels (inf if their sizes differ)."""
    import io

    import numpy as np
    from PIL import Image

    x = np.asarray(Image.open(io.BytesIO(a)).convert("RGBA"), dtype=np.float64)
    y = np.asarray(Image.open(io.BytesIO(b)).convert("RGBA"), dtype=np.float64)
    if x.shape != y.shape:
        return float("inf")
    return float(np.sqrt(np.mean((x - y) ** 2)))


def compare_render(out: Path, fresh: Mapping[str, bytes]) -> list[str]:
    """Files of ``out`` that differ from a fresh render beyond what a CPU's last bits explain:
    PNG by pixel RMS, SVG and HTML after renaming generated ids. PDFs are not compared (their
    coordinates are compressed streams); the recipe and hash check covers them."""
    stale = []
    for rel, data in fresh.items():
        if rel == MANIFEST or rel.endswith(".pdf"):
            continue
        try:
            disk = (out / rel).read_bytes()
        except OSError:
            stale.append(f"missing: {rel}")
            continue
        if disk == data:
            continue
        if rel.endswith(".png"):
            rms = png_rms(disk, data)
            if rms > PNG_RMS_TOLERANCE:
                stale.append(f"differs from a fresh render: {rel} (pixel RMS {rms:.2f})")
        elif rel.endswith((".svg", ".html")):
            if normalise_svg(disk) != normalise_svg(data):
                stale.append(f"differs from a fresh render: {rel}")
        else:
            stale.append(f"differs from a fresh render: {rel}")
    return stale
