"""The cards posecards makes, one declaration each: the one registry the build, the deck, the
pages, `posecards list` and the CLI read (nothing else names a card by its number).

A card is four things, each in one place: its text (``cards/<id>.toml``: slug, panels and figure
ids, placeholders with their formatting filters, labels), its content module (what it computes:
the data of each figure id and the value of each placeholder, each name declared once), its
figures module (one draw function per figure id) and its line below (what the machinery must
know without computing anything). Adding card 8 is ``cards/card8.toml``,
``posecards/content/card8.py``, ``posecards/figures/card8.py`` and ``CardSpec(8)`` in CARDS (plus
its tests). Imports nothing: the CLI's option parsing and a no-op build read it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class DataFrom(enum.Enum):
    """What a card's numbers are computed from: what its footer states and which data files (besides
    its text) its recipe hashes."""

    PARAMETERS = "parameters"  # d_model, base and positions (--d-model, --base, --positions)
    MEASUREMENTS = "measurements"  # `posecards measure`'s results and the quoted published numbers
    CONFIGS = "configs"  # the published config.json files of posecards/data/configs/
    # the measurements and the census of transformers' default and the published configs
    # (posecards/data/census.json)
    CENSUS = "census"


@dataclass(frozen=True)
class CardSpec:
    """One card: its id (1..N, or "inspect-<kind>" for an inspection card) and what the machinery
    needs to know of it beyond its text, content and figures."""

    id: int | str
    data: DataFrom = DataFrom.PARAMETERS
    deck: bool = True  # the lecture deck has slides for it (cards/deck.toml)
    explore: bool = False  # the explorer page uses it (it reads cards/explore.toml only)
    # its costliest computation is cached on disk and shared by its languages (card 1's UMAP
    # layout, posecards.cache.memo_array): builds start its other languages after the first
    shared_across_languages: bool = False
    first_time: str = ""  # what makes it slow the first time it is rendered (said before)
    # the heavy libraries its content imports lazily (card 1's attention demo: torch, ~1.2 CPU s
    # an import): the fork server of a plan that draws it imports them once for all its units
    imports: tuple[str, ...] = ()

    @property
    def text_file(self) -> str:
        """``card3.toml``; ``inspect-rope.toml``."""
        return f"card{self.id}.toml" if isinstance(self.id, int) else f"{self.id}.toml"

    @property
    def module(self) -> str:
        """The name of its content and figures modules: ``card3``; ``inspect_rope`` (figures)."""
        return f"card{self.id}" if isinstance(self.id, int) else self.id.replace("-", "_")

    @property
    def content_module(self) -> str:
        # the inspection cards share one content module (it reads the model once for any kind)
        return f"posecards.content.{'inspect' if isinstance(self.id, str) else self.module}"

    @property
    def figures_module(self) -> str:
        return f"posecards.figures.{self.module}"


CARDS: tuple[CardSpec, ...] = (
    CardSpec(
        1,
        shared_across_languages=True,
        first_time="computes a UMAP layout: 20-35 s the first time on a machine (numba compiles"
        " its kernels once), 2-3 s after that",
        imports=("torch",),
    ),
    CardSpec(2),
    CardSpec(3),
    CardSpec(4),
    CardSpec(5, data=DataFrom.MEASUREMENTS),
    CardSpec(6, data=DataFrom.CONFIGS),
    CardSpec(7),
    CardSpec(8),
    CardSpec(9),
    CardSpec(10, data=DataFrom.CENSUS),
)

# `posecards inspect`'s cards, one per position scheme a model can have (model/positions.py)
INSPECTION_CARDS: tuple[CardSpec, ...] = tuple(
    CardSpec(f"inspect-{kind}", deck=False)
    for kind in ("learned", "rope", "layers", "alibi", "weights", "activations")
)

CARD_IDS: tuple[int, ...] = tuple(int(c.id) for c in CARDS)
# Cards the lecture deck has slides and speaker notes for (its default --cards).
DECK_CARD_IDS: tuple[int, ...] = tuple(int(c.id) for c in CARDS if c.deck)

_BY_ID: dict[int | str, CardSpec] = {c.id: c for c in (*CARDS, *INSPECTION_CARDS)}
if len(_BY_ID) != len(CARDS) + len(INSPECTION_CARDS):
    raise ValueError("two cards declared with the same id")


def spec(card: int | str) -> CardSpec:
    """The declaration of ``card``; an unknown card is a ValueError naming the known ones."""
    found = _BY_ID.get(card)
    if found is None:
        known = ", ".join(str(c) for c in _BY_ID)
        raise ValueError(f"unknown card {card!r}; choose one of: {known}")
    return found
