"""Every private matplotlib name posecards relies on lives in posecards/mpl_internals.py, and each
one is checked here against the installed matplotlib: present, with the signature and the
behaviour relied upon. A failure names the function of mpl_internals that needs a look; the
matplotlib bound in pyproject.toml moves only after these pass on the new version."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import re
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib as mpl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from posecards import mpl_internals as door

ROOT = Path(__file__).resolve().parent.parent
DOOR = ROOT / "posecards" / "mpl_internals.py"


def _relied(ok: object, function: str, what: str) -> None:
    """Fail with one line naming the matplotlib version, what changed and the door function."""
    if not ok:
        pytest.fail(
            f"matplotlib {mpl.__version__}: {what} -- posecards.mpl_internals.{function} relies "
            f"on it (written against {door.TESTED_WITH}); read matplotlib's code again, update "
            "that function and the matplotlib bound in pyproject.toml",
            pytrace=False,
        )


@contextlib.contextmanager
def _relying(function: str) -> Iterator[None]:
    """Any error in the block (a name gone, another signature) fails as _relied does."""
    try:
        yield
    except Exception as e:  # _relied's failures are not Exceptions: they pass through
        _relied(False, function, f"{type(e).__name__}: {e}")


# ------------------------------------------------------------------------------ the one door

# private names of other libraries, allowed where they are (file, expression): not matplotlib's
OTHER_LIBRARIES = {
    ("deck/pptx.py", "theme._blob"): "python-pptx: a theme part's XML has no public setter",
    ("deck/pptx.py", "run._r"): "python-pptx: a run's lxml element (language and faces)",
    ("deck/pptx.py", "p._p"): "python-pptx: a paragraph's lxml element",
    ("deck/pptx.py", "picture._element"): "python-pptx: a picture's lxml element (alt text)",
    ("render/files.py", "writer._info"): "pypdf: no /Info dictionary (no dates, no producer)",
    ("encodings/projection.py", "getattr(kernel, '_cache', None)"): "numba: a kernel's cache",
    (
        "engine/executor.py",
        "getattr(getattr(forkserver, '_forkserver', None), '_stop', None)",
    ): "multiprocessing: stop the fork server",
    ("engine/executor.py", "getattr(forkserver, '_forkserver', None)"): "multiprocessing",
    ("model/probe/meta_ops.py", "torch._ops"): "torch: OpOverload, the type of the op a dispatch "
    "mode receives (torch names it nowhere public)",
    ("model/probe/meta_ops.py", "torch.ops.aten._unsafe_view"): "torch: an aten op whose own name "
    "starts with an underscore (not a private attribute)",
    ("model/probe/meta_ops.py", "func._schema"): "torch: an op's schema (mutable? do its returns "
    "alias?), as torch's own dispatch modes read it",
    ("engine/executor.py", "getattr(pool, '_processes', None)"): "multiprocessing: the workers",
    (
        "model/probe/__init__.py",
        "text._attn_implementation",
    ): "transformers: the attention a config asks "
    "for (eager: the kernel the probe records; the documented way to choose it on a config)",
    (
        "model/probe/__init__.py",
        "text._experts_implementation",
    ): "transformers: the experts' kernel (eager)",
    (
        "model/probe/__init__.py",
        "hasattr(text, '_experts_implementation')",
    ): "transformers: likewise",
}


def _private_uses(path: Path) -> list[str]:
    """Private names ``path`` reaches on objects other than its own (self, cls): attributes,
    getattr-like strings, and imports of private matplotlib modules or names."""
    out = []
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__"):
            if not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")):
                out.append(ast.unparse(n))
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(n.args) > 1
            and isinstance(n.args[1], ast.Constant)
            and str(n.args[1].value).startswith("_")
            and not str(n.args[1].value).startswith("__")
        ):
            out.append(ast.unparse(n))
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith("matplotlib"):
            names = [*(n.module or "").split("."), *(a.name for a in n.names)]
            if any(x.startswith("_") for x in names):
                out.append(ast.unparse(n))
        elif isinstance(n, ast.Import):
            out += [
                ast.unparse(n)
                for a in n.names
                if a.name.startswith("matplotlib") and "._" in a.name
            ]
    return out


def test_no_private_matplotlib_name_outside_the_door() -> None:
    found = []
    for path in sorted((ROOT / "posecards").rglob("*.py")):
        if path == DOOR:
            continue
        rel = path.relative_to(ROOT / "posecards").as_posix()
        found += [f"{rel}: {u}" for u in _private_uses(path) if (rel, u) not in OTHER_LIBRARIES]
    assert not found, (
        "private names outside posecards/mpl_internals.py (move them behind it, with a test "
        "here; another library's: OTHER_LIBRARIES with its reason):\n" + "\n".join(found)
    )


def test_the_scan_finds_what_it_looks_for() -> None:
    # the scan above reports what it is meant to (so that an empty report means something)
    uses = _private_uses(DOOR)
    for expected in (
        "font_manager.FontManager._findfont_cached",
        "from matplotlib.backends import _backend_pdf_ps, backend_pdf",
        "from matplotlib.text import _get_text_metrics_with_cache",
        "place._set_position",
        "text._get_layout",
    ):
        assert any(u.startswith(expected) for u in uses), (expected, uses)


def test_the_matplotlib_bound_is_the_version_these_tests_read() -> None:
    """pyproject.toml accepts the minor version mpl_internals was read from, and no later one;
    the installed matplotlib is that version."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (spec,) = [d for d in deps["dependencies"] if re.match(r"matplotlib\b", d)]
    major, minor = (int(x) for x in door.TESTED_WITH.split("."))
    assert spec.replace(" ", "") == f"matplotlib>={major}.{minor},<{major}.{minor + 1}", spec
    installed = tuple(int(x) for x in mpl.__version__.split(".")[:2])
    _relied(installed == (major, minor), "TESTED_WITH", "another minor version is installed")


