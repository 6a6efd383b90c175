"""The PowerPoint deck, written with python-pptx: 16:9 (13.333 x 7.5 in) slides whose titles and
bullets are real, editable text frames, pictures only for figures, speaker notes on every slide.

Bytes are deterministic: fixed core properties (no dates, no author) and fixed zip entry times.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from posecards.deck.draw import deck_look
from posecards.deck.plan import picture_name

FONT = "Noto Sans CJK SC"
EPOCH = datetime(2000, 1, 1)
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _rgb(hex_color: str) -> Any:
    from pptx.dml.color import RGBColor

    return RGBColor.from_string(hex_color.lstrip("#")[:6].upper())


def _font(run: Any, size: float, color: str, bold: bool = False) -> None:
    """Size, colour and the same font for Latin and East Asian text."""
    from pptx.oxml.ns import qn
    from pptx.util import Pt

    run.font.size = Pt(size)
    run.font.bold = bold
    run.font.name = FONT
    run.font.color.rgb = _rgb(color)
    rpr = run._r.get_or_add_rPr()
    for tag in ("a:ea", "a:cs"):
        el = rpr.find(qn(tag))
        if el is None:
            el = rpr.makeelement(qn(tag), {})
            rpr.append(el)
        el.set("typeface", FONT)


def _text_box(
    slide: Any,
    box: tuple[float, float, float, float],
    paragraphs: list[tuple[str, float, str, bool]],
    name: str,
    bullet: bool = False,
) -> Any:
    """A text frame at ``box`` (inches) with (text, size, colour, bold) paragraphs, wrapping."""
    from pptx.enum.text import MSO_ANCHOR, MSO_AUTO_SIZE
    from pptx.util import Inches, Pt

    shape = slide.shapes.add_textbox(*(Inches(v) for v in box))
    shape.name = name
    tf = shape.text_frame
    tf.word_wrap = True
    tf.auto_size = MSO_AUTO_SIZE.NONE
    tf.vertical_anchor = MSO_ANCHOR.TOP
    for side in ("margin_left", "margin_right"):
        setattr(tf, side, Inches(0.1))
    for side in ("margin_top", "margin_bottom"):
        setattr(tf, side, Inches(0.05))
    for i, (text, size, color, bold) in enumerate(paragraphs):
        p = tf.paragraphs[0] if i == 0 else tf.add_paragraph()
        p.line_spacing = 1.0
        if bullet:
            p.space_after = Pt(size * 0.5)
        run = p.add_run()
        run.text = ("• " if bullet else "") + text
        _font(run, size, color, bold)
    return shape


def _fix_zip(data: bytes) -> bytes:
    """Same entries, same order, fixed times: byte-identical output for identical slides."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    return buf.getvalue()


def write_pptx(
    slides: Sequence[Mapping[str, Any]], files: Mapping[str, bytes], lang: str, theme_name: str
) -> bytes:
    """The deck of one language from the slides' metadata (titles, notes) and pictures."""
    from pptx import Presentation
    from pptx.util import Emu, Inches

    from posecards.figures.style import theme

    th = theme(theme_name)
    look = deck_look()
    prs = Presentation()
    # exactly 16:9: 12,192,000 x 6,858,000 EMU (13.333... x 7.5 in)
    prs.slide_height = Emu(round(look.height * 914400))
    prs.slide_width = Emu(round(look.height * 914400 * 16 / 9))

    def inches(value: float) -> Any:
        """Inches on the slide; the slide's full width is exactly the slide width."""
        return prs.slide_width if value == look.width else Inches(value)

    blank = prs.slide_layouts[6]
    for s in slides:
        slide = prs.slides.add_slide(blank)
        bg = slide.background.fill
        bg.solid()
        bg.fore_color.rgb = _rgb(th.background)
        kind = s["kind"]
        if kind == "title":
            box = look.deck_title_box
            _text_box(slide, box, [(s["title"], look.deck_title_size, th.accent, True)], "Title")
            sub = look.deck_subtitle_box
            _text_box(
                slide, sub, [(s["subtitle"], look.deck_subtitle_size, th.muted, False)], "Subtitle"
            )
            _text_box(
                slide,
                look.agenda_box,
                [(x, look.agenda_size, th.text, False) for x in s["items"]],
                "Agenda",
            )
        elif kind == "overview":
            pic = files[picture_name(lang, s["stem"])]
            shape = slide.shapes.add_picture(
                io.BytesIO(pic), 0, 0, prs.slide_width, prs.slide_height
            )
            shape.name = "Card"
        else:
            _text_box(
                slide, look.title_box, [(s["title"], look.title_size, th.text, True)], "Title"
            )
            if kind in ("closing", "sources"):
                size = look.sources_size if kind == "sources" else look.body_size
                _text_box(
                    slide,
                    look.body_box,
                    [(x, size, th.text, False) for x in s["items"]],
                    "Sources" if kind == "sources" else "Pitfalls",
                    bullet=True,
                )
            else:
                left, top, w, h = look.picture_box
                if kind == "animation":
                    data = files[f"{lang}/animations/{s['figure']}.gif"]
                else:
                    data = files[picture_name(lang, s["stem"])]
                shape = slide.shapes.add_picture(
                    io.BytesIO(data), Inches(left), Inches(top), inches(w), Inches(h)
                )
                shape.name = "Animation" if kind == "animation" else "Figure"
        slide.notes_slide.notes_text_frame.text = s["notes"]
    core = prs.core_properties
    core.title = slides[0]["title"]
    core.author = "posecards"
    core.last_modified_by = "posecards"
    core.created = EPOCH
    core.modified = EPOCH
    core.last_printed = EPOCH
    core.revision = 1
    core.language = "zh-CN" if lang == "zh" else "en-US"
    buf = io.BytesIO()
    prs.save(buf)
    return _fix_zip(buf.getvalue())
