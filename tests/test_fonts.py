"""Fonts by path, and files every tool draws right (issue 18).

- matplotlib sees only the files posecards names (posecards/fonts.py) inside card_style;
- a build with every system font hidden (as root: a private mount namespace with a tmpfs over
  the font folders, a fresh MPLCONFIGDIR and cache) writes the same bytes as a normal build;
- librsvg with no fonts draws the SVG cards like the PNG; Ghostscript draws the PDF cards like
  poppler, poppler warns of nothing, and every embedded font is TrueType with TrueType data;
- SVG and PDF cards measure what the PNG is placed at; SVG text can still be found;
- manifest.json names the fonts, and a changed font is a stale --check verdict with a reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FULL_BUILD_CACHE, run, run_here, tree
from filecheck import blurred_rms, gs_png, pdf_fonts, poppler_png, rsvg_png, tools_missing

from posecards import fonts
from posecards import pdf_fonts as pdf_fonts_module
from posecards.config import PRINT_WIDTH, BuildConfig, Look

# folders fontconfig, matplotlib and librsvg find system fonts in (Debian)
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts")
# blurred RMS (0-255) of the other tools' drawings; before issue 18: librsvg with no fonts
# 27-29 (boxes for every glyph), Ghostscript 24-29 (garbage strings)
RSVG_RMS = 10.0  # hinted PNG text vs unhinted outlines: 6-9 measured
GS_RMS = 8.0  # 4-6 measured


def _no_fonts_prefix(tmp: Path) -> list[str]:
    """A command prefix that hides the system fonts from what it runs, or a skip/fail."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            raise RuntimeError("CI runs as root: the no-system-fonts build must run there")
        pytest.skip("hiding the system fonts needs root (unshare -m); CI runs it")
    mounts = " && ".join(f"(! test -d {d} || mount -t tmpfs none {d})" for d in FONT_DIRS)
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mounts} && ! ls /usr/share/fonts/* >/dev/null 2>&1"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        if os.environ.get("CI"):
            raise RuntimeError(f"cannot hide the system fonts here: {probe.stderr.strip()}")
        pytest.skip(f"cannot hide the system fonts here: {probe.stderr.strip()}")
    mpl = tmp / "mplconfig"
    mpl.mkdir()
    script = f'{mounts} && MPLCONFIGDIR={mpl} POSECARDS_CACHE_DIR={tmp / "cache"} exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh"]


BUILD = ("build", "--cards", "2", "--format", "png,svg,pdf,html", "--jobs", "2", "--quiet")


@pytest.fixture(scope="module")
def small_site(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Card 2 in both languages, every format: a normal build on this machine. Its two card
    units come from a copy of the shared full build's cache (rendered there, on this machine
    with its fonts, from an empty cache, with the same options: test_build.py checks that a
    card's files do not depend on which other cards were built), so card 2 is not drawn again
    here; its pages, index, explorer and manifest are made by this build."""
    root = tmp_path_factory.mktemp("fonts")
    cache = root / "cache"
    shutil.copytree(built.parent / FULL_BUILD_CACHE, cache)
    loud = [a for a in BUILD if a != "--quiet"]  # its progress says where its cards came from
    r = run(*loud, "--out", str(root / "out"), env={"POSECARDS_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stderr
    assert "2 of 2 card renders up to date in the cache" in r.stderr, r.stderr
    return root / "out"


def test_a_build_without_system_fonts_writes_the_same_bytes(
    small_site: Path, tmp_path: Path
) -> None:
    prefix = _no_fonts_prefix(tmp_path)
    out = tmp_path / "out"
    # the namespace sees no font at all, so fc-list (and Chromium, librsvg) find nothing
    seen = subprocess.run([*prefix, "fc-list"], capture_output=True, text=True)
    assert seen.stdout.strip() == "", seen.stdout[:200]
    r = subprocess.run(
        [*prefix, sys.executable, "-m", "posecards", *BUILD, "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=1800,
    )
    assert r.returncode == 0, r.stderr
    normal, bare = tree(small_site), tree(out)
    assert sorted(normal) == sorted(bare)
    differ = sorted(k for k in normal if normal[k] != bare[k])
    assert differ == [], f"{len(differ)} of {len(normal)} files differ: {differ[:5]}"


def test_matplotlib_finds_only_the_named_files() -> None:
    from matplotlib import font_manager

    from posecards.figures.style import card_style

    # the named files, the CJK one as drawn (its half-width minus: posecards/fonts.py)
    named = {str(f.path) for f in fonts.font_files() if f.name != fonts.CJK_FILE}
    named.add(str(fonts.cjk_drawn_path()))
    asked = [
        ["Noto Sans CJK SC"],
        ["Noto Sans CJK SC", "DejaVu Sans"],
        ["Noto Serif CJK SC"],
        ["Liberation Sans"],
        ["sans-serif"],
        ["serif"],
        ["monospace"],
        ["SimHei"],
    ]
    with card_style("light"):
        for family in asked:
            for weight in ("normal", "bold"):
                prop = font_manager.FontProperties(family=family, weight=weight)
                for path in font_manager.fontManager._find_fonts_by_props(prop):
                    assert str(path) in named, (family, weight, path)
        bold = font_manager.findfont(
            font_manager.FontProperties(family=["Noto Sans CJK SC"], weight="bold")
        )
        # one rule: bold text is drawn in the regular Noto Sans CJK SC face (no bold file)
        assert Path(bold) == fonts.cjk_drawn_path()
    assert all("simhei" not in p.lower() for p in named)


def test_placed_sizes_follow_print_width() -> None:
    from matplotlib.figure import Figure

    from posecards.render.compose import layout
    from posecards.render.files import placed_points

    want = {"slide": (960, 540), "4x3": (720, 540), "a4": (595, 842), "square": (540, 540)}
    for size, (w, h) in want.items():
        fig = Figure(figsize=(layout(size).width, layout(size).height))
        pw, ph = placed_points(fig, PRINT_WIDTH[size])
        assert (pw, round(ph)) == (w, h), size


def _svg_size(svg: bytes) -> tuple[str, str, str]:
    m = re.search(rb'<svg [^>]*width="([^"]+)" height="([^"]+)" viewBox="([^"]+)"', svg)
    assert m
    return m.group(1).decode(), m.group(2).decode(), m.group(3).decode()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_svg_cards_are_outlines_drawn_alike_by_librsvg_without_fonts(
    small_site: Path, lang: str, tmp_path: Path
) -> None:
    if missing := tools_missing():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must have {missing} (.ci/run installs them)")
        pytest.skip(f"{missing} not installed")
    prefix = _no_fonts_prefix(tmp_path)
    (png,) = (small_site / lang).glob("card-2-*.png")
    svg = png.with_suffix(".svg")
    data = svg.read_bytes()
    assert b"<text" not in data  # glyphs are paths
    assert _svg_size(data)[:2] == ("960pt", "540pt")
    assert _svg_size(data)[2] == "0 0 1382.4 777.6"  # the layout did not move
    r = subprocess.run(
        [*prefix, "rsvg-convert", "--width", "1920", str(svg)], capture_output=True, check=True
    )
    rms = blurred_rms(png.read_bytes(), r.stdout)
    assert rms < RSVG_RMS, f"librsvg vs PNG: blurred RMS {rms:.2f}"
    assert rms == pytest.approx(blurred_rms(png.read_bytes(), rsvg_png(svg, 1920)), abs=0.01)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_svg_text_can_be_found(small_site: Path, lang: str) -> None:
    from posecards.render.text import fill_card, load_card_text

    (svg,) = (small_site / lang).glob("card-2-*.svg")
    titles = re.findall(r"<title>(.*?)</title>", svg.read_text(encoding="utf-8"), re.S)
    groups = re.findall(r'<g id="text_\d+">', svg.read_text(encoding="utf-8"))
    assert len(titles) == len(groups) > 50
    from posecards.config import PEParams
    from posecards.content import compute_card

    filled = fill_card(load_card_text(2), lang, compute_card(2, PEParams()).numbers)
    words = " ".join(titles)
    assert filled.title.split("\n")[0][:12] in words
    for _fid, title, *_ in filled.panels:
        assert title[:10] in words, title


def test_live_svg_keeps_text_and_pages_inline_live_text(small_site: Path, tmp_path: Path) -> None:
    page = (small_site / "en" / "card-2-sinusoidal-geometry.html").read_text(encoding="utf-8")
    assert "<text" in page  # the pages keep live text with their embedded web fonts
    out = tmp_path / "live.svg"
    r = run("figure", "c2-similarity", "-o", str(out), "--svg-text", "live")
    assert r.returncode == 0, r.stderr
    assert b"<text" in out.read_bytes()
    r = run("figure", "c2-similarity", "-o", str(out), "--svg-text", "paths")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr


def test_a_pdf_with_the_math_prime_is_made_without_a_word(tmp_path: Path) -> None:
    """The prime of the RoPE inspection card comes from matplotlib's cmsy10.ttf, whose
    1970-era font dates fontTools warns about on stderr when a PDF or web font subsets it
    (fonts.quiet_font_dates): --quiet must print nothing. In this process (conftest.run_here,
    which hears the stderr of the drawing processes, where the PDF is made)."""
    config = Path(__file__).resolve().parent.parent / "docs" / "examples" / "llama-3.1-8b"
    out = tmp_path / "out"
    r = run_here(
        "inspect", str(config), "--out", str(out), "--format", "pdf", "--lang", "en", "--quiet"
    )
    assert r.returncode == 0, r.stderr
    assert (out / "en" / "llama-3-1-8b.pdf").is_file()
    assert r.stderr == ""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pdf_cards_draw_alike_in_ghostscript_and_poppler(small_site: Path, lang: str) -> None:
    if missing := tools_missing():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must have {missing} (.ci/run installs them)")
        pytest.skip(f"{missing} not installed")
    from pypdf import PdfReader

    (pdf,) = (small_site / lang).glob("card-2-*.pdf")
    box = PdfReader(pdf).pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx((960, 540), abs=0.01)
    check_pdf(pdf, dpi=144)


def test_pdf_fonts_carry_no_tables_a_pdf_never_reads(small_site: Path) -> None:
    """Issue 24: the fonts embedded in a PDF come without OpenType layout or vertical metrics
    (a PDF places glyphs itself): taken out before subsetting, so the subsetter adds no GSUB
    alternates, to be converted to TrueType and embedded for nothing."""
    import io

    from fontTools.ttLib import TTFont
    from pypdf import PdfReader

    (pdf,) = (small_site / "zh").glob("card-2-*.pdf")
    seen = 0
    for page in PdfReader(pdf).pages:
        for font in page["/Resources"]["/Font"].values():
            font = font.get_object()
            for desc in font.get("/DescendantFonts", []):
                data = desc.get_object()["/FontDescriptor"]["/FontFile2"].get_data()
                embedded = TTFont(io.BytesIO(data))
                assert not set(pdf_fonts_module.PDF_UNUSED_TABLES) & set(embedded.keys()), (
                    embedded.keys()
                )
                seen += 1
    assert seen


def check_pdf(pdf: Path, dpi: float) -> None:
    """Ghostscript draws the first page like poppler; poppler and pdffonts warn of nothing;
    every font is embedded TrueType (the CJK font's CFF outlines converted)."""
    g, _ = gs_png(pdf, dpi)
    p, warnings = poppler_png(pdf, dpi)
    assert warnings.strip() == "", warnings
    rms = blurred_rms(p, g)
    assert rms < GS_RMS, f"{pdf.name}: Ghostscript vs poppler blurred RMS {rms:.2f}"
    rows, err = pdf_fonts(pdf)
    assert err.strip() == "", err
    assert rows
    for row in rows:
        assert row[1:3] == ["CID", "TrueType"], row
        assert row[-5] == "yes", row  # embedded


def test_manifest_names_the_fonts_and_a_changed_font_is_stale(
    small_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from posecards.engine import inputs, judge
    from posecards.render.build import plan_build

    def check_site(cfg: BuildConfig) -> judge.Verdict:
        return judge.check(plan_build(cfg))

    doc = json.loads((small_site / "manifest.json").read_text(encoding="utf-8"))
    records = {f["file"]: f for f in doc["fonts"]}
    assert set(records) == {f.name for f in fonts.font_files()}
    cjk = records[fonts.CJK_FILE]
    assert cjk["package"] == "mplfonts" and len(cjk["sha256"]) == 64
    assert doc["inputs"][f"fonts/{fonts.CJK_FILE}"] == cjk["sha256"]
    cfg = BuildConfig(
        out=small_site, cards=(2,), formats=("png", "svg", "pdf", "html"), look=Look()
    )
    assert check_site(cfg).reasons == []
    real = fonts.font_digests()
    changed = tuple((n, "0" * 64 if n == fonts.CJK_FILE else s) for n, s in real)
    monkeypatch.setattr(fonts, "font_digests", lambda: changed)
    inputs.shared_inputs.cache_clear()
    try:
        reasons = check_site(cfg).reasons
    finally:
        inputs.shared_inputs.cache_clear()
    assert f"fonts changed: {fonts.CJK_FILE}" in reasons, reasons


def test_the_drawn_cjk_file_differs_from_the_named_one_only_in_its_minus() -> None:
    from fontTools.ttLib import TTFont

    named = TTFont(fonts.font_file(fonts.CJK_FILE).path, lazy=True)
    drawn = TTFont(fonts.cjk_drawn_path(), lazy=True)
    a, b = named.getBestCmap(), drawn.getBestCmap()
    assert {c for c in a if a[c] != b.get(c)} == {0x2212}
    assert named["hmtx"][a[0x2212]][0] == 1000  # full-width in the named file
    assert drawn["hmtx"][b[0x2212]][0] == 500  # half-width, as drawn
    for tag in named.reader.keys():
        if tag in ("cmap", "head"):
            continue
        assert named.reader[tag] == drawn.reader[tag], tag  # copied byte for byte
    # head: the same but for checkSumAdjustment (bytes 8-11), the whole file's checksum
    h1, h2 = named.reader["head"], drawn.reader["head"]
    assert h1[:8] + h1[12:] == h2[:8] + h2[12:]


def test_truetype_conversion_keeps_glyph_order_and_advances() -> None:
    import io

    from fontTools import subset
    from fontTools.ttLib import TTFont

    path = fonts.font_file(fonts.CJK_FILE).path
    font = TTFont(path, lazy=True)
    opts = subset.Options()
    sub = subset.Subsetter(opts)
    sub.populate(text="位置编码 PE(p) = 0.973")
    sub.subset(font)
    order, advances = font.getGlyphOrder(), dict(font["hmtx"].metrics)
    pdf_fonts_module.cff_to_truetype(font)
    buf = io.BytesIO()
    font.save(buf)
    again = TTFont(io.BytesIO(buf.getvalue()))
    assert "glyf" in again and "CFF " not in again
    assert again.getGlyphOrder() == order
    assert dict(again["hmtx"].metrics) == advances
    glyph = again["glyf"][again.getBestCmap()[ord("位")]]
    assert glyph.numberOfContours > 0


_PDF_AT = """
import hashlib, shutil, sys
from pathlib import Path
import posecards.fonts as F
where = Path(sys.argv[1])
where.mkdir()
named = F.font_files()
moved = [named[0], *(F.FontFile(f.name, f.package, Path(shutil.copy(f.path, where))) for f in named[1:])]
F.font_files = lambda: tuple(moved)
from matplotlib.figure import Figure
from posecards.figures.style import card_style
from posecards.render.files import figure_bytes
with card_style("light"):
    fig = Figure(figsize=(3, 1))
    fig.text(0.1, 0.6, "位置编码 RoPE")
    fig.text(0.1, 0.2, "$\\\\theta_i$ = 10000$^{-2i/d}$", style="italic")
    data = figure_bytes(fig, "pdf")
assert str(F.font_entries()[2].fname).startswith(str(where)), F.font_entries()[2].fname
print(hashlib.sha256(data).hexdigest())
"""


def test_pdf_bytes_do_not_depend_on_where_the_font_files_lie(tmp_path: Path) -> None:
    """matplotlib writes a PDF's fonts sorted by their full paths: the CJK file posecards draws
    with lies in the cache, the others where matplotlib is installed, so the bytes changed with
    which of the two folders sorted first. Here matplotlib's files are copied before and after
    the cache folder: the same PDF."""
    digests = []
    for folder in ("0-before", "z-after"):  # around "cache"
        env = {**os.environ, "POSECARDS_CACHE_DIR": str(tmp_path / "cache")}
        r = subprocess.run(
            [sys.executable, "-c", _PDF_AT, str(tmp_path / folder)],
            capture_output=True,
            text=True,
            env=env,
        )
        assert r.returncode == 0, r.stderr
        digests.append(r.stdout.strip())
    assert digests[0] == digests[1]