# ------------------------------------------------------------------------------ the font list


@_relying("only_fonts")
def test_only_fonts() -> None:
    from matplotlib import font_manager

    cached = getattr(font_manager.FontManager, "_findfont_cached", None)
    _relied(
        callable(getattr(cached, "cache_clear", None))
        and callable(getattr(cached, "cache_info", None)),
        "only_fonts",
        "FontManager._findfont_cached is no longer an lru_cache",
    )
    fm = font_manager.fontManager
    _relied(
        isinstance(fm.ttflist, list)
        and all(isinstance(e, font_manager.FontEntry) for e in fm.ttflist),
        "only_fonts",
        "FontManager.ttflist is no longer a list of FontEntry",
    )
    mono = Path(mpl.get_data_path()) / "fonts" / "ttf" / "DejaVuSansMono.ttf"
    probe = font_manager.FontEntry(fname=str(mono), name="Posecards Probe")
    saved = fm.ttflist
    font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"))  # an answer cached
    with door.only_fonts([probe]):
        _relied(
            cached.cache_info().currsize == 0,  # type: ignore[union-attr]
            "only_fonts",
            "the findfont cache is not emptied by _findfont_cached.cache_clear",
        )
        found = font_manager.findfont(font_manager.FontProperties(family="Posecards Probe"))
        _relied(found == str(mono), "only_fonts", f"findfont does not score ttflist ({found})")
    assert fm.ttflist is saved
    _relied(
        cached.cache_info().currsize == 0,  # type: ignore[union-attr]
        "only_fonts",
        "an answer from inside the block outlives it",
    )


# ---------------------------------------------------------------------------- mathtext parses


