"""Card text: load ``cards/cardN.toml`` (English and Chinese side by side, keyed by stable ids)
and fill its ``{{ placeholders }}`` with numbers from the computation (Jinja, strict).

Schema of a card file (every text entry is a table with ``en`` and ``zh``):

    id, slug                      the card number and its file-name slug
    [title] [thesis]              one line each
    [formula] tex = '...'         matplotlib mathtext, shared by both languages; a list of
                                  strings is drawn as several lines
    [formula.note]                one line explaining the formula
    [panels.<figure-id>]          in display order: title, alt (alt text), caption (optional)
    [figures.<figure-id>]         optional: figures the card computes and draws but does not place
                                  on the card (figure pages only: `posecards figure`, the card
                                  page's "More figures"); same keys as a panel
    [takeaways.<id>]              exactly 3
    [pitfalls.<id>]               at least 2
    [labels.<key>]                axis labels and legend text used by the figures
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from posecards.render.paths import data_dir

LANG_NAMES = {"en": "English", "zh": "中文"}


class CardTextError(ValueError):
    """A card source file is malformed: names the file, the key and, where known, the line."""


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


MINUS = "\u2212"  # a real minus sign, as typeset: "−0.5", not "-0.5"


def _minus(s: str) -> str:
    return MINUS + s[1:] if s.startswith("-") else s


def num(value: float, digits: int = 3) -> str:
    """Fixed-point: num(0.98765, 2) -> '0.99'. Negative zero prints as 0."""
    s = f"{float(value):.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else _minus(s)


def sci(value: float, digits: int = 1) -> str:
    """Scientific with a real times sign: sci(1.1e-16) -> '1.1×10⁻¹⁶'."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return num(v, 0) if v == 0 else str(v)
    exp = math.floor(math.log10(abs(v)))
    mant = v / 10**exp
    if round(abs(mant), digits) >= 10:
        mant, exp = mant / 10, exp + 1
    return _minus(f"{mant:.{digits}f}") + f"×10{str(exp).translate(_SUPERSCRIPT)}"


def below(value: float, exponent: int) -> str:
    """A quantity at rounding level, as a bound: below(8.9e-16, -14) -> '< 10⁻¹⁴'.

    Rounding noise (10⁻¹⁶…10⁻¹³) differs from CPU to CPU in every digit; the card states the
    bound it stays under instead. The bound is fixed in the card text, with a wide margin over
    the values seen, so it prints the same everywhere; a value at or above it (unusual
    parameters) prints as sci(value, 1).
    """
    v = abs(float(value))
    if v < 10.0**exponent:
        return f"< 10{str(exponent).translate(_SUPERSCRIPT)}"
    return sci(value, 1)


def group(value: float) -> str:
    """Integer with thousands separators: 131072 -> '131,072'."""
    return _minus(f"{round(float(value)):,}")


def sig(value: float, digits: int = 3) -> str:
    """Significant digits: sig(62831.85, 3) -> '62,800'; sig(0.0123) -> '0.0123'."""
    v = float(value)
    if v == 0:
        return "0"
    exp = math.floor(math.log10(abs(v)))
    rounded = round(v, digits - 1 - exp)
    if abs(rounded) >= 1000:
        return _minus(f"{round(rounded):,}")
    decimals = max(0, digits - 1 - exp)
    return _minus(f"{rounded:.{decimals}f}")


def wl(value: float) -> str:
    """A wavelength in positions, one rule on every card: 3 significant digits below 1,000,
    whole positions above (never rounded to a multiple of 10): 6.28, 62.8, 628, 6,283, 60,611."""
    v = float(value)
    return group(v) if abs(v) >= 1000 else sig(v, 3)


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    env.filters.update(num=num, sci=sci, group=group, sig=sig, below=below, wl=wl)
    return env


def fill(text: str, values: Mapping[str, Any], where: str) -> str:
    """Fill placeholders; a placeholder with no value is a CardTextError naming it and ``where``."""
    try:
        return _env().from_string(text).render(**values)
    except jinja2.UndefinedError as exc:
        name = re.search(r"'([^']+)' is undefined", str(exc))
        key = name.group(1) if name else str(exc)
        raise CardTextError(f"{where}: placeholder '{key}' has no value") from None
    except jinja2.TemplateSyntaxError as exc:
        raise CardTextError(f"{where}: bad placeholder syntax: {exc.message}") from None


@dataclass(frozen=True)
class Bilingual:
    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh


@dataclass(frozen=True)
class Panel:
    id: str
    title: Bilingual
    alt: Bilingual
    caption: Bilingual | None


