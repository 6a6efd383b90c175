"""The filled text of every card, card page, slide note and example inspection card is the
reviewed text in tests/snapshots/ (tests/text_snapshots.py; `make snapshots` rewrites it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from text_snapshots import card_snapshots, differences, kept, snapshots, without_version

from posecards.paths import data_dir


def test_the_filled_text_is_the_reviewed_snapshot() -> None:
    found = differences(snapshots(), kept())
    assert not found, (
        "the filled text differs from the reviewed snapshot; if the change is meant, run "
        "`make snapshots` and review `git diff tests/snapshots/`:\n" + found
    )


def test_a_changed_word_shows_in_the_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Card 3's English title with one word added (an edited copy of cards/): the comparison
    names the file and shows the line as it was and as it is."""
    import tomllib

    cards = tmp_path / "cards"
    shutil.copytree(data_dir("cards"), cards)
    source = cards / "card3.toml"
    text = source.read_text(encoding="utf-8")
    title = tomllib.loads(text)["title"]["en"]
    source.write_text(text.replace(f'en = "{title}"', f'en = "Changed {title}"', 1))
    monkeypatch.setenv("POSECARDS_CARDS_DIR", str(cards))
    reviewed = {k: v for k, v in kept().items() if k.startswith("card3.")}
    now = {k: without_version(v) for k, v in card_snapshots((3,)).items()}
    lines = differences(now, reviewed).splitlines()
    assert lines[0] == "changed: tests/snapshots/card3.en.txt"
    assert f"-{title}" in lines and f"+Changed {title}" in lines
    assert not any("card3.zh.txt" in line for line in lines)  # the Chinese title is its own
