"""HTML pages (one per card and language, and the index) through Jinja templates, autoescaped.

Figures are inlined as SVG (text stays text) with alt text; the CSS is inlined; nothing is loaded
from the network, and a Content-Security-Policy forbids it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from posecards.config import LANGS
from posecards.paths import data_dir
from posecards.render.ui import ui_strings
from posecards.render.webfonts import (
    MONO_FAMILIES,
    PAGE_FAMILIES,
    css_stack,
    font_face_css,
    rename_svg_families,
)

CSP = (
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; "
    "font-src 'self' data:; base-uri 'none'; form-action 'none'"
)


@cache
def env() -> jinja2.Environment:
    e = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return e


_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_ID_OR_REF = re.compile(r'id="([^"]+)"|url\(#([^)]+)\)|href="#([^"]+)"')
# matplotlib's RDF block (dc:format, dc:type): valid in an SVG file, not inside HTML
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
# mathtext as matplotlib writes it with svg.fonttype none: one <tspan> per glyph, grouped by
# font, indented (the indentation reads as spaces between the letters)
_GLYPH_TEXT = re.compile(r"<text>((?:\s*<tspan [^>]*>[^<]*</tspan>)+)\s*</text>")
_GLYPH = re.compile(r'<tspan x="([^" ]+)" y="([^"]+)" style="([^"]*)">([^<]*)</tspan>')


def _unique_ids(text: str) -> str:
    """Number the second and later definitions of an id (matplotlib names an image by its
    pixels, so two equal images of one figure share an id); references keep the first."""
    seen: dict[str, int] = {}

    def one(m: re.Match[str]) -> str:
        n = seen[m.group(1)] = seen.get(m.group(1), 0) + 1
        return m.group(0) if n == 1 else f'id="{m.group(1)}-{n}"'

    return _ID.sub(one, text)


def _words(m: re.Match[str]) -> str:
    """One mathtext text as words: its glyphs in reading order (by x), consecutive glyphs of
    one font and baseline in one <tspan> with a position per character, nothing between them,
    so that find-in-page and copying see "key position n", not "k e y p o s i t i o n"."""
    import html as html_lib

    glyphs = [
        (float(x), x, y, style, html_lib.unescape(ch)) for x, y, style, ch in _GLYPH.findall(m[1])
    ]
    if len(glyphs) != m[1].count("<tspan"):  # not the shape we know: leave it as it is
        return m[0]
    glyphs.sort(key=lambda g: g[0])  # stable: equal x keep matplotlib's order
    runs: list[list[tuple[float, str, str, str, str]]] = []
    for g in glyphs:
        if runs and runs[-1][-1][2:4] == g[2:4]:
            runs[-1].append(g)
        else:
            runs.append([g])
    spans = []
    for run in runs:
        xs = " ".join(g[1] for g in run)
        chars = "".join(" " if g[4] == "\xa0" else g[4] for g in run)  # mathtext's spaces
        text = str(Markup.escape(chars))
        spans.append(f'<tspan x="{xs}" y="{run[0][2]}" style="{run[0][3]}">{text}</tspan>')
    return '<text xml:space="preserve">' + "".join(spans) + "</text>"


def inline_svg(svg: bytes, prefix: str, label: str) -> Markup:
    """Make a matplotlib SVG file embeddable: drop the XML prolog and the RDF metadata, make
    its ids unique and give them a prefix (two inline SVGs must not share ids), write its
    mathtext as words, and label it for screen readers."""
    text = rename_svg_families(_PROLOG.sub("", svg.decode("utf-8"), count=1))
    text = _METADATA.sub("", text, count=1)
    text = _GLYPH_TEXT.sub(_words, _unique_ids(text))
    ids = set(_ID.findall(text))

    def prefixed(m: re.Match[str]) -> str:
        group = next(i for i in (1, 2, 3) if m[i] is not None)
        if m[group] not in ids:
            return m[0]
        start, end = m.start(group) - m.start(), m.end(group) - m.start()
        return f"{m[0][:start]}{prefix}-{m[group]}{m[0][end:]}"

    # every id and every reference to one (a url(#...) or an href="#...") in one pass
    text = _ID_OR_REF.sub(prefixed, text)
    # width/height in pt -> let CSS size it; keep the viewBox for the aspect ratio
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", text, count=1)
    esc = str(Markup.escape(label))
    text = text.replace("<svg", f'<svg role="img" aria-label="{esc}"', 1)
    # first child: a <title> carrying the alt text
    text = re.sub(r"(<svg[^>]*>)", lambda mt: mt.group(1) + f"<title>{esc}</title>", text, count=1)
    return Markup(text)  # noqa: S704 - matplotlib's own SVG, labels escaped above


_VIEWBOX = re.compile(r'<svg[^>]*? viewBox="[\d.]+ [\d.]+ ([\d.]+) [\d.]+"')
_FONT_SIZE = re.compile(r"font-size: ?([\d.]+)px")
FORMULA_TEXT_PX = 17.0  # the key formula's main text, as large as the page's text
FORMULA_MIN_PX = 12.0  # narrower than that and its box scrolls sideways (the page never does)


def sized_by_text(svg: Markup, px: float, min_px: float) -> str:
    """The CSS rule that draws a page's formula SVG so that its largest text is `px` CSS px,
    shrinking to fit its box down to `min_px`; below that its box scrolls (templates/card.css:
    .formula). A rule in the page's stylesheet, not a style attribute (html-validate)."""
    width = _VIEWBOX.search(svg)
    sizes = [float(x) for x in _FONT_SIZE.findall(svg)]
    if width is None or not sizes:
        return ""
    scale = px / max(sizes)
    natural = float(width.group(1)) * scale
    return (
        f"aside .formula svg {{ width: {natural:.1f}px; max-width: 100%; "
        f"min-width: {natural * min_px / px:.1f}px; }}"
    )