@dataclass(frozen=True)
class CardText:
    """The raw (unfilled) text of one card."""

    path: Path
    id: int | str  # 1..4 for the explanatory cards; "inspect-<kind>" for an inspection card
    slug: str
    title: Bilingual
    thesis: Bilingual
    formula_tex: str
    formula_note: Bilingual
    panels: tuple[Panel, ...]
    takeaways: tuple[tuple[str, Bilingual], ...]
    pitfalls: tuple[tuple[str, Bilingual], ...]
    labels: Mapping[str, Bilingual]
    figures: tuple[Panel, ...] = ()  # figure pages only: computed and drawn, not on the card

    @property
    def figure_ids(self) -> tuple[str, ...]:
        """Every figure id of the card: its panels, then its figure-page-only figures."""
        return tuple(p.id for p in (*self.panels, *self.figures))


def _line_of(source: str, key: str) -> int | None:
    """Best-effort line number of a key or table header in the TOML source."""
    last = key.split(".")[-1]
    for i, line in enumerate(source.splitlines(), 1):
        if re.match(rf"\s*(\[+[^\]]*\b{re.escape(last)}\b[^\]]*\]+|{re.escape(last)}\s*=)", line):
            return i
    return None


def _bilingual(table: Any, path: Path, source: str, key: str) -> Bilingual:
    where = f"{path.name}"
    if not isinstance(table, dict):
        line = _line_of(source, key)
        at = f" line {line}" if line else ""
        raise CardTextError(f"{where}{at}: '{key}' must be a table with 'en' and 'zh' text")
    for lang in ("en", "zh"):
        val = table.get(lang)
        if not isinstance(val, str) or not val.strip():
            line = _line_of(source, key)
            at = f" line {line}" if line else ""
            raise CardTextError(f"{where}{at}: '{key}' has no {LANG_NAMES[lang]} ({lang}) text")
    return Bilingual(en=table["en"].strip(), zh=table["zh"].strip())


def _formula_lines(tex: Any, path: Path, source: str) -> str:
    lines = [tex] if isinstance(tex, str) else tex
    if not isinstance(lines, list) or not lines or not all(isinstance(x, str) for x in lines):
        line = _line_of(source, "tex")
        at = f" line {line}" if line else ""
        raise CardTextError(f"{path.name}{at}: 'formula.tex' must be a string or a list of strings")
    return "\n".join(x.strip() for x in lines)


_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def card_file_name(card: int | str) -> str:
    """``cardN.toml`` for card N; ``<name>.toml`` for a named card such as "inspect-rope"."""
    return f"card{int(card)}.toml" if isinstance(card, int) else f"{card}.toml"


def load_card_text(card: int | str, folder: Path | None = None) -> CardText:
    """Read and validate a card file; errors name the file, the key and the line."""
    folder = folder or data_dir("cards")
    path = folder / card_file_name(card)
    if not path.is_file():
        raise CardTextError(f"card source {path} not found")
    source = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise CardTextError(f"{path.name}: syntax error: {exc}") from None

    def need(key: str) -> Any:
        if key not in data:
            raise CardTextError(f"{path.name}: missing '{key}'")
        return data[key]

    slug = str(need("slug"))
    if not _SLUG.match(slug):
        raise CardTextError(f"{path.name}: slug {slug!r} must be lowercase words joined by '-'")
    formula = need("formula")
    panels_raw = need("panels")
    if not isinstance(panels_raw, dict) or not 3 <= len(panels_raw) <= 6:
        raise CardTextError(f"{path.name}: a card has 3 to 6 [panels.<figure-id>] tables")
    panels = _panel_entries(panels_raw, "panels", path, source)
    figures_raw = data.get("figures", {})
    if not isinstance(figures_raw, dict):
        raise CardTextError(f"{path.name}: 'figures' must be [figures.<figure-id>] tables")
    figures = _panel_entries(figures_raw, "figures", path, source)
    twice = sorted({p.id for p in panels} & {p.id for p in figures})
    if twice:
        raise CardTextError(
            f"{path.name}: figure id {twice[0]!r} is both in [panels] and in [figures]"
        )
    take = need("takeaways")
    pits = need("pitfalls")
    if not isinstance(take, dict) or len(take) != 3:
        raise CardTextError(f"{path.name}: a card has exactly 3 [takeaways.<id>] entries")
    if not isinstance(pits, dict) or len(pits) < 2:
        raise CardTextError(f"{path.name}: a card has at least 2 [pitfalls.<id>] entries")
    labels = {
        k: _bilingual(v, path, source, f"labels.{k}") for k, v in data.get("labels", {}).items()
    }
    raw_id = need("id")
    if raw_id != card:
        raise CardTextError(f"{path.name}: id must be {card!r}, got {raw_id!r}")
    return CardText(
        path=path,
        id=raw_id,
        slug=slug,
        title=_bilingual(need("title"), path, source, "title"),
        thesis=_bilingual(need("thesis"), path, source, "thesis"),
        formula_tex=_formula_lines(formula.get("tex"), path, source),
        formula_note=_bilingual(formula.get("note"), path, source, "formula.note"),
        panels=tuple(panels),
        takeaways=tuple(
            (k, _bilingual(v, path, source, f"takeaways.{k}")) for k, v in take.items()
        ),
        pitfalls=tuple((k, _bilingual(v, path, source, f"pitfalls.{k}")) for k, v in pits.items()),
        labels=labels,
        figures=tuple(figures),
    )