@_relying("shared_math_parses")
def test_shared_math_parses() -> None:
    from matplotlib import mathtext
    from matplotlib.font_manager import FontProperties

    cached = getattr(mathtext.MathTextParser, "_parse_cached", None)
    parse = getattr(cached, "__wrapped__", None)
    _relied(
        parse is not None,
        "shared_math_parses",
        "MathTextParser._parse_cached is not a cache around a parse (__wrapped__)",
    )
    params = list(inspect.signature(parse).parameters)  # type: ignore[arg-type]
    _relied(
        params == ["self", "s", "dpi", "prop", "antialiased", "load_glyph_flags"],
        "shared_math_parses",
        f"MathTextParser._parse_cached takes {params}",
    )
    kinds = {o: getattr(mathtext.MathTextParser(o), "_output_type", None) for o in ("path", "agg")}
    _relied(
        kinds == {"path": "vector", "agg": "raster"},
        "shared_math_parses",
        f"MathTextParser._output_type is {kinds}",
    )
    prop = FontProperties(size=12)
    with door.shared_math_parses():
        a = mathtext.MathTextParser("path").parse(r"$x_i^2$", 72, prop)
        b = mathtext.MathTextParser("path").parse(r"$x_i^2$", 72, prop)
    _relied(a is b, "shared_math_parses", "MathTextParser.parse does not call _parse_cached")
    assert mathtext.MathTextParser._parse_cached is cached


@_relying("MATH_PARSE_RC")
def test_the_math_parse_key_names_every_rcparam_a_parse_reads() -> None:
    """MATH_PARSE_RC holds every rcParam matplotlib's mathtext reads that is not in its
    arguments (``mathtext.fontset`` is: the font properties' math family)."""
    source = (Path(mpl.__file__).parent / "_mathtext.py").read_text(encoding="utf-8")
    literal = set(re.findall(r"rcParams\[['\"]([\w.]+)['\"]\]", source))
    prefixed = re.findall(r"rcParams\[['\"](mathtext\.)['\"] \+ (\w+)\]", source)
    texfonts = re.search(r'for texfont in "([\w ]+)"\.split\(\)', source)
    _relied(
        prefixed == [("mathtext.", "texfont")] and texfonts is not None,
        "MATH_PARSE_RC",
        "_mathtext.py reads its font rcParams in another way",
    )
    assert texfonts is not None
    reads = literal | {f"mathtext.{f}" for f in texfonts.group(1).split()}
    missing = reads - set(door.MATH_PARSE_RC)
    _relied(not missing, "MATH_PARSE_RC", f"_mathtext.py reads {sorted(missing)} too")
    every = {k for k in mpl.rcParams if k.startswith("mathtext.")} - {"mathtext.fontset"}
    missing = every - set(door.MATH_PARSE_RC)
    _relied(not missing, "MATH_PARSE_RC", f"new mathtext rcParams {sorted(missing)}")


# ------------------------------------------------------------------------------ text metrics


def _canvas(**kw: Any) -> tuple[Figure, Any]:
    fig = Figure(figsize=(3, 2), dpi=100, **kw)
    canvas = FigureCanvasAgg(fig)
    return fig, canvas.get_renderer()


@_relying("text_metrics")
def test_text_metrics() -> None:
    from matplotlib import text as mtext
    from matplotlib.font_manager import FontProperties

    fn = getattr(mtext, "_get_text_metrics_with_cache", None)
    _relied(fn is not None, "text_metrics", "matplotlib.text._get_text_metrics_with_cache is gone")
    params = list(inspect.signature(fn).parameters)  # type: ignore[arg-type]
    _relied(
        params == ["renderer", "text", "fontprop", "ismath", "dpi"],
        "text_metrics",
        f"_get_text_metrics_with_cache takes {params}",
    )
    _, renderer = _canvas()
    prop = FontProperties(size=14)
    for s, ismath in (("position 12", False), (r"$\theta_i$", True)):
        got = door.text_metrics(renderer, s, prop, ismath, 100.0)
        want = renderer.get_text_width_height_descent(s, prop, ismath)
        _relied(
            got == tuple(float(v) for v in want) and got[0] > 0,
            "text_metrics",
            f"_get_text_metrics_with_cache gives {got}, the renderer {want}",
        )


def _agg_measures() -> Any:
    """A spy on RendererAgg.get_text_width_height_descent: the measures FreeType makes."""
    from matplotlib.backends.backend_agg import RendererAgg

    calls: list[str] = []
    original = RendererAgg.get_text_width_height_descent

    def spy(self: Any, s: str, prop: Any, ismath: Any) -> Any:
        calls.append(s)
        return original(self, s, prop, ismath)

    return calls, spy


