"""Is an output folder what a plan would make? ``check`` (``--check``) answers with a reason per
stale file and hashes every file; ``up_to_date`` (every rebuild, before anything is loaded or
drawn) answers yes or no and hashes only the files whose size or times moved since they were
written (posecards.engine.site). Both compare the recipe first: the posecards and library
versions, the sha256 of every input and the options. Nothing here draws or imports numpy;
it never compares the last bits a CPU's libm produced, only what the folder was made from and
whether its files are still the ones written (``compare_render`` is for ``--check --render``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posecards._version import __version__
from posecards.engine.inputs import library_versions
from posecards.engine.manifest import (
    MANIFEST,
    inputs_now,
    option_names,
    read_manifest,
    recipe,
    recorded_options,
)
from posecards.engine.site import changed_files
from posecards.engine.units import Plan
from posecards.errors import PosecardsError
from posecards.fonts import FONT_INPUT_PREFIX


@dataclass
class Verdict:
    """The outcome of a check: why files are stale (one line each) and how many files are."""

    reasons: list[str] = field(default_factory=list)
    stale: set[str] = field(default_factory=set)
    files: int = 0

    def add(self, reason: str, files: Sequence[str] | set[str]) -> None:
        self.reasons.append(reason)
        self.stale.update(files)


def up_to_date(plan: Plan) -> bool:
    """True if ``plan.out`` holds exactly what the plan would write: the same recipe (versions,
    inputs, options, units) and every file still the one recorded."""
    doc = read_manifest(plan.out)
    if doc is None:
        return False
    files = doc.pop("files")
    if doc != json.loads(json.dumps(recipe(plan, inputs_now(plan)))) or sorted(files) != list(
        plan.files
    ):
        return False
    return not changed_files(plan.out, files)


def check(plan: Plan, given: Mapping[str, Any] | None = None) -> Verdict:
    """Judge the folder ``plan.out`` against the plan, without drawing; every file is hashed.

    ``given``: the options set on the command line (name -> value); a given option that differs
    from what the manifest records is reported as such ("built with --theme dark; asked for
    light"), since every file would then differ.
    """
    out = plan.out
    verdict = Verdict()
    expected = list(plan.files)
    verdict.files = len(expected) + 1
    doc = read_manifest(out)
    if doc is None:
        no_manifest(verdict, out, expected, plan.made_by)
        return verdict
    if doc.get("made_by", "posecards build") != plan.made_by:
        command = plan.made_by.removeprefix("posecards ")
        raise PosecardsError(
            f"{out} was made by {doc.get('made_by')}; {command} --check judges folders made by "
            f"{plan.made_by}"
        )
    if "inputs" not in doc:
        verdict.add(
            f"{MANIFEST} records no recipes (written by an older posecards): build again", expected
        )
        return verdict
    recorded = recorded_options(doc, option_names(plan.options))
    if recorded is None:
        verdict.add(f"{MANIFEST} does not record the {plan.what} options", expected)
        return verdict
    options_differ(verdict, recorded, given, expected)
    if verdict.reasons:
        return verdict  # every file differs; listing them would hide the reason
    judge(verdict, plan, doc)
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


def _option_word(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


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


def _few(names: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _count(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _sha_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def judge(verdict: Verdict, plan: Plan, doc: Mapping[str, Any]) -> None:
    """Add to ``verdict`` why files of ``plan.out`` are stale: what they were made from (the
    versions and the sha256 of every input, against the manifest ``doc``), and the files
    themselves (every one hashed)."""
    expected = list(plan.files)
    if doc.get("posecards") != __version__:
        verdict.add(f"posecards version changed: {doc.get('posecards')} -> {__version__}", expected)
    libs_then = doc.get("libraries") or {}
    libs_now = dict(library_versions(plan.libraries))
    moved = [
        f"{k} {libs_then.get(k, '-')} -> {v}" for k, v in libs_now.items() if libs_then.get(k) != v
    ]
    if moved:
        verdict.add(f"library versions changed: {_few(moved)}", expected)
    now = inputs_now(plan)
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
        if names and prefix == FONT_INPUT_PREFIX:  # the file name alone: NotoSansCJKsc-Regular.otf
            names = [n.removeprefix(prefix) for n in names]
        if names:
            verdict.add(f"{kind}: {_few(names)}", expected)
    if shared:
        verdict.add(f"inputs changed: {_few(shared)}", expected)
    for name in (n for n in changed if n.startswith("cards/")):
        hit = sorted({f for u in plan.units if name in u.texts for f in u.files})
        verdict.add(f"card text changed: {name} ({_count(len(hit))})", hit)
    # the files themselves
    recorded_files: Mapping[str, Any] = doc["files"]
    verdict.files = len(set(expected) | set(recorded_files)) + 1
    for rel in expected:
        if rel not in recorded_files:
            verdict.add(f"not in the build: {rel}", [rel])
            continue
        digest = _sha_file(plan.out / rel)
        if digest is None:
            verdict.add(f"missing: {rel}", [rel])
        elif digest != recorded_files[rel]:
            verdict.add(f"edited after the build: {rel}", [rel])
    for rel in sorted(set(recorded_files) - set(expected)):
        verdict.add(f"no longer made: {rel}", [rel])


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
