"""Card text: load ``cards/cardN.toml`` (English and Chinese side by side, keyed by stable ids)
and fill its ``{{ placeholders }}`` with numbers from the computation (Jinja, strict).

Schema of a card file (every text field is ``{ en = "...", zh = "..." }``, or a table of named
variants, each ``{ en, zh }``, of which the card's content module chooses one):

    id, slug                      the card number and its file-name slug
    [title] [thesis]              one line each (the title has one phrasing: no variants)
    [formula] tex = '...'         matplotlib mathtext, shared by both languages; a list of
                                  strings is drawn as several lines
    [formula.note]                one line explaining the formula
    [panels.<figure-id>]          in display order: title (no variants), alt (alt text),
                                  caption (optional)
    [figures.<figure-id>]         optional: figures the card computes and draws but does not place
                                  on the card (figure pages only: `posecards figure`, the card
                                  page's "More figures"); same keys as a panel
    [takeaways.<id>]              exactly 3
    [pitfalls.<id>]               at least 2
    [names.<set>]                 optional: what ``{{ value | name('<set>') }}`` prints for each
                                  value the content gives (e.g. a scheme id -> its name)
    [labels.<key>]                axis labels and legend text used by the figures (no variants)
    [sources.<key>]               the papers the card's ideas come from, in the order they are
                                  listed on its page: authors, year, title, arxiv (the id, e.g.
                                  "1706.03762") or, without one, where (en and zh)

A placeholder is a name and filters, nothing else: ``{{ x }}``, ``{{ x | num(2) }}``,
``{{ order | name('scheme') | join(' < ') }}``. No ``{% %}`` logic: the content layer chooses
between phrasings (``CardContent.variants``: field path -> variant name). docs/cards.md has the
whole contract and an example.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posecards.content import VARIANTS
from posecards.errors import PosecardsError
from posecards.formatting import below, group, num, sci, sig, wl
from posecards.paths import data_dir
from posecards.render.ui import ui_strings


class CardTextError(PosecardsError):
    """A card source file is malformed: names the file, the key and, where known, the line."""


if TYPE_CHECKING:
    import jinja2


# --- placeholders --------------------------------------------------------------------------------

NAMES = "@names"  # where fill() hands the [names] tables (in the page's language) to the filter
FILTERS = ("num", "sci", "group", "sig", "below", "wl", "name", "join")


class _NameProblem(Exception):
    """A value the [names.<set>] table has no entry for (raised inside Jinja, reported by fill)."""


def _name(ctx: Any, value: Any, names_set: str) -> Any:
    """``{{ best | name('scheme') }}``: the name [names.scheme] gives the value (a list: each)."""
    table = ctx.get(NAMES, {}).get(names_set)
    if table is None:
        raise _NameProblem(f"no [names.{names_set}] table")
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    missing = [str(v) for v in values if str(v) not in table]
    if missing:
        raise _NameProblem(
            f"[names.{names_set}] has no {missing[0]!r} (it has: {', '.join(table)})"
        )
    names = [table[str(v)] for v in values]
    return names if isinstance(value, (list, tuple)) else names[0]


@cache
def _env() -> jinja2.Environment:
    import jinja2  # lazily: planning a build (and a no-op rebuild) reads card text, fills none

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    env.filters.update(num=num, sci=sci, group=group, sig=sig, below=below, wl=wl)
    env.filters["name"] = jinja2.pass_context(_name)  # it reads the [names] tables
    return env


def fill(
    text: str,
    values: Mapping[str, Any],
    where: str,
    names: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """Fill placeholders; a placeholder with no value is a CardTextError naming it and ``where``.

    ``names``: the [names.<set>] tables in the text's language, for the ``name`` filter.
    """
    import jinja2

    context = {k: v for k, v in values.items() if k != VARIANTS}
    context[NAMES] = names or {}
    try:
        return _env().from_string(text).render(context)
    except jinja2.UndefinedError as exc:
        name = re.search(r"'([^']+)' is undefined", str(exc))
        key = name.group(1) if name else str(exc)
        raise CardTextError(f"{where}: placeholder '{key}' has no value") from None
    except jinja2.TemplateSyntaxError as exc:
        raise CardTextError(f"{where}: bad placeholder syntax: {exc.message}") from None
    except _NameProblem as exc:
        raise CardTextError(f"{where}: {exc}") from None


# A placeholder: a name, then filters with literal arguments. No expressions, no {% %} logic.
_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)
_ARG = r"""(?:-?\d+(?:\.\d+)?|"[^"]*"|'[^']*')"""
_EXPR = re.compile(
    rf"""\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*
    (?P<filters>(?:\|\s*[a-z_]+\s*(?:\(\s*(?:{_ARG}(?:\s*,\s*{_ARG})*)?\s*\))?\s*)*)""",
    re.X,
)
_FILTER = re.compile(r"\|\s*([a-z_]+)\s*(?:\((.*?)\))?\s*(?=\||$)", re.S)
_LOGIC = re.compile(r"\{%|%\}|\{#|#\}")


