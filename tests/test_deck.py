"""`posecards deck` end to end: one build of both languages (session fixture), read back with
python-pptx and pypdf, and converted by LibreOffice where it is installed."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import run, run_here, tree

from posecards.deck.plan import plan_deck

EMU_PER_IN = 914400
SLIDE_W, SLIDE_H = 12192000, 6858000  # 13.333 x 7.5 in
CJK = re.compile(r"[\u4e00-\u9fff]")
# Two cards keep the end-to-end build short (`make deck` builds all four).
CARD_IDS = (1, 3)


LANG_TAG = {"en": "en-US", "zh": "zh-CN"}
SC = "Noto Sans CJK SC"


def require_libreoffice() -> None:
    """Skip where LibreOffice is missing; CI must have it (.ci/run installs it)."""
    if shutil.which("soffice") is None or shutil.which("pdffonts") is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must run the LibreOffice tests: .ci/run installs them")
        pytest.skip("LibreOffice (soffice) or poppler-utils not installed (CI installs them)")


def to_pdf(decks: list[Path], out: Path, env: dict[str, str] | None = None) -> list[Path]:
    """LibreOffice's rendering of each deck (their names differ), headless, by one LibreOffice
    with its own profile (``env``: e.g. the fontconfig of a machine with no fonts,
    conftest.fontless_env): one start and one new profile for them all (about 1.5 CPU s each)."""
    assert len({p.stem for p in decks}) == len(decks), "same names, same PDF"
    subprocess.run(
        [
            "soffice",
            f"-env:UserInstallation=file://{out}/profile",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(out),
            *map(str, decks),
        ],
        check=True,
        capture_output=True,
        timeout=600,
        env=env,
    )
    return [out / f"{p.stem}.pdf" for p in decks]


@pytest.fixture(scope="session")
def deck_built(tmp_path_factory: pytest.TempPathFactory, computed_cards: dict[int, Any]) -> Path:
    """The deck of cards 1 and 3, every unit rendered (no deck render is in the cache). Card 1's
    UMAP layout comes from the posecards cache, as on a machine that has built the cards before:
    `computed_cards` (conftest.py, shared with the layout and contrast tests) computed it in this
    test process, into this run's cache, which the deck's processes read. The UMAP from an
    empty cache in drawing processes is the shared full build's (conftest.py: `built`)."""
    out = tmp_path_factory.mktemp("deck") / "out"
    # cards 1 and 3 in both languages: an English and a Chinese deck
    r = run("deck", "--out", str(out), "--cards", "1,3", "--jobs", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    return out


def slides_of(path: Path) -> list:
    from pptx import Presentation

    return list(Presentation(str(path)).slides)


def test_planned_files_are_the_files_built(deck_built: Path) -> None:
    """--check knows the deck's files without drawing (from the text and the options)."""
    from posecards.config import DeckConfig
    from posecards.deck.build import plan_deck_build

    planned = set(plan_deck_build(DeckConfig(out=deck_built, cards=CARD_IDS)).files)
    built = {p.relative_to(deck_built).as_posix() for p in deck_built.rglob("*") if p.is_file()}
    assert built - {"manifest.json"} == planned


def test_check_imports_nothing_heavy(deck_built: Path) -> None:
    import sys

    code = (
        "import sys\nfrom posecards.cli import app\n"
        f"try:\n    app(['deck', '--out', {str(deck_built)!r}, '--check'])\n"
        "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "heavy = [m for m in ('matplotlib', 'numpy', 'torch', 'umap', 'numba', 'pptx') "
        "if m in sys.modules]\nassert not heavy, heavy\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_files_and_slide_count(deck_built: Path) -> None:
    plan = plan_deck(CARD_IDS)
    kinds = [s.kind for s in plan]
    assert kinds[0] == "title" and kinds[-1] == "sources"
    n_sources = kinds.count("sources")
    assert n_sources >= 1 and kinds[kinds.index("closing") + 1 :] == ["sources"] * n_sources
    assert kinds.count("overview") == len(CARD_IDS)
    from posecards.deck.notes import load_deck_text

    animations = load_deck_text().animations.values()
    assert kinds.count("animation") == sum(a.card in CARD_IDS for a in animations) >= 1
    for lang in ("en", "zh"):
        folder = deck_built / lang
        assert (folder / "deck.pptx").is_file() and (folder / "deck.pdf").is_file()
        for s in plan:
            assert (folder / "slides" / f"{s.stem}.png").is_file()
            assert (folder / "slides" / f"{s.stem}.svg").is_file()
        for name in ("clocks", "rope", "alibi"):
            assert (folder / "animations" / f"{name}.gif").is_file()
            assert (folder / "animations" / f"{name}.png").is_file()
        assert len(slides_of(folder / "deck.pptx")) == len(plan)


def test_pptx_reads_back_as_a_teacher_needs_it(deck_built: Path) -> None:
    from PIL import Image
    from pptx import Presentation
    from pptx.util import Pt

    for lang in ("en", "zh"):
        prs = Presentation(str(deck_built / lang / "deck.pptx"))
        assert (prs.slide_width, prs.slide_height) == (SLIDE_W, SLIDE_H)
        plan = plan_deck(CARD_IDS)
        for s, slide in zip(plan, prs.slides, strict=True):
            notes = slide.notes_slide.notes_text_frame.text
            assert len(notes) > 80, f"{lang} slide {s.n}: notes too short"
            assert bool(CJK.search(notes)) == (lang == "zh"), f"{lang} slide {s.n}: notes language"
            assert "{{" not in notes
            texts = [sh for sh in slide.shapes if sh.has_text_frame and sh.text_frame.text.strip()]
            pictures = [sh for sh in slide.shapes if sh.shape_type == 13]
            for sh in slide.shapes:  # nothing outside the slide
                assert sh.left >= 0 and sh.top >= 0, (lang, s.n, sh.name)
                assert sh.left + sh.width <= SLIDE_W + 1 and sh.top + sh.height <= SLIDE_H + 1
            for sh in texts:
                for p in sh.text_frame.paragraphs:
                    for r in p.runs:
                        assert r.font.size is not None and r.font.size >= Pt(18), (lang, s.n)
                        assert bool(CJK.search(r.text)) <= (lang == "zh")
            assert texts, f"{lang} slide {s.n} has no text frame"
            assert texts[0].name == "Title"
            if s.kind == "overview":
                # the card is the picture; its title placeholder lies behind it
                assert len(pictures) == 1 and len(texts) == 1
                shapes = list(slide.shapes)
                assert shapes.index(texts[0]) < shapes.index(pictures[0])
            if s.kind in ("panel", "animation", "overview"):
                (pic,) = pictures
                assert pic.width == SLIDE_W  # fills the slide's width
                with Image.open(io.BytesIO(pic.image.blob)) as im:
                    width = im.size[0]
                    assert width >= (1920 if s.kind != "animation" else 1280)
                    if s.kind == "animation":
                        assert getattr(im, "n_frames", 1) > 20  # it moves
            else:
                assert not pictures


# Panels whose figure (not the deck) fails the layout check at the slide's proportions
# (13.333 x 5.75 in, wider than a card cell); strict: an entry must go as soon as it passes.
KNOWN_LAYOUT: set[str] = set()


def test_last_slides_list_every_source_once_as_text(deck_built: Path) -> None:
    """The deck ends with the sources of its cards: authors, year, title and arXiv id as text,
    each paper once, in the order the cards cite them, in the notes, the PPTX and the PDF."""
    from posecards.render.text import load_card_text

    expected: dict[str, object] = {}
    for c in CARD_IDS:
        for src in load_card_text(c).sources:
            expected.setdefault(src.key, src)
    for lang in ("en", "zh"):
        slides = json.loads((deck_built / lang / "notes.json").read_text(encoding="utf-8"))
        items = [i for s in slides if s["kind"] == "sources" for i in s["items"]]
        assert items == [src.text(lang) for src in expected.values()]  # type: ignore[attr-defined]
        assert all(re.search(r"\(\d{4}\)\. .+\. (arXiv:\d{4}\.\d{4,5}|.+)$", i) for i in items)
        assert slides[-1]["kind"] == "sources" and slides[-1]["notes"]
        with zipfile.ZipFile(deck_built / lang / "deck.pptx") as z:
            xml = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("ppt/slides/"))
        assert "arXiv:2104.09864" in xml and "RoFormer" in xml


def test_text_sizes_and_layout_at_1920(deck_built: Path) -> None:
    """Figure text >= 28 px (sub/superscripts >= 0.7 of that) and slide text >= 36 px at
    1920 x 1080, no text on text or on its data, nothing outside: measured on every slide by
    the cards' layout measurement (posecards.render.measure), recorded in notes.json."""
    failing = set()
    for lang in ("en", "zh"):
        slides = json.loads((deck_built / lang / "notes.json").read_text(encoding="utf-8"))
        for s in slides:
            if s["kind"] in ("panel", "animation"):
                assert s["min_figure_px"] >= 28 - 1e-6, (lang, s["stem"], s["min_figure_px"])
            elif s["kind"] in ("title", "closing", "sources"):
                assert s["min_text_px"] >= 36 - 1e-6, (lang, s["stem"], s["min_text_px"])
            if s["kind"] == "overview":
                continue  # the card itself: tests/test_layout.py
            slug = s["stem"][3:]
            if s["layout_problems"]:
                failing.add(slug)
                assert slug in KNOWN_LAYOUT, (lang, s["stem"], s["layout_problems"])
    assert failing == KNOWN_LAYOUT


def test_titles_fit_their_frames(deck_built: Path) -> None:
    """Every text frame's text, wrapped with the deck's measured fonts, fits its box."""
    from pptx import Presentation

    from posecards.deck.draw import _Page
    from posecards.figures.style import card_style

    with card_style("light") as th:
        page = _Page(th, 1.0)
        for lang in ("en", "zh"):
            prs = Presentation(str(deck_built / lang / "deck.pptx"))
            for slide in prs.slides:
                for sh in slide.shapes:
                    if not sh.has_text_frame:
                        continue
                    box = tuple(v / EMU_PER_IN for v in (sh.left, sh.top, sh.width, sh.height))
                    height = 0.0
                    for p in sh.text_frame.paragraphs:
                        run = p.runs[0]
                        size = run.font.size.pt
                        indent = int(p._p.get_or_add_pPr().get("marL", "0")) / EMU_PER_IN
                        inner = (box[0] + indent, box[1], box[2] - indent, box[3])
                        lines = page.wrap(
                            p.text, inner, size, "bold" if run.font.bold else "normal"
                        )
                        height += len(lines) * size * 1.2 / 72 + (
                            size * 0.5 / 72 if p.space_after else 0
                        )
                    assert height <= box[3] + 0.05, (lang, sh.name, sh.text_frame.text[:50])


def test_pdf_is_one_vector_page_per_slide_fonts_embedded(deck_built: Path) -> None:
    from pypdf import PdfReader

    n = len(plan_deck(CARD_IDS))
    for lang in ("en", "zh"):
        reader = PdfReader(str(deck_built / lang / "deck.pdf"))
        assert len(reader.pages) == n
        for page in reader.pages:
            box = page.mediabox
            assert float(box.width) == pytest.approx(960, abs=0.5)
            assert float(box.height) == pytest.approx(540, abs=0.5)
            fonts = page["/Resources"].get_object().get("/Font", {})
            assert fonts, "a page without text"
            for f in fonts.values():
                f = f.get_object()
                desc = f.get("/FontDescriptor") or f["/DescendantFonts"][0].get_object().get(
                    "/FontDescriptor"
                )
                if desc is None:  # Type 3 fonts carry their glyphs as procedures
                    assert f["/Subtype"] == "/Type3"
                    continue
                desc = desc.get_object()
                assert any(k in desc for k in ("/FontFile", "/FontFile2", "/FontFile3")), f[
                    "/BaseFont"
                ]


def test_deterministic_assembly_and_check(deck_built: Path, tmp_path: Path) -> None:
    from posecards.deck.pdf import merge_pages
    from posecards.deck.pptx import write_pptx

    files = tree(deck_built)
    slides = json.loads(files["en/notes.json"])
    page = files["en/slides/03-c1-permutation.svg"]
    assert b"<text" in page or b"<path" in page
    # --check judges by recipe and hashes: options not given come from the manifest (in this
    # process, conftest.run_here: what it says; the fresh processes below check the cache and
    # the cards folder, which this process may have read already)
    r = run_here("deck", "--out", str(deck_built), "--check", "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    # nor does it write to a cache (not even the deck text's parsed copy, a font-hash memo)
    empty = tmp_path / "empty-cache"
    empty.mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "posecards", "deck", "--out", str(deck_built), "--check"],
        capture_output=True,
        text=True,
        env={**os.environ, "POSECARDS_CACHE_DIR": str(empty)},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert not any(empty.iterdir()), sorted(p.name for p in empty.rglob("*"))
    r = run_here("deck", "--out", str(deck_built), "--cards", "1,3", "--check", "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_here("deck", "--out", str(deck_built), "--check", "--theme", "dark")
    assert r.returncode == 1 and "built with --theme light; asked for dark" in r.stdout
    copy = tmp_path / "copy"
    shutil.copytree(deck_built, copy)
    (copy / "en" / "deck.pptx").write_bytes(b"changed")
    (copy / "zh" / "slides" / "03-c1-permutation.png").unlink()
    r = run_here("deck", "--out", str(copy), "--check", "--quiet")
    assert r.returncode == 1
    assert "edited after the build: en/deck.pptx" in r.stdout
    assert "missing: zh/slides/03-c1-permutation.png" in r.stdout
    assert (copy / "en" / "deck.pptx").read_bytes() == b"changed"  # --check writes nothing
    # a changed speaker note makes every slide of the deck stale, and says why
    cards = tmp_path / "cards"
    shutil.copytree(Path(__file__).resolve().parent.parent / "cards", cards)
    deck_toml = cards / "deck.toml"
    deck_toml.write_text(deck_toml.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "posecards", "deck", "--out", str(deck_built), "--check"],
        capture_output=True,
        text=True,
        env={**os.environ, "POSECARDS_CARDS_DIR": str(cards)},
    )
    assert r.returncode == 1 and "card text changed: cards/deck.toml" in r.stdout, r.stdout
    pages = [(files["en/deck.pdf"], 0, 1.0), (files["en/deck.pdf"], 1, 0.5)]
    assert merge_pages(pages) == merge_pages(pages)
    # the PPTX: fixed zip times and core properties, so equal slides give equal bytes
    text_slides = [
        {**m, "subtitle": "s", "items": ["a", "b"]}
        for m in slides
        if m["kind"] in ("title", "closing", "sources")
    ]
    one = write_pptx(text_slides, {}, "en", "light")
    assert one == write_pptx(text_slides, {}, "en", "light")

    with zipfile.ZipFile(io.BytesIO(files["en/deck.pptx"])) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        core = z.read("docProps/core.xml").decode()
        assert "2000-01-01" in core and "posecards" in core


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cards", "99"], "--cards: unknown value '99'"),
        (["--format", "docx"], "--format: unknown value 'docx'"),
        (["--lang", "fr"], "--lang: unknown value 'fr'"),
        (["--theme", "pink"], "--theme: unknown value 'pink'"),
        (["--d-model", "7"], "--d-model must be an even integer"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    r = run("deck", "--out", str(tmp_path / "o"), *args)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and message in r.stderr
    assert not (tmp_path / "o").exists()


def has_image(resources: object, depth: int = 0) -> bool:
    """An image XObject in these PDF resources or in a form XObject they use."""
    xobjects = resources.get("/XObject", {})  # type: ignore[attr-defined]
    for x in xobjects.values():
        x = x.get_object()
        if x.get("/Subtype") == "/Image":
            return True
        if depth < 4 and "/Resources" in x and has_image(x["/Resources"].get_object(), depth + 1):
            return True
    return False


def test_libreoffice_renders_every_slide(deck_built: Path, tmp_path: Path) -> None:
    """LibreOffice converts both decks headless; every page has ink and an image where the
    slide has a picture; every font is embedded, and the Chinese deck is drawn with the
    Simplified Chinese forms of Noto Sans CJK. With system fonts, LibreOffice takes Debian's
    collection, whose faces pdffonts all names "NotoSansCJKjp" (tests/cjk_faces.py compares the
    glyphs themselves); on a machine with no fonts it gets posecards' own files (what the PPTX
    names), whose CJK file is the SC face."""
    from cjk_faces import collection, sc_and_jp_counts
    from conftest import fontless_env
    from pypdf import PdfReader

    from posecards import fonts

    require_libreoffice()
    plan = plan_deck(CARD_IDS)
    # a machine with no fonts: LibreOffice gets posecards' own files (what the PPTX names)
    own = [fonts.cjk_drawn_path()] + [f.path for f in fonts.font_files()[1:]]
    env = fontless_env(tmp_path / "fonts", own)
    out = tmp_path / "libreoffice"
    out.mkdir()
    for lang in ("en", "zh"):  # named by language: both are deck.pptx
        shutil.copyfile(deck_built / lang / "deck.pptx", tmp_path / f"{lang}.pptx")
    pdfs = to_pdf([tmp_path / "en.pptx", tmp_path / "zh.pptx"], out, env)
    for lang, pdf in zip(("en", "zh"), pdfs, strict=True):
        reader = PdfReader(str(pdf))
        assert len(reader.pages) == len(plan)
        for s, page in zip(plan, reader.pages, strict=True):
            if s.kind in ("overview", "panel", "animation"):
                assert has_image(page["/Resources"].get_object()), (lang, s.n)
            text = page.extract_text()
            if s.kind != "overview":
                assert text.strip(), (lang, s.n)
                if lang == "zh" and s.kind in ("title", "closing"):
                    assert CJK.search(text), (lang, s.n)
        listing = subprocess.run(
            ["pdffonts", str(pdf)], capture_output=True, text=True, check=True
        ).stdout
        rows = listing.splitlines()[2:]
        assert rows and all(" yes " in r for r in rows), listing
        if lang == "zh" and env is not None:
            # posecards' CJK file is the SC face; no other CJK font exists here
            assert "NotoSansCJKsc" in listing and "NotoSansCJKjp" not in listing, listing
        elif lang == "zh":
            assert "NotoSansCJK" in listing, listing
            assert collection("Regular") is not None, "CI installs fonts-noto-cjk"
            sc, jp = sc_and_jp_counts(pdf)
            assert sc >= 30 and jp == 0, (sc, jp)
        if shutil.which("pdftoppm"):
            from PIL import Image, ImageStat

            pages = str(out / f"{lang}-p")
            subprocess.run(["pdftoppm", "-r", "20", "-png", str(pdf), pages], check=True)
            pngs = sorted(out.glob(f"{lang}-p-*.png"))
            assert len(pngs) == len(plan)
            for p in pngs:
                with Image.open(p) as im:
                    assert max(ImageStat.Stat(im.convert("L")).stddev) > 5, p.name


def test_pptx_outline_alt_texts_and_languages(
    deck_built: Path, computed_cards: dict[int, Any]
) -> None:
    """What PowerPoint's outline view and accessibility checker read: every slide's title in
    its layout's title placeholder, every picture described (the panels as on the HTML pages,
    the card by its thesis, an animation by what its notes say it shows), every run of the
    slides and the notes tagged en-US or zh-CN with the SC face as its East Asian font, real
    bulleted paragraphs with a hanging indent, frames that shrink on overflow, and 16:9
    metadata (no "4:3" label, "Widescreen")."""
    import zipfile

    from pptx import Presentation
    from pptx.enum.shapes import PP_PLACEHOLDER
    from pptx.oxml.ns import qn

    from posecards.render.text import fill_card, load_card_text

    plan = plan_deck(CARD_IDS)
    contents = computed_cards  # compute_card(c, PEParams()) of every card (conftest.py)
    for lang in ("en", "zh"):
        path = deck_built / lang / "deck.pptx"
        prs = Presentation(str(path))
        meta = json.loads((deck_built / lang / "notes.json").read_text(encoding="utf-8"))
        cards = {c: fill_card(load_card_text(c), lang, contents[c].numbers) for c in CARD_IDS}
        titles = []
        for s, m, slide in zip(plan, meta, prs.slides, strict=True):
            title = slide.shapes.title
            assert title is not None and title.is_placeholder, (lang, s.n)
            assert title.placeholder_format.type in (
                PP_PLACEHOLDER.TITLE,
                PP_PLACEHOLDER.CENTER_TITLE,
            )
            assert title.text_frame.text == m["title"], (lang, s.n)
            titles.append(title.text_frame.text)
            pictures = [sh for sh in slide.shapes if sh.shape_type == 13]
            for pic in pictures:
                alt = pic._element.nvPicPr.cNvPr.get("descr")
                if s.kind == "panel":
                    expected = next(a for fid, _t, a, _c in cards[s.card].panels if fid == s.figure)
                elif s.kind == "overview":
                    expected = cards[s.card].thesis
                else:
                    expected = m["notes"].split("\n\n")[0]
                assert alt == expected, (lang, s.n, alt)
                assert len(alt) > 40 and bool(CJK.search(alt)) == (lang == "zh"), (lang, s.n)
            frames = [sh.text_frame for sh in slide.shapes if sh.has_text_frame]
            frames.append(slide.notes_slide.notes_text_frame)
            for tf in frames:
                for p in tf.paragraphs:
                    assert not p.text.lstrip().startswith("•"), (lang, s.n, p.text)
                    for r in p.runs:
                        rpr = r._r.find(qn("a:rPr"))
                        assert rpr is not None and rpr.get("lang") == LANG_TAG[lang], (lang, s.n)
                        assert rpr.find(qn("a:ea")).get("typeface") == SC, (lang, s.n)
            for sh in slide.shapes:
                if sh.has_text_frame:
                    body = sh.text_frame._txBody.find(qn("a:bodyPr"))
                    assert body.find(qn("a:normAutofit")) is not None, (lang, s.n, sh.name)
            if s.kind == "closing":
                (body,) = [p for p in slide.placeholders if p.placeholder_format.idx == 1]
                paragraphs = body.text_frame.paragraphs
                assert len(paragraphs) == len(CARD_IDS)
                for p in paragraphs:
                    ppr = p._p.find(qn("a:pPr"))
                    assert ppr.find(qn("a:buChar")).get("char") == "•"
                    assert int(ppr.get("marL")) > 0 and int(ppr.get("indent")) == -int(
                        ppr.get("marL")
                    )
        assert len(titles) == len(plan) and all(titles)
        with zipfile.ZipFile(path) as z:
            pres = z.read("ppt/presentation.xml").decode()
            app = z.read("docProps/app.xml").decode()
            theme = z.read("ppt/theme/theme1.xml").decode()
        size = re.search(r"<p:sldSz [^>]*>", pres)
        assert size and 'cx="12192000" cy="6858000"' in size[0] and "type=" not in size[0]
        assert "<PresentationFormat>Widescreen</PresentationFormat>" in app
        assert f"<Slides>{len(plan)}</Slides>" in app
        assert f'<a:majorFont><a:latin typeface="{SC}"/><a:ea typeface="{SC}"/>' in theme


def test_libreoffice_takes_the_regional_form_from_the_run_language(tmp_path: Path) -> None:
    """What makes LibreOffice draw Simplified Chinese forms: the run's language. The same slides
    tagged ja-JP come out in the Japanese forms although every typeface names the SC face, and
    tagged zh-CN in the Simplified Chinese forms (so the deck's zh-CN tags are what choose SC,
    on a machine whose default Asian language is Japanese too)."""
    from cjk_faces import collection, sc_and_jp_counts

    from posecards.deck.pptx import write_pptx

    require_libreoffice()
    if collection("Regular") is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI installs fonts-noto-cjk")
        pytest.skip("Noto Sans CJK collection not installed")
    text = "直骨写角化说误区：每个数字都是算出来的，编码、位置、注意力、旋转与插值都会出错"
    slides = [
        {"n": 1, "kind": "title", "title": text, "subtitle": text, "items": [text], "notes": text},
        {"n": 2, "kind": "closing", "title": text, "items": [text, text], "notes": text},
    ]
    deck = write_pptx(slides, {}, "zh", "light")
    tags = ("zh-CN", "ja-JP")
    for tag in tags:
        path = tmp_path / f"{tag}.pptx"
        with zipfile.ZipFile(io.BytesIO(deck)) as src, zipfile.ZipFile(path, "w") as dst:
            for info in src.infolist():
                data = src.read(info.filename)
                if info.filename.startswith("ppt/slides/slide"):
                    data = data.replace(b'lang="zh-CN"', f'lang="{tag}"'.encode())
                dst.writestr(info, data)
    pdfs = to_pdf([tmp_path / f"{tag}.pptx" for tag in tags], tmp_path / "libreoffice")
    counts = {tag: sc_and_jp_counts(pdf) for tag, pdf in zip(tags, pdfs, strict=True)}
    assert counts["zh-CN"][0] >= 8 and counts["zh-CN"][1] == 0, counts
    assert counts["ja-JP"][1] >= 8 and counts["ja-JP"][0] == 0, counts


def test_every_slide_png_draws_what_its_svg_draws(deck_built: Path) -> None:
    """A slide's PNG is the buffer of the slide's measuring draw: it must hold the picture that
    its SVG (drawn by librsvg) holds, not an empty canvas."""
    from filecheck import blurred_rms, rsvg_png, tools_missing
    from PIL import Image, ImageStat

    if missing := tools_missing():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must have {missing} (.ci/run installs them)")
        pytest.skip(f"{missing} not installed")
    checked = 0
    for lang in ("en", "zh"):
        for svg in sorted((deck_built / lang / "slides").glob("*.svg")):
            png = svg.with_suffix(".png").read_bytes()
            with Image.open(io.BytesIO(png)) as im:
                assert max(ImageStat.Stat(im.convert("L")).stddev) > 5, f"{svg.name}: blank"
            rms = blurred_rms(rsvg_png(svg, 960), png)
            assert rms < 10, f"{lang}/{svg.name}: PNG and SVG differ (blurred RMS {rms:.1f})"
            checked += 1
    assert checked == 2 * len(plan_deck((1, 3)))  # every slide of both decks (deck_built)


def test_deck_pdf_draws_alike_in_ghostscript_and_poppler(deck_built: Path) -> None:
    """Every reader draws the deck: Ghostscript like poppler, no warnings, TrueType fonts."""
    from filecheck import tools_missing
    from test_fonts import check_pdf

    if missing := tools_missing():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must have {missing} (.ci/run installs them)")
        pytest.skip(f"{missing} not installed")
    for lang in ("en", "zh"):
        check_pdf(deck_built / lang / "deck.pdf", dpi=72)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_title_slide_of_the_default_deck_fits(lang: str) -> None:
    """The default deck lists every card on its title slide (each card's full title): the
    agenda fits its box at its size (a full deck build would stop with SlideFitError)."""
    from posecards import __version__
    from posecards.config import DECK_CARD_IDS, PEParams
    from posecards.deck import draw as d
    from posecards.deck.notes import fill_slide, load_deck_text
    from posecards.figures.style import card_style
    from posecards.render.fill import fill
    from posecards.render.text import load_card_text

    deck = load_deck_text()
    p = PEParams()
    params = {"d_model": p.d_model, "base": p.base, "positions": p.positions}
    params |= {"version": __version__, "n_cards": len(DECK_CARD_IDS)}
    agenda = [f"{c}. {load_card_text(c).title.get(lang)}" for c in DECK_CARD_IDS]
    with card_style("light") as th:
        title = fill_slide(deck.title, lang, params).title
        subtitle = fill(deck.subtitle.get(lang), params, "deck.toml: 'deck.subtitle'")
        pic = d.title_slide(title, subtitle, agenda, th)
    assert pic.png.startswith(b"\x89PNG") and len(agenda) == len(DECK_CARD_IDS) == 10


def test_every_slide_of_the_whole_deck_is_titled_described_and_tagged(
    tmp_path: Path, computed_cards: dict[int, Any]
) -> None:
    """The whole deck (every card of DECK_CARD_IDS, the slide count from its plan): the PPTX
    written from each slide's title, notes and description has every title in the layout's
    title placeholder (the outline lists len(plan) titles), every picture described by its
    figure's description in the slide's language, and every run tagged. Stand-in pictures keep
    it fast; the built deck's pictures are checked end to end above."""
    from PIL import Image
    from pptx import Presentation
    from pptx.oxml.ns import qn

    from posecards import __version__
    from posecards.config import DECK_CARD_IDS, PEParams
    from posecards.deck.notes import fill_slide, load_deck_text
    from posecards.deck.plan import picture_name
    from posecards.deck.pptx import write_pptx
    from posecards.deck.slide_text import animation_values
    from posecards.engine.unitcache import plain
    from posecards.render.text import fill_card, load_card_text

    plan = plan_deck(DECK_CARD_IDS)
    deck = load_deck_text()
    params = PEParams()
    frame_values = {  # what the title and closing slides quote (deck.slide_text.frame_values)
        "d_model": params.d_model,
        "base": params.base,
        "positions": params.positions,
        "version": __version__,
        "n_cards": len(DECK_CARD_IDS),
    }
    # compute_card(c, PEParams()) of every card (conftest.py)
    numbers = {c: plain(computed_cards[c].numbers) for c in DECK_CARD_IDS}
    buf = io.BytesIO()
    Image.new("RGB", (16, 9), "white").save(buf, "PNG")
    png = buf.getvalue()
    buf = io.BytesIO()
    Image.new("RGB", (16, 9), "white").save(buf, "GIF")
    gif = buf.getvalue()
    for lang in ("en", "zh"):
        cards = {c: fill_card(load_card_text(c), lang, numbers[c]) for c in DECK_CARD_IDS}
        slides: list[dict[str, Any]] = []
        files: dict[str, bytes] = {}
        for s in plan:
            m: dict[str, Any] = {"n": s.n, "stem": s.stem, "kind": s.kind, "figure": s.figure}
            if s.kind in ("title", "closing", "sources"):
                text = {"title": deck.title, "closing": deck.closing, "sources": deck.sources}
                filled = fill_slide(text[s.kind], lang, frame_values)
                m.update(
                    subtitle="subtitle", items=[f"{c}. {cards[c].title}" for c in DECK_CARD_IDS]
                )
                alt = ""
            elif s.kind == "overview":
                assert s.card is not None
                filled = fill_slide(deck.cards[s.card], lang, numbers[s.card])
                alt = cards[s.card].thesis
            elif s.kind == "panel":
                assert s.card is not None
                filled = fill_slide(deck.panels[s.figure or ""], lang, numbers[s.card])
                shown = (*cards[s.card].panels, *cards[s.card].figures)  # a figure page's too
                alt = next(a for fid, _t, a, _c in shown if fid == s.figure)
            else:
                assert s.card is not None and s.figure is not None
                values = {**numbers[s.card], **animation_values(s.figure, PEParams())}
                filled = fill_slide(deck.animations[s.figure], lang, values)
                alt = ""
                files[f"{lang}/animations/{s.figure}.gif"] = gif
            m.update(title=filled.title, notes=filled.notes, alt=alt)
            files[picture_name(lang, s.stem)] = png
            slides.append(m)
        path = tmp_path / f"{lang}.pptx"
        path.write_bytes(write_pptx(slides, files, lang, "light"))
        prs = Presentation(str(path))
        assert len(prs.slides) == len(plan)
        for s, m, slide in zip(plan, slides, prs.slides, strict=True):
            title = slide.shapes.title
            assert title is not None and title.is_placeholder, (lang, s.n)
            assert title.text_frame.text == m["title"] and m["title"].strip(), (lang, s.n)
            assert "{{" not in m["title"] and bool(CJK.search(m["title"])) == (lang == "zh")
            pictures = [sh for sh in slide.shapes if sh.shape_type == 13]
            assert len(pictures) == (s.kind in ("overview", "panel", "animation")), (lang, s.n)
            for pic in pictures:
                alt = pic._element.nvPicPr.cNvPr.get("descr")
                expected = m["alt"] or m["notes"].split("\n\n")[0]
                assert alt == expected, (lang, s.n, alt)
                assert len(alt) > 40 and bool(CJK.search(alt)) == (lang == "zh"), (lang, s.n)
            frames = [sh.text_frame for sh in slide.shapes if sh.has_text_frame]
            for tf in [*frames, slide.notes_slide.notes_text_frame]:
                for p in tf.paragraphs:
                    for r in p.runs:
                        rpr = r._r.find(qn("a:rPr"))
                        assert rpr is not None and rpr.get("lang") == LANG_TAG[lang], (lang, s.n)
