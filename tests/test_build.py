"""`posecards build` end to end: files, sizes, text, determinism across builds and --jobs, --check,
the manifest, offline HTML, and one-line errors with exit code 2."""

from __future__ import annotations

import hashlib
import html
import json
import re
import struct
from pathlib import Path

import pytest
from conftest import FULL_BUILD_LOG, run, run_here, tree

from posecards.config import CARD_IDS
from posecards.render.text import load_card_text

ROOT = Path(__file__).resolve().parent.parent
# every figure a build writes: the panels of every card and the figures drawn for its figure
# pages only, as each card's text declares them
N_FIGURES = sum(len(load_card_text(c).figure_ids) for c in CARD_IDS)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def test_layout_of_outputs(built: Path) -> None:
    files = tree(built)
    for lang in ("en", "zh"):
        cards = sorted(k for k in files if re.fullmatch(rf"{lang}/card-\d+-[a-z0-9-]+\.png", k))
        assert len(cards) == len(CARD_IDS)
        for png in cards:
            stem = png[: -len(".png")]
            for ext in ("svg", "pdf", "html"):
                assert f"{stem}.{ext}" in files
            assert png_size(files[png]) == (1920, 1080)
            assert files[f"{stem}.pdf"].startswith(b"%PDF")
        figures = [k for k in files if k.startswith(f"{lang}/figures/") and k.endswith(".png")]
        assert len(figures) == N_FIGURES  # the panels and the figure-page-only figures
        assert {f[:-4] + ".svg" for f in figures} <= set(files)
    assert "index.html" in files and "manifest.json" in files
    assert not [k for k in files if "/." in k or k.startswith(".")], "no hidden helper files"


def test_manifest_lists_every_file_with_its_hash(built: Path) -> None:
    files = tree(built)
    man = json.loads(files["manifest.json"])
    assert man["parameters"] == {"d_model": 512, "base": 10000.0, "positions": 128}
    assert set(man["files"]) == set(files) - {"manifest.json"}
    for rel, digest in man["files"].items():
        assert hashlib.sha256(files[rel]).hexdigest() == digest
        assert not rel.startswith("/") and ".." not in rel
    assert {"numpy", "torch", "matplotlib", "umap-learn"} <= set(man["libraries"])


def test_html_is_offline_text_with_alt(built: Path) -> None:
    allowed = ("http://www.w3.org/", "http://purl.org/dc/", "http://creativecommons.org/ns#")
    for path in built.rglob("*"):
        if path.suffix not in (".html", ".svg"):
            continue
        text = path.read_text(encoding="utf-8")
        urls = re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}[^\s\"'<>)]*", text)
        external = [u for u in urls if not u.startswith(allowed) and not u.startswith("//www.w3")]
        assert not external, f"{path}: {external[:3]}"
        if path.suffix == ".html":
            assert "Content-Security-Policy" in text
            assert "default-src 'none'" in html.unescape(text)
            if path.name == "explore.html":  # its one inline script, allowed by hash only
                assert "script-src 'sha256-" in html.unescape(text) and "unsafe-eval" not in text
            else:
                assert "<script" not in text
    zh = (built / "zh").glob("card-2-*.html")
    page = next(zh).read_text(encoding="utf-8")
    assert 'lang="zh-Hans"' in page
    assert page.count('role="img" aria-label="') >= 5  # 4 panels + formula
    assert re.search(r"[\u4e00-\u9fff]{4}", page)


