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
    [exercises.<id>]              optional, 2 or 3: question and answer (the card page folds the
                                  answer under the question); their numbers are placeholders the
                                  content module computes
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

import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posecards.cards import spec
from posecards.paths import data_dir
from posecards.render.fields import (
    Bilingual,
    CardTextError,
    Text,
    TextSource,
    Variants,
    chosen_variants,
)
from posecards.render.fill import fill
from posecards.render.parse import (
    SLUG,
    Source,
    parse_bilingual,
    parse_names,
    parse_sources,
    parse_text,
)
from posecards.render.toml_lines import KeyLines


@dataclass(frozen=True)
class Panel:
    id: str
    title: Bilingual
    alt: Text
    caption: Text | None


@dataclass(frozen=True)
class Exercise:
    """A question a student works out, and its computed answer."""

    id: str
    question: Text
    answer: Text


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
    exercises: tuple[Exercise, ...] = ()  # the page's closing questions ([exercises.<id>])

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
        for e in self.exercises:
            yield f"exercises.{e.id}.question", e.question
            yield f"exercises.{e.id}.answer", e.answer


def load_card_text(card: int | str, folder: Path | None = None) -> CardText:
    """Read and validate a card file; errors name the file, the key and the line."""
    folder = folder or data_dir("cards")
    path = folder / spec(card).text_file
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
    if not SLUG.match(slug):
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
        exercises=_exercises(data.get("exercises"), src),
    )


def _exercises(raw: Any, src: TextSource) -> tuple[Exercise, ...]:
    """The [exercises.<id>] tables of a card file, in file order: none, or 2 or 3."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not 2 <= len(raw) <= 3:
        raise CardTextError(f"{src.at('exercises')}: a card has 2 or 3 [exercises.<id>] tables")
    out = []
    for eid, e in raw.items():
        key = f"exercises.{eid}"
        if not SLUG.match(eid) or not isinstance(e, dict):
            raise CardTextError(
                f"{src.at(key)}: '{key}' must be a table named in lowercase words and '-'"
            )
        extra = sorted(set(e) - {"question", "answer"})
        if extra:
            raise CardTextError(
                f"{src.at(key)}: '{key}' has only a question and an answer, not {extra[0]!r}"
            )
        out.append(
            Exercise(
                id=eid,
                question=parse_text(e.get("question"), src, f"{key}.question"),
                answer=parse_text(e.get("answer"), src, f"{key}.answer"),
            )
        )
    return tuple(out)


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
        if not SLUG.match(fid):
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
    exercises: tuple[tuple[str, str, str], ...] = ()  # (exercise id, question, answer)


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
        exercises=tuple(
            (
                e.id,
                f(e.question, f"exercises.{e.id}.question"),
                f(e.answer, f"exercises.{e.id}.answer"),
            )
            for e in text.exercises
        ),
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
