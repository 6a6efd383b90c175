"""The registry of cards (posecards/cards.py): every card declared once, looked up by id, and
placeholders declared once (content.Placeholders)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from posecards.cards import CARDS, INSPECTION_CARDS, DataFrom, spec
from posecards.config import CARD_IDS, DECK_CARD_IDS, Look, PEParams
from posecards.content import Placeholders, card_inputs, declare
from posecards.experiment.files import measurements_path
from posecards.paths import data_dir

ROOT = Path(__file__).resolve().parent.parent


def test_the_ids_come_from_the_registry() -> None:
    assert CARD_IDS == tuple(c.id for c in CARDS) == (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    assert DECK_CARD_IDS == tuple(c.id for c in CARDS if c.deck)
    assert [c.id for c in INSPECTION_CARDS] == [
        "inspect-learned",
        "inspect-rope",
        "inspect-layers",
        "inspect-alibi",
        "inspect-weights",
        "inspect-activations",
    ]


@pytest.mark.parametrize("card", [c.id for c in (*CARDS, *INSPECTION_CARDS)])
def test_every_declared_card_has_its_text_content_and_figures(card: int | str) -> None:
    s = spec(card)
    assert (data_dir("cards") / s.text_file).is_file()
    assert callable(getattr(importlib.import_module(s.content_module), "compute", None)) or (
        isinstance(card, str)  # the inspection cards' content reads a model: content/inspect.py
        and s.content_module == "posecards.content.inspect"
    )
    assert isinstance(importlib.import_module(s.figures_module).DRAW, dict)


def test_an_unknown_card_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown card 99; choose one of: 1, 2, .*inspect-rope"):
        spec(99)
    with pytest.raises(ValueError, match="unknown card '3'"):
        spec("3")  # ids are typed: card 3 is the int


def test_a_placeholder_declared_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="placeholder 'base' declared twice"):
        declare({"d_model": 512, "base": 10000.0}, {"base": 500000.0})
    p = Placeholders({"x": 1})
    with pytest.raises(ValueError, match="'x' declared twice"):
        p["x"] = 2
    with pytest.raises(ValueError, match="'x' declared twice"):
        p.update(y=3, x=2)
    with pytest.raises(ValueError, match="'y' declared twice"):
        p |= {"y": 4}
    assert p == {"x": 1, "y": 3}  # update set y before it met x
    assert declare({"a": 1}, {"b": 2}) == {"a": 1, "b": 2}


def test_what_a_card_is_computed_from_decides_its_inputs_and_footer() -> None:
    from posecards.content.configs import config_files
    from posecards.render.footers import FOOTERS, footer_text

    assert set(FOOTERS) == set(DataFrom)
    assert card_inputs(1) == ()
    assert card_inputs(5)[0] == measurements_path()
    assert card_inputs(6) == config_files() and len(config_files()) == 9
    look = Look()
    for lang in ("en", "zh"):
        build = footer_text(PEParams(), look, lang)
        assert footer_text(PEParams(), look, lang, 1) == build
        assert "d_model = 512" in build
        assert measurements_path().name in footer_text(PEParams(), look, lang, 5)
        assert "d_model" not in footer_text(PEParams(), look, lang, 6)
        assert "smollm3" in footer_text(PEParams(), look, lang, 6).lower()


def test_render_and_content_never_branch_on_a_card_number() -> None:
    branch = re.compile(r"\bcard\s*(==|!=|in\s*\()")
    for package in ("render", "content"):
        for path in (ROOT / "posecards" / package).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                assert not branch.search(line), f"{path.name}:{number}: {line.strip()}"
