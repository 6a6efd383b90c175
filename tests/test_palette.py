"""Colours a lecture hall can tell apart: data marks keep 3:1 contrast with the background in both
themes, and the line colours used together stay distinct under colour-vision deficiency
(deuteranopia, protanopia, tritanopia simulated with colorspacious, distances in CAM02-UCS)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from colorspacious import cspace_convert
from matplotlib.colors import to_rgb

from posecards.figures.style import CUT_MAPS, STYLE_DIR, theme, visible_cmap

THEMES = ("light", "dark")
CVD = ("deuteranomaly", "protanomaly", "tritanomaly")  # severity 100: the full dichromacy
MIN_CONTRAST = 3.0
MIN_DELTA_E = 10.0  # CAM02-UCS; about 1 is just noticeable side by side
TOGETHER = 5  # a plot uses at most this many line colours at once


def luminance(colour: str | tuple[float, ...]) -> float:
    """WCAG relative luminance of an sRGB colour."""
    c = np.asarray(to_rgb(colour), dtype=np.float64)
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(c @ np.array([0.2126, 0.7152, 0.0722]))


def contrast(a: str | tuple[float, ...], b: str | tuple[float, ...]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def seen(colour: str | tuple[float, ...], cvd: str | None) -> np.ndarray:
    """The colour in CAM02-UCS as seen with ``cvd`` (None: normal vision)."""
    rgb = np.asarray(to_rgb(colour), dtype=np.float64)
    if cvd is not None:
        space = {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100}
        rgb = np.clip(cspace_convert(rgb, space, "sRGB1"), 0, 1)
    return np.asarray(cspace_convert(rgb, "sRGB1", "CAM02-UCS"))


def delta_e(a: str | tuple[float, ...], b: str | tuple[float, ...], cvd: str | None) -> float:
    return float(np.linalg.norm(seen(a, cvd) - seen(b, cvd)))


def cycle(theme_name: str) -> list[str]:
    text = (STYLE_DIR / f"{theme_name}.mplstyle").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("axes.prop_cycle"))
    return ["#" + c for c in re.findall(r"'([0-9A-Fa-f]{6})'", line)]


def test_contrast_and_delta_e_by_hand() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert delta_e("#0072B2", "#0072B2", "deuteranomaly") == pytest.approx(0.0, abs=1e-9)
    # red and green are far apart for most people and close for a deuteranope
    assert delta_e("#d62728", "#2ca02c", None) > 3 * delta_e("#d62728", "#2ca02c", "deuteranomaly")


@pytest.mark.parametrize("name", THEMES)
def test_line_colours_stand_out_and_match_the_mpl_style(name: str) -> None:
    th = theme(name)
    assert [c.lower() for c in th.categorical] == [c.lower() for c in cycle(name)]
    for c in (*th.categorical, th.accent, th.warn, th.ok):
        assert contrast(c, th.background) >= MIN_CONTRAST, (name, c)


@pytest.mark.parametrize("cvd", [None, *CVD])
@pytest.mark.parametrize("name", THEMES)
def test_line_colours_used_together_stay_distinct(name: str, cvd: str | None) -> None:
    th = theme(name)
    groups = [th.categorical[:TOGETHER], (th.accent, th.warn, th.ok)]
    for group in groups:
        worst = min(itertools.combinations(group, 2), key=lambda ab: delta_e(*ab, cvd))
        assert delta_e(*worst, cvd) >= MIN_DELTA_E, (name, cvd, worst, delta_e(*worst, cvd))


@pytest.mark.parametrize("name", THEMES)
def test_marks_colour_map_keeps_contrast_over_its_whole_range(name: str) -> None:
    th = theme(name)
    cmap = visible_cmap(th, "marks")
    values = cmap(np.linspace(0.0, 1.0, 64))
    ratios = [contrast(tuple(v[:3]), th.background) for v in values]
    assert min(ratios) >= MIN_CONTRAST, (name, min(ratios))
    # and it still runs from one end to a clearly different other end
    assert delta_e(tuple(values[0][:3]), tuple(values[-1][:3]), None) > 30


@pytest.mark.parametrize("name", THEMES)
def test_one_sided_scale_keeps_its_dark_end_visible_and_cuts_no_more_than_needed(
    name: str,
) -> None:
    """theme.toml's sequential cut: the dark end of a one-sided scale (the most negative ALiBi
    bias) keeps 3:1 with the background, and the cut is the tightest one (within 0.01) that does,
    so the scale keeps as much of its range as it can."""
    import matplotlib as mpl

    th = theme(name)
    lo, hi = th.sequential_range
    cmap = visible_cmap(th, "sequential")
    assert contrast(tuple(cmap(0.0)[:3]), th.background) >= MIN_CONTRAST, (name, lo)
    assert tuple(cmap(1.0)[:3]) == tuple(mpl.colormaps[th.sequential](hi)[:3])
    if lo > 0:
        below = mpl.colormaps[th.sequential](lo - 0.01)[:3]
        assert contrast(tuple(below), th.background) < MIN_CONTRAST, (name, lo)
    # the map still spans most of its lightness range
    assert delta_e(tuple(cmap(0.0)[:3]), tuple(cmap(1.0)[:3]), None) > 30


def test_every_cut_lives_in_theme_toml() -> None:
    """One helper for every cut colour map; an unknown role is an error naming the roles."""
    for name in THEMES:
        th = theme(name)
        for role in CUT_MAPS:
            lo, hi = getattr(th, f"{role}_range")
            assert 0.0 <= lo < hi <= 1.0, (name, role)
            assert visible_cmap(th, role).N >= 256
    with pytest.raises(ValueError, match="marks, sequential"):
        visible_cmap(theme("dark"), "diverging")


def test_the_old_dark_navy_would_fail() -> None:
    """The check is not vacuous: cividis' navy end on the dark background is the issue's 1.1:1."""
    import matplotlib as mpl

    navy = mpl.colormaps["cividis"](0.0)[:3]
    assert contrast(tuple(navy), theme("dark").background) < 1.5


@pytest.mark.parametrize("name", THEMES)
def test_card_page_text_colours_are_readable(name: str) -> None:
    """The HTML pages' text on their backgrounds (templates/card.css): WCAG AA, 4.5:1 for body
    text and links (text, muted, accent on the page, the "More figures" box and the pitfalls
    box), 3:1 for the large bold pitfall heading (warn)."""
    th = theme(name)
    for bg in (th.background, th.box, th.pitfall_box):
        for fg in (th.text, th.muted, th.accent):
            assert contrast(fg, bg) >= 4.5, (name, fg, bg, contrast(fg, bg))
    assert contrast(th.warn, th.pitfall_box) >= 3.0, name


def test_card_pages_follow_the_build_theme_not_the_system() -> None:
    """color-scheme comes from the theme: a dark page gets dark scroll bars and controls even on
    a reader's light system, and card.css does not override it."""
    from dataclasses import asdict

    from posecards.paths import data_dir
    from posecards.render.html import env

    assert "color-scheme" not in (data_dir("templates") / "card.css").read_text(encoding="utf-8")
    for name in THEMES:
        head = (
            env()
            .get_template("_theme.html.j2")
            .render(theme=asdict(theme(name)), fonts={"faces": "", "sans": "", "mono": ""}, css="")
        )
        assert re.findall(r"color-scheme: (\w+)", head) == [name]
