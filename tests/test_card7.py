"""Card 7 (pitfalls): ids, text, threads and drawing. The numbers themselves are checked against
the reference implementations in tests/test_pitfalls.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card7 import EXTRA_IDS, PANEL_IDS, compute
from posecards.content.card7_threads import SIDE_THREADS, THREAD_KIND, THREADS, ThreadKind
from posecards.figures.card7 import DRAW
from posecards.render.text import fill_card, load_card_text

REPO = Path(__file__).resolve().parent.parent
THREAD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*#\d+$")


@pytest.fixture(scope="module")
def card() -> CardContent:
    return compute(PEParams())


def test_ids_match_everywhere(card: CardContent) -> None:
    text = load_card_text(7)
    assert list(DRAW) == list(PANEL_IDS + EXTRA_IDS)
    assert list(card.figures) == list(PANEL_IDS + EXTRA_IDS)
    assert [p.id for p in text.panels] == list(PANEL_IDS)
    assert [p.id for p in text.figures] == list(EXTRA_IDS)
    assert list(THREADS) == list(PANEL_IDS)


def test_every_thread_is_owner_repo_number_and_documented(card: CardContent) -> None:
    """Each cited thread is written owner/repo#number and listed, with its title and what it
    says, in docs/pitfalls.md (the record of reading it)."""
    doc = (REPO / "docs" / "pitfalls.md").read_text(encoding="utf-8")
    cited = [t for v in (*THREADS.values(), *SIDE_THREADS.values()) for t in v]
    assert len(cited) == len(set(cited))
    for thread in cited:
        assert THREAD.match(thread), thread
        assert f"`{thread}`" in doc, f"{thread} is not in docs/pitfalls.md"
    for fid in PANEL_IDS:
        data = card.figures[fid]
        shipped = [t for t in THREADS[fid] if THREAD_KIND[t] is ThreadKind.SHIPPED]
        assert data.threads == shipped and 1 <= data.threads_on_card <= 2


DOC_CLASS = {
    ThreadKind.SHIPPED: "bug that shipped",
    ThreadKind.QUESTION: "question or explanation",
    ThreadKind.RELATED: "related",
}
# the words a caption puts before the threads of each class
LEAD = {
    "en": {
        ThreadKind.SHIPPED: "Bugs that shipped",
        ThreadKind.QUESTION: "Questions and explanations",
        ThreadKind.RELATED: "Related, not this bug",
    },
    "zh": {
        ThreadKind.SHIPPED: "踩坑实例",
        ThreadKind.QUESTION: "提问与解答",
        ThreadKind.RELATED: "相关但不是这个错误",
    },
}


def test_every_citation_carries_a_class_and_the_doc_agrees() -> None:
    """Each of the 29 cited threads has a class, and docs/pitfalls.md lists it with that class."""
    cited = [t for v in (*THREADS.values(), *SIDE_THREADS.values()) for t in v]
    assert len(cited) == 29 and set(cited) == set(THREAD_KIND)
    doc = (REPO / "docs" / "pitfalls.md").read_text(encoding="utf-8")
    for thread, kind in THREAD_KIND.items():
        assert isinstance(kind, ThreadKind)
        assert f"| `{thread}` | {DOC_CLASS[kind]} |" in doc, thread
    counts = {k: sum(v is k for v in THREAD_KIND.values()) for k in ThreadKind}
    assert counts == {ThreadKind.SHIPPED: 19, ThreadKind.QUESTION: 5, ThreadKind.RELATED: 5}
    # the card's title says six bugs shipped: every panel cites at least one that did
    for fid in PANEL_IDS:
        assert any(THREAD_KIND[t] is ThreadKind.SHIPPED for t in THREADS[fid]), fid


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_captions_name_each_thread_under_its_own_class(card: CardContent, lang: str) -> None:
    """A question is never called a bug: in each panel's caption every thread stands in the
    sentence led by its class, and on the drawn card only bugs that shipped are named."""
    filled = fill_card(load_card_text(7), lang, card.numbers)
    stop = "." if lang == "en" else "。"
    for fid, (pid, _, _, caption) in zip(PANEL_IDS, filled.panels, strict=True):
        assert pid == fid
        sentences = [x.strip() for x in caption.split(stop + " " if lang == "en" else stop)]
        for thread in THREADS[fid]:
            (home,) = [x for x in sentences if thread in x]
            lead = LEAD[lang][THREAD_KIND[thread]]
            assert home.startswith(lead + ("：" if lang == "zh" else ":")), (fid, thread, home)
        for kind in ThreadKind:  # no class lead-in without a thread of that class
            has = any(THREAD_KIND[t] is kind for t in THREADS[fid])
            assert (LEAD[lang][kind] in caption) == has, (fid, kind)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_has_a_value(card: CardContent, lang: str) -> None:
    filled = fill_card(load_card_text(7), lang, card.numbers)
    assert len(filled.panels) == 6 and len(filled.takeaways) == 3 and len(filled.pitfalls) >= 2
    blob = " ".join(
        [filled.title, filled.thesis, filled.formula_note]
        + [" ".join(p[1:]) for p in (*filled.panels, *filled.figures)]
        + [v for _, v in filled.takeaways + filled.pitfalls]
    )
    assert "{{" not in blob and "}}" not in blob
    # each panel's number is on the page, and every thread where it bit
    for needle in ("257", "2,049", "897", "89", "135,402", "91", "3.51", "1.87", "1.15"):
        assert needle in blob, needle
    for thread in (t for v in (*THREADS.values(), *SIDE_THREADS.values()) for t in v):
        assert thread in blob, thread


def test_card_text_has_no_typed_numbers_outside_placeholders() -> None:
    text = load_card_text(7)
    entries = [text.thesis, text.formula_note, *(v for _, v in text.takeaways + text.pitfalls)]
    entries += [
        b for p in (*text.panels, *text.figures) for b in (p.alt, p.caption) if b is not None
    ]
    entries += list(text.labels.values())
    allowed = {"0", "1", "2", "3", "4", "5", "6"}  # "head 1", "bucket 0", panel numbers (1)…(6)
    names = r"b?float(16|32)|transformers 5\.23|2\^\(−8h/H\)|DeepSeek-V3|Gemma 3|\(2k, 2k\+1\)|k \+ d/2|0…"
    for entry in entries:
        for lang in ("en", "zh"):
            bare = re.sub(r"\{\{.*?\}\}", "", entry.get(lang))
            bare = re.sub(names, "", bare)
            found = set(re.findall(r"\d+(?:\.\d+)?", bare)) - allowed
            assert not found, (entry.en[:50], lang, found)


def test_formula_renders() -> None:
    from matplotlib.mathtext import MathTextParser

    MathTextParser("path").parse(load_card_text(7).formula_tex)


def test_numbers_follow_parameters(card: CardContent) -> None:
    other = compute(PEParams(base=500000.0)).numbers
    for key in ("layout_err_wrong", "dyn_base_kept", "dyn_angle_err", "pos_gap_diff"):
        assert other[key] != card.numbers[key], key
    # what does not depend on the base: formats, ALiBi, DeepSeek-V3's YaRN
    for key in ("prec_distinct_bfloat16", "alibi_40_worst_ratio", "yarn_rope_both"):
        assert other[key] == card.numbers[key], key
    few = compute(PEParams(positions=16)).numbers
    assert (
        few["layout_last_pos"] == 15 and few["layout_err_wrong"] != card.numbers["layout_err_wrong"]
    )


def test_compute_is_fast_at_extreme_parameters() -> None:
    import time

    start = time.perf_counter()
    content = compute(PEParams(d_model=65536, base=1e8, positions=131072))
    assert time.perf_counter() - start < 3.0
    assert np.all(np.isfinite(content.figures["c7-layout"].reference))


# The figures at the default parameters, in both languages and themes, are drawn inside
# card_style (a missing glyph raises) by tests/test_layout.py and tests/test_contrast.py.


def test_mistake_and_rule_differ_by_more_than_colour(card: CardContent) -> None:
    """In every panel the ✗ and ✓ entries differ in line style or marker, not only in hue."""
    from posecards.figures.style import card_style
    from posecards.render.figure import draw_standalone

    for fid in PANEL_IDS:
        with card_style("light"):
            fig = draw_standalone(fid, card.figures[fid], "en", "light")
        fig.canvas.draw()
        legends = [lg for f in (fig, *fig.subfigs) for lg in f.legends if lg.get_texts()]
        assert legends, fid
        handles = legends[-1].legend_handles
        styles = {
            (
                getattr(h, "get_linestyle", lambda: None)(),
                getattr(h, "get_marker", lambda: None)(),
                getattr(h, "get_hatch", lambda: None)(),
            )
            for h in handles
        }
        assert len(styles) == len(handles), fid
        labels = [t.get_text() for t in legends[-1].get_texts()]
        if fid != "c7-yarn":  # the YaRN panel marks ✓/✗ on its rows
            assert any(s.startswith("✓") for s in labels) and any(s.startswith("✗") for s in labels)


def test_legend_is_right_of_wide_panels_and_below_tall_ones(card: CardContent) -> None:
    from matplotlib.figure import Figure

    from posecards.figures.card7 import _wide
    from posecards.figures.roles import page_roles
    from posecards.figures.style import card_style
    from posecards.render.text import CardLabels

    text = load_card_text(7)
    for size, wide in (((8.0, 6.0), False), ((13.0, 5.0), True)):
        with card_style("light") as th, page_roles("figure"):
            fig = Figure(figsize=size, layout="constrained")
            assert _wide(fig) is wide
            DRAW["c7-dynamic"](fig, card.figures["c7-dynamic"], CardLabels(text.labels, "en"), th)
            legend = fig.subfigs[0].legends[-1]
            assert legend._outside_loc == ("right" if wide else "lower")  # type: ignore[attr-defined]
            labels = [t.get_text() for t in legend.get_texts()]
            assert all(("\n" in s) == wide for s in labels)


def test_formula_note_names_panels_by_what_they_show_and_zh_keeps_every_name() -> None:
    """The panels carry no numbers, so the formula note names them by their subject; every
    capitalised name of a rule label (BLOOM, Press, HF) is in its Chinese too."""
    text = load_card_text(7)
    for lang in ("en", "zh"):
        assert not re.search(r"[（(]\d", text.formula_note.get(lang)), lang
    for key, label in text.labels.items():
        if key.startswith("rule_"):
            for name in re.findall(r"\b[A-Z][A-Za-z0-9]+\b", label.en):
                assert name in label.zh, (key, name)


def test_yarn_legend_swatch_is_drawn_like_the_bars(card: CardContent) -> None:
    """The legend entry of the bars shows the bars' own faces: the reference's colour and the
    mistakes' hatched colour, not a colour no bar has."""
    from matplotlib.patches import Rectangle

    from posecards.figures.style import card_style
    from posecards.render.figure import draw_standalone

    with card_style("light"):
        fig = draw_standalone("c7-yarn", card.figures["c7-yarn"], "en", "light")
    fig.canvas.draw()
    bars = [p for f in fig.subfigs for ax in f.axes for p in ax.patches if isinstance(p, Rectangle)]
    legend = [lg for f in (fig, *fig.subfigs) for lg in f.legends][-1]
    swatches = legend.findobj(Rectangle)
    looks = {(tuple(b.get_facecolor()), b.get_hatch() or "") for b in bars}
    shown = {(tuple(p.get_facecolor()), p.get_hatch() or "") for p in swatches}
    assert len(looks) == 2 and looks <= shown


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_card_page_shows_each_figures_description_as_how_to_read_it(
    card: CardContent, lang: str
) -> None:
    """Issue 36 point 13 (first half): the description written for screen readers is on the page
    for everyone, under each panel, folded as "how to read this"."""
    import html as html_lib
    from dataclasses import asdict

    from markupsafe import Markup

    from posecards.figures.style import theme
    from posecards.render.html import PanelView, card_page

    filled = fill_card(load_card_text(7), lang, card.numbers)
    panels = [
        PanelView(id=fid, title=t, alt=alt, caption=c, svg=Markup("<svg></svg>"), downloads=[])
        for fid, t, alt, c in filled.panels
    ]
    page = card_page(
        lang=lang,
        card=filled,
        panels=panels,
        formula_svg=Markup("<svg></svg>"),
        downloads=[],
        other_lang=None,
        footer="",
        theme=asdict(theme("light")),
        nav=[],
    )
    summary = "How to read this" if lang == "en" else "怎么读这幅图"
    for fid, _t, alt, _c in filled.panels:
        figure = page[page.index(f'<figure id="{fid}">') :]
        figure = figure[: figure.index("</figure>")]
        read = figure[figure.index('<details class="read">') : figure.index("</details>")]
        assert summary in read and alt in html_lib.unescape(read), fid
