"""`posecards build --check`: judged by recipe and file hashes, without drawing. Each stale line
says why; options not given come from the manifest; outputs follow the umask."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ALL_FORMATS, run, run_here

from posecards.config import BuildConfig
from posecards.engine import inputs, judge, manifest
from posecards.render.build import plan_build


def check_site(cfg: BuildConfig) -> judge.Verdict:
    return judge.check(plan_build(cfg))


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dark, one-card, one-language site (png, svg, html)."""
    out = tmp_path_factory.mktemp("check") / "site"
    r = run_here(
        "build", "--out", str(out), "--cards", "2", "--lang", "en", "--format", "png,svg,html",
        "--theme", "dark", "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def copy(site: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "site"
    shutil.copytree(site, dest)
    return dest


def test_planned_files_are_the_files_a_build_writes(built: Path) -> None:
    # --check works out every file name from the options and card text alone
    man = json.loads((built / "manifest.json").read_text(encoding="utf-8"))
    cfg = BuildConfig(out=built, formats=tuple(ALL_FORMATS.split(",")))
    planned = set(plan_build(cfg).files)
    assert planned == set(man["files"])
    for unit in man["units"].values():
        assert len(unit["recipe"]) == 64 and unit["files"]


def test_a_full_site_checks_fresh_without_options(built: Path) -> None:
    r = run_here("build", "--out", str(built), "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "is up to date" in r.stdout


def test_check_imports_nothing_heavy(small: Path) -> None:
    code = (
        "import sys\nfrom posecards.cli import app\n"
        f"try:\n    app(['build', '--out', {str(small)!r}, '--check'])\n"
        "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "heavy = [m for m in ('matplotlib', 'numpy', 'torch', 'umap', 'numba') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_options_come_from_the_manifest(small: Path) -> None:
    r = run_here("build", "--out", str(small), "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_here("build", "--out", str(small), "--check", "--theme", "DARK", "--lang", "en")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_here("build", "--out", str(small), "--check", "--theme", "light")
    assert r.returncode == 1
    assert "built with --theme dark; asked for light" in r.stdout
    r = run_here("build", "--out", str(small), "--check", "--cards", "1,2", "--base", "500")
    assert r.returncode == 1
    assert "built with --cards 2; asked for 1,2" in r.stdout
    assert "built with --base 10000; asked for 500" in r.stdout


def test_a_hand_edited_png_and_a_missing_file_are_named(small: Path, tmp_path: Path) -> None:
    site = copy(small, tmp_path)
    png = next((site / "en").glob("card-2-*.png"))
    data = bytearray(png.read_bytes())
    data[-20] ^= 1
    png.write_bytes(bytes(data))
    (site / "en" / "figures" / "c2-similarity.svg").unlink()
    before = {p: p.read_bytes() for p in site.rglob("*") if p.is_file()}
    r = run_here("build", "--out", str(site), "--check")
    assert r.returncode == 1
    assert f"  edited after the build: en/{png.name}\n" in r.stdout
    assert "  missing: en/figures/c2-similarity.svg\n" in r.stdout
    # 23: card 2 in English with its 4 panel figures and 3 figure-page-only figures (+ pages)
    assert r.stdout.startswith(f"2 of 23 file(s) out of date in {site}:")
    assert {p: p.read_bytes() for p in site.rglob("*") if p.is_file()} == before


def test_an_edited_card_text_is_named(small: Path, tmp_path: Path) -> None:
    cards = tmp_path / "cards"
    shutil.copytree(ROOT / "cards", cards)
    text = cards / "card2.toml"
    text.write_text(text.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    env = {"POSECARDS_CARDS_DIR": str(cards)}
    r = run_here("build", "--out", str(small), "--check", env=env)
    assert r.returncode == 1
    # card 2 (en): card PNG/SVG, 7 figures × PNG/SVG, its page, 3 figure pages, the index
    assert "card text changed: cards/card2.toml (21 files)" in r.stdout
    # another card's text does not concern a card-2 site
    text.write_text((ROOT / "cards" / "card2.toml").read_text(encoding="utf-8"), encoding="utf-8")
    (cards / "card3.toml").write_text("# edited\n", encoding="utf-8")
    r = run_here("build", "--out", str(small), "--check", env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_code_template_and_library_changes_are_named(
    small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = BuildConfig(out=small, cards=(2,), langs=("en",), formats=("png", "svg", "html"))
    cfg = BuildConfig(**{**cfg.__dict__, "look": type(cfg.look)(theme="dark")})
    assert check_site(cfg).reasons == []
    libs = dict(inputs.library_versions())
    moved = tuple({**libs, "matplotlib": libs["matplotlib"] + ".post1"}.items())
    for module in (judge, manifest):
        monkeypatch.setattr(module, "library_versions", lambda names=inputs.LIBRARIES: moved)
    v = check_site(cfg)
    assert v.reasons == [
        f"library versions changed: matplotlib {libs['matplotlib']} -> {libs['matplotlib']}.post1"
    ]
    assert len(v.stale) == 22  # card 2's 21 files and explore.html
    monkeypatch.undo()
    shared = dict(inputs.shared_inputs())
    edited = {
        **shared,
        "templates/card.css": "0" * 64,
        "posecards/figures/card2.py": "1" * 64,
    }
    monkeypatch.setattr(manifest, "shared_inputs", lambda: tuple(edited.items()))
    assert check_site(cfg).reasons == [
        "templates changed: templates/card.css",
        "code changed: posecards/figures/card2.py",
    ]


def test_outputs_follow_the_umask(small: Path) -> None:
    # the fixture ran under the test process's umask (022 here): files 0644, as open() makes them
    mask = os.umask(0o022)
    os.umask(mask)
    modes = {p.stat().st_mode & 0o777 for p in small.rglob("*") if p.is_file()}
    assert modes == {0o666 & ~mask}


def test_outputs_follow_a_stricter_umask(tmp_path: Path) -> None:
    from posecards.engine.site import write_outputs

    old = os.umask(0o077)
    try:
        write_outputs(tmp_path, {"a/b.txt": b"x", "c.txt": b"y"})
    finally:
        os.umask(old)
    assert (tmp_path / "a" / "b.txt").stat().st_mode & 0o777 == 0o600
    old = os.umask(0o022)
    try:
        write_outputs(tmp_path, {"d.txt": b"z"})
    finally:
        os.umask(old)
    assert (tmp_path / "d.txt").stat().st_mode & 0o777 == 0o644


def _ci_commands() -> list[str]:
    """The posecards command of each recipe in docs/ci.md: the workflow's last `run:`, the
    pre-commit hook's `entry:`, the plain git hook's `exec` line."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(yaml|sh)\n(.*?)```", text, flags=re.S)
    workflow = next(b for lang, b in blocks if lang == "yaml" and "runs-on:" in b)
    hook = next(b for lang, b in blocks if lang == "yaml" and "hooks:" in b)
    git_hook = next(b for lang, b in blocks if lang == "sh" and b.startswith("#!/bin/sh"))
    yaml_workflow = yaml.safe_load(workflow)
    steps = yaml_workflow["jobs"]["cards-are-fresh"]["steps"]
    run_cmd = [s["run"] for s in steps if "run" in s and "posecards build" in s["run"]]
    entry = yaml.safe_load(hook)["repos"][0]["hooks"][0]["entry"]
    exec_line = [ln for ln in git_hook.splitlines() if ln.startswith("exec ")][0]
    return [*run_cmd, entry, exec_line.removeprefix("exec ")]


def test_the_ci_recipes_run_as_documented(small: Path, tmp_path: Path) -> None:
    commands = _ci_commands()
    assert len(commands) == 3 and all(c.startswith("posecards build ") for c in commands)
    repo = tmp_path / "course"
    shutil.copytree(small, repo / "docs" / "cards")
    for command in commands:
        args = shlex.split(command)[1:]
        r = run_here(*args, cwd=repo)
        assert r.returncode == 0, (command, r.stdout, r.stderr)
    page = next((repo / "docs" / "cards" / "en").glob("card-2-*.html"))
    page.write_text(page.read_text(encoding="utf-8") + " ", encoding="utf-8")
    for command in commands:
        r = run_here(*shlex.split(command)[1:], cwd=repo)
        assert r.returncode == 1 and f"edited after the build: en/{page.name}" in r.stdout


def _ppi(png: bytes) -> float:
    at = png.index(b"pHYs")
    x, y, unit = struct.unpack(">IIB", png[at + 4 : at + 13])
    assert x == y and unit == 1  # square pixels, per metre
    return x * 0.0254


def test_slide_cards_place_at_slide_size(built: Path) -> None:
    # PowerPoint and Keynote place a PNG by its pHYs: 1920 px at 144 ppi = 13.333 in, a 16:9 slide
    png = next((built / "en").glob("card-1-*.png")).read_bytes()
    width = struct.unpack(">I", png[16:20])[0]
    assert width == 1920
    assert abs(width / _ppi(png) - 13.333) < 0.01


def test_scale_multiplies_pixels_not_layout_and_pdf_images_are_print_resolution() -> None:
    from matplotlib.figure import Figure

    from posecards.render.files import PDF_RASTER_DPI, figure_bytes_multi

    def fig() -> Figure:
        f = Figure(figsize=(19.2, 10.8), dpi=100, layout="constrained")  # as the cards
        ax = f.add_subplot()
        ax.imshow([[0.0, 1.0], [1.0, 0.0]], interpolation="nearest")
        ax.set_title("a title")
        return f

    from posecards.figures.style import card_style

    with card_style("light"):
        one = figure_bytes_multi(fig(), ["png", "svg", "pdf"], 1, 13.333)
        two = figure_bytes_multi(fig(), ["png", "svg", "pdf"], 2, 13.333)
    w1, h1 = struct.unpack(">II", one["png"][16:24])
    w2, h2 = struct.unpack(">II", two["png"][16:24])
    assert (w1, h1) == (1920, 1080) and (w2, h2) == (3840, 2160)
    assert abs(w1 / _ppi(one["png"]) - 13.333) < 0.01
    assert abs(w2 / _ppi(two["png"]) - 13.333) < 0.01
    assert one["svg"] == two["svg"] and one["pdf"] == two["pdf"]  # only the PNG changes
    # the heatmap inside the PDF is resampled at print resolution, not at 72 or 100 dpi
    widths = [int(w) for w in re.findall(rb"/Width (\d+)", one["pdf"])]
    axes_inches = fig().add_subplot().get_position().height * 10.8  # a square image: its height
    assert max(widths) >= 0.9 * axes_inches * PDF_RASTER_DPI


@pytest.mark.parametrize("seed", range(4))
def test_the_layout_is_snapped_and_frozen_before_any_format(seed: int) -> None:
    """Constrained layout's solver can place an axes a last bit apart from run to run (its terms
    are added in an order that depends on memory addresses): the encoded layout is the solver's
    snapped to LAYOUT_GRID, whatever last bits the solver left; then no format re-runs it."""
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    from posecards.render.files import LAYOUT_GRID, figure_bytes_multi, freeze_layout

    def fig(jitter: float) -> Figure:
        f = Figure(figsize=(8.0, 6.0), dpi=100, layout="constrained")
        sub = f.subfigures(1, 2)[0]
        axes = sub.subplots(2, 1, sharex=True)
        axes[0].plot([0, 1], [0, 1])
        axes[0].set_title("a title")
        axes[1].set_ylabel("a label")
        if jitter:  # what a last-bit solver difference does: every position nudged by an ulp
            engine = f.get_layout_engine()
            run = engine.execute

            def nudged(figure: Any) -> None:
                run(figure)
                for ax in figure.get_axes():
                    p = ax.get_position().get_points()
                    ax._set_position(type(ax.get_position())(np.nextafter(p, p + jitter)))
                    ax._set_position(
                        type(ax.get_position())(np.nextafter(p, p + jitter)), "original"
                    )

            engine.execute = nudged  # type: ignore[method-assign]
        return f

    from posecards.figures.style import card_style

    rng = np.random.default_rng(seed)
    with card_style("light"):
        plain, nudged = fig(0.0), fig(float(rng.choice([-1.0, 1.0])))
        for f in (plain, nudged):
            freeze_layout(f)
            assert isinstance(f.get_layout_engine(), PlaceHolderLayoutEngine)
            for ax in f.get_axes():
                pts = ax.get_position().get_points()
                assert np.array_equal(pts, np.round(pts / LAYOUT_GRID) * LAYOUT_GRID)
        assert [a.get_position().bounds for a in plain.get_axes()] == [
            a.get_position().bounds for a in nudged.get_axes()
        ]
        formats = ["png", "svg", "pdf"]
        assert figure_bytes_multi(plain, formats) == figure_bytes_multi(nudged, formats)


def test_each_format_is_one_draw_of_the_frozen_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """savefig would lay a figure with an engine out once more (drawing disabled) before each
    encoding; a frozen layout skips that draw, and every format's bytes are those made with it."""
    import contextlib

    from matplotlib.figure import Figure

    from posecards.figures.style import card_style
    from posecards.render import files

    formats = ("png", "svg", "svg-live", "pdf")

    def encoded() -> tuple[dict[str, bytes], int]:
        with card_style("light"):
            f = Figure(figsize=(6.0, 4.0), dpi=100, layout="constrained")
            ax = f.subplots()
            ax.plot([0, 1], [0, 1], label="位置 p")
            ax.set_title("$\\theta_i$ and a title")
            ax.legend()
            draws = 0
            draw = f.draw

            def counted(renderer: Any) -> None:
                nonlocal draws
                draws += 1
                draw(renderer)

            f.draw = counted  # type: ignore[method-assign]
            return files.figure_bytes_multi(f, formats), draws

    skipped, one_each = encoded()
    monkeypatch.setattr(files, "without_pre_draw", lambda fig: contextlib.nullcontext())
    with_pre_draw, two_each = encoded()
    assert one_each == len(formats) and two_each == 2 * len(formats)
    assert skipped == with_pre_draw


def test_bad_scale_is_one_line(tmp_path: Path) -> None:
    r = run("build", "--out", str(tmp_path / "x"), "--scale", "9")
    assert (
        r.returncode == 2
        and r.stderr.strip() == "posecards: error: --scale must be from 1 to 4, got 9"
    )


def test_an_old_manifest_and_an_inspection_folder(small: Path, tmp_path: Path) -> None:
    site = copy(small, tmp_path)
    doc = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    del doc["inputs"]
    (site / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    r = run_here("build", "--out", str(site), "--check")
    assert r.returncode == 1 and "records no recipes" in r.stdout
    doc["made_by"] = "posecards inspect"
    (site / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    r = run_here("build", "--out", str(site), "--check")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "was made by posecards inspect" in r.stderr


def test_render_comparison_tolerates_last_bits_not_changes(small: Path) -> None:
    import io

    import numpy as np
    from PIL import Image

    from posecards.engine.judge import compare_render

    files = {
        str(p.relative_to(small)): p.read_bytes()
        for p in small.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }
    assert compare_render(small, files) == []
    png_rel = next(k for k in files if k.endswith(".png") and "/figures/" not in k)
    svg_rel = next(k for k in files if k.endswith(".svg") and "/figures/" not in k)

    def png_with(change: Any) -> bytes:
        img = np.asarray(Image.open(io.BytesIO(files[png_rel])).convert("RGBA")).copy()
        change(img)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="png")
        return buf.getvalue()

    def one_level(img: Any) -> None:  # an anti-aliased pixel one level lighter
        img[500, 500, 0] = min(255, int(img[500, 500, 0]) + 1)

    def block(img: Any) -> None:  # a word's worth of pixels changed
        img[40:90, 60:600, :3] = 255 - img[40:90, 60:600, :3]

    ids = re.findall(rb'id="([^"]+)"', files[svg_rel])
    renamed = files[svg_rel]
    for i, name in enumerate(ids):  # whole ids only: in id="…", url(#…) and href="#…"
        renamed = re.sub(rb'(?<=["#])' + re.escape(name) + rb'(?=[")])', b"other%d" % i, renamed)
    fresh = {**files, png_rel: png_with(one_level), svg_rel: renamed}
    assert compare_render(small, fresh) == []
    fresh = {**files, png_rel: png_with(block), svg_rel: renamed.replace(b"</svg>", b"<g/></svg>")}
    stale = sorted(compare_render(small, fresh))  # .png before .svg
    assert len(stale) == 2
    assert stale[0].startswith(f"differs from a fresh render: {png_rel} (pixel RMS")
    assert stale[1] == f"differs from a fresh render: {svg_rel}"


def test_check_render_on_a_fresh_site(small: Path) -> None:
    r = run_here("build", "--out", str(small), "--check", "--render", "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_here("build", "--out", str(small), "--render")
    assert r.returncode == 2 and "--render goes with --check" in r.stderr