@_relying("shared_text_metrics")
def test_shared_text_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line measured on one Agg renderer is not measured again on another one (a Text laid
    out on a new canvas included), with the renderer's own numbers; a size, an rcParam of the
    key, only_fonts' list or the dpi measures afresh; SVG keeps matplotlib's cache; bounded."""
    from matplotlib import text as mtext
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    calls, spy = _agg_measures()
    monkeypatch.setattr(RendererAgg, "get_text_width_height_descent", spy)
    prop = FontProperties(size=14)
    with door.shared_text_metrics():
        _, first = _canvas()
        got = door.text_metrics(first, "position 12", prop, False, 100.0)
        fig, second = _canvas()
        again = door.text_metrics(second, "position 12", prop, False, 100.0)
        assert calls == ["position 12"] and again == got  # one FreeType measure, two renderers
        want = RendererAgg.get_text_width_height_descent(second, "position 12", prop, False)
        assert got == tuple(float(v) for v in want)
        calls.clear()
        fig.text(0.1, 0.1, "position 12", fontproperties=prop)
        fig.canvas.draw()  # matplotlib's Text layout asks the module-level function
        _relied(
            "position 12" not in calls,
            "shared_text_metrics",
            "Text._get_layout does not measure through matplotlib.text."
            "_get_text_metrics_with_cache",
        )
        for change in (
            lambda: door.text_metrics(second, "position 12", FontProperties(size=15), False, 100),
            lambda: door.text_metrics(
                FigureCanvasAgg(Figure(dpi=200)).get_renderer(), "position 12", prop, False, 200.0
            ),
        ):
            calls.clear()
            change()
            assert calls == ["position 12"]
        # (a new renderer each: matplotlib's own cache per renderer does not key on these)
        for rc in ({"text.hinting": "no_hinting"}, {"font.sans-serif": ["DejaVu Serif"]}):
            calls.clear()
            with mpl.rc_context(rc):
                door.text_metrics(_canvas()[1], "position 12", prop, False, 100.0)
            assert calls == ["position 12"], rc
        calls.clear()
        with door.only_fonts(list(mpl.font_manager.fontManager.ttflist)):
            door.text_metrics(_canvas()[1], "position 12", prop, False, 100.0)
        assert calls == ["position 12"]
        svg_calls: list[str] = []
        from matplotlib.backends.backend_svg import RendererSVG

        original_svg = RendererSVG.get_text_width_height_descent
        monkeypatch.setattr(
            RendererSVG,
            "get_text_width_height_descent",
            lambda self, s, p, m: svg_calls.append(s) or original_svg(self, s, p, m),
        )
        svg = RendererSVG(3, 2, io.StringIO())
        door.text_metrics(svg, "position 12", prop, False, 72.0)
        assert svg_calls == ["position 12"]  # not answered from the Agg measures
        monkeypatch.setattr(door, "SHARED_METRICS", 3)
        for k in range(5):
            door.text_metrics(second, f"line {k}", prop, False, 100.0)
        calls.clear()
        door.text_metrics(second, "line 4", prop, False, 100.0)  # kept
        _, third = _canvas()
        door.text_metrics(third, "line 0", prop, False, 100.0)  # dropped: measured again
        assert calls == ["line 0"]
    assert not getattr(mtext._get_text_metrics_with_cache, "shared_by_posecards", False)


def test_the_text_metrics_key_names_every_rcparam_an_agg_measure_reads() -> None:
    """TEXT_METRICS_RC holds the rcParams read by the functions an Agg measure of a line runs
    (the font lookup's are FONT_LOOKUP_RC, the mathtext parse's MATH_PARSE_RC)."""
    from matplotlib import font_manager
    from matplotlib.backends import backend_agg

    functions = [
        backend_agg.RendererAgg.get_text_width_height_descent,
        backend_agg.RendererAgg._prepare_font,
        backend_agg.get_hinting_flag,
        font_manager.get_font,
        font_manager.FontManager._find_fonts_by_props,
    ]
    reads = set()
    for f in functions:
        reads |= set(re.findall(r"rcParams\[['\"]([\w.-]+)['\"]\]", inspect.getsource(f)))
    reads |= set(door.FONT_LOOKUP_RC)
    missing = reads - set(door.TEXT_METRICS_RC)
    _relied(not missing, "shared_text_metrics", f"an Agg measure reads {sorted(missing)} too")
    lookup = inspect.getsource(font_manager.FontManager.findfont)
    keys = re.search(r'rcParams\[f"font\.\{key\}"\] for key in \[([^\]]*)\]', lookup)
    _relied(keys is not None, "shared_font_lookups", "findfont reads its rcParams in another way")
    assert keys is not None
    named = {f"font.{k}" for k in re.findall(r'"([\w-]+)"', keys.group(1))}
    _relied(
        named == set(door.FONT_LOOKUP_RC),
        "shared_font_lookups",
        f"findfont reads {sorted(named)}",
    )
    _relied(
        "MPL_IGNORE_SYSTEM_FONTS" in lookup,
        "shared_font_lookups",
        "findfont no longer reads MPL_IGNORE_SYSTEM_FONTS",
    )


@_relying("shared_font_lookups")
def test_shared_font_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files of a family list are looked up once per key, the list matplotlib gives (a
    copy); an rcParam of the key or only_fonts' list looks up afresh; bounded."""
    from matplotlib import font_manager
    from matplotlib.font_manager import FontProperties

    fm = font_manager.fontManager
    original = font_manager.FontManager._find_fonts_by_props
    params = list(inspect.signature(original).parameters)
    _relied(
        params
        == ["self", "prop", "fontext", "directory", "fallback_to_default", "rebuild_if_missing"],
        "shared_font_lookups",
        f"FontManager._find_fonts_by_props takes {params}",
    )
    looked: list[Any] = []

    def spy(self: Any, prop: Any, *args: Any) -> Any:
        looked.append(prop)
        return original(self, prop, *args)

    monkeypatch.setattr(font_manager.FontManager, "_find_fonts_by_props", spy)
    prop = FontProperties(family=["DejaVu Sans", "DejaVu Serif"], size=11)
    want = original(fm, prop)
    with door.shared_font_lookups():
        got = fm._find_fonts_by_props(prop)
        got.append("scribbled")  # a copy: the memo's answer stays matplotlib's
        again = fm._find_fonts_by_props(prop.copy())
        assert len(looked) == 1 and again == want
        _, renderer = _canvas()
        renderer.get_text_width_height_descent("abc", prop, False)  # Agg asks the same way
        assert len(looked) == 1
        with mpl.rc_context({"font.sans-serif": ["DejaVu Serif"]}):
            fm._find_fonts_by_props(prop)
        assert len(looked) == 2
        with door.only_fonts(list(fm.ttflist)):
            fm._find_fonts_by_props(prop)
        assert len(looked) == 3
        fm._find_fonts_by_props(FontProperties(family="DejaVu Sans", weight="bold"))
        assert len(looked) == 4
        monkeypatch.setattr(door, "SHARED_LOOKUPS", 1)  # only the newest kept
        bold = FontProperties(family="DejaVu Sans", weight="bold")
        fm._find_fonts_by_props(bold)
        n = len(looked)
        fm._find_fonts_by_props(prop)
        fm._find_fonts_by_props(prop)
        fm._find_fonts_by_props(bold)
        assert len(looked) == n + 2
    assert font_manager.FontManager._find_fonts_by_props is spy