def test_same_inputs_same_bytes_across_jobs_and_subsets(built: Path, tmp_path: Path) -> None:
    """The shared full build (--jobs 2, all formats, from an empty cache of its own: every
    unit rendered) and a --jobs 1 build of cards 2 and 4 in Chinese (every font, CJK too) as
    PNG, SVG and PDF from another empty cache write the same bytes for those cards: neither
    --jobs nor which other cards, languages or formats were built changes a card's files. The
    second runs in this process (conftest.run_here), the first in its own: the same bytes
    either way."""
    log = (built.parent / FULL_BUILD_LOG).read_text(encoding="utf-8")
    assert f"0 of {2 * len(CARD_IDS)} card renders up to date in the cache" in log, log
    out = tmp_path / "jobs-1"
    r = run_here(
        *("build", "--out", str(out), "--cards", "2,4", "--lang", "zh", "--format", "png,svg,pdf"),
        *("--jobs", "1"),
        env={"POSECARDS_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert r.returncode == 0, r.stderr
    # both card units rendered in this run, none from a cache
    assert "0 of 2 card renders up to date in the cache" in r.stderr, r.stderr
    assert len(re.findall(r"rendered$", r.stderr, flags=re.M)) == 2, r.stderr
    mine, full = tree(out), tree(built)
    # no pages here: a subset's pages differ as they should (their links, their fonts: the
    # glyphs of every page of the build); test_fonts.py compares whole sites, pages too
    cards = [k for k in mine if k.startswith(("zh/card-", "zh/figures/"))]
    assert not any(k.endswith(".html") for k in mine)
    assert len(cards) > 15 and all(k in full for k in cards)
    differ = [k for k in cards if mine[k] != full[k]]
    assert not differ, differ[:5]


def test_check_reports_stale_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "small"
    opts = ["--out", str(out), "--cards", "2", "--lang", "en", "--format", "svg,html"]
    r = run_here("build", *opts, "--check")
    assert r.returncode == 1 and "missing: en/card-2-" in r.stdout
    assert not out.exists()  # --check never writes
    assert run_here("build", *opts, "--quiet").returncode == 0
    r = run_here("build", *opts, "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    target = next((out / "en").glob("card-2-*.svg"))
    target.write_bytes(target.read_bytes() + b" ")
    (out / "en" / "figures" / "c2-heatmap.svg").unlink()
    before = tree(out)
    r = run_here("build", *opts, "--check")
    assert r.returncode == 1
    assert f"edited after the build: en/{target.name}" in r.stdout
    assert "missing: en/figures/c2-heatmap.svg" in r.stdout
    assert tree(out) == before


def test_base_changes_the_numbers_in_the_text(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    r = run_here(
        "build",
        "--out",
        str(out),
        "--cards",
        "2",
        "--lang",
        "en",
        "--format",
        "html",
        "--base",
        "500000",
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    new = next((out / "en").glob("card-2-*.html")).read_text(encoding="utf-8")
    old = next((built / "en").glob("card-2-*.html")).read_text(encoding="utf-8")
    strip = lambda s: re.sub(r"<svg.*?</svg>", "", s, flags=re.S)  # noqa: E731
    nums_old = re.findall(r"\d[\d,.]*", strip(old))
    nums_new = re.findall(r"\d[\d,.]*", strip(new))
    assert nums_old != nums_new
    assert "base = 500,000" in new  # the footer, grouped like the card text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--d-model", "511"], "--d-model must be an even integer"),
        (["--d-model", "0"], "--d-model must be an even integer"),
        (["--d-model", "131072"], "--d-model must be an even integer from 2 to 65536"),
        (["--base", "1"], "--base must be a number greater than 1 and at most 3.403e+38"),
        (["--base", "nan"], "--base must be a number greater than 1 and at most 3.403e+38"),
        (["--base", "inf"], "--base must be a number greater than 1 and at most 3.403e+38"),
        (["--base", "3.5e38"], "--base must be a number greater than 1 and at most 3.403e+38"),
        (["--positions", "1"], "--positions must be from 2 to 131072"),
        (
            ["--cards", "99"],
            f"--cards: unknown value '99'; choose from: {','.join(map(str, CARD_IDS))}",
        ),
        (["--lang", "fr"], "--lang: unknown value 'fr'; choose from: en,zh"),
        (["--format", "gif"], "--format: unknown value 'gif'"),
        (["--theme", "blue"], "--theme: unknown value 'blue'; choose one of: light, dark"),
        (["--size", "a3"], "--size: unknown value 'a3'"),
        (["--jobs", "-1"], "--jobs must be from 1 to 64"),
        (["--jobs", "0"], "--jobs must be from 1 to 64, got 0"),
        (["--jobs", "65"], "--jobs must be from 1 to 64, got 65"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = run_here("build", "--out", str(out), *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("keep")
    r = run("build", "--out", str(f))
    assert r.returncode == 2 and "exists and is not a folder" in r.stderr
    assert f.read_text() == "keep"


def test_list_and_data(tmp_path: Path) -> None:
    r = run_here("list")
    assert r.returncode == 0
    ids = re.findall(r"^\s+(c\d+-[a-z0-9-]+)", r.stdout, flags=re.M)
    assert len(ids) == N_FIGURES
    r = run_here("data", "c4-alibi", "--format", "json")
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)
    r = run_here("data", "c9-nope")
    assert r.returncode == 2 and "unknown figure id 'c9-nope'" in r.stderr
