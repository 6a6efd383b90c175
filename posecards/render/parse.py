"""Reading the tables of a card text file: a bilingual text, a field with variants, the
[names.<set>] tables, the [sources.<key>] papers; each checked, each error naming the file,
the key and the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from posecards.render.fields import Bilingual, CardTextError, Text, TextSource, Variants
from posecards.render.fill import TEMPLATE_LOGIC, check_placeholders
from posecards.render.ui import ui_strings

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


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
            check_placeholders(val, src, f"{key}.{lang}")
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
        if not SLUG.match(name):
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
            if "{{" in b.en + b.zh or TEMPLATE_LOGIC.search(b.en + b.zh):
                raise CardTextError(
                    f"{src.at(f'names.{set_name}.{value}')}: names are plain words, without "
                    "placeholders"
                )
    return TextSource(src.file, src.lines, names)


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
