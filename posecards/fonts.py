"""The font files posecards draws with, named by path: never a font found by family name.

Every figure, card, slide, SVG, PDF and web font is drawn from these files and no others:

- Noto Sans CJK SC Regular (SIL OFL 1.1), the file mplfonts ships (``NotoSansCJKsc-Regular.otf``;
  never its SimHei): Chinese, and the Latin text of every language (it comes first in
  ``font.family`` so that a string with ``$math$`` keeps one font);
- matplotlib's bundled DejaVu Sans faces, DejaVu Sans Mono and DejaVu Sans Display (Bitstream
  Vera licence), STIX and the Bakoma Computer Modern files mathtext falls back on, and Last Resort.

Bold: mplfonts ships no Noto Sans CJK SC Bold, and PyPI has no OFL static Noto Sans CJK SC Bold
(only a variable font, whose bold instance takes minutes to compute). So bold text is drawn in the
regular Noto Sans CJK SC face: one rule for figures, cards, slides and pages, on every machine
(DejaVu Sans Bold for Latin would leave strings that mix bold, math and Chinese without glyphs:
mathtext draws a string's text in one font). Titles stand out by size and colour. ``card_style`` (posecards.figures.style) shows matplotlib's font manager only the entries
of ``font_entries()`` for the duration of its block, so no installed font can stand in.

Every file's sha256 is part of every recipe (``font_inputs``: the build cache key and
``manifest.json``'s inputs) and ``manifest.json`` lists them under "fonts" (``font_records``).
This module imports nothing heavy: the no-op build and ``--check`` read it. How PDFs embed these
files is posecards/pdf_fonts.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from posecards.errors import PosecardsError

# the families posecards' text asks for, in font.family order (figures/style.py), and how
# the HTML pages name them (render/webfonts.py)
CJK_FAMILY = "Noto Sans CJK SC"
SANS_FAMILY = "DejaVu Sans"
MONO_FAMILY = "DejaVu Sans Mono"
FAMILIES = (CJK_FAMILY, SANS_FAMILY)

CJK_INSTALL_HINT = "install it with 'pip install mplfonts' (posecards depends on it)"

# matplotlib's bundled files posecards uses (mpl-data/fonts/ttf): text, mathtext and fallback
_MPL_FILES = (
    "DejaVuSans.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSans-Oblique.ttf",
    "DejaVuSans-BoldOblique.ttf",
    "DejaVuSansDisplay.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSansMono-Bold.ttf",
    "DejaVuSansMono-Oblique.ttf",
    "DejaVuSansMono-BoldOblique.ttf",
    "STIXGeneral.ttf",
    "STIXGeneralBol.ttf",
    "STIXGeneralBolIta.ttf",
    "STIXGeneralItalic.ttf",
    "STIXNonUni.ttf",
    "STIXNonUniBol.ttf",
    "STIXNonUniBolIta.ttf",
    "STIXNonUniIta.ttf",
    "STIXSizFiveSymReg.ttf",
    "STIXSizFourSymBol.ttf",
    "STIXSizFourSymReg.ttf",
    "STIXSizOneSymBol.ttf",
    "STIXSizOneSymReg.ttf",
    "STIXSizThreeSymBol.ttf",
    "STIXSizThreeSymReg.ttf",
    "STIXSizTwoSymBol.ttf",
    "STIXSizTwoSymReg.ttf",
    "cmb10.ttf",
    "cmex10.ttf",
    "cmmi10.ttf",
    "cmr10.ttf",
    "cmss10.ttf",
    "cmsy10.ttf",
    "cmti10.ttf",
    "cmtt10.ttf",
    "LastResortHE-Regular.ttf",
)
CJK_FILE = "NotoSansCJKsc-Regular.otf"


class MissingFontError(PosecardsError, RuntimeError):
    """A font file posecards names is not installed (bad set-up, not a bug: exit 2)."""


@dataclass(frozen=True)
class FontFile:
    """One font file: its name, the package that ships it, and where it is."""

    name: str  # file name, as manifests and stale reasons print it
    package: str  # the distribution that ships it (its version is recorded too)
    path: Path


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)  # finds, does not import
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def font_files() -> tuple[FontFile, ...]:
    """Every font file posecards draws with, the CJK font first; MissingFontError if one is
    not installed."""
    mplfonts = _package_dir("mplfonts")
    cjk = mplfonts / "fonts" / CJK_FILE if mplfonts is not None else None
    if cjk is None or not cjk.is_file():
        raise MissingFontError(f"no Chinese font ({CJK_FILE} from mplfonts); {CJK_INSTALL_HINT}")
    mpl = _package_dir("matplotlib")
    if mpl is None:
        raise MissingFontError("matplotlib is not installed")
    out = [FontFile(CJK_FILE, "mplfonts", cjk)]
    for name in _MPL_FILES:
        path = mpl / "mpl-data" / "fonts" / "ttf" / name
        if not path.is_file():
            raise MissingFontError(f"matplotlib's bundled font {name} is missing at {path}")
        out.append(FontFile(name, "matplotlib", path))
    return tuple(out)


# The CJK file's own forms posecards draws instead of its defaults: its U+2212 MINUS SIGN is
# full-width (1000 units, twice a digit: "−0.757" crowds a table cell, ticks read "− 1"), so the
# drawn copy maps U+2212 to the font's half-width minus (its 'hwid' form, 500 units), as Noto
# Sans CJK 2.x does by default. Bump the version when the derivation changes.
_MINUS = 0x2212
_DERIVED_VERSION = 2


def _hwid_form(font: Any, glyph: str) -> str | None:
    """The glyph the font's 'hwid' (half-width) feature substitutes for ``glyph``, if any."""
    table = font["GSUB"].table
    for record in table.FeatureList.FeatureRecord:
        if record.FeatureTag != "hwid":
            continue
        for index in record.Feature.LookupListIndex:
            for sub in table.LookupList.Lookup[index].SubTable:
                mapping = getattr(sub, "mapping", None)
                if mapping and glyph in mapping:
                    return str(mapping[glyph])
    return None


