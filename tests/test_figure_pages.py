"""Figures that are computed and drawn but not placed on their card (``[figures.<id>]`` in the
card text: c1-pairs, c2-curves, ...) are reachable like the card's panels: ``posecards list``
shows them under their card, ``figure`` and ``data`` work for them, ``build`` writes their PNG,
SVG and HTML page and links them from the card page, ``--check`` covers them, and each passes the
layout test on its own canvas in both languages and themes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run, run_here

from posecards.config import CARD_IDS, PEParams
from posecards.content import compute_card
from posecards.render.data import fields_of
from posecards.render.fields import CardTextError
from posecards.render.text import check_figure_ids, load_card_text

# the figures that left the cards for issue 11 (content/cardN.py: EXTRA_IDS and comments), and
# card 1's table and trajectory, which made room for where position enters and the road from
# counting to sinusoids (issue 23)
FIGURE_PAGE_ONLY = {
    1: ("c1-pe-table", "c1-trajectory", "c1-pairs"),
    2: ("c2-curves", "c2-float32", "c2-layouts"),
    3: ("c3-layouts",),
    4: ("c4-alibi-slopes", "c4-deberta", "c4-unseen-angles"),  # + why RoPE fails (issue 36)
    6: ("c6-models",),  # card 6's table of the nine configs it reads
    7: ("c7-channel-speeds",),  # card 7's channel speeds: the detail of its first panel
    8: ("c8-shift-xl",),  # Transformer-XL's own zero-pad shift beside XLNet's (c8-shift)
    9: ("c9-align-corners",),  # card 9: where each resized patch reads the table
}
PANELS_ON_CARD = {1: 4, 2: 4, 3: 4, 4: 4, 6: 6, 7: 6, 8: 6, 9: 6}
EXTRA = [(c, fid) for c, ids in FIGURE_PAGE_ONLY.items() for fid in ids]


@pytest.fixture(scope="module")
def contents() -> dict[int, object]:
    return {c: compute_card(c, PEParams()) for c in FIGURE_PAGE_ONLY}


def test_every_drawable_figure_has_a_text_entry() -> None:
    """Whatever a card computes and draws has a title and alt text: on the card or on a page."""
    from posecards.figures import draw_functions

    for c in CARD_IDS:
        text = load_card_text(c)
        assert set(draw_functions(c)) == set(text.figure_ids), c
        assert tuple(p.id for p in text.figures) == FIGURE_PAGE_ONLY.get(c, ()), c
    from posecards.content import card3, card4

    assert set(card3.EXTRA_IDS) | set(card4.EXTRA_IDS) <= {fid for _, fid in EXTRA}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figure_entries_fill_in_both_languages(lang: str, contents: dict) -> None:
    from posecards.render.text import fill_card

    for c in FIGURE_PAGE_ONLY:
        text = load_card_text(c)
        check_figure_ids(text, contents[c].figures)
        filled = fill_card(text, lang, contents[c].numbers)
        assert [f[0] for f in filled.figures] == list(FIGURE_PAGE_ONLY[c])
        for fid, title, alt, caption in filled.figures:
            assert title and len(alt) > 2 * len(title) and caption, fid
            assert "{{" not in alt + caption
        # the card itself is unchanged: its panels are still the ones it had
        assert len(filled.panels) == PANELS_ON_CARD[c]


def test_c1_pairs_text_quotes_the_computed_turns(contents: dict) -> None:
    """The numbers in the figure text are the content's, with the (N-1)/lambda rule."""
    from posecards.render.text import fill_card

    n = contents[1].numbers
    cap = dict((f[0], f[3]) for f in fill_card(load_card_text(1), "en", n).figures)["c1-pairs"]
    assert f"{n['fast_turns']:.2f} times" in cap
    assert n["fast_turns"] == pytest.approx(n["traj_last"] / n["lam_fast"])


def test_a_figure_id_in_both_tables_or_unknown_is_an_error(tmp_path: Path) -> None:
    source = (Path(load_card_text(3).path)).read_text(encoding="utf-8")
    twice = source + '\n[figures.c3-decay]\ntitle.en = "a"\ntitle.zh = "甲"\n'
    twice += 'alt.en = "b"\nalt.zh = "乙"\n'
    (tmp_path / "card3.toml").write_text(twice, encoding="utf-8")
    with pytest.raises(CardTextError, match="both in \\[panels\\] and in \\[figures\\]"):
        load_card_text(3, tmp_path)
    unknown = source.replace("[figures.c3-layouts]", "[figures.c3-nowhere]")
    (tmp_path / "card3.toml").write_text(unknown, encoding="utf-8")
    text = load_card_text(3, tmp_path)
    with pytest.raises(CardTextError, match="unknown figure id 'c3-nowhere' in \\[figures\\]"):
        check_figure_ids(text, ["c3-rotation", "c3-scores", "c3-decay", "c3-base", "c3-layouts"])