@dataclass(frozen=True)
class PanelView:
    id: str
    title: str
    alt: str
    caption: str
    svg: Markup
    downloads: Sequence[tuple[str, str]]  # (label, relative href)


class TemplateProblem(ValueError):
    """A template in templates/ could not be loaded or rendered: names the file and line."""


# where a page's @font-face rules go: embed_fonts puts them there once the fonts of all the
# pages that share them are known (a CSS comment, in the <style> of the page's head)
FACES_SLOT = "/* posecards: @font-face rules */"


def _render(name: str, **values: Any) -> str:
    """The page, with FACES_SLOT where its fonts go (embed_fonts puts them there)."""
    try:
        template = env().get_template(name)
        # family names are ours ("posecards ..."), quoted for CSS: nothing to escape
        fonts = {
            "sans": Markup(css_stack(PAGE_FAMILIES)),  # noqa: S704
            "mono": Markup(css_stack(MONO_FAMILIES)),  # noqa: S704
            "faces": Markup(FACES_SLOT),  # noqa: S704
        }
        return template.render(**values, fonts=fonts)
    except jinja2.TemplateSyntaxError as exc:
        where = f"templates/{exc.name or name} line {exc.lineno}"
        raise TemplateProblem(f"{where}: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise TemplateProblem(f"templates/{name}: {exc.message or type(exc).__name__}") from None


def embed_fonts(pages: Sequence[str]) -> list[str]:
    """The pages (from card_page, figure_page, index_page) with their fonts: every page gets
    the same @font-face rules, one subset per face holding every glyph the pages draw with it.
    Each page stays self-contained; a build calls this once per language (issue 24: the CJK
    font is subset once for all of a language's pages, not once per page)."""
    faces = font_face_css(*pages)
    out = []
    for page in pages:
        if page.count(FACES_SLOT) != 1:
            raise RuntimeError(f"internal error: a page has {page.count(FACES_SLOT)} font slots")
        out.append(page.replace(FACES_SLOT, faces))
    return out


def card_page(
    *,
    lang: str,
    card: Any,  # FilledCard
    panels: Sequence[PanelView],
    formula_svg: Markup,
    downloads: Sequence[tuple[str, str]],
    other_lang: tuple[str, str] | None,
    footer: str,
    theme: Mapping[str, str],
    nav: Sequence[tuple[str, str, bool]],
    more: Sequence[tuple[str, str, str]] = (),
    explore: str | None = None,
) -> str:
    """A card page (its fonts come from embed_fonts); ``more``: (title, caption, href) of the
    card's figure-page-only figures."""
    return _render(
        "card.html.j2",
        lang=lang,
        ui=ui_strings(lang),
        card=card,
        panels=panels,
        formula_svg=formula_svg,
        formula_css=Markup(sized_by_text(formula_svg, FORMULA_TEXT_PX, FORMULA_MIN_PX)),  # noqa: S704 - numbers only
        downloads=downloads,
        other_lang=_named(other_lang),
        footer=footer,
        theme=theme,
        nav=nav,
        more=more,
        explore=explore,
        csp=CSP,
        css=_css(),
    )


def figure_page(
    *,
    lang: str,
    card: Any,  # FilledCard
    figure: PanelView,
    card_page: tuple[str, str],  # (label, href) of the card the figure belongs to
    other_lang: tuple[str, str] | None,
    footer: str,
    theme: Mapping[str, str],
) -> str:
    """The page of one figure that is computed for a card but not placed on it (its fonts come
    from embed_fonts)."""
    return _render(
        "figure.html.j2",
        lang=lang,
        ui=ui_strings(lang),
        card=card,
        figure=figure,
        card_page=card_page,
        other_lang=_named(other_lang),
        footer=footer,
        theme=theme,
        csp=CSP,
        css=_css(),
    )


def every_language() -> dict[str, str]:
    """Every interface string in every language, joined with " · " (the index's own text)."""
    tables = [ui_strings(lang) for lang in LANGS]
    return {key: " · ".join(t[key] for t in tables) for key in tables[0]}


def _named(other_lang: tuple[str, str] | None) -> tuple[str, str, str] | None:
    """(language, href) of a page's other language, with that language's name in itself."""
    if other_lang is None:
        return None
    return (*other_lang, ui_strings(other_lang[0])["language_name"])


def _css() -> Markup:
    """Our own stylesheet, inlined verbatim (autoescaping would break its quotes)."""
    source = env().loader.get_source(env(), "card.css")[0]  # type: ignore[union-attr]
    if "</" in source:
        raise ValueError("templates/card.css must not contain '</'")
    return Markup(source)  # noqa: S704


def index_page(
    *,
    entries: Sequence[Mapping[str, Any]],
    footer: str,
    theme: Mapping[str, str],
    explore: str | None = None,
    teach: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The index of a build (its fonts come from embed_fonts); ``teach``: per language, what
    to project and what to hand out (pages.teaching)."""
    return _render(
        "index.html.j2",
        entries=[{**e, "ui": ui_strings(e["lang"])} for e in entries],
        every_lang=every_language(),
        explore=explore,
        teach=teach,
        footer=footer,
        theme=theme,
        csp=CSP,
        css=_css(),
    )
