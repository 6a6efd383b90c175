"""The words of posecards' own interface (page navigation and headings, a card's headings, the
footers, the deck's notes): ``templates/ui.toml``, one table per language with the same keys.

``ui_strings(lang)`` is the table of one language, as the templates get it (``ui.all_cards``);
``ui_text(lang, key, **values)`` one string with its ``{name}`` fields filled. The file is
checked when read: every language has every key, no string is empty, and a key's fields are
the same in every language. It is a template, so a recipe input of every output.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from posecards.config import LANGS
from posecards.errors import PosecardsError
from posecards.paths import data_dir

UI_FILE = "ui.toml"


class UiTextError(PosecardsError):
    """templates/ui.toml is malformed: names the file, the language and the key."""


def _fields(s: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(s) if name is not None}


@cache
def _tables() -> Mapping[str, Mapping[str, str]]:
    path = data_dir("templates") / UI_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UiTextError(f"{path}: missing (the interface's words)") from None
    except tomllib.TOMLDecodeError as exc:
        raise UiTextError(f"{path}: syntax error: {exc}") from None
    if set(data) != set(LANGS):
        raise UiTextError(f"{path}: needs one table per language: [{'], ['.join(LANGS)}]")
    first = LANGS[0]
    for lang in LANGS:
        table = data[lang]
        if not isinstance(table, dict):
            raise UiTextError(f"{path}: [{lang}] must be a table")
        for key in sorted(set(data[first]) ^ set(table)):
            has = first if key in data[first] else lang
            lacks = lang if has == first else first
            raise UiTextError(f"{path}: '{key}' is in [{has}] but not in [{lacks}]")
        for key, value in table.items():
            if not isinstance(value, str) or not value.strip():
                raise UiTextError(f"{path}: [{lang}] {key} must be a non-empty string")
            if _fields(value) != _fields(data[first][key]):
                raise UiTextError(
                    f"{path}: [{lang}] {key} has the fields {sorted(_fields(value))}, "
                    f"[{first}] {sorted(_fields(data[first][key]))}"
                )
    return MappingProxyType({lang: MappingProxyType(dict(data[lang])) for lang in LANGS})


def ui_strings(lang: str) -> Mapping[str, str]:
    """Every interface string of ``lang`` (key -> string, fields unfilled)."""
    tables = _tables()
    if lang not in tables:
        raise ValueError(f"unknown language {lang!r}; choose one of: {', '.join(tables)}")
    return tables[lang]


def ui_text(lang: str, key: str, **values: object) -> str:
    """One interface string of ``lang`` with its ``{name}`` fields filled from ``values``."""
    return ui_strings(lang)[key].format(**values)