def placeholders(text: str) -> list[tuple[str, str]]:
    """The placeholders of one (valid) text: (name, filters as written, e.g. 'num(2)')."""
    out = []
    for m in _PLACEHOLDER.finditer(text):
        e = _EXPR.fullmatch(m.group(1))
        if e:
            out.append((e.group("name"), " | ".join(f.strip(" |") for f in _filters(e))))
    return out


def _filters(e: re.Match[str]) -> list[str]:
    return [f.group(0).strip() for f in _FILTER.finditer(e.group("filters").strip())]


def _check_placeholders(text: str, src: TextSource, key: str) -> None:
    """Card text is text: placeholders only, each a name and known filters."""
    if _LOGIC.search(text):
        raise CardTextError(
            f"{src.at(key)}: '{key}' contains template logic ({{% %}} or {{# #}}): card text is plain "
            "text; give the field variants and let the content choose (docs/cards.md)"
        )
    rest = _PLACEHOLDER.sub("", text)
    if "{{" in rest or "}}" in rest:
        raise CardTextError(
            f"{src.at(key)}: '{key}' has an unclosed placeholder ({{{{ without }}}})"
        )
    for m in _PLACEHOLDER.finditer(text):
        e = _EXPR.fullmatch(m.group(1))
        if e is None:
            raise CardTextError(
                f"{src.at(key)}: '{key}': placeholder {m.group(0)!r} is not a name with filters, "
                "e.g. {{ x | num(2) }}"
            )
        for f in _FILTER.finditer(e.group("filters").strip()):
            if f.group(1) not in FILTERS:
                raise CardTextError(
                    f"{src.at(key)}: '{key}': unknown filter '{f.group(1)}' in {m.group(0)!r} "
                    f"(filters: {', '.join(FILTERS)})"
                )
            if f.group(1) == "name":
                arg = (f.group(2) or "").strip().strip("\"'")
                if arg not in src.names:
                    have = ", ".join(src.names) or "none"
                    raise CardTextError(
                        f"{src.at(key)}: '{key}': {m.group(0)!r} names [names.{arg}], which "
                        f"{src.file} does not have (it has: {have})"
                    )


# --- where each key is in the file -------------------------------------------------------------


def _split_key(raw: str) -> list[str] | None:
    """A TOML key as its parts: 'panels."c2-x".title' -> ['panels', 'c2-x', 'title']."""
    parts: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        while i < n and raw[i] in " \t":
            i += 1
        if i < n and raw[i] in "\"'":
            j = raw.find(raw[i], i + 1)
            if j < 0:
                return None
            parts.append(raw[i + 1 : j])
            i = j + 1
        else:
            j = i
            while j < n and (raw[j].isalnum() or raw[j] in "-_"):
                j += 1
            if j == i:
                return None
            parts.append(raw[i:j])
            i = j
        while i < n and raw[i] in " \t":
            i += 1
        if i < n:
            if raw[i] != ".":
                return None
            i += 1
    return parts


def _scan(line: str, state: tuple[str | None, int]) -> tuple[str | None, int]:
    """Carry (open multi-line string delimiter, bracket depth) across one line of a value."""
    quote, depth = state
    i, n = 0, len(line)
    while i < n:
        if quote:
            j = line.find(quote, i)
            if j < 0:
                return quote, depth
            i, quote = j + 3, None
            continue
        c = line[i]
        if line.startswith(('"""', "'''"), i):
            quote, i = line[i : i + 3], i + 3
        elif c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if c == '"' and line[j] == "\\" else 1
            i = j + 1
        elif c in "[{":
            depth, i = depth + 1, i + 1
        elif c in "]}":
            depth, i = depth - 1, i + 1
        elif c == "#":
            break
        else:
            i += 1
    return quote, depth


