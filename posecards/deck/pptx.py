"""The PowerPoint deck, written with python-pptx: 16:9 (13.333 x 7.5 in) slides built on the
template's layouts, so that PowerPoint's outline and accessibility checker see what a teacher
sees:

- every slide's title is in its layout's title placeholder (the outline lists 30 titles; an
  overview slide's title sits behind the card picture, which carries the same title drawn);
- every picture's alt text is the figure's description in the slide's language (the text the
  HTML pages give as aria-label; an animation's: what its notes say it shows);
- every run is language-tagged (en-US, zh-CN) with the Simplified Chinese face as its East Asian
  font, and the theme's fonts are that face too, so PowerPoint and LibreOffice pick it for text
  typed later;
- the closing slide's pitfalls are bulleted paragraphs with a hanging indent (not typed "• ");
- text frames shrink their text on overflow (normAutofit);
- the slide size is PowerPoint's Widescreen, without the template's 4:3 label, and the
  template's masters and layouts are stretched to it.

Bytes are deterministic: fixed core properties (no dates, no author) and fixed zip entry times.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from xml.sax.saxutils import escape

from lxml import etree
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.enum.text import MSO_ANCHOR, MSO_AUTO_SIZE, PP_ALIGN
from pptx.oxml.ns import qn
from pptx.util import Inches, Pt

from posecards.config import LANGS
from posecards.deck.look import deck_look
from posecards.deck.plan import picture_name
from posecards.figures.style import theme
from posecards.render.ui import ui_strings

FONT = "Noto Sans CJK SC"
EPOCH = datetime(2000, 1, 1)
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
EMU_PER_IN = 914400
# the default template's layouts, by name (python-pptx's default.pptx)
LAYOUTS = {"title": "Title Slide", "bullets": "Title and Content", "title_only": "Title Only"}
TEMPLATE_WIDTH_IN = 10.0  # the template's masters and layouts are laid out for 4:3


def _rgb(hex_color: str) -> Any:
    return RGBColor.from_string(hex_color.lstrip("#")[:6].upper())


def _tag(el: Any, tag: str) -> Any:
    """The child ``tag`` of ``el`` (created, in schema order for rPr's fonts, if missing)."""
    child = el.find(qn(tag))
    if child is None:
        child = el.makeelement(qn(tag), {})
        el.append(child)
    return child


def office_lang(lang: str) -> str:
    """The language tag of a run of ``lang`` text (templates/ui.toml: ``office_lang``)."""
    return ui_strings(lang)["office_lang"]


def _lang_and_faces(rpr: Any, lang: str) -> None:
    """Language of a run (or paragraph end), and the SC face for Latin, East Asian and complex
    script text: LibreOffice and PowerPoint choose the East Asian font by ``a:ea``."""
    rpr.set("lang", office_lang(lang))
    rpr.set("altLang", office_lang(next(other for other in LANGS if other != lang)))
    for tag in ("a:latin", "a:ea", "a:cs"):
        _tag(rpr, tag).set("typeface", FONT)


def _font(run: Any, size: float, color: str, bold: bool, lang: str) -> None:
    """Size, colour, weight, language and the same font for Latin and East Asian text."""
    run.font.size = Pt(size)
    run.font.bold = bold
    run.font.color.rgb = _rgb(color)
    _lang_and_faces(run._r.get_or_add_rPr(), lang)


def _frame(tf: Any, lang: str) -> None:
    """Wrapping, top-anchored, 0.1 in / 0.05 in insets, shrinking its text on overflow."""
    tf.word_wrap = True
    tf.auto_size = MSO_AUTO_SIZE.TEXT_TO_FIT_SHAPE  # <a:normAutofit/>: shrink on overflow
    tf.vertical_anchor = MSO_ANCHOR.TOP
    for side in ("margin_left", "margin_right"):
        setattr(tf, side, Inches(0.1))
    for side in ("margin_top", "margin_bottom"):
        setattr(tf, side, Inches(0.05))


def _fill(
    shape: Any,
    box: tuple[float, float, float, float],
    paragraphs: Sequence[tuple[str, float, str, bool]],
    name: str,
    lang: str,
    bullet: str | None = None,
) -> Any:
    """Place ``shape`` (a placeholder or a text box) at ``box`` (inches) and write its
    (text, size, colour, bold) paragraphs; ``bullet``: the bullet colour of bulleted ones."""
    shape.left, shape.top, shape.width, shape.height = (Inches(v) for v in box)
    shape.name = name
    tf = shape.text_frame
    tf.clear()
    _frame(tf, lang)
    for i, (text, size, color, bold) in enumerate(paragraphs):
        p = tf.paragraphs[0] if i == 0 else tf.add_paragraph()
        p.alignment = PP_ALIGN.LEFT
        p.line_spacing = 1.0
        p.space_before = Pt(0)
        ppr = p._p.get_or_add_pPr()
        if bullet is not None:
            p.space_after = Pt(size * 0.5)
            _bulleted(ppr, size, bullet)
        else:
            ppr.set("marL", "0")
            ppr.set("indent", "0")
            _tag(ppr, "a:buNone")
        run = p.add_run()
        run.text = text
        _font(run, size, color, bold, lang)
        _lang_and_faces(_tag(p._p, "a:endParaRPr"), lang)
    return shape


def bullet_indent_in(size: float) -> float:
    """The hanging indent of a bulleted paragraph at ``size`` pt, in inches (the slide picture
    draws its bullets the same: posecards.deck.draw.bullets_slide)."""
    return size * 1.1 / 72.0


def _bulleted(ppr: Any, size: float, color: str) -> None:
    """A real bullet: "•" in the accent colour, text indented, wrapped lines hanging."""
    indent = round(bullet_indent_in(size) * EMU_PER_IN)
    ppr.set("marL", str(indent))
    ppr.set("indent", str(-indent))
    for tag in ("a:buNone", "a:buClr", "a:buFont", "a:buChar"):
        old = ppr.find(qn(tag))
        if old is not None:
            ppr.remove(old)
    # schema order inside pPr: lnSpc, spcBef, spcAft, buClr…, buFont, buChar
    clr = ppr.makeelement(qn("a:buClr"), {})
    srgb = clr.makeelement(qn("a:srgbClr"), {"val": color.lstrip("#")[:6].upper()})
    clr.append(srgb)
    ppr.append(clr)
    ppr.append(ppr.makeelement(qn("a:buFont"), {"typeface": FONT}))
    ppr.append(ppr.makeelement(qn("a:buChar"), {"char": "•"}))


def _placeholder(slide: Any, kind: str) -> Any:
    """The slide's title ("title") or body ("body") placeholder."""
    types = {
        "title": (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE),
        "subtitle": (PP_PLACEHOLDER.SUBTITLE,),
        "body": (PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT),
    }[kind]
    return next(p for p in slide.placeholders if p.placeholder_format.type in types)


def _alt_text(picture: Any, text: str, name: str) -> None:
    picture.name = name
    picture._element.nvPicPr.cNvPr.set("descr", text)


def _widescreen(prs: Any, width_emu: int, height_emu: int, lang: str) -> None:
    """Slide size without the template's "4:3" label; masters and layouts stretched to it; the
    theme's fonts and the default text language those of the deck."""
    size = prs.element.find(qn("p:sldSz"))
    size.attrib.pop("type", None)  # PowerPoint's Widescreen (13.333 x 7.5 in) has no type
    prs.slide_width, prs.slide_height = width_emu, height_emu
    k = width_emu / (TEMPLATE_WIDTH_IN * EMU_PER_IN)
    for part in (prs.slide_master, *prs.slide_layouts):
        for xfrm in part.element.iter(qn("a:xfrm")):
            off, ext = xfrm.find(qn("a:off")), xfrm.find(qn("a:ext"))
            if off is not None:
                off.set("x", str(round(int(off.get("x")) * k)))
            if ext is not None:
                ext.set("cx", str(round(int(ext.get("cx")) * k)))
    theme = prs.slide_master.part.part_related_by(
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/theme"
    )

    root = etree.fromstring(theme.blob)
    for which in ("a:majorFont", "a:minorFont"):
        for font in root.iter(qn(which)):
            for tag in ("a:latin", "a:ea"):
                font.find(qn(tag)).set("typeface", FONT)
            for script in font.findall(qn("a:font")):
                if script.get("script") == "Hans":
                    script.set("typeface", FONT)
    theme._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    for level in prs.element.find(qn("p:defaultTextStyle")):
        rpr = level.find(qn("a:defRPr"))
        if rpr is not None:
            rpr.set("lang", office_lang(lang))


def _app_xml(titles: Sequence[str]) -> bytes:
    """docProps/app.xml: Widescreen, the slide and notes counts and the slide titles."""
    vt = "".join(f"<vt:lpstr>{escape(t)}</vt:lpstr>" for t in ("Office Theme", *titles))
    n = len(titles)
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/'
        'extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/'
        'docPropsVTypes"><TotalTime>0</TotalTime><Application>posecards</Application>'
        f"<PresentationFormat>Widescreen</PresentationFormat><Slides>{n}</Slides>"
        f"<Notes>{n}</Notes><HiddenSlides>0</HiddenSlides><ScaleCrop>false</ScaleCrop>"
        '<HeadingPairs><vt:vector size="4" baseType="variant"><vt:variant><vt:lpstr>Theme'
        "</vt:lpstr></vt:variant><vt:variant><vt:i4>1</vt:i4></vt:variant><vt:variant><vt:lpstr>"
        f"Slide Titles</vt:lpstr></vt:variant><vt:variant><vt:i4>{n}</vt:i4></vt:variant>"
        f'</vt:vector></HeadingPairs><TitlesOfParts><vt:vector size="{n + 1}" baseType="lpstr">'
        f"{vt}</vt:vector></TitlesOfParts><LinksUpToDate>false</LinksUpToDate>"
        "<SharedDoc>false</SharedDoc><HyperlinksChanged>false</HyperlinksChanged>"
        "<AppVersion>16.0000</AppVersion></Properties>"
    ).encode()


