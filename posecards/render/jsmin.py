"""The explorer's JavaScript as the page ships it: comments and needless blanks dropped.

A small deterministic tokenizer (no dependency, no network): it walks the source once, keeping
string, template and regular-expression literals byte for byte, dropping ``//`` and ``/* */``
comments, each line's leading and trailing blanks, the lines left empty, and a blank beside
punctuation unless the two sides would then read as another token. A line break stays where
automatic semicolon insertion could read it: it goes only after a "{", ";" or "," and before a
"}" (where a break never ends a statement that would otherwise go on, nor starts one); names
are untouched (the agreement tests run these very bytes under Node and in Chromium).
"""

from __future__ import annotations

import re

# after one of these (or at the start), a "/" opens a regular expression, not a division
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
# a blank beside one of these goes, unless the two sides would join into another token
# ("a - -b" is not "a--b", "x / /re/" no comment, "a = =b") or a side is a "." ("1 .toFixed")
_PUNCT = set("{}()[];,:=<>+-*/%&|^!~?")
_JOINS = {"++", "--", "//", "/*", "*/", "**", "&&", "||", "==", "=>", "<=", ">=", "!=", "+=",
          "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "??", "?.", "<!", "->"}  # fmt: skip
_REGEX_KEYWORDS = ("return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void")


class JsMinError(ValueError):
    """The source ends inside a literal or a comment (a malformed script)."""


def _regex_allowed(code: list[str]) -> bool:
    text = "".join(code[-12:]).rstrip()
    if not text:
        return True
    if text[-1] in _REGEX_AFTER:
        return True
    word = text.split()[-1] if text.split() else ""
    for k in _REGEX_KEYWORDS:
        before = word[: -len(k)][-1:]
        if word.endswith(k) and not (before.isalnum() or before in ("_", "$")):
            return True
    return False


def _blank_kept(prev: str, ch: str) -> bool:
    """Whether the blanks between code ending in ``prev`` and code starting with ``ch`` stay."""
    return prev not in ("", "\n") and (
        "." in (prev, ch) or (prev + ch) in _JOINS or (prev not in _PUNCT and ch not in _PUNCT)
    )


def _literal_end(source: str, j: int, quote: str, templates: list[int]) -> int:
    """The index just past a string or template literal (or its part up to an opening ``${``,
    which pushes a new depth on ``templates``) whose body starts at ``j``."""
    n = len(source)
    while True:
        if j >= n:
            raise JsMinError(f"unterminated {quote} literal")
        c = source[j]
        if c == "\\":
            j += 2
            continue
        if c == "\n":  # (a template's line break would lose its indentation in minify)
            raise JsMinError(f"line break inside a {quote} literal")
        if c == quote:
            return j + 1
        if quote == "`" and c == "$" and source[j + 1 : j + 2] == "{":
            templates.append(0)
            return j + 2
        j += 1


def _regex_end(source: str, j: int) -> int:
    """The index just past a regular-expression literal (flags included) whose body starts at
    ``j``."""
    n, in_class = len(source), False
    while True:
        if j >= n or source[j] == "\n":
            raise JsMinError("unterminated regular expression")
        c = source[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            j += 1
            break
        j += 1
    while j < n and source[j].isalpha():  # flags
        j += 1
    return j


def minify(source: str) -> str:
    """``source`` without comments, indentation, trailing blanks, empty lines and the line
    breaks after "{", ";", "," and before "}"."""
    out: list[str] = []  # the code so far, comments removed
    i, n = 0, len(source)
    templates: list[int] = []  # open ${ } depths inside template literals
    pending = False  # blanks (or a comment) passed since the last code
    while i < n:
        ch = source[i]
        nxt = source[i + 1] if i + 1 < n else ""
        if pending and ch not in " \t\n" and not (ch == "/" and nxt in "/*"):
            pending = False
            if _blank_kept(out[-1][-1:] if out else "", ch):
                out.append(" ")
        if ch == "\n":
            pending = False
        if ch == "/" and nxt == "/":  # a line comment: up to the line break
            j = source.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch == "/" and nxt == "*":
            j = source.find("*/", i + 2)
            if j < 0:
                raise JsMinError("unterminated /* comment")
            if "\n" in source[i:j]:
                out.append("\n")
                pending = False
            else:
                pending = True  # a comment inside a line is a blank
            i = j + 2
            continue
        if ch in "'\"" or ch == "`" or (ch == "}" and templates and templates[-1] == 0):
            if ch == "}":  # back inside a template literal after its ${ }
                templates.pop()
                quote = "`"
            else:
                quote = ch
            j = _literal_end(source, i + 1, quote, templates)
            out.append(source[i:j])
            i = j
            continue
        if ch == "/" and _regex_allowed(out):
            j = _regex_end(source, i + 1)
            out.append(source[i:j])
            i = j
            continue
        if ch in " \t":  # a run of blanks: decided when the next code arrives
            pending = True
            i += 1
            continue
        if templates:
            if ch == "{":
                templates[-1] += 1
            elif ch == "}":
                templates[-1] -= 1
        out.append(ch)
        i += 1
    if templates:
        raise JsMinError("unterminated template literal")
    lines = [line.strip() for line in "".join(out).split("\n")]
    kept: list[str] = []
    for line in (line for line in lines if line):
        if kept and (kept[-1][-1] in "{;," or line[0] == "}"):
            kept[-1] += line  # no line ends inside a literal: these are code characters
        else:
            kept.append(line)
    return "\n".join(kept) + "\n"


def minify_css(source: str) -> str:
    """The page's stylesheet without comments, indentation and the blanks after ``;``/``:``/``,``
    and around braces (its quoted font names keep theirs: none holds one of ``;:{},``)."""
    text = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    lines = (line.strip() for line in text.split("\n"))
    text = "\n".join(line for line in lines if line)
    return re.sub(r"\s*([{};,])\s*|(:)\s+", lambda m: m.group(1) or m.group(2), text) + "\n"
