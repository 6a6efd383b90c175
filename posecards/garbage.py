"""When Python's cyclic garbage collector runs, for the blocks where that matters.

Drawing (the cards', decks' and inspection cards' units): no automatic collection, only
``collect_garbage()`` at fixed points. matplotlib caches text metrics in weakly keyed caches, and
a collection at a load-dependent moment changes which measurements are cached, which moves layout
by an ulp; collecting after each figure keeps bytes identical.

Reading a model through transformers (the probe): no automatic collection at all. Building a
model (even on meta) and running it allocates some hundred thousand small objects: every 700 of
them the collector ran, and every hundredth of those runs scanned every object of the process
again (transformers' modules, classes and functions, some 700,000 once the zoo's modeling files
are imported): a fifth of the whole zoo's reading. What the block leaves in cycles is collected
after it, as anything else.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collections_at_fixed_points() -> Iterator[None]:
    """No automatic garbage collection inside the block, only ``collect_garbage()`` where the
    drawing code calls it. What exists when the block starts (modules, fonts, the computed
    content) is frozen, so that no collection scans it again (gc.freeze); it is thawed when the
    block ends."""
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


def collect_garbage() -> None:
    """A collection at a fixed point (inside ``collections_at_fixed_points``); what is still
    alive afterwards is frozen too, so that the next one scans only what was made since (a card
    in one language: 8 collections of every object of the process took about 0.4 s)."""
    gc.collect()
    gc.freeze()


@contextmanager
def no_automatic_collection() -> Iterator[None]:
    """No automatic garbage collection inside the block; the caller's setting given back after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