@_relying("text_lines")
def test_text_lines() -> None:
    fig, renderer = _canvas()
    t = fig.text(0.1, 0.5, "first line\n$x^2$ second", fontsize=12)
    lines = door.text_lines(t, renderer)
    _relied(
        [(s, m) for s, m, _, _ in lines] == [("first line", False), ("$x^2$ second", True)],
        "text_lines",
        f"Text._get_layout / Text._preprocess_math give {lines}",
    )
    (_, _, x0, y0), (_, _, x1, y1) = lines
    _relied(x0 == x1 == 0.0 and y1 < y0, "text_lines", f"line offsets {(x0, y0)}, {(x1, y1)}")
    plain = fig.text(0.1, 0.2, r"cost \$5", fontsize=12)
    ((s, m, _, _),) = door.text_lines(plain, renderer)
    _relied((s, m) == ("cost $5", False), "text_lines", f"_preprocess_math gives {(s, m)}")


@_relying("draw_disabled")
def test_draw_disabled() -> None:
    import numpy as np

    fig, renderer = _canvas(facecolor="white")
    t = fig.text(0.5, 0.5, "ink", fontsize=30, color="black")
    before = np.asarray(renderer.buffer_rgba()).copy()
    with door.draw_disabled(renderer):
        fig.draw(renderer)
    _relied(
        np.array_equal(np.asarray(renderer.buffer_rgba()), before),
        "draw_disabled",
        "RendererBase._draw_disabled lets a draw paint",
    )
    _relied(t.get_window_extent(renderer).width > 0, "draw_disabled", "the draw laid nothing out")
    fig.draw(renderer)
    assert not np.array_equal(np.asarray(renderer.buffer_rgba()), before)  # a real draw paints


