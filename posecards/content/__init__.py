"""What each card shows, as numbers: calls the math layer, returns data for figures and text.

``compute_card(n, params)`` returns a CardContent: for each figure id the numbers behind the
figure (float64 arrays and scalars: what ``posecards data ID`` exports), the values of the
placeholders used in ``cards/cardN.toml``, and which variant of each text field that has
variants applies (the choice between phrasings is made here, from the numbers; the card file
holds only plain text). No plotting, no templating here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posecards.cards import CARD_IDS, DataFrom, spec
from posecards.config import PEParams
from posecards.content.census import CENSUS_FILE
from posecards.content.configs import config_files
from posecards.experiment.files import QUOTED, measurements_path

Scalar = float | int | str | bool
# a placeholder's value: a number, a word, a flag, or a list of words (for the name filter)
Value = Scalar | tuple[str, ...]

# The key under which ``CardContent.numbers`` also carries the variant choices, so that every
# channel that hands a card's numbers on (build cache, HTML pages, deck) hands on its choices.
# Not a valid placeholder name.
VARIANTS = "@variants"
# Prefix of a choice for a field of cards/deck.toml (the card's slides): "deck.toml:panels.<id>.pitfall"
DECK_FIELD = "deck.toml:"


class Placeholders(dict[str, Any]):
    """A card's placeholder values, each name declared once: setting a name that is already
    there is a ValueError (two parts of a card computing the same name would otherwise
    silently overwrite each other). ``declare`` merges parts."""

    def __setitem__(self, name: str, value: Any) -> None:
        if name in self:
            raise ValueError(f"placeholder {name!r} declared twice")
        super().__setitem__(name, value)

    def update(self, *parts: Any, **values: Any) -> None:
        for part in (*parts, values):
            for name, value in dict(part).items():
                self[name] = value

    def __ior__(self, other: Any) -> Placeholders:  # type: ignore[override,misc]
        self.update(other)
        return self


def declare(*parts: Mapping[str, Any]) -> Placeholders:
    """The placeholders of several parts of a card, in order; a name in two parts is a
    ValueError naming it."""
    out = Placeholders()
    out.update(*parts)
    return out


@dataclass(frozen=True)
class CardContent:
    card: int | str
    # figure id -> the data the figure draws (np.float64 arrays, scalars, short lists of str):
    # a frozen dataclass of the figure's own (content/figdata/cardN.py, content/card3.py), or a
    # mapping (the inspection cards)
    figures: Mapping[str, Any]
    # placeholder name -> value, used by the card text ({{ name | num(3) }}); also carries
    # ``variants`` under the key VARIANTS when there are any
    numbers: Mapping[str, Any]
    # field path -> variant name, for every text field with variants: "takeaways.alibi" -> "held"
    # in the card's own file, DECK_FIELD + "panels.c5-rope-scaling.pitfall" for its deck slides
    variants: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if VARIANTS in self.numbers:
            raise ValueError(f"{VARIANTS!r} is reserved for the variant choices")
        if self.variants:
            carried = {**self.numbers, VARIANTS: dict(self.variants)}
            object.__setattr__(self, "numbers", carried)

    @property
    def placeholders(self) -> Mapping[str, Value]:
        """The placeholder values alone (``numbers`` without the carried choices)."""
        return {k: v for k, v in self.numbers.items() if k != VARIANTS}


def compute_card(card: int, params: PEParams) -> CardContent:
    """Compute everything card ``card`` shows, for the given parameters."""
    if card not in CARD_IDS:
        raise ValueError(f"unknown card {card}; choose one of: {', '.join(map(str, CARD_IDS))}")
    module = importlib.import_module(spec(card).content_module)
    content: CardContent = module.compute(params)
    return content


def title_numbers(card: int, params: PEParams) -> Mapping[str, Any]:
    """The numbers a card's titles use (for `posecards list`): the module's cheap
    ``title_numbers`` if it has one, else everything (``compute_card``)."""
    module = importlib.import_module(spec(card).content_module)
    if hasattr(module, "title_numbers"):
        numbers: Mapping[str, Any] = module.title_numbers(params)
        return numbers
    return compute_card(card, params).numbers


def _measurements() -> tuple[Path, ...]:
    return (measurements_path(), QUOTED)


def _census() -> tuple[Path, ...]:
    return (*_measurements(), CENSUS_FILE)


# what each kind of card data reads besides the card text (the build cache hashes them)
INPUTS: dict[DataFrom, Callable[[], tuple[Path, ...]]] = {
    DataFrom.PARAMETERS: tuple,
    DataFrom.MEASUREMENTS: _measurements,
    DataFrom.CONFIGS: config_files,
    DataFrom.CENSUS: _census,
}


def card_inputs(card: int | str) -> tuple[Path, ...]:
    """Data files a card reads besides its text (the build cache hashes them)."""
    return INPUTS[spec(card).data]()
