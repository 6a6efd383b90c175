"""Lay out a whole card (title, thesis, 4 panels, formula, takeaways, pitfalls, footer) as one
matplotlib figure, from the filled card text and the computed figure data.

Geometry comes from ``templates/layouts.toml``; colours from the theme. Text is wrapped by
measuring it with the renderer, so what is drawn is what was measured: a block that would not
fit is shrunk down to the layout's minimum size, and a card that still does not fit is an error.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from posecards.errors import PosecardsError
from posecards.paths import data_dir
from posecards.render.text import CardLabels, CardText, FilledCard
from posecards.render.ui import ui_strings

if TYPE_CHECKING:
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure

    from posecards.figures.style import Theme


class LayoutError(PosecardsError, RuntimeError):
    """The card text does not fit its page size even at the smallest allowed font size."""


@dataclass(frozen=True)
class Layout:
    name: str
    width: float
    height: float
    arrangement: str
    panel_fraction: float
    margin: float
    columns: Mapping[int, int]  # number of panels -> columns of the panel grid

    def grid(self, n: int) -> tuple[int, int]:
        """(rows, columns) of the panel grid for ``n`` panels on this page."""
        ncols = min(self.columns.get(n, 3), n) if n else 1
        return -(-n // ncols), ncols


@cache
def layout(size: str) -> Layout:
    data = tomllib.loads((data_dir("templates") / "layouts.toml").read_text(encoding="utf-8"))
    if size not in data:
        raise ValueError(f"unknown size {size!r}; choose one of: {', '.join(data)}")
    values = dict(data[size])
    values["columns"] = MappingProxyType({int(k): int(v) for k, v in values["columns"].items()})
    return Layout(name=size, **values)


@dataclass(frozen=True)
class _Sizes:
    """Text sizes (points) of the card's own parts on the current page, from the text roles."""

    title: float
    thesis: float
    heading: float
    body: float
    body_min: float
    formula: float
    footer: float
    panel_title: float
    scale: float

    @classmethod
    def current(cls) -> _Sizes:
        from posecards.figures.roles import current_scale, fontsize

        return cls(
            title=fontsize("title"),
            thesis=fontsize("thesis"),
            heading=fontsize("heading"),
            body=fontsize("body"),
            body_min=fontsize("body_min"),
            formula=fontsize("formula"),
            footer=fontsize("footer"),
            panel_title=fontsize("panel_title"),
            scale=current_scale(),
        )


# A token is a $math$ run, one CJK character (lines may break between them), a word, or spaces.
_TOKENS = re.compile(
    r"\$[^$]*\$|[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f$]+|\s+"
)
# Characters that must not start a line (Chinese punctuation rules, kept simple).
_NO_LINE_START = set("，。、；：？！）」』》〉”’,.;:?!)%")
# Characters that must not end a line: opening brackets and quotes.
_NO_LINE_END = set("（「『《〈“‘(")


class _Measure:
    """Text extent in points, measured with the figure's own renderer."""

    def __init__(self, renderer: RendererBase, family: list[str]) -> None:
        from matplotlib.font_manager import FontProperties

        from posecards.mpl_internals import text_metrics

        # matplotlib's memo of text metrics (per renderer): a line measured here and drawn
        # later is laid out by FreeType once
        self.metrics = text_metrics
        self.renderer = renderer
        self.dpi = float(getattr(renderer, "dpi", 100.0))
        self.props: dict[tuple[float, str], FontProperties] = {}
        self.family = family
        self.FontProperties = FontProperties

    def width(self, s: str, size: float, weight: str = "normal") -> float:
        key = (size, weight)
        if key not in self.props:
            self.props[key] = self.FontProperties(family=self.family, size=size, weight=weight)
        ismath = s.count("$") >= 2
        w, _, _ = self.metrics(self.renderer, s, self.props[key], ismath, self.dpi)
        return w * 72.0 / self.dpi  # pixels -> points


