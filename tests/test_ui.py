"""The interface's words are data (templates/ui.toml, one table per language): the loader checks
the file, the templates ask for strings rather than test languages, no code keeps its own
bilingual strings, and every string of the table is used."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from posecards.config import LANGS
from posecards.render import ui
from posecards.render.ui import UiTextError, ui_strings, ui_text

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def own_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """templates/ui.toml read from ``tmp_path`` (write it there) for the test."""
    monkeypatch.setattr(ui, "data_dir", lambda name: tmp_path)
    ui._tables.cache_clear()
    yield tmp_path / ui.UI_FILE
    ui._tables.cache_clear()


def test_every_language_has_every_string_with_the_same_fields() -> None:
    tables = [ui_strings(lang) for lang in LANGS]
    assert all(set(t) == set(tables[0]) for t in tables)
    for key in tables[0]:
        fields = [ui._fields(t[key]) for t in tables]
        assert all(f == fields[0] for f in fields), key
    assert ui_strings("zh")["language_name"] == "中文"
    assert ui_text("en", "inspect_defaults", keys="rope_theta") == "defaults: rope_theta"
    with pytest.raises(ValueError, match="unknown language 'fr'; choose one of: en, zh"):
        ui_strings("fr")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[en]\na = "x"\n', r"needs one table per language: \[en\], \[zh\]"),
        ('[en]\na = "x"\n[zh]\nb = "y"\n', r"'a' is in \[en\] but not in \[zh\]"),
        (
            '[en]\na = "x {n}"\n[zh]\na = "y {m}"\n',
            r"\[zh\] a has the fields \['m'\], \[en\] \['n'\]",
        ),
        ('[en]\na = " "\n[zh]\na = "y"\n', r"\[en\] a must be a non-empty string"),
        ('[en]\na = "x"\n[zh]\na = "y"\n[fr]\na = "z"\n', "needs one table per language"),
        ("[en\n", "syntax error"),
    ],
)
def test_a_malformed_table_is_one_line_naming_the_file_and_key(
    own_table: Path, text: str, message: str
) -> None:
    own_table.write_text(text, encoding="utf-8")
    with pytest.raises(UiTextError, match=message) as err:
        ui_strings("en")
    assert str(own_table) in str(err.value) and "\n" not in str(err.value)


def test_templates_ask_for_strings_not_languages() -> None:
    for path in sorted((ROOT / "templates").glob("*.j2")):
        text = path.read_text(encoding="utf-8")
        for expr in re.findall(r"\{\{.*?\}\}|\{%.*?%\}", text, re.S):
            assert not re.search(r"lang\s*[!=]=|'(en|zh)'|\"(en|zh)\"", expr), (path.name, expr)
        assert not re.search("[\u3000-\u9fff\uff00-\uffef]", text), f"{path.name}: Chinese text"


# not interface strings: the example sentence card 1's demo permutes (content data)
NOT_INTERFACE = {"content/card1.py"}


def _literal(n: ast.expr) -> bool:
    """A string (not only spaces), an f-string, or a tuple of them."""
    if isinstance(n, ast.Tuple):
        return all(_literal(e) for e in n.elts)
    if isinstance(n, ast.Constant):
        return isinstance(n.value, str) and bool(n.value.strip())
    return isinstance(n, ast.JoinedStr)


def _bilingual_in_code(path: Path) -> list[str]:
    """Dicts of literal strings keyed by exactly the languages, and `a if lang == "zh" else b`
    between literal strings."""
    out = []
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Dict) and n.keys and all(_literal(v) for v in n.values):
            keys = {k.value for k in n.keys if isinstance(k, ast.Constant)}
            if keys == set(LANGS) and len(n.keys) == len(LANGS):
                out.append(f"{path.name}:{n.lineno}: {ast.unparse(n)[:60]}")
        if isinstance(n, ast.IfExp) and _literal(n.body) and _literal(n.orelse):
            test = ast.unparse(n.test)
            if re.search(r"lang\b.*(==|!=)\s*'(en|zh)'", test):
                out.append(f"{path.name}:{n.lineno}: {ast.unparse(n)[:60]}")
    return out


def test_no_code_keeps_its_own_interface_strings(tmp_path: Path) -> None:
    found = []
    for path in sorted((ROOT / "posecards").rglob("*.py")):
        if path.relative_to(ROOT / "posecards").as_posix() not in NOT_INTERFACE:
            found += _bilingual_in_code(path)
    assert not found, "interface strings in code (templates/ui.toml holds them):\n" + "\n".join(
        found
    )
    # the scan finds what it looks for
    sample = tmp_path / "probe.py"
    sample.write_text(
        'A = {"en": "x", "zh": "y"}\nB = "a" if lang == "zh" else "b"\nC = " " if lang else ""\n'
    )
    assert len(_bilingual_in_code(sample)) == 2


def test_every_string_is_used() -> None:
    used = "\n".join(
        p.read_text(encoding="utf-8")
        for p in [*(ROOT / "posecards").rglob("*.py"), *(ROOT / "templates").glob("*.j2")]
    )
    unused = [
        key
        for key in ui_strings("en")
        if not re.search(rf"\.{key}\b|[\"']{key}[\"']", used)
        and not (key.startswith("theme_") and "theme_{" in used)
    ]
    assert not unused, f"strings of templates/ui.toml nothing asks for: {unused}"
