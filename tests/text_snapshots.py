"""The filled text of every card, card page and slide note, and of the inspection card of every
example model (docs/examples), as reviewed text files in tests/snapshots/: a changed sentence or
number shows in the diff. Computed without drawing: the same content, filling and deck-text
functions the build and the deck use (posecards.render.text.fill_card,
posecards.deck.slide_text.card_slide_text / frame_slide_words), with the default parameters and the
light theme.

    make snapshots          # rewrite tests/snapshots/ from the code, then review `git diff`

tests/test_snapshots.py fails, with the diff, when the code's text differs from the files.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
EXAMPLES = ROOT / "docs" / "examples"


def _block(key: str, text: str) -> str:
    return f"## {key}\n{text}\n"


def _filled_card(filled: Any, footer: str) -> Iterator[str]:
    """Every text of a filled card and of its pages, one block each, in reading order."""
    yield _block("title", filled.title)
    yield _block("thesis", filled.thesis)
    for fid, title, alt, caption in filled.panels:
        yield _block(f"panel {fid}: title", title)
        yield _block(f"panel {fid}: alt", alt)
        if caption:
            yield _block(f"panel {fid}: caption", caption)
    yield _block("formula (TeX)", filled.formula_tex)
    yield _block("formula note", filled.formula_note)
    for key, s in filled.takeaways:
        yield _block(f"takeaway {key}", s)
    for key, s in filled.pitfalls:
        yield _block(f"pitfall {key}", s)
    for fid, title, alt, caption in filled.figures:
        yield _block(f"figure page {fid}: title", title)
        yield _block(f"figure page {fid}: alt", alt)
        if caption:
            yield _block(f"figure page {fid}: caption", caption)
    for i, s in enumerate(filled.sources, 1):
        yield _block(f"source {i}", s)
    for key, question, answer in filled.exercises:
        yield _block(f"exercise {key}: question", question)
        yield _block(f"exercise {key}: answer", answer)
    yield _block("footer", footer)


def card_snapshots(cards: tuple[int, ...] | None = None) -> dict[str, str]:
    """cardN.<lang>.txt: card N and its pages (`posecards build` with the defaults), for
    ``cards`` (default: every card)."""
    from posecards.config import CARD_IDS, LANGS, Look, PEParams
    from posecards.content import compute_card
    from posecards.render.footers import footer_text
    from posecards.render.text import fill_card, load_card_text

    params, look = PEParams(), Look()
    out = {}
    for card in CARD_IDS if cards is None else cards:
        text = load_card_text(card)
        numbers = compute_card(card, params).numbers
        for lang in LANGS:
            head = f"# card {card} ({lang}): cards/card{card}.toml, default parameters\n"
            footer = footer_text(params, look, lang, card)
            body = "\n".join(_filled_card(fill_card(text, lang, numbers), footer))
            out[f"card{card}.{lang}.txt"] = head + "\n" + body
    return out


def deck_snapshots() -> dict[str, str]:
    """deck.<lang>.txt: every slide's title, speaker notes and listed items (`posecards deck`
    with the defaults: what its notes.json holds)."""
    from posecards.config import DECK_CARD_IDS, LANGS, PEParams
    from posecards.content import compute_card
    from posecards.deck.notes import fill_slide, load_deck_text
    from posecards.deck.plan import FRAME_KINDS, plan_deck
    from posecards.deck.slide_text import card_slide_text, frame_slide_words, frame_values
    from posecards.engine.unitcache import plain

    params = PEParams()
    deck = load_deck_text()
    cards = tuple(DECK_CARD_IDS)
    numbers = {c: plain(compute_card(c, params).numbers) for c in cards}
    values = frame_values(params, len(cards))
    out = {}
    for lang in LANGS:
        blocks = [f"# the deck ({lang}): cards/deck.toml, default parameters\n"]
        for s in plan_deck(cards):
            extra: dict[str, Any] = {}
            if s.kind in FRAME_KINDS:
                filled, extra = frame_slide_words(s, deck, lang, values, numbers)
            else:
                assert s.card is not None
                slide_text, slide_values = card_slide_text(s, deck, numbers[s.card], params)
                filled = fill_slide(slide_text, lang, slide_values)
            where = f"slide {s.stem} ({s.kind})"
            blocks.append(_block(f"{where}: title", filled.title))
            if "subtitle" in extra:
                blocks.append(_block(f"{where}: subtitle", extra["subtitle"]))
            for i, item in enumerate(extra.get("items", []), 1):
                blocks.append(_block(f"{where}: item {i}", item))
            blocks.append(_block(f"{where}: notes", filled.notes))
        out[f"deck.{lang}.txt"] = "\n".join(blocks)
    return out


def inspect_snapshots() -> dict[str, str]:
    """inspect-<model>.<lang>.txt: the inspection card of every example model."""
    from posecards.config import LANGS, Look
    from posecards.content.inspect import compute_inspection
    from posecards.model.checkpoint import open_checkpoint
    from posecards.model.names import model_slug
    from posecards.model.positions import find_positions
    from posecards.render.footers import inspect_footer
    from posecards.render.text import fill_card, load_card_text

    out = {}
    for folder in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        ckpt = open_checkpoint(folder)
        found = find_positions(ckpt)
        content = compute_inspection(ckpt, found)
        text = load_card_text(str(content.card))
        for lang in LANGS:
            head = (
                f"# posecards inspect docs/examples/{folder.name} ({lang}): "
                f"cards/{content.card}.toml\n"
            )
            footer = inspect_footer(ckpt, found, Look(), lang)
            body = "\n".join(_filled_card(fill_card(text, lang, content.numbers), footer))
            out[f"inspect-{model_slug(ckpt.name)}.{lang}.txt"] = head + "\n" + body
    return out


def snapshots() -> dict[str, str]:
    """File name in tests/snapshots/ -> its text, as the code fills it now (the footers'
    "posecards <version>": a new version is not a change of wording)."""
    every = {**card_snapshots(), **deck_snapshots(), **inspect_snapshots()}
    return {name: without_version(text) for name, text in every.items()}


def without_version(text: str) -> str:
    from posecards import __version__

    return text.replace(f"posecards {__version__}", "posecards <version>")


MAX_DIFF_LINES = 400


def differences(now: dict[str, str], kept: dict[str, str]) -> str:
    """What differs between the text the code fills (``now``) and the reviewed files
    (``kept``), file name -> text: one line per file, then a unified diff; "" if nothing."""
    problems = [f"new, not in tests/snapshots/: {name}" for name in sorted(set(now) - set(kept))]
    problems += [f"no longer made: tests/snapshots/{name}" for name in sorted(set(kept) - set(now))]
    diff: list[str] = []
    for name in sorted(set(now) & set(kept)):
        if now[name] != kept[name]:
            problems.append(f"changed: tests/snapshots/{name}")
            diff += difflib.unified_diff(
                kept[name].splitlines(),
                now[name].splitlines(),
                f"tests/snapshots/{name} (reviewed)",
                f"{name} (the code now)",
                lineterm="",
            )
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f"... {len(diff) - MAX_DIFF_LINES} more lines"]
    return "\n".join(problems + diff)


def kept() -> dict[str, str]:
    """The reviewed files: name -> text."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(SNAPSHOTS.glob("*.txt"))}


def write() -> list[str]:
    """Rewrite tests/snapshots/ (stale files removed); the names written or removed."""
    SNAPSHOTS.mkdir(exist_ok=True)
    now = snapshots()
    changed = []
    for old in sorted(SNAPSHOTS.glob("*.txt")):
        if old.name not in now:
            old.unlink()
            changed.append(f"removed {old.name}")
    for name, text in sorted(now.items()):
        path = SNAPSHOTS / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(f"wrote {name}")
    return changed


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    changes = write()
    print("\n".join(changes) if changes else "tests/snapshots/ is up to date")
    if changes:
        print("review the change: git diff tests/snapshots/")
