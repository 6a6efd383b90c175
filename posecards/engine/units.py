"""A unit of work and a plan: what `build`, `deck` and `inspect` are made of.

A unit names the public files it makes (worked out from the options and the text alone, so
``--check`` needs no drawing), what it is made from (the texts it reads: its recipe, and the
units whose results it uses: ``needs``), and how to make it: ``render(job, ctx) -> Rendered``, a
module-level function, or a ``Deferred`` one that is imported where the unit runs. Units that draw run in a fresh process each (``spawn``), and so may
units that assemble other units' results (a deck's PPTX and PDF: ``needs_files``); the others
(a build's HTML pages and index) run in the calling process.
A new card or output kind is a new unit in a plan, not a change here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posecards.engine.inputs import LIBRARIES

Say = Callable[[str], None]


def quiet(_msg: str) -> None:
    """Progress that goes nowhere (the ``say`` of a unit in a fresh process)."""


@dataclass(frozen=True)
class Rendered:
    """What a unit made. ``files``: outputs, written into DIR and listed in the manifest;
    ``helpers``: inputs of later units only, never written (formula SVGs, a unit's PDF pages);
    ``meta``: JSON-able values later units read (computed numbers, slide notes)."""

    files: Mapping[str, bytes]
    helpers: Mapping[str, bytes] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What a unit's render function gets besides its job: the results of the units it
    ``needs`` (a unit in a fresh process gets only their ``meta``, unless it asks for their
    files: ``Unit.needs_files``), and progress."""

    needs: Mapping[str, Rendered] = field(default_factory=dict)
    say: Say = quiet


RenderFn = Callable[[Any, Context], Rendered]


@dataclass(frozen=True)
class Deferred:
    """A render function named by its module and name and imported only when a unit runs: a
    plan refers to the code that draws without importing it, so planning (``--help``,
    ``--check``, a no-op rebuild) loads no matplotlib (a contract in pyproject.toml)."""

    module: str  # "posecards.render.card_unit"
    name: str  # "render_card"

    def __call__(self, job: Any, ctx: Context) -> Rendered:
        fn: RenderFn = getattr(importlib.import_module(self.module), self.name)
        return fn(job, ctx)


def render_name(render: RenderFn) -> str:
    """``posecards.render.card_unit.render_card``: what a unit's cache key names it by."""
    if isinstance(render, Deferred):
        return f"{render.module}.{render.name}"
    return f"{render.__module__}.{render.__qualname__}"


@dataclass(frozen=True)
class Unit:
    name: str  # "card 3 (en)": progress lines, the manifest's units, stale lines
    render: RenderFn  # module-level: a fresh process finds it by name
    job: Any  # frozen dataclass of plain values: everything render needs (part of the cache key)
    files: tuple[str, ...]  # the public files it makes, relative to DIR
    texts: tuple[str, ...] = ()  # the text files it reads ("cards/card3.toml"): its recipe
    needs: tuple[str, ...] = ()  # units whose results it uses (earlier in the plan)
    # units it starts after, where the plan has them (order only: not part of its recipe or
    # cache key; card 1 in Chinese after English, to find the cached UMAP layout)
    after: tuple[str, ...] = ()
    spawn: bool = True  # run in a fresh process (what draws); False: in the calling process
    # in a fresh process, get the files and helpers of the units it needs, not only their meta
    # (assembling them there: a deck's PPTX and PDF, beside the drawing processes)
    needs_files: bool = False
    cache: bool = True  # keep its result in the unit cache
    note: str = ""  # said once before it is rendered (what makes it slow)
    # modules its process imports (beyond the plan's ``preload``): the fork server of a run that
    # draws it imports them once for every unit it starts (not part of its recipe or cache key)
    preload: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """Everything a command makes, before anything is made."""

    made_by: str  # "posecards build"
    out: Path
    options: Mapping[str, Any]  # recorded in the manifest (one schema: see engine.manifest)
    units: tuple[Unit, ...]  # in the order they start; a unit after the ones it needs
    sources: Mapping[str, tuple[Path, ...]]  # text name -> the files its digest is made of
    what: str = "card"  # progress: "3 of 10 card renders up to date in the cache"
    libraries: tuple[str, ...] = LIBRARIES
    extra: Mapping[str, Any] = field(default_factory=dict)  # more manifest keys (the model)
    # modules the drawing processes' fork server imports once (what every unit would load)
    preload: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        """Every public file of the plan, sorted (the manifest besides)."""
        return tuple(sorted({f for u in self.units for f in u.files}))

    def unit(self, name: str) -> Unit:
        return next(u for u in self.units if u.name == name)
