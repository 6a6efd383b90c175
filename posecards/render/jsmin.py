"""The explorer's JavaScript as the page ships it: comments and indentation dropped.

A small deterministic tokenizer (no dependency, no network): it walks the source once, keeping
string, template and regular-expression literals byte for byte, dropping ``//`` and ``/* */``
comments, each line's leading and trailing blanks and the lines left empty. Line breaks between
code lines stay, so automatic semicolon insertion reads the code as before; names and the code
itself are untouched (the agreement tests run these very bytes under Node and in Chromium).
"""

from __future__ import annotations

# after one of these (or at the start), a "/" opens a regular expression, not a division
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
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


def minify(source: str) -> str:
    """``source`` without comments, indentation, trailing blanks and empty lines."""
    out: list[str] = []  # the code so far, comments removed
    i, n = 0, len(source)
    templates: list[int] = []  # open ${ } depths inside template literals
    while i < n:
        ch = source[i]
        nxt = source[i + 1] if i + 1 < n else ""
        if ch == "/" and nxt == "/":  # a line comment: up to the line break
            j = source.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch == "/" and nxt == "*":
            j = source.find("*/", i + 2)
            if j < 0:
                raise JsMinError("unterminated /* comment")
            out.append(" " if "\n" not in source[i:j] else "\n")
            i = j + 2
            continue
        if ch in "'\"" or ch == "`" or (ch == "}" and templates and templates[-1] == 0):
            if ch == "}":  # back inside a template literal after its ${ }
                templates.pop()
                quote = "`"
            else:
                quote = ch
            j = i + 1
            while True:
                if j >= n:
                    raise JsMinError(f"unterminated {quote} literal")
                c = source[j]
                if c == "\\":
                    j += 2
                    continue
                if c == "\n":  # (a template's line break would lose its indentation below)
                    raise JsMinError(f"line break inside a {quote} literal")
                if c == quote:
                    j += 1
                    break
                if quote == "`" and c == "$" and source[j + 1 : j + 2] == "{":
                    j += 2
                    templates.append(0)
                    break
                j += 1
            out.append(source[i:j])
            i = j
            continue
        if ch == "/" and _regex_allowed(out):
            j, in_class = i + 1, False
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
            out.append(source[i:j])
            i = j
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
    lines = (line.strip() for line in "".join(out).split("\n"))
    return "\n".join(line for line in lines if line) + "\n"
