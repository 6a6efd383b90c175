"""Where each key of a TOML file is: the line every message about card text names."""

from __future__ import annotations

from collections.abc import Iterator, Mapping


def _split_key(raw: str) -> list[str] | None:
    """A TOML key as its parts: 'panels."c2-x".title' -> ['panels', 'c2-x', 'title']."""
    parts: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        while i < n and raw[i] in " \t":
            i += 1
        if i < n and raw[i] in "\"'":
            j = raw.find(raw[i], i + 1)
            if j < 0:
                return None
            parts.append(raw[i + 1 : j])
            i = j + 1
        else:
            j = i
            while j < n and (raw[j].isalnum() or raw[j] in "-_"):
                j += 1
            if j == i:
                return None
            parts.append(raw[i:j])
            i = j
        while i < n and raw[i] in " \t":
            i += 1
        if i < n:
            if raw[i] != ".":
                return None
            i += 1
    return parts


def _scan(line: str, state: tuple[str | None, int]) -> tuple[str | None, int]:
    """Carry (open multi-line string delimiter, bracket depth) across one line of a value."""
    quote, depth = state
    i, n = 0, len(line)
    while i < n:
        if quote:
            j = line.find(quote, i)
            if j < 0:
                return quote, depth
            i, quote = j + 3, None
            continue
        c = line[i]
        if line.startswith(('"""', "'''"), i):
            quote, i = line[i : i + 3], i + 3
        elif c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if c == '"' and line[j] == "\\" else 1
            i = j + 1
        elif c in "[{":
            depth, i = depth + 1, i + 1
        elif c in "]}":
            depth, i = depth - 1, i + 1
        elif c == "#":
            break
        else:
            i += 1
    return quote, depth


def key_lines(source: str) -> dict[str, int]:
    """Line of every table and key of a TOML file, as dotted paths ('panels.c2-x.title.en'); a
    path defined implicitly (by a dotted key or a sub-table) gets the line that first names it."""
    lines: dict[str, int] = {}
    table: list[str] = []
    state: tuple[str | None, int] = (None, 0)

    def record(path: list[str], number: int) -> None:
        for k in range(1, len(path) + 1):
            lines.setdefault(".".join(path[:k]), number)

    for number, line in enumerate(source.splitlines(), 1):
        if state != (None, 0):
            state = _scan(line, state)
            continue
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("["):
            inner = s.lstrip("[").split("]")[0]
            path = _split_key(inner)
            if path:
                table = path
                record(table, number)
            continue
        eq = _scan_key_end(s)
        path = _split_key(s[:eq]) if eq > 0 else None
        if path:
            record(table + path, number)
            state = _scan(s[eq + 1 :], (None, 0))
    return lines


class KeyLines(Mapping[str, int]):
    """``key_lines(source)``, worked out when first read: only messages about the text need
    it, and a no-op build reads the text without one."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._lines: dict[str, int] | None = None

    def _all(self) -> dict[str, int]:
        if self._lines is None:
            self._lines = key_lines(self._source)
        return self._lines

    def __getitem__(self, key: str) -> int:
        return self._all()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _scan_key_end(s: str) -> int:
    """Index of the '=' that ends the key of a key/value line (quoted keys may hold '=')."""
    i = 0
    while i < len(s):
        if s[i] in "\"'":
            j = s.find(s[i], i + 1)
            i = len(s) if j < 0 else j + 1
        elif s[i] == "=":
            return i
        else:
            i += 1
    return -1
