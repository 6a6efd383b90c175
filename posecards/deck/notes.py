"""The deck's text: ``cards/deck.toml`` (English and Chinese side by side).

Every slide has a ``title`` and speaker notes made of parts, each a table with ``en`` and ``zh``
(or, as in the card files, named variants each with ``en`` and ``zh``, of which the card's content
chooses one: ``CardContent.variants["deck.toml:panels.<figure-id>.<part>"]``):

    shows    what the slide shows          read     how to read it
    numbers  its numbers and their source  pitfall  the mistake it guards against
    ask      a question for the room

Panel slides (``[panels.<figure-id>]``) need all five parts; the other slides need ``shows``
and ``ask``. Numbers are the cards' ``{{ placeholders }}``, filled from the same computed
values as the cards (posecards.render.fill.fill), never retyped.

Schema:
    [deck]                     title, subtitle and notes of the title slide
    [cards.<N>]                the overview slide of card N (the card picture)
    [panels.<figure-id>]       one slide per panel, redrawn at slide scale
    [animations.<name>]        card = N (shown after card N's panels); title and notes
    [closing]                  title, notes, and [closing.items.<N>] one line per card
    [sources]                  title and notes of the last slides: the cards' [sources.<key>]
    [names.<set>]              what ``{{ value | name('<set>') }}`` prints for each value

The subtitle and the closing items have one phrasing each (no variants); the title and closing
slides, filled from the parameters alone, have no variants either.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from posecards.content import DECK_FIELD
from posecards.paths import data_dir
from posecards.render.fields import Bilingual, CardTextError, Text, TextSource, chosen_variants
from posecards.render.fill import fill
from posecards.render.parse import parse_bilingual, parse_names, parse_text
from posecards.render.toml_lines import KeyLines
from posecards.render.ui import ui_strings

PARTS = ("shows", "read", "numbers", "pitfall", "ask")
REQUIRED_PANEL = PARTS
REQUIRED_OTHER = ("shows", "ask")
ANIMATIONS = ("clocks", "rope", "alibi")


@dataclass(frozen=True)
class SlideText:
    key: str  # where it lives in deck.toml, e.g. "panels.c3-rotation"
    title: Text
    parts: tuple[tuple[str, Text], ...]  # (part name, text) in PARTS order
    source: TextSource  # deck.toml's lines and [names], for fill_slide and its messages
    card: int | None = None  # animations: the card they follow


@dataclass(frozen=True)
class DeckText:
    path: Path
    title: SlideText  # [deck]: title = deck title; subtitle below
    subtitle: Bilingual
    cards: Mapping[int, SlideText]
    panels: Mapping[str, SlideText]
    animations: Mapping[str, SlideText]
    closing: SlideText
    closing_items: Mapping[int, Bilingual]
    sources: SlideText  # the last slides list the cards' sources (posecards.deck.plan)


def _squash(s: str, lang: str) -> str:
    """Notes may run over several lines: English joins them with spaces, Chinese without."""
    return " ".join(s.split()) if lang == "en" else "".join(s.split("\n")).strip()


def _bi(table: Any, src: TextSource, key: str) -> Bilingual:
    return parse_bilingual(table, src, key, _squash)


def _text(table: Any, src: TextSource, key: str) -> Text:
    return parse_text(table, src, key, squash=_squash)


def _slide(table: Any, src: TextSource, key: str, required: tuple[str, ...]) -> SlideText:
    if not isinstance(table, dict):
        raise CardTextError(f"{src.file}: missing [{key}]")
    for part in required:
        if part not in table:
            raise CardTextError(f"{src.at(key)}: [{key}] has no '{part}' notes")
    unknown = set(table) - set(PARTS) - {"title", "subtitle", "card"}
    if unknown:
        raise CardTextError(
            f"{src.at(key)}: [{key}] has unknown entries: {', '.join(sorted(unknown))}"
        )
    card = table.get("card")
    return SlideText(
        key=key,
        title=_text(table.get("title"), src, f"{key}.title"),
        parts=tuple((p, _text(table[p], src, f"{key}.{p}")) for p in PARTS if p in table),
        source=src,
        card=int(card) if isinstance(card, int) else None,
    )


def _toml_data(path: Path, source: str) -> dict[str, Any]:
    """The TOML data of the deck text. Kept as JSON beside the unit cache, named by the sha256
    of the text: the deck text is the largest file a build plans from (100 kB: tomllib, pure
    Python, takes longer than the rest of a no-op deck build's planning), and JSON reads back
    the same values (str, int, float, bool, lists and tables) ten times faster. Any other
    value, or no cache, and it is parsed every time; ``--check`` never writes the copy."""
    import hashlib
    import json
    import sys

    from posecards.cache import cache_dir, memos_writable, write_atomic

    base = cache_dir()
    sha = hashlib.sha256(f"{sys.version_info[:2]}\n{source}".encode()).hexdigest()
    memo = base / "texts" / f"{sha}.json" if base is not None else None
    if memo is not None and memo.is_file():
        # first line: the sha256 of the rest, as the unit cache checks its files: a copy that
        # is not what was written is parsed again (and replaced), never trusted
        try:
            digest, _, blob = memo.read_bytes().partition(b"\n")
            if digest.decode() == hashlib.sha256(blob).hexdigest():
                kept: dict[str, Any] = json.loads(blob)
                return kept
        except (OSError, ValueError):
            pass
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise CardTextError(f"{path.name}: syntax error: {exc}") from None
    if memo is not None and memos_writable():  # --check writes nothing
        try:
            blob = json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
            if json.loads(blob) == data:  # only what JSON gives back as it was
                memo.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(memo, hashlib.sha256(blob).hexdigest().encode() + b"\n" + blob)
        except (OSError, TypeError, ValueError):
            pass  # a date, NaN or an unwritable cache: parsed every time
    return data


def load_deck_text(folder: Path | None = None) -> DeckText:
    """Read and validate ``cards/deck.toml``; errors name the file, the key and the line. The
    file is read on every call (the folder may be another one, ``POSECARDS_CARDS_DIR``, or the
    text edited); what it says is parsed once per path and text."""
    path = (folder or data_dir("cards")) / "deck.toml"
    if not path.is_file():
        raise CardTextError(f"deck text {path} not found")
    return _deck_text(path, path.read_text(encoding="utf-8"))


@cache
def _deck_text(path: Path, source: str) -> DeckText:
    data = _toml_data(path, source)
    src = parse_names(data.get("names"), TextSource(path.name, KeyLines(source)), _squash)
    deck = data.get("deck")
    title = _slide(deck, src, "deck", REQUIRED_OTHER)
    subtitle = _bi(deck.get("subtitle") if isinstance(deck, dict) else None, src, "deck.subtitle")
    cards = {
        int(k): _slide(v, src, f"cards.{k}", REQUIRED_OTHER)
        for k, v in data.get("cards", {}).items()
    }
    panels = {
        k: _slide(v, src, f"panels.{k}", REQUIRED_PANEL) for k, v in data.get("panels", {}).items()
    }
    anims = {
        k: _slide(v, src, f"animations.{k}", REQUIRED_OTHER)
        for k, v in data.get("animations", {}).items()
    }
    for name in ANIMATIONS:
        if name not in anims or anims[name].card is None:
            raise CardTextError(f"{path.name}: [animations.{name}] with 'card = N' is missing")
    closing_raw = data.get("closing")
    closing = _slide(
        {k: v for k, v in closing_raw.items() if k != "items"}
        if isinstance(closing_raw, dict)
        else None,
        src,
        "closing",
        REQUIRED_OTHER,
    )
    items_raw = closing_raw.get("items", {}) if isinstance(closing_raw, dict) else {}
    items = {int(k): _bi(v, src, f"closing.items.{k}") for k, v in items_raw.items()}
    sources = _slide(data.get("sources"), src, "sources", REQUIRED_OTHER)
    return DeckText(path, title, subtitle, cards, panels, anims, closing, items, sources)


@dataclass(frozen=True)
class FilledSlideText:
    title: str
    notes: str  # the speaker notes, paragraphs separated by blank lines


def fill_slide(
    text: SlideText, lang: str, values: Mapping[str, Any], file: str = "deck.toml"
) -> FilledSlideText:
    """Title and notes of one slide in ``lang``: for each part the phrasing the card's content
    chose (carried in ``values``, see ``CardContent``), placeholders filled from ``values``."""
    src = text.source
    chosen = chosen_variants(values, DECK_FIELD)
    names = src.names_in(lang)

    def f(t: Text, part: str) -> str:
        at, b = src.pick(t, f"{text.key}.{part}", chosen)
        return fill(b.get(lang), values, f"{src.at(f'{at}.{lang}')}: '{at}' ({lang})", names)

    paras = []
    for part, b in text.parts:
        body = f(b, part)
        # "ask" is the question for the room, opened as read aloud (templates/ui.toml)
        paras.append(ui_strings(lang)["ask_lead"] + body if part == "ask" else body)
    return FilledSlideText(title=f(text.title, "title"), notes="\n\n".join(paras))