# -------------------------------------------------------------------------------- the layout


@_relying("set_position_in_layout")
def test_set_position_in_layout() -> None:
    from matplotlib.axes import Axes
    from matplotlib.transforms import Bbox

    params = list(inspect.signature(Axes._set_position).parameters)  # type: ignore[attr-defined]
    _relied(
        params == ["self", "pos", "which"],
        "set_position_in_layout",
        f"Axes._set_position takes {params}",
    )
    fig, _ = _canvas(layout="constrained")
    ax = fig.add_subplot()
    box = Bbox([[0.2, 0.25], [0.7, 0.75]])
    door.set_position_in_layout(ax, box, "original")
    _relied(
        ax.get_position(original=True).bounds == box.bounds and ax.get_in_layout(),
        "set_position_in_layout",
        "Axes._set_position(which='original') sets another box or takes the axes out of the layout",
    )
    moved = Bbox([[0.3, 0.3], [0.6, 0.6]])
    door.set_position_in_layout(ax, moved, "active")
    _relied(
        ax.get_position(original=True).bounds == box.bounds and ax._position.bounds == moved.bounds,  # type: ignore[attr-defined]
        "set_position_in_layout",
        "Axes._set_position(which='active') sets another box",
    )


@_relying("layout_engine_hidden")
def test_layout_engine_hidden() -> None:
    fig, _ = _canvas(layout="constrained")
    engine = fig.get_layout_engine()
    _relied(
        engine is not None and getattr(fig, "_layout_engine", None) is engine,
        "layout_engine_hidden",
        "Figure.get_layout_engine does not return Figure._layout_engine",
    )
    with door.layout_engine_hidden(fig):
        _relied(
            fig.get_layout_engine() is None,
            "layout_engine_hidden",
            "a Figure whose _layout_engine is None still has an engine",
        )
    assert fig.get_layout_engine() is engine


@_relying("keep_title_positions")
def test_keep_title_positions() -> None:
    fig, renderer = _canvas()
    ax = fig.add_subplot()
    ax.set_title("a title")
    fig.draw(renderer)
    _relied(
        getattr(ax, "_autotitlepos", "absent") in (None, True, False),
        "keep_title_positions",
        "Axes._autotitlepos is gone",
    )
    placed = ax.title.get_position()[1]
    door.keep_title_positions(ax)
    ax.title.set_y(placed + 0.25)
    fig.draw(renderer)
    _relied(
        ax.title.get_position()[1] == placed + 0.25,
        "keep_title_positions",
        "the title is placed again on a draw with Axes._autotitlepos False",
    )


# ------------------------------------------------------------------------ PDF font embedding

# matplotlib 3.11's PdfFile.writeFonts without its debug logging: the copy in
# mpl_internals.pdf_font_hooks differs only in the sort key of the second loop
WRITE_FONTS_3_11 = """
def writeFonts(self):
    fonts = {}
    for pdfname, dvifont in sorted(self._dviFontInfo.items()):
        fonts[pdfname] = self._embedTeXFont(dvifont)
    for (filename, subset), Fx in sorted(self._fontNames.items()):
        if filename.endswith('.afm'):
            fonts[Fx] = self._write_afm_font(filename)
        else:
            charmap = self._character_tracker.used[filename][subset]
            fonts[Fx] = self.embedTTF(filename, subset, charmap)
    self.writeObject(self.fontObject, fonts)
"""