# Units that stay on the line of the number before them ("6.00 MiB", "4,096 个词元", "3.00 rad").
_UNITS = {"MiB", "KiB", "GiB", "MB", "GB", "rad", "px", "pt", "%", "°", "×", "bits", "bytes"}
# counted things, so that "2 layers", "300 AdamW steps", "3 seeds", "0.04 nat" keep together
_UNITS |= {"nat", "nats", "layers", "heads", "steps", "AdamW", "seeds", "tokens", "symbols", "s"}
_UNITS |= {"positions", "pairs", "dimensions", "buckets", "patches", "rows"}
_CJK_UNITS = set("个维对圈位种项行列倍次弧秒层步")
_NUMBER = re.compile(r"^[−\-+]?[\d.,]+[%×]?$|^[−\-+]?[\d.,]+×10[⁰-⁹⁻]+$")
_PUNCT_ONLY = set("，。、；：？！）」』》〉”’,.;:?!)%")


def _glue(tokens: list[str]) -> list[str]:
    """Merge tokens that must stay on one line: "b = 10,000" (a name, "=", its value) and a
    number with its unit ("6.00 MiB", "4,096 个")."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        # name = value: tok, " ", "=", " ", value  (also "≤", "≥", "≈")
        if (
            i + 4 < len(tokens)
            and not tok.isspace()
            and tokens[i + 1].isspace()
            and tokens[i + 2] in ("=", "≤", "≥", "≈", "<", ">")
            and tokens[i + 3].isspace()
            and not tokens[i + 4].isspace()
        ):
            tokens = tokens[:i] + ["".join(tokens[i : i + 5])] + tokens[i + 5 :]
            continue  # the merged token may itself be a number with a unit
        if _NUMBER.match(tok.split(" ")[-1]) and i + 1 < len(tokens):
            nxt = tokens[i + 1]
            if nxt.isspace() and i + 2 < len(tokens):
                unit = tokens[i + 2]
                if unit.rstrip(".,;:!?)") in _UNITS or unit in _CJK_UNITS:
                    out.append(tok + nxt + unit)
                    i += 3
                    continue
            elif nxt in _CJK_UNITS or nxt in _UNITS:
                out.append(tok + nxt)
                i += 2
                continue
        if tok in _NO_LINE_START and out and not out[-1].isspace():
            out[-1] += tok  # closing punctuation stays with what it closes
        elif out and out[-1] in _NO_LINE_END:
            out[-1] += tok  # an opening bracket stays with what it opens
        else:
            out.append(tok)
        i += 1
    return out


def _fitting_run(
    line: list[str],
    tokens: list[str],
    start: int,
    guess: int,
    width_pt: float,
    size: float,
    weight: str,
    m: _Measure,
) -> int:
    """The first index k >= ``start`` whose line ``line + tokens[start:k + 1]`` is wider than
    ``width_pt`` (``len(tokens)``: the rest of the paragraph fits).

    A line's measured width (the ink box of its glyphs) never shrinks as tokens are appended,
    so the break is bracketed by galloping from a guess (``guess`` more tokens, from the line
    before) and then bisected: a few measures of a line instead of one per token, each measure
    laying the whole line out again. test_compose checks the result equals the token-by-token
    greedy search.
    """
    head = "".join(line)
    n = len(tokens)

    def too_wide(k: int) -> bool:  # tokens[start:k + 1] appended
        return m.width((head + "".join(tokens[start : k + 1])).strip(), size, weight) > width_pt

    # bracket: tokens up to index `fit` fit, index `wide` is too wide (start - 1, n: unknown)
    probe = min(max(start + guess - 1, start), n - 1)
    step = 1
    if too_wide(probe):
        fit, wide = start - 1, probe
        while wide > start:
            k = max(start, wide - step)
            if not too_wide(k):
                fit = k
                break
            wide, step = k, step * 2
    else:
        fit, wide = probe, n
        while fit < n - 1:
            k = min(n - 1, fit + step)
            if too_wide(k):
                wide = k
                break
            fit, step = k, step * 2
    while wide - fit > 1:  # bisect: the first too-wide index lies in (fit, wide]
        mid = (fit + wide) // 2
        if too_wide(mid):
            wide = mid
        else:
            fit = mid
    return wide


def wrap(text: str, width_pt: float, size: float, m: _Measure, weight: str = "normal") -> list[str]:
    """Greedy line breaking by measured width; keeps $math$ and numbers whole; CJK may break
    between characters, but punctuation never starts a line (it takes the previous token along).
    A number stays with its unit and "b =" with its value; a paragraph never ends on a line
    holding a single character (the previous word comes down with it).
    """
    lines: list[str] = []
    line_tokens = 8  # tokens on the last line broken (the first guess for the next)
    for paragraph in text.split("\n"):
        para: list[list[str]] = []
        toks: list[str] = []  # tokens of the current line
        tokens = _glue(_TOKENS.findall(paragraph))
        fits_until = 0  # tokens[:fits_until] were found to fit after the current line's tokens
        for i, tok in enumerate(tokens):
            if not toks:
                toks.append(tok)
                continue
            if i >= fits_until:
                guess = max(1, line_tokens - len(toks))
                fits_until = _fitting_run(toks, tokens, i, guess, width_pt, size, weight, m)
            if i < fits_until:
                toks.append(tok)
                continue
            line_tokens = len(toks)  # the next line is guessed to hold about as many
            if tok.isspace():
                para.append(toks)
                toks = []
                continue
            carry: list[str] = []
            if tok[0] in _NO_LINE_START and len(toks) > 1:
                carry = [toks.pop()]  # the whole previous token goes down with the punctuation
            while len(toks) > 1 and toks[-1] and toks[-1][-1] in _NO_LINE_END:
                carry.insert(0, toks.pop())  # an opening bracket goes down with what it opens
            para.append(toks)
            toks = carry + [tok]
        para.append(toks)
        para = [ln for ln in para if "".join(ln).strip()]
        # no orphan: a last line of one character (and its punctuation) takes a token along
        if len(para) > 1:
            last = "".join(para[-1]).strip()
            if len([c for c in last if c not in _PUNCT_ONLY]) <= 1:
                prev = para[-2]
                while prev and prev[-1].isspace():
                    prev.pop()
                if len(prev) > 1:
                    para[-1] = [prev.pop()] + para[-1]
        lines.extend("".join(ln).strip() for ln in para)
    return [ln for ln in lines if ln] or [""]


@dataclass
class _Block:
    """A run of wrapped lines at one size, positioned top-down."""

    lines: list[str]
    size: float
    weight: str = "normal"
    color: str | None = None
    bullet: bool = False
    gap_before: float = 0.0  # points

    def height(self) -> float:
        return len(self.lines) * self.size * 1.32 + self.gap_before


def _sidebar_blocks(
    card: FilledCard, sz: _Sizes, width_pt: float, body: float, m: _Measure, th: Theme
) -> tuple[list[_Block], list[_Block], list[_Block]]:
    """Formula, takeaways and pitfalls blocks at body size ``body``."""
    h = ui_strings(card.lang)
    k = sz.scale  # gaps scale with the text
    bullet_indent = body * 1.1
    tex_lines = card.formula_tex.split("\n")
    widest = max(m.width(x, sz.formula) for x in tex_lines)
    tex_size = sz.formula * min(1.0, width_pt / max(widest, 1.0))
    if tex_size < sz.body_min:
        raise LayoutError(
            f"card {card.id}: a line of the key formula is too wide for this page; "
            "split it into a list of shorter lines in [formula] tex"
        )
    formula = [
        _Block([h["key_formula"]], sz.heading, "bold", th.accent),
        _Block(tex_lines, tex_size, gap_before=6 * k),
        _Block(wrap(card.formula_note, width_pt, body, m), body, color=th.muted, gap_before=4 * k),
    ]
    take = [_Block([h["takeaways"]], sz.heading, "bold", th.accent, gap_before=14 * k)]
    for _, s in card.takeaways:
        take.append(
            _Block(wrap(s, width_pt - bullet_indent, body, m), body, bullet=True, gap_before=6 * k)
        )
    pits = [_Block([h["pitfalls"]], sz.heading, "bold", th.warn, gap_before=18 * k)]
    for _, s in card.pitfalls:
        pits.append(
            _Block(
                wrap(s, width_pt - bullet_indent - 12 * k, body, m),
                body,
                bullet=True,
                gap_before=6 * k,
            )
        )
    return formula, take, pits


def _balanced(formula: list[_Block], take: list[_Block], pits: list[_Block]) -> list[list[_Block]]:
    """Two text columns: the formula and the first takeaways left, the other takeaways and the
    pitfalls (kept together, in their box) right, split where the taller column is lowest."""
    seq = formula + take
    best: list[list[_Block]] | None = None
    best_h = float("inf")
    # split before a takeaway (never between a heading and its first item), or before pitfalls
    for cut in range(len(formula) + 2, len(seq) + 1):
        left, right = seq[:cut], seq[cut:] + pits
        h = max(sum(b.height() for b in left), sum(b.height() for b in right))
        if h < best_h:
            best, best_h = [left, right], h
    return best if best is not None else [seq, pits]


def compose_card(
    card: FilledCard,
    text: CardText,
    figures: Mapping[str, Mapping[str, Any]],
    th: Theme,
    size: str,
    footer: str,
) -> Figure:
    """Draw the whole card. Call inside ``card_style(theme)``.

    Every text size comes from the text roles (posecards/style/roles.toml) at this page's scale.
    """
    from posecards.figures.roles import freeze_tick_sizes, page_roles

    with page_roles(size):
        fig = _compose(card, text, figures, th, size, footer, _Sizes.current())
        freeze_tick_sizes(fig)
    return fig


def _compose(
    card: FilledCard,
    text: CardText,
    figures: Mapping[str, Mapping[str, Any]],
    th: Theme,
    size: str,
    footer: str,
    sz: _Sizes,
) -> Figure:
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.patches import FancyBboxPatch

    from posecards.figures import draw_functions

    lay = layout(size)
    W, H = lay.width, lay.height  # inches
    fig = Figure(figsize=(W, H))
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    m = _Measure(renderer, list(mpl.rcParams["font.family"]))
    pt = 1 / 72.0  # inches per point
    margin = lay.margin

    # --- header: title and thesis, wrapped to the full width --------------------------------
    full_w_pt = (W - 2 * margin) / pt
    title_lines = wrap(card.title, full_w_pt, sz.title, m, "bold")
    thesis_lines = wrap(card.thesis, full_w_pt, sz.thesis, m)
    y = H - margin  # cursor, inches from the bottom
    for ln in title_lines:
        fig.text(margin / W, y / H, ln, fontsize=sz.title, weight="bold", va="top")
        y -= sz.title * 1.25 * pt
    y -= 4 * sz.scale * pt
    for ln in thesis_lines:
        fig.text(margin / W, y / H, ln, fontsize=sz.thesis, va="top", color=th.muted)
        y -= sz.thesis * 1.3 * pt
    header_bottom = y - 6 * sz.scale * pt
    fig.add_artist(
        mpl.lines.Line2D(
            [margin / W, 1 - margin / W],
            [header_bottom / H, header_bottom / H],
            color=th.box_edge,
            linewidth=1.2,
        )
    )

    # --- footer ------------------------------------------------------------------------------
    # (wrapped: an inspection card's footer names the tensor and config keys it read)
    footer_lines = wrap(footer, full_w_pt, sz.footer, m)
    line_h = sz.footer * 1.3 * pt
    for i, ln in enumerate(footer_lines):
        y_ln = margin * 0.5 + (len(footer_lines) - 1 - i) * line_h
        fig.text(margin / W, y_ln / H, ln, fontsize=sz.footer, color=th.muted)
    footer_h = sz.footer * 2.0 * pt + (len(footer_lines) - 1) * line_h
    body_top = header_bottom - 8 * sz.scale * pt
    body_bottom = margin * 0.5 + footer_h

    # --- regions -------------------------------------------------------------------------------
    gap = 0.25
    if lay.arrangement == "side":
        panel_rect = (
            margin,
            body_bottom,
            (W - 2 * margin) * lay.panel_fraction,
            body_top - body_bottom,
        )
        text_x = margin + panel_rect[2] + gap
        text_cols = [(text_x, W - margin - text_x, body_top, body_bottom)]
    else:
        ph = (body_top - body_bottom) * lay.panel_fraction
        panel_rect = (margin, body_top - ph, W - 2 * margin, ph)
        col_w = (W - 2 * margin - gap) / 2
        top = body_top - ph - gap
        text_cols = [
            (margin, col_w, top, body_bottom),
            (margin + col_w + gap, col_w, top, body_bottom),
        ]

    # --- text column(s): shrink the body size until everything fits --------------------------
    body = sz.body
    while True:
        w_pt = text_cols[0][1] / pt
        formula, take, pits = _sidebar_blocks(card, sz, w_pt, body, m, th)
        if len(text_cols) == 1:
            columns = [formula + take + pits]
        else:
            columns = _balanced(formula, take, pits)
        fits = all(
            sum(b.height() for b in blocks) * pt <= (col[2] - col[3]) - 0.05
            for blocks, col in zip(columns, text_cols, strict=True)
        )
        if fits:
            break
        if body - 0.5 * sz.scale < sz.body_min - 1e-9:
            raise LayoutError(
                f"card {card.id} ({card.lang}) text does not fit the '{size}' page "
                f"even at {sz.body_min:.1f} pt: shorten its takeaways or pitfalls"
            )
        body -= 0.5 * sz.scale

    for blocks, (x0, cw, top, _bottom) in zip(columns, text_cols, strict=True):
        y = top
        pit_top = None
        for b in blocks:
            if b.weight == "bold" and b.color == th.warn:
                pit_top = y
            y -= b.gap_before * pt
            for ln in b.lines:
                x = x0 + (b.size * 1.1 * pt if b.bullet else 0.0)
                if b.bullet and ln is b.lines[0]:
                    fig.text(x0 / W, y / H, "•", fontsize=b.size, va="top", color=th.accent)
                fig.text(
                    x / W,
                    y / H,
                    ln,
                    fontsize=b.size,
                    weight=b.weight,
                    va="top",
                    color=b.color or th.text,
                )
                y -= b.size * 1.32 * pt
        if pit_top is not None:
            pad = 0.08
            box_top = pit_top - 10 * sz.scale * pt
            fig.add_artist(
                FancyBboxPatch(
                    ((x0 - pad) / W, (y - pad) / H),
                    (cw + 2 * pad - 0.02) / W,
                    (box_top - y + pad) / H,
                    boxstyle="round,pad=0,rounding_size=0.004",
                    transform=fig.transFigure,
                    facecolor=th.pitfall_box,
                    edgecolor=th.box_edge,
                    linewidth=1.0,
                    zorder=-1,
                )
            )

    # --- panels: a grid of subfigures (columns per page size and panel count, from
    # layouts.toml) laid out by constrained layout inside panel_rect; titles wrap to their cell --
    x0, y0, pw, ph_ = panel_rect
    fig.set_layout_engine(
        ConstrainedLayoutEngine(rect=(x0 / W, y0 / H, pw / W, ph_ / H), w_pad=0.06, h_pad=0.06)
    )
    draw = draw_functions(card.id)
    labels = CardLabels(text.labels, card.lang, text.path.name)
    n = len(card.panels)
    nrows, ncols = lay.grid(n)
    subs = fig.subfigures(nrows, ncols, wspace=0.02, hspace=0.02)
    flat = list(subs.flat) if hasattr(subs, "flat") else [subs]
    cell_w_pt = (pw / ncols) / pt * 0.96
    for sub, (fid, title, _alt, _cap) in zip(flat, card.panels, strict=False):
        lines = wrap(title, cell_w_pt, sz.panel_title, m, "bold")
        sub.suptitle("\n".join(lines), fontsize=sz.panel_title, weight="bold", x=0.02, ha="left")
        draw[fid](sub, figures[fid], labels, th)
    for sub in flat[n:]:
        sub.set_visible(False)
    return fig
