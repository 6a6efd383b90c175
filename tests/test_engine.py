"""The engine's order of work (posecards.engine.executor): a unit starts once the units it needs
are done and the units it starts ``after`` have finished, in plan order, when a process is
free; ``after`` orders, it is not part of what a unit is made from."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from posecards.config import CARD_IDS, BuildConfig, DeckConfig
from posecards.engine import executor
from posecards.engine.units import Context, Plan, Rendered, Unit


def _sleep(seconds: float, ctx: Context) -> Rendered:
    """A drawing unit that takes ``seconds`` and says when it started (CLOCK_MONOTONIC: one
    clock for every process of the machine)."""
    start = time.monotonic()
    time.sleep(seconds)
    return Rendered({}, {}, {"start": start})


def _plan(units: list[Unit]) -> Plan:
    return Plan(
        made_by="test",
        out=Path("unused"),
        options={},
        units=tuple(units),
        sources={},
        preload=("posecards.engine.units",),  # forked: quick to start
    )


def _unit(name: str, seconds: float, after: tuple[str, ...] = ()) -> Unit:
    return Unit(name=name, render=_sleep, job=seconds, files=(), after=after, cache=False)


def test_a_unit_starts_as_soon_as_its_after_units_finish() -> None:
    """Two processes; "e" starts after "a". The other process finishes "b" and "c" while "a"
    runs (1.0 s each against 1.6 s), so "d" and "f" are ready long before "e" is; "e" still
    starts first when "a" is done, because it comes first in the plan. (Queued in submission
    order, as before, "e" would start after "d" and "f".)"""
    units = [
        _unit("a", 1.6),
        _unit("e", 0.1, after=("a",)),
        *(_unit(n, 1.0) for n in "bcdf"),
    ]
    done: dict[str, Rendered] = {}
    runner = executor._Runner(
        _plan(units), dict.fromkeys(u.name for u in units), done, print, False, 2
    )
    runner.run(units)
    start = {n: r.meta["start"] for n, r in done.items()}
    assert start["e"] >= start["a"] + 1.6
    assert start["e"] < start["d"] < start["f"], start
    assert start["e"] > start["c"]  # "c" started while "a" ran: "after" holds back only "e"


def test_after_names_a_unit_not_in_the_plan_or_already_done() -> None:
    """--lang zh alone, or card 1 (en) from the cache: nothing to wait for."""
    units = [_unit("x", 0.0, after=("not planned",)), _unit("y", 0.0, after=("x",))]
    done: dict[str, Rendered] = {"x": Rendered({}, {}, {"start": 0.0})}
    runner = executor._Runner(
        _plan(units), dict.fromkeys(u.name for u in units), done, print, False, 2
    )
    runner.run([units[1]])
    assert set(done) == {"x", "y"}


def test_after_is_order_only_not_part_of_the_key() -> None:
    def keyed(after: tuple[str, ...]) -> Any:
        u = Unit(name="u", render=_sleep, job=0.0, files=("f",), after=after)
        return executor.unit_keys(_plan([u]))["u"]

    assert keyed(()) == keyed(("card 1 (en)",)) is not None


def test_card_1_in_chinese_starts_after_english_in_build_and_deck() -> None:
    from posecards.deck.build import plan_deck_build
    from posecards.render.build import plan_build

    build = plan_build(BuildConfig())
    assert build.unit("card 1 (zh)").after == ("card 1 (en)",)
    assert all(u.after == () for u in build.units if u.name != "card 1 (zh)")
    names = [u.name for u in build.units]
    # the plan's order: one language after the other, so that a language's pages are made
    # while the next one is drawn: they need its cards (and the first language's: formulas)
    assert names.index(f"card {CARD_IDS[-1]} (en)") < names.index("card 1 (zh)")
    assert set(build.unit("pages (en)").needs) == {f"card {c} (en)" for c in CARD_IDS}
    assert set(build.unit("pages (zh)").needs) == {
        f"card {c} ({lang})" for c in CARD_IDS for lang in ("en", "zh")
    }
    assert build.unit("index").needs == ("pages (en)", "pages (zh)")
    deck = plan_deck_build(DeckConfig())
    assert deck.unit("card 1 slides (zh)").after == ("card 1 slides (en)",)
    deck_names = [u.name for u in deck.units]
    last = f"card {CARD_IDS[-1]} slides (en)"
    assert deck_names.index(last) < deck_names.index("card 1 slides (zh)")
    assert sum(bool(u.after) for u in deck.units) == 1
    # Chinese alone: nothing to start after
    assert all(u.after == () for u in plan_build(BuildConfig(langs=("zh",))).units)


def _make(name: str, ctx: Context) -> Rendered:
    return Rendered({f"{name}.txt": name.encode()}, {f"{name}.helper": b"h"}, {"name": name})


def _seen(_job: str, ctx: Context) -> Rendered:
    """What a unit in a fresh process got of the units it needs."""
    return Rendered(
        {},
        {},
        {n: [sorted(r.files), sorted(r.helpers), dict(r.meta)] for n, r in ctx.needs.items()},
    )


def test_a_fresh_process_gets_the_files_it_needs_only_when_it_assembles_them() -> None:
    made = Unit(name="made", render=_make, job="made", files=("made.txt",), cache=False)
    units = [
        made,
        Unit(name="draws", render=_seen, job="", files=(), needs=("made",), cache=False),
        Unit(
            name="assembles",
            render=_seen,
            job="",
            files=(),
            needs=("made",),
            needs_files=True,
            cache=False,
        ),
    ]
    done: dict[str, Rendered] = {}
    runner = executor._Runner(
        _plan(units), dict.fromkeys(u.name for u in units), done, print, False, 2
    )
    runner.run(units)
    assert done["draws"].meta == {"made": [[], [], {"name": "made"}]}
    assert done["assembles"].meta == {"made": [["made.txt"], ["made.helper"], {"name": "made"}]}


def test_only_plans_that_write_pdfs_read_the_cjk_font_ahead() -> None:
    """Reading the CJK tables in the fork server pays off at the first PDF of each unit; a
    build without PDFs does not pay for it."""
    from posecards.deck.build import plan_deck_build
    from posecards.render.build import WARM_PDF, plan_build

    assert WARM_PDF not in plan_build(BuildConfig()).preload  # png, svg, html
    assert WARM_PDF in plan_build(BuildConfig(formats=("png", "pdf"))).preload
    assert WARM_PDF in plan_deck_build(DeckConfig(formats=("pptx",))).preload  # slides' pages
