"""The text of a card field: one phrasing in English and Chinese (``Bilingual``) or named
variants of which the content chooses one (``Variants``); where each key of a text file is
(``TextSource``), and the error every malformed text file raises (``CardTextError``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from posecards.content import VARIANTS
from posecards.errors import PosecardsError


class CardTextError(PosecardsError):
    """A card source file is malformed: names the file, the key and, where known, the line."""


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


def all_texts(fields: Iterable[tuple[str, Text]]) -> Iterator[tuple[str, Bilingual]]:
    """Every phrasing of the fields: plain ones as they are, each variant as 'key.variant'."""
    for key, t in fields:
        if isinstance(t, Bilingual):
            yield key, t
        else:
            for name, b in t.options:
                yield f"{key}.{name}", b


def chosen_variants(values: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """The variants the content chose (carried in its numbers under ``VARIANTS``), keyed by
    field path: those of the card's own file (no prefix), or of another file by its prefix
    (``posecards.content.DECK_FIELD`` for deck.toml)."""
    raw = values.get(VARIANTS) or {}
    if not prefix:
        return {k: str(v) for k, v in raw.items() if ":" not in k}
    return {k[len(prefix) :]: str(v) for k, v in raw.items() if k.startswith(prefix)}