def key_lines(source: str) -> dict[str, int]:
    """Line of every table and key of a TOML file, as dotted paths ('panels.c2-x.title.en'); a
    path defined implicitly (by a dotted key or a sub-table) gets the line that first names it."""
    lines: dict[str, int] = {}
    table: list[str] = []
    state: tuple[str | None, int] = (None, 0)

    def record(path: list[str], number: int) -> None:
        for k in range(1, len(path) + 1):
            lines.setdefault(".".join(path[:k]), number)

    for number, line in enumerate(source.splitlines(), 1):
        if state != (None, 0):
            state = _scan(line, state)
            continue
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("["):
            inner = s.lstrip("[").split("]")[0]
            path = _split_key(inner)
            if path:
                table = path
                record(table, number)
            continue
        eq = _scan_key_end(s)
        path = _split_key(s[:eq]) if eq > 0 else None
        if path:
            record(table + path, number)
            state = _scan(s[eq + 1 :], (None, 0))
    return lines


class KeyLines(Mapping[str, int]):
    """``key_lines(source)``, worked out when first read: only messages about the text need
    it, and a no-op build reads the text without one."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._lines: dict[str, int] | None = None

    def _all(self) -> dict[str, int]:
        if self._lines is None:
            self._lines = key_lines(self._source)
        return self._lines

    def __getitem__(self, key: str) -> int:
        return self._all()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _scan_key_end(s: str) -> int:
    """Index of the '=' that ends the key of a key/value line (quoted keys may hold '=')."""
    i = 0
    while i < len(s):
        if s[i] in "\"'":
            j = s.find(s[i], i + 1)
            i = len(s) if j < 0 else j + 1
        elif s[i] == "=":
            return i
        else:
            i += 1
    return -1


# --- the text of a field: one phrasing, or named variants ------------------------------------


@dataclass(frozen=True)
class Bilingual:
    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh


@dataclass(frozen=True)
class Variants:
    """A field with several phrasings; the card's content names the one that applies."""

    options: tuple[tuple[str, Bilingual], ...]  # (variant name, text), in file order

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.options)


Text = Bilingual | Variants


@dataclass(frozen=True)
class TextSource:
    """What every message and fill of one text file needs: its name, the line of each key
    and its [names] tables."""

    file: str
    lines: Mapping[str, int] = field(default_factory=dict)
    names: Mapping[str, Mapping[str, Bilingual]] = field(default_factory=dict)

    def at(self, key: str) -> str:
        """'card2.toml line 23' for the key (or its nearest enclosing table), else 'card2.toml'."""
        parts = key.split(".")
        while parts:
            line = self.lines.get(".".join(parts))
            if line is not None:
                return f"{self.file} line {line}"
            parts.pop()
        return self.file

    def names_in(self, lang: str) -> dict[str, dict[str, str]]:
        return {s: {k: b.get(lang) for k, b in t.items()} for s, t in self.names.items()}

    def pick(self, text: Text, key: str, chosen: Mapping[str, str]) -> tuple[str, Bilingual]:
        """The text that applies and where it is: a plain field is itself, a field with
        variants is the one the content chose for ``key`` (an error names what is missing)."""
        if isinstance(text, Bilingual):
            return key, text
        name = chosen.get(key)
        if name is None:
            raise CardTextError(
                f"{self.at(key)}: '{key}' has variants ({', '.join(text.names)}) but no "
                "variant was chosen for it: the content module must name one"
            )
        for option, b in text.options:
            if option == name:
                return f"{key}.{name}", b
        raise CardTextError(
            f"{self.at(key)}: '{key}' has no variant '{name}' (it has: {', '.join(text.names)})"
        )


def _strip(s: str, lang: str) -> str:
    return s.strip()