def _panel_entries(raw: dict[str, Any], table: str, path: Path, source: str) -> list[Panel]:
    """The [panels.<id>] or [figures.<id>] entries of a card file, in file order."""
    out = []
    for fid, p in raw.items():
        if not _SLUG.match(fid):
            raise CardTextError(f"{path.name}: figure id {fid!r} must be lowercase words and '-'")
        if not isinstance(p, dict):
            raise CardTextError(f"{path.name}: '{table}.{fid}' must be a table")
        cap = p.get("caption")
        out.append(
            Panel(
                id=fid,
                title=_bilingual(p.get("title"), path, source, f"{table}.{fid}.title"),
                alt=_bilingual(p.get("alt"), path, source, f"{table}.{fid}.alt"),
                caption=None
                if cap is None
                else _bilingual(cap, path, source, f"{table}.{fid}.caption"),
            )
        )
    return out


@dataclass(frozen=True)
class FilledCard:
    """The text of one card in one language, placeholders filled."""

    id: int | str
    slug: str
    lang: str
    title: str
    thesis: str
    formula_tex: str
    formula_note: str
    panels: tuple[tuple[str, str, str, str], ...]  # (figure id, title, alt, caption)
    takeaways: tuple[tuple[str, str], ...]
    pitfalls: tuple[tuple[str, str], ...]
    # figure pages only (not on the card): (figure id, title, alt, caption)
    figures: tuple[tuple[str, str, str, str], ...] = ()


def fill_card(text: CardText, lang: str, numbers: Mapping[str, Any]) -> FilledCard:
    name = text.path.name

    def f(b: Bilingual, key: str) -> str:
        return fill(b.get(lang), numbers, f"{name}: '{key}' ({lang})")

    def entries(panels: tuple[Panel, ...], table: str) -> tuple[tuple[str, str, str, str], ...]:
        return tuple(
            (
                p.id,
                f(p.title, f"{table}.{p.id}.title"),
                f(p.alt, f"{table}.{p.id}.alt"),
                f(p.caption, f"{table}.{p.id}.caption") if p.caption else "",
            )
            for p in panels
        )

    return FilledCard(
        id=text.id,
        slug=text.slug,
        lang=lang,
        title=f(text.title, "title"),
        thesis=f(text.thesis, "thesis"),
        formula_tex=text.formula_tex,
        formula_note=f(text.formula_note, "formula.note"),
        panels=entries(text.panels, "panels"),
        takeaways=tuple((k, f(v, f"takeaways.{k}")) for k, v in text.takeaways),
        pitfalls=tuple((k, f(v, f"pitfalls.{k}")) for k, v in text.pitfalls),
        figures=entries(text.figures, "figures"),
    )


@dataclass(frozen=True)
class CardLabels:
    """Labels for figures: ``t('position')``; values fill placeholders: ``t('f_k', k=10)``."""

    table: Mapping[str, Bilingual]
    lang: str
    card_file: str = ""

    def __call__(self, key: str, **values: Any) -> str:
        if key not in self.table:
            raise CardTextError(f"{self.card_file}: figure label '{key}' missing in [labels]")
        text = self.table[key].get(self.lang)
        return fill(text, values, f"{self.card_file}: 'labels.{key}'") if "{{" in text else text


def check_figure_ids(text: CardText, known: Iterable[str]) -> None:
    """Every [panels.<id>] and [figures.<id>] of the card file must be a figure the card
    computes."""
    known = list(known)
    for table, entries in (("panels", text.panels), ("figures", text.figures)):
        for p in entries:
            if p.id not in known:
                source = text.path.read_text(encoding="utf-8")
                line = _line_of(source, p.id)
                at = f" line {line}" if line else ""
                raise CardTextError(
                    f"{text.path.name}{at}: unknown figure id '{p.id}' in [{table}]; "
                    f"card {text.id} has: {', '.join(known)}"
                )