def test_list_shows_them_under_their_card() -> None:
    r = run_here("list")
    assert r.returncode == 0, r.stderr
    card = None
    seen: dict[str, int] = {}
    for line in r.stdout.splitlines():
        if line.startswith("card "):
            card = int(line.split()[1])
        elif line.strip():
            fid = line.split()[0]
            assert card is not None
            seen[fid] = card
            only = line.endswith("(figure page only)")
            assert only == (fid in dict((f, c) for c, f in EXTRA)), line
    for c, fid in EXTRA:
        assert seen[fid] == c


@pytest.mark.e2e
@pytest.mark.parametrize(("card", "fid"), EXTRA)
def test_data_gives_the_computed_numbers(card: int, fid: str, contents: dict) -> None:
    r = run_here("data", fid)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = fields_of(contents[card].figures[fid])  # a mapping, or a dataclass's fields
    assert list(got) == list(want)
    for key, value in want.items():
        if isinstance(value, np.ndarray) or isinstance(value, list | tuple):
            np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(value), err_msg=key)
        else:
            assert got[key] == value, key


@pytest.mark.e2e
def test_figure_draws_them_and_suggests_near_ids(tmp_path: Path) -> None:
    """`posecards figure` draws each of them: the first in a process of its own (the command
    as a user runs it), the others through the same command line in this process; the
    near-id errors in this process too (conftest.run_here)."""
    from typer.testing import CliRunner

    from posecards.cli import app

    runner = CliRunner()
    for i, (_, fid) in enumerate(EXTRA):
        out = tmp_path / f"{fid}.svg"
        args = ("figure", fid, "-o", str(out), "--lang", "zh", "--theme", "dark")
        if i == 0:
            r = run(*args)
            assert r.returncode == 0, r.stderr
        else:
            done = runner.invoke(app, list(args))
            assert done.exit_code == 0, done.output
        assert out.read_bytes().lstrip().startswith(b"<?xml")
    r = run_here("figure", "c2-float3", "-o", str(tmp_path / "x.png"))
    assert r.returncode == 2 and "did you mean c2-float32" in r.stderr
    r = run_here("data", "c4-debrta")
    assert r.returncode == 2 and "did you mean c4-deberta" in r.stderr
    assert r.stderr.count("\n") == 1


def test_build_writes_and_links_them(built: Path) -> None:
    for lang in ("en", "zh"):
        for c, ids in FIGURE_PAGE_ONLY.items():
            text = load_card_text(c)
            card_page = (built / lang / f"card-{c}-{text.slug}.html").read_text(encoding="utf-8")
            assert ("More figures" if lang == "en" else "更多图") in card_page
            for fid in ids:
                for ext in ("png", "svg"):
                    assert (built / lang / "figures" / f"{fid}.{ext}").is_file()
                assert f'href="figures/{fid}.html"' in card_page
                page = (built / lang / "figures" / f"{fid}.html").read_text(encoding="utf-8")
                assert f'href="../card-{c}-{text.slug}.html"' in page
                assert f'href="{fid}.png"' in page and 'role="img"' in page
                other = "zh" if lang == "en" else "en"
                assert f'href="../../{other}/figures/{fid}.html"' in page
                # the figure is not placed on the card: no inline SVG of it on the card page
                assert f'<figure id="{fid}"' not in card_page


def test_check_reports_them_missing(built: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(built, site)
    r = run_here("build", "--out", str(site), "--check")
    assert r.returncode == 0, r.stdout
    (site / "zh" / "figures" / "c4-deberta.png").unlink()
    (site / "en" / "figures" / "c1-pairs.html").unlink()
    r = run_here("build", "--out", str(site), "--check")
    assert r.returncode == 1
    assert "  missing: en/figures/c1-pairs.html\n" in r.stdout
    assert "  missing: zh/figures/c4-deberta.png\n" in r.stdout


def test_each_card_page_has_its_cards_footer(built: Path) -> None:
    """Card 5 is measured, not computed from d_model/base/positions: its page says where its
    data come from, like its PNG; the other cards' pages state the parameters."""
    import re

    def footer(page: Path) -> str:
        found = re.search(r"<footer>(.*?)</footer>", page.read_text(encoding="utf-8"), re.S)
        assert found is not None
        return found.group(1)

    assert footer(next((built / "en").glob("card-5-*.html"))).startswith("Data: ")
    assert footer(next((built / "zh").glob("card-5-*.html"))).startswith("数据：")
    assert footer(next((built / "en").glob("card-1-*.html"))).startswith("Parameters: ")
    assert footer(built / "en" / "figures" / "c2-float32.html").startswith("Parameters: ")