def parse_bilingual(
    table: Any,
    src: TextSource,
    key: str,
    squash: Callable[[str, str], str] = _strip,
    check: bool = True,
) -> Bilingual:
    """A table with 'en' and 'zh' text (each checked: placeholders only; ``check=False`` for
    names, which are checked to hold no placeholders at all)."""
    if not isinstance(table, dict):
        raise CardTextError(f"{src.at(key)}: '{key}' must be a table with 'en' and 'zh' text")
    for lang in ("en", "zh"):
        val = table.get(lang)
        if not isinstance(val, str) or not val.strip():
            name = ui_strings(lang)["language_name"]
            raise CardTextError(f"{src.at(key)}: '{key}' has no {name} ({lang}) text")
        if check:
            _check_placeholders(val, src, f"{key}.{lang}")
    return Bilingual(en=squash(table["en"], "en"), zh=squash(table["zh"], "zh"))


def parse_text(
    table: Any,
    src: TextSource,
    key: str,
    *,
    variants: bool = True,
    squash: Callable[[str, str], str] = _strip,
) -> Text:
    """``{ en, zh }``, or (where ``variants``) a table of two or more named variants, each
    ``{ en, zh }``."""
    is_variants = (
        isinstance(table, dict) and bool(table) and all(isinstance(v, dict) for v in table.values())
    )
    if not is_variants:
        return parse_bilingual(table, src, key, squash)
    if not variants:
        raise CardTextError(
            f"{src.at(key)}: '{key}' must be one text with 'en' and 'zh' (no variants here)"
        )
    options = []
    for name, v in table.items():
        if not _SLUG.match(name):
            raise CardTextError(
                f"{src.at(f'{key}.{name}')}: variant name {name!r} of '{key}' must be lowercase "
                "words joined by '-'"
            )
        options.append((name, parse_bilingual(v, src, f"{key}.{name}", squash)))
    if len(options) < 2:
        raise CardTextError(
            f"{src.at(key)}: '{key}' has one variant ({options[0][0]}); a field with variants "
            "offers at least two (or write it as en = ..., zh = ...)"
        )
    return Variants(tuple(options))


def parse_names(
    raw: Any, src: TextSource, squash: Callable[[str, str], str] = _strip
) -> TextSource:
    """The source with its [names.<set>] tables read (before any text that uses them)."""
    if raw is None:
        return src
    if not isinstance(raw, dict) or not all(isinstance(t, dict) for t in raw.values()):
        raise CardTextError(f"{src.at('names')}: 'names' must be [names.<set>] tables")
    names = {}
    for set_name, table in raw.items():
        names[set_name] = {
            str(value): parse_bilingual(b, src, f"names.{set_name}.{value}", squash, check=False)
            for value, b in table.items()
        }
        for value, b in names[set_name].items():
            if "{{" in b.en + b.zh or _LOGIC.search(b.en + b.zh):
                raise CardTextError(
                    f"{src.at(f'names.{set_name}.{value}')}: names are plain words, without "
                    "placeholders"
                )
    return TextSource(src.file, src.lines, names)