def _fix_zip(data: bytes, replace: Mapping[str, bytes]) -> bytes:
    """Same entries, same order, fixed times (byte-identical output for identical slides);
    ``replace``: entries whose bytes we write ourselves."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, replace.get(info.filename) or src.read(info.filename))
    return buf.getvalue()


def slide_alt(s: Mapping[str, Any]) -> str:
    """A picture's alt text: the figure's description carried by the slide ("alt"), else what
    its notes say it shows (their first paragraph)."""
    alt = str(s.get("alt") or "")
    return alt or str(s["notes"]).split("\n\n", 1)[0]


def _title_slide(slide: Any, title: Any, s: Mapping[str, Any], th: Any, lang: str) -> None:
    """The deck's title slide: its title, subtitle and agenda."""
    look = deck_look()
    _fill(
        title,
        look.deck_title_box,
        [(s["title"], look.deck_title_size, th.accent, True)],
        "Title",
        lang,
    )
    _fill(
        _placeholder(slide, "subtitle"),
        look.deck_subtitle_box,
        [(s["subtitle"], look.deck_subtitle_size, th.muted, False)],
        "Subtitle",
        lang,
    )
    _fill(
        slide.shapes.add_textbox(0, 0, 0, 0),
        look.agenda_box,
        [(x, look.agenda_size, th.text, False) for x in s["items"]],
        "Agenda",
        lang,
    )