@_relying("pdf_font_hooks")
def test_the_copied_write_fonts_is_matplotlibs() -> None:
    from matplotlib.backends.backend_pdf import PdfFile

    source = inspect.getsource(PdfFile.writeFonts)
    lines = [ln for ln in source.splitlines() if ln.strip() and "_log." not in ln]
    lines = [ln for ln in lines if not ln.strip().startswith("#")]
    code = textwrap.dedent("\n".join(lines))
    _relied(
        code == WRITE_FONTS_3_11.strip(),
        "pdf_font_hooks",
        "PdfFile.writeFonts is not the one copied there:\n" + code,
    )


def _pdf(hooked: dict[str, list[Any]] | None) -> bytes:
    """A PDF of two fonts (DejaVu Sans and its oblique, the math italic), with recording
    hooks that change nothing (``hooked``: what each was called with) or without hooks."""
    fig = Figure(figsize=(2, 1))
    fig.text(0.1, 0.6, "position 12")
    fig.text(0.1, 0.2, r"$\theta_i$")
    buf = io.BytesIO()
    meta = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}
    if hooked is None:
        with mpl.rc_context({"pdf.fonttype": 42}):  # TrueType subsets, as card.mplstyle asks
            fig.savefig(buf, format="pdf", metadata=meta)
        return buf.getvalue()

    class Subset:
        def __init__(self, module: Any) -> None:
            hooked["subset_module"].append(module)
            self.module = module

        def __getattr__(self, name: str) -> Any:
            return getattr(self.module, name)

        def load_font(self, *args: Any, **kwargs: Any) -> Any:
            hooked["load_font"].append(args[0])
            return self.module.load_font(*args, **kwargs)

    def order(path: Any, sub: int) -> Any:
        hooked["font_order"].append((path, sub))
        return (path, sub)  # what matplotlib sorts by

    with (
        mpl.rc_context({"pdf.fonttype": 42}),
        door.pdf_font_hooks(
            before_embed=lambda font: hooked["before_embed"].append(font),
            subset_module=Subset,
            font_order=order,
        ),
    ):
        fig.savefig(buf, format="pdf", metadata=meta)
    return buf.getvalue()


@_relying("pdf_font_hooks")
def test_pdf_font_hooks() -> None:
    from fontTools import subset
    from fontTools.ttLib import TTFont
    from matplotlib.backends import backend_pdf

    write_fonts = backend_pdf.PdfFile.writeFonts
    hooked: dict[str, list[Any]] = {
        k: [] for k in ("before_embed", "subset_module", "load_font", "font_order")
    }
    plain = _pdf(None)
    with_hooks = _pdf(hooked)
    assert backend_pdf.PdfFile.writeFonts is write_fonts  # put back
    _relied(
        hooked["subset_module"] == [subset],
        "pdf_font_hooks",
        "_backend_pdf_ps.subset is not fontTools.subset",
    )
    files = sorted(Path(str(p)).name for p in hooked["load_font"])
    _relied(
        {"DejaVuSans.ttf", "DejaVuSans-Oblique.ttf"} <= set(files),
        "pdf_font_hooks",
        f"_backend_pdf_ps.get_glyphs_subset does not load fonts with subset.load_font ({files})",
    )
    embedded = hooked["before_embed"]
    _relied(
        len(embedded) == len(files) and all(isinstance(f, TTFont) for f in embedded),
        "pdf_font_hooks",
        "backend_pdf does not embed each subset through _backend_pdf_ps.font_as_file",
    )
    orders = hooked["font_order"]
    _relied(
        sorted(Path(str(p)).name for p, _ in orders) == files
        and all(isinstance(s, int) for _, s in orders),
        "pdf_font_hooks",
        f"PdfFile._fontNames is not keyed by (font path, subset number): {orders}",
    )
    # hooks that change nothing, the fonts in matplotlib's own order: matplotlib's bytes
    _relied(
        with_hooks == plain,
        "pdf_font_hooks",
        "the copy of PdfFile.writeFonts writes other bytes than matplotlib's",
    )