def chosen_variants(values: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """The variants the content chose (carried in its numbers under ``VARIANTS``), keyed by
    field path: those of the card's own file (no prefix), or of another file by its prefix
    (``posecards.content.DECK_FIELD`` for deck.toml)."""
    raw = values.get(VARIANTS) or {}
    if not prefix:
        return {k: str(v) for k, v in raw.items() if ":" not in k}
    return {k[len(prefix) :]: str(v) for k, v in raw.items() if k.startswith(prefix)}


# --- a card file ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A paper or post a card's ideas come from, printed as text (the pages load nothing)."""

    key: str
    authors: str
    year: int
    title: str
    arxiv: str  # "1706.03762", or "" when the source has no arXiv id
    where: Bilingual | None = None  # where to find it when there is no arXiv id

    def text(self, lang: str) -> str:
        """'Vaswani, Shazeer, Parmar et al. (2017). Attention Is All You Need. arXiv:1706.03762'"""
        found = f"arXiv:{self.arxiv}" if self.arxiv else self.where.get(lang) if self.where else ""
        return f"{self.authors} ({self.year}). {self.title}. {found}".rstrip(". ")


_ARXIV = re.compile(r"^\d{4}\.\d{4,5}$")


def parse_sources(raw: Any, src: TextSource) -> tuple[Source, ...]:
    """The [sources.<key>] tables of a card file, in file order."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise CardTextError(f"{src.at('sources')}: 'sources' must be [sources.<key>] tables")
    out = []
    for key, t in raw.items():
        for field_name in ("authors", "title"):
            if not isinstance(t.get(field_name), str) or not t[field_name].strip():
                raise CardTextError(
                    f"{src.at(f'sources.{key}')}: source '{key}' has no {field_name}"
                )
        year = t.get("year")
        if not isinstance(year, int) or not 1900 < year < 2100:
            raise CardTextError(
                f"{src.at(f'sources.{key}')}: source '{key}' needs a year (e.g. year = 2017)"
            )
        arxiv = t.get("arxiv", "")
        if not isinstance(arxiv, str) or (arxiv and not _ARXIV.match(arxiv)):
            raise CardTextError(
                f"{src.at(f'sources.{key}')}: source '{key}': arxiv must be an id such as '1706.03762'"
            )
        where = t.get("where")
        if not arxiv and where is None:
            raise CardTextError(
                f"{src.at(f'sources.{key}')}: source '{key}' has neither an arxiv id nor a 'where'"
            )
        out.append(
            Source(
                key=key,
                authors=t["authors"].strip(),
                year=year,
                title=t["title"].strip(),
                arxiv=arxiv,
                where=None
                if where is None
                else parse_bilingual(where, src, f"sources.{key}.where"),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class Panel:
    id: str
    title: Bilingual
    alt: Text
    caption: Text | None


@dataclass(frozen=True)
class CardText:
    """The raw (unfilled) text of one card."""

    path: Path
    id: int | str  # 1..5 for the explanatory cards; "inspect-<kind>" for an inspection card
    slug: str
    title: Bilingual
    thesis: Text
    formula_tex: str
    formula_note: Text
    panels: tuple[Panel, ...]
    takeaways: tuple[tuple[str, Text], ...]
    pitfalls: tuple[tuple[str, Text], ...]
    labels: Mapping[str, Bilingual]
    source: TextSource
    figures: tuple[Panel, ...] = ()  # figure pages only: computed and drawn, not on the card
    sources: tuple[Source, ...] = ()  # the papers its ideas come from ([sources.<key>])

    @property
    def figure_ids(self) -> tuple[str, ...]:
        """Every figure id of the card: its panels, then its figure-page-only figures."""
        return tuple(p.id for p in (*self.panels, *self.figures))

    def fields(self) -> Iterator[tuple[str, Text]]:
        """Every text field the card shows (not the labels), as (field path, text)."""
        yield "title", self.title
        yield "thesis", self.thesis
        yield "formula.note", self.formula_note
        for table, entries in (("panels", self.panels), ("figures", self.figures)):
            for p in entries:
                yield f"{table}.{p.id}.title", p.title
                yield f"{table}.{p.id}.alt", p.alt
                if p.caption is not None:
                    yield f"{table}.{p.id}.caption", p.caption
        for table, items in (("takeaways", self.takeaways), ("pitfalls", self.pitfalls)):
            for k, t in items:
                yield f"{table}.{k}", t


def all_texts(fields: Iterable[tuple[str, Text]]) -> Iterator[tuple[str, Bilingual]]:
    """Every phrasing of the fields: plain ones as they are, each variant as 'key.variant'."""
    for key, t in fields:
        if isinstance(t, Bilingual):
            yield key, t
        else:
            for name, b in t.options:
                yield f"{key}.{name}", b


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
    src = TextSource(path.name, KeyLines(source))
    src = parse_names(data.get("names"), src)

    def need(key: str) -> Any:
        if key not in data:
            raise CardTextError(f"{path.name}: missing '{key}'")
        return data[key]

    slug = str(need("slug"))
    if not _SLUG.match(slug):
        raise CardTextError(
            f"{src.at('slug')}: slug {slug!r} must be lowercase words joined by '-'"
        )
    formula = need("formula")
    panels_raw = need("panels")
    if not isinstance(panels_raw, dict) or not 3 <= len(panels_raw) <= 6:
        raise CardTextError(f"{path.name}: a card has 3 to 6 [panels.<figure-id>] tables")
    panels = _panel_entries(panels_raw, "panels", src)
    figures_raw = data.get("figures", {})
    if not isinstance(figures_raw, dict):
        raise CardTextError(f"{src.at('figures')}: 'figures' must be [figures.<figure-id>] tables")
    figures = _panel_entries(figures_raw, "figures", src)
    twice = sorted({p.id for p in panels} & {p.id for p in figures})
    if twice:
        raise CardTextError(
            f"{src.at('figures.' + twice[0])}: figure id {twice[0]!r} is both in [panels] and "
            "in [figures]"
        )
    take = need("takeaways")
    pits = need("pitfalls")
    if not isinstance(take, dict) or len(take) != 3:
        raise CardTextError(f"{src.at('takeaways')}: a card has exactly 3 [takeaways.<id>] entries")
    if not isinstance(pits, dict) or len(pits) < 2:
        raise CardTextError(f"{src.at('pitfalls')}: a card has at least 2 [pitfalls.<id>] entries")
    labels = {k: parse_bilingual(v, src, f"labels.{k}") for k, v in data.get("labels", {}).items()}
    raw_id = need("id")
    if raw_id != card:
        raise CardTextError(f"{src.at('id')}: id must be {card!r}, got {raw_id!r}")
    return CardText(
        path=path,
        id=raw_id,
        slug=slug,
        title=parse_bilingual(need("title"), src, "title"),
        thesis=parse_text(need("thesis"), src, "thesis"),
        formula_tex=_formula_lines(formula.get("tex"), src),
        formula_note=parse_text(formula.get("note"), src, "formula.note"),
        panels=tuple(panels),
        takeaways=tuple((k, parse_text(v, src, f"takeaways.{k}")) for k, v in take.items()),
        pitfalls=tuple((k, parse_text(v, src, f"pitfalls.{k}")) for k, v in pits.items()),
        labels=labels,
        source=src,
        figures=tuple(figures),
        sources=parse_sources(data.get("sources"), src),
    )


def _formula_lines(tex: Any, src: TextSource) -> str:
    lines = [tex] if isinstance(tex, str) else tex
    if not isinstance(lines, list) or not lines or not all(isinstance(x, str) for x in lines):
        raise CardTextError(
            f"{src.at('formula.tex')}: 'formula.tex' must be a string or a list of strings"
        )
    return "\n".join(x.strip() for x in lines)


def _panel_entries(raw: dict[str, Any], table: str, src: TextSource) -> list[Panel]:
    """The [panels.<id>] or [figures.<id>] entries of a card file, in file order."""
    out = []
    for fid, p in raw.items():
        key = f"{table}.{fid}"
        if not _SLUG.match(fid):
            raise CardTextError(f"{src.at(key)}: figure id {fid!r} must be lowercase words and '-'")
        if not isinstance(p, dict):
            raise CardTextError(f"{src.at(key)}: '{key}' must be a table")
        cap = p.get("caption")
        out.append(
            Panel(
                id=fid,
                title=parse_bilingual(p.get("title"), src, f"{key}.title"),
                alt=parse_text(p.get("alt"), src, f"{key}.alt"),
                caption=None if cap is None else parse_text(cap, src, f"{key}.caption"),
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
    sources: tuple[str, ...] = ()  # one line per source, as the card page lists them


def check_choices(text: CardText, chosen: Mapping[str, str]) -> None:
    """Every variant the content chose is for a field of the card that has variants."""
    fields = dict(text.fields())
    for key in chosen:
        if not isinstance(fields.get(key), Variants):
            what = "has no such field" if key not in fields else "has no variants for it"
            raise CardTextError(
                f"{text.source.at(key)}: card {text.id} chose variant {chosen[key]!r} for "
                f"'{key}', but {text.path.name} {what}"
            )


def fill_card(text: CardText, lang: str, numbers: Mapping[str, Any]) -> FilledCard:
    """The card in ``lang``: for every field the phrasing the content chose (``numbers`` carries
    the choices, see ``CardContent``), its placeholders filled from ``numbers``."""
    src = text.source
    chosen = chosen_variants(numbers)
    check_choices(text, chosen)
    names = src.names_in(lang)

    def f(t: Text, key: str) -> str:
        at, b = src.pick(t, key, chosen)
        return fill(b.get(lang), numbers, f"{src.at(f'{at}.{lang}')}: '{at}' ({lang})", names)

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
        sources=tuple(s.text(lang) for s in text.sources),
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
                raise CardTextError(
                    f"{text.source.at(f'{table}.{p.id}')}: unknown figure id '{p.id}' in "
                    f"[{table}]; card {text.id} has: {', '.join(known)}"
                )
