"""The gallery says what to project and what to hand out (issue 36, point 14): the lecture deck
(one panel per slide, figure text >= 28 px: tests/test_deck.py measures both) and the cards, in
every language of the build; it links the deck only where `posecards deck` wrote it beside the
build, and otherwise names the command that builds it, so no link points at a missing file."""

from __future__ import annotations

import re
from pathlib import Path

from posecards.config import BuildConfig, DeckConfig, Look
from posecards.render.build import DECK_FOLDER, IndexJob, plan_build
from posecards.render.outputs import INDEX
from posecards.render.pages import index_html, teaching
from posecards.render.ui import ui_strings


def index_job(out: Path, langs: tuple[str, ...] = ("en", "zh")) -> IndexJob:
    plan = plan_build(BuildConfig(out=out, langs=langs, cards=(1, 2)))
    job = next(u.job for u in plan.units if u.name == INDEX)
    assert isinstance(job, IndexJob)
    return job


def index_of(job: IndexJob) -> str:
    return index_html([], Look(), "", explore=None, teach=teaching(job)).decode("utf-8")


def deck_links(html: str) -> list[str]:
    return re.findall(r'href="([^"]*deck[^"]*)"', html)


def test_the_deck_is_where_posecards_deck_writes_it_by_default() -> None:
    assert (BuildConfig().out / DECK_FOLDER) == DeckConfig().out


def test_no_deck_no_link_but_the_command(tmp_path: Path) -> None:
    job = index_job(tmp_path / "out")
    assert job.decks == ()
    html = index_of(job)
    assert deck_links(html) == []
    assert html.count(f"<code>posecards deck --out DIR/{DECK_FOLDER}</code>") == 2  # en, zh
    assert html.count("<code>posecards build --out DIR</code>") == 2
    for lang in ("en", "zh"):
        ui = ui_strings(lang)
        for key in ("teach_title", "teach_project", "teach_project_what", "teach_hand_out"):
            assert ui[key] in html, (lang, key)
    assert "28 px" in ui_strings("en")["teach_project_what"]
    assert "28 px" in ui_strings("zh")["teach_project_what"]


def test_a_built_deck_is_linked_and_every_link_opens_a_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for name in ("deck.pdf", "deck.pptx"):
        f = out / DECK_FOLDER / "en" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"%PDF")
    job = index_job(out)
    assert job.decks == ("en/deck.pdf", "en/deck.pptx")
    html = index_of(job)
    links = deck_links(html)
    assert links == [f"{DECK_FOLDER}/en/deck.pdf", f"{DECK_FOLDER}/en/deck.pptx"]
    assert all((out / href).is_file() for href in links)  # index.html sits in out/
    # Chinese was not built: its box still says how
    assert html.count(f"<code>posecards deck --out DIR/{DECK_FOLDER}</code>") == 1
    # a build of English alone does not look for the Chinese deck
    assert index_job(out, ("en",)).decks == ("en/deck.pdf", "en/deck.pptx")
