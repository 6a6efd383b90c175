"""Placeholders: the syntax card text may use (a name and filters, nothing else), the check of
it, and ``fill`` (Jinja, strict: a placeholder with no value is an error that names it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from posecards.content import VARIANTS
from posecards.formatting import below, group, num, sci, sig, wl

if TYPE_CHECKING:
    import jinja2
from posecards.render.fields import CardTextError, TextSource

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


@lru_cache(maxsize=4096)
def _template(text: str) -> jinja2.Template:
    """``text`` compiled once per process (compiling is most of a fill: the cards' texts are
    filled again for each language, page size and theme); a Template renders from its context
    only."""
    return _env().from_string(text)


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
        return _template(text).render(context)
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


TEMPLATE_LOGIC = re.compile(r"\{%|%\}|\{#|#\}")


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


def check_placeholders(text: str, src: TextSource, key: str) -> None:
    """Card text is text: placeholders only, each a name and known filters."""
    if TEMPLATE_LOGIC.search(text):
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
