"""Line breaking of card text, measured with the renderer that draws it: English words,
Chinese characters (a line may break between them, never before closing punctuation or after
an opening bracket), $math$ runs, and the numbers that keep their units ("6.00 MiB", "4,096
个"), each line as wide as its column allows.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from posecards.mpl_internals import text_metrics

if TYPE_CHECKING:
    from matplotlib.backend_bases import RendererBase


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

        # matplotlib's memo of text metrics (per renderer): a line measured here and drawn
        # later is laid out by FreeType once
        self.metrics = text_metrics
        self.renderer = renderer
        self.dpi = float(getattr(renderer, "dpi", 100.0))
        self.props: dict[tuple[float, str], FontProperties] = {}
        self.family = family
        self.FontProperties = FontProperties
        self.pace = _Pace()  # of the line measured last, whichever text it was in

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
# a one- or two-character operand of "i − j": a letter or digit, maybe after an opening bracket
# ("p/(N") or before a closing one or a comma
_SYMBOL = re.compile(r"^(?:\S*[(（])?[A-Za-z0-9]{1,2}[)）,.;:，。；：]?$")


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
        # a short difference or sum of symbols stays whole: "i − j", "(n − m)", "N − 1"
        if (
            i + 4 < len(tokens)
            and _SYMBOL.match(tok)
            and tokens[i + 1].isspace()
            and tokens[i + 2] in ("−", "+")
            and tokens[i + 3].isspace()
            and _SYMBOL.match(tokens[i + 4])
        ):
            tokens = tokens[:i] + ["".join(tokens[i : i + 5])] + tokens[i + 5 :]
            continue
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


class _Pace:
    """Characters per em of the line measured last (0: none yet), from which the tokens the
    next line will hold are guessed (at any size)."""

    def __init__(self) -> None:
        self.chars_per_em = 0.0

    def seen(self, s: str, width: float, size: float) -> None:
        if width > 0:
            self.chars_per_em = len(s) * size / width

    def guess(self, head: str, tokens: list[str], start: int, width_pt: float, size: float) -> int:
        """Tokens from ``start`` that ``head`` is expected to take before it is ``width_pt``
        wide at ``size`` points (at least 1); 0 when nothing has been measured yet."""
        if not self.chars_per_em:
            return 0
        room = width_pt / size * self.chars_per_em - len(head)
        k = start
        while k < len(tokens) and len(tokens[k]) <= room:
            room -= len(tokens[k])
            k += 1
        return max(1, k - start)


def _fitting_run(
    line: list[str],
    tokens: list[str],
    start: int,
    guess: int,
    width_pt: float,
    size: float,
    weight: str,
    m: _Measure,
    pace: _Pace,
) -> int:
    """The first index k >= ``start`` whose line ``line + tokens[start:k + 1]`` is wider than
    ``width_pt`` (``len(tokens)``: the rest of the paragraph fits).

    A line's measured width (the ink box of its glyphs) never shrinks as tokens are appended,
    so the break is bracketed by galloping from a guess and then bisected: a few measures of a
    line instead of one per token, each measure laying the whole line out again. The guess is
    the tokens the line's characters would fill at the pace (characters per em) of the line
    measured last, else ``guess`` more tokens (from the line before): two measures when it is
    right. Any guess finds the same break; test_compose checks it equals the token-by-token
    greedy search.
    """
    head = "".join(line)
    n = len(tokens)

    def too_wide(k: int) -> bool:  # tokens[start:k + 1] appended
        s = (head + "".join(tokens[start : k + 1])).strip()
        w = m.width(s, size, weight)
        pace.seen(s, w, size)
        return w > width_pt

    guess = pace.guess(head, tokens, start, width_pt, size) or guess
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
    pace = getattr(m, "pace", None) or _Pace()  # a _Measure's pace outlives this text
    for paragraph in text.split("\n"):
        para: list[list[str]] = []
        toks: list[str] = []  # tokens of the current line
        tokens = _glue(_TOKENS.findall(paragraph))
        fits_until = 0  # tokens[:fits_until] were found to fit after the current line's tokens
        after_space: set[int] = set()  # lines whose break dropped a space before them
        for i, tok in enumerate(tokens):
            if not toks:
                toks.append(tok)
                continue
            if i >= fits_until:
                guess = max(1, line_tokens - len(toks))
                fits_until = _fitting_run(toks, tokens, i, guess, width_pt, size, weight, m, pace)
            if i < fits_until:
                toks.append(tok)
                continue
            line_tokens = len(toks)  # the next line is guessed to hold about as many
            if tok.isspace():
                para.append(toks)
                after_space.add(len(para))  # the next line starts after a dropped space
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
        spaced = [i in after_space for i in range(len(para))]
        kept = [i for i, ln in enumerate(para) if "".join(ln).strip()]
        para, spaced = [para[i] for i in kept], [spaced[i] for i in kept]
        # no orphan: a last line of one character (and its punctuation) takes a token along,
        # with the space that stood between them ("h or w", not "h orw")
        if len(para) > 1:
            last = "".join(para[-1]).strip()
            if len([c for c in last if c not in _PUNCT_ONLY]) <= 1:
                prev = para[-2]
                gap = spaced[-1]
                while prev and prev[-1].isspace():
                    prev.pop()
                    gap = True
                if len(prev) > 1:
                    para[-1] = [prev.pop()] + ([" "] if gap else []) + para[-1]
        lines.extend("".join(ln).strip() for ln in para)
    return [ln for ln in lines if ln] or [""]