def _derived_dir() -> Path:
    from posecards.cache import cache_dir

    base = cache_dir()
    if base is None:  # the cache is off: a per-user folder all the same (made once)
        import tempfile

        return Path(tempfile.gettempdir()) / f"posecards-fonts-{os.getuid()}"
    return base / "fonts"


@cache
def cjk_drawn_path() -> Path:
    """The CJK file posecards draws with: the named file with its half-width minus (above),
    made once per machine from the named file (named by its sha256) and kept beside the cache.
    Every table but cmap is copied byte for byte."""
    from fontTools.ttLib import TTFont

    src = font_file(CJK_FILE)
    sha = dict(font_digests())[CJK_FILE]
    path = _derived_dir() / f"{Path(CJK_FILE).stem}-{sha[:16]}-v{_DERIVED_VERSION}.otf"
    if path.is_file():
        return path
    # read the forms with one instance (GSUB's names decompile CFF for the glyph order) ...
    probe = TTFont(src.path, lazy=True)
    glyph = probe.getBestCmap().get(_MINUS)
    half = _hwid_form(probe, glyph) if glyph else None
    order = probe.getGlyphOrder()
    # ... and write from a fresh one that loads cmap alone: every other table is copied raw
    font = TTFont(src.path, lazy=True, recalcTimestamp=False, recalcBBoxes=False)
    font.setGlyphOrder(order)
    if half is not None:
        for table in font["cmap"].tables:
            if table.isUnicode() and _MINUS in table.cmap:
                table.cmap[_MINUS] = half
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        font.save(str(tmp), reorderTables=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def font_file(name: str) -> FontFile:
    for f in font_files():
        if f.name == name:
            return f
    raise KeyError(name)


def _hash_memo_path() -> Path | None:
    from posecards.cache import cache_dir

    base = cache_dir()
    return None if base is None else base / "fonts" / "sha256.json"


def _sha256(path: Path, memo: dict[str, Any]) -> str:
    """sha256 of a font file; the memo (path -> size, mtime, sha256) spares re-reading 16 MB
    on every no-op build: a file whose size or time changed is hashed again."""
    st = path.stat()
    key = str(path)
    seen = memo.get(key)
    if isinstance(seen, list) and seen[:2] == [st.st_size, st.st_mtime_ns]:
        return str(seen[2])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    memo[key] = [st.st_size, st.st_mtime_ns, digest]
    return digest


@cache
def font_digests() -> tuple[tuple[str, str], ...]:
    """(file name, sha256) of every font file, in font_files() order."""
    where = _hash_memo_path()
    memo: dict[str, Any] = {}
    if where is not None:
        try:
            memo = json.loads(where.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            memo = {}
    before = dict(memo)
    out = tuple((f.name, _sha256(f.path, memo)) for f in font_files())
    from posecards.cache import memos_writable, write_atomic

    if where is not None and memo != before and memos_writable():
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(where, json.dumps(memo, sort_keys=True).encode("utf-8"))
        except OSError:
            pass  # a memo that cannot be written costs a hash next time
    return out


FONT_INPUT_PREFIX = "fonts/"


def font_inputs() -> tuple[tuple[str, str], ...]:
    """(``fonts/<file>``, sha256) of every font file: part of every recipe and cache key
    (posecards.engine.inputs.shared_inputs), so a changed font is a stale ``--check`` verdict with a
    reason (``fonts changed: NotoSansCJKsc-Regular.otf``)."""
    return tuple((FONT_INPUT_PREFIX + name, sha) for name, sha in font_digests())


FONT_PACKAGES = ("mplfonts", "matplotlib")  # the distributions that ship the font files


def font_records(versions: Mapping[str, str]) -> list[dict[str, str]]:
    """What ``manifest.json`` lists under "fonts": file, source package and its version (from
    ``versions``, package -> version), sha256."""
    digests = dict(font_digests())
    return [
        {
            "file": f.name,
            "package": f.package,
            "version": versions.get(f.package, "-"),
            "sha256": digests[f.name],
        }
        for f in font_files()
    ]


# ------------------------------------------------------------------ matplotlib's font manager


def _entry(path: Path, **override: Any) -> Any:
    """matplotlib's FontEntry (a frozen dataclass) of the file, with ``override``."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    entry = font_manager.ttfFontProperty(FT2Font(str(path)))
    return replace(entry, fname=str(path), **override)


@cache
def font_entries() -> tuple[Any, ...]:
    """The only fonts matplotlib's font manager sees inside card_style: each named file as
    itself, and the regular CJK face also as the CJK family's bold (see the module docstring:
    bold is drawn in the regular face; an exact entry also keeps findfont from warning)."""
    files = {f.name: f.path for f in font_files()}
    cjk = cjk_drawn_path()
    out = [
        _entry(cjk, name=CJK_FAMILY, weight=400),
        _entry(cjk, name=CJK_FAMILY, weight=700),
    ]
    out += [_entry(files[name]) for name in _MPL_FILES]
    return tuple(out)


def face_path(family: str, weight: int, style: str) -> Path | None:
    """The file matplotlib draws (family, weight, style) with inside card_style: the entry of
    that family nearest in weight and style, as its font manager scores them; None if no entry
    has that family. The HTML pages' web fonts come from the same files."""
    best: tuple[float, Any] | None = None
    for e in font_entries():
        if e.name != family:
            continue
        w = int(e.weight) if str(e.weight).isdigit() else (700 if e.weight == "bold" else 400)
        score = abs(w - weight) / 1000 + (0.0 if _style_matches(e.style, style) else 1.0)
        if best is None or score < best[0]:
            best = (score, e)
    return None if best is None else Path(best[1].fname)


def _style_matches(have: str, want: str) -> bool:
    slanted = ("italic", "oblique")
    return have == want or (have in slanted and want in slanted)


# ------------------------------------------------------------------------ fontTools' warnings


@contextlib.contextmanager
def quiet_font_dates() -> Iterator[None]:
    """matplotlib's Computer Modern files (cmsy10.ttf draws the math prime) carry head
    timestamps from before 1970 in the format's 1904 epoch; fontTools warns about them on
    stderr whenever it reads them (a web font or PDF subset) and takes them as Unix times (the
    subsets keep that: the same bytes on every run). That one logger is quiet in the block."""
    import logging

    log = logging.getLogger("fontTools.ttLib.tables._h_e_a_d")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)