def _notes(slide: Any, text: str, lang: str) -> None:
    """A slide's speaker notes, in its language and faces."""
    notes = slide.notes_slide.notes_text_frame
    notes.text = text
    for p in notes.paragraphs:
        for run in p.runs:
            _lang_and_faces(run._r.get_or_add_rPr(), lang)
        _lang_and_faces(_tag(p._p, "a:endParaRPr"), lang)


def _core_properties(prs: Any, title: str, lang: str) -> None:
    """The deck's document properties, with fixed dates (the same bytes every time)."""
    core = prs.core_properties
    core.title = title
    core.author = "posecards"
    core.last_modified_by = "posecards"
    core.created = EPOCH
    core.modified = EPOCH
    core.last_printed = EPOCH
    core.revision = 1
    core.language = office_lang(lang)


def write_pptx(
    slides: Sequence[Mapping[str, Any]], files: Mapping[str, bytes], lang: str, theme_name: str
) -> bytes:
    """The deck of one language from the slides' metadata (titles, notes, alt texts) and
    pictures."""
    th = theme(theme_name)
    look = deck_look()
    prs = Presentation()
    # exactly 16:9: 12,192,000 x 6,858,000 EMU (13.333... x 7.5 in)
    height = round(look.height * EMU_PER_IN)
    _widescreen(prs, round(height * 16 / 9), height, lang)
    layouts = {k: prs.slide_layouts.get_by_name(v) for k, v in LAYOUTS.items()}

    def inches(value: float) -> Any:
        """Inches on the slide; the slide's full width is exactly the slide width."""
        return prs.slide_width if value == look.width else Inches(value)

    full_width = (0.0, look.title_box[1], look.width, look.title_box[3])
    for s in slides:
        kind = s["kind"]
        layout = {"title": "title", "closing": "bullets", "sources": "bullets"}.get(
            kind, "title_only"
        )
        slide = prs.slides.add_slide(layouts[layout])
        bg = slide.background.fill
        bg.solid()
        bg.fore_color.rgb = _rgb(th.background)
        title = _placeholder(slide, "title")
        if kind == "title":
            _title_slide(slide, title, s, th, lang)
        elif kind == "overview":
            # the card carries its own title, drawn: the placeholder lies behind the picture
            _fill(title, full_width, [(s["title"], look.title_size, th.text, True)], "Title", lang)
            pic = files[picture_name(lang, s["stem"])]
            shape = slide.shapes.add_picture(
                io.BytesIO(pic), 0, 0, prs.slide_width, prs.slide_height
            )
            _alt_text(shape, slide_alt(s), "Card")
        else:
            _fill(
                title, look.title_box, [(s["title"], look.title_size, th.text, True)], "Title", lang
            )
            if kind in ("closing", "sources"):
                size = look.sources_size if kind == "sources" else look.body_size
                _fill(
                    _placeholder(slide, "body"),
                    look.body_box,
                    [(x, size, th.text, False) for x in s["items"]],
                    "Sources" if kind == "sources" else "Pitfalls",
                    lang,
                    bullet=th.accent,
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
                _alt_text(shape, slide_alt(s), "Animation" if kind == "animation" else "Figure")
        _notes(slide, s["notes"], lang)
    _core_properties(prs, slides[0]["title"], lang)
    buf = io.BytesIO()
    prs.save(buf)
    return _fix_zip(buf.getvalue(), {"docProps/app.xml": _app_xml([s["title"] for s in slides])})
