"""render/jsmin.py: the explorer's scripts without comments and indentation, same behaviour."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.render.explore import SCRIPTS, script_source
from posecards.render.jsmin import JsMinError, minify

NODE = shutil.which("node")


def test_comments_go_and_literals_stay() -> None:
    src = (
        "/** a block\n   over lines */\n"
        "    const a = 'x // not a comment';  // a comment\n"
        '  const b = "/* nor this */" + `t ${ {k: "}"}.k } // ${1 / 2}`;\n'
        "\n"
        "const r = /[/*]\\/+/g, q = a.length / 2 / 1; /* inline */ const z = 1;\n"
        "  if (r.test(b)) return typeof /x/;\n"
    )
    assert minify(src) == (
        "const a='x // not a comment';"
        'const b="/* nor this */"+`t ${{k:"}"}.k} // ${1/2}`;'
        "const r=/[/*]\\/+/g,q=a.length/2/1;const z=1;"
        "if(r.test(b))return typeof/x/;\n"
    )


def test_line_breaks_stay_where_semicolon_insertion_reads_them() -> None:
    """A break goes after "{", ";", "," and before "}", nowhere else (ASI may need it)."""
    src = "let a = 1\nlet b = [\n  2,\n  3\n]\nf(a)\n(b)\nfunction g() {\n  return\n  a\n}\n"
    assert minify(src) == "let a=1\nlet b=[\n2,3\n]\nf(a)\n(b)\nfunction g(){return\na}\n"


@pytest.mark.parametrize(
    "src", ["const a = 'x;\n", "const a = `x\ny`;\n", "/* open\n", "const r = /x\n"]
)
def test_malformed_source_is_an_error(src: str) -> None:
    with pytest.raises(JsMinError):
        minify(src)


@pytest.mark.parametrize("name", SCRIPTS)
def test_shipped_scripts_shrink_and_are_stable(name: str) -> None:
    src = script_source(name)
    once = minify(src)
    assert minify(once) == once  # nothing left to drop
    assert len(once) < 0.85 * len(src)
    assert "\n//" not in "\n" + once and "/**" not in once


# pieces of statements whose value a program prints; comments land between them at random
PIECES = [
    "out.push('a // b')",
    'out.push("c /* d */ e")',
    "out.push(`f ${1 + 2} // ${'g'}`)",
    "out.push(/[/]+\\//.test('x//'))",
    "out.push(String(9 / 3 / 3))",
    "out.push('h/i'.replace(/\\//g, '|'))",
    "out.push(((x) => x / 2)(8))",
    "out.push([1, 2].map((v) => v * 2).join('/'))",
    "out.push(5 - -2, 3 + +'4', 1 / 2 / 1, typeof -1, 2 ** -1)",
    "{ let q = 2; out.push(q++ + ++q, q-- - --q) }",
    "out.push(true ? .5 : 1, (1).toFixed(1), 1 .toFixed(2), [1][0] < !0)",
    "out.push(`${ 1 + 2 } ${ 'a' }`, { a: 1 }.a, !!'x' && !'')",
    "{ const f = function () { return /a b/.test('a b') }; out.push(f()) }",
    "{ let q = 1\n q++\n out.push(q) }",
    "{ const f = () => {\n return\n 1 }\n out.push(f(), [\n 1,\n 2\n ].length) }",
    "{ let s = 'a'\n const t = s\n ;[1].forEach((v) => out.push(v + t)) }",
]
COMMENTS = [
    "",
    " // trailing / note",
    " /* mid */",
    "\n// full line\n",
    "\n/** block\n * more */\n",
]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(PIECES), st.sampled_from(COMMENTS), st.integers(0, 6)),
        min_size=1,
        max_size=12,
    )
)
def test_a_minified_program_prints_what_its_source_prints(
    parts: list[tuple[str, str, int]],
) -> None:
    src = "".join(f"{' ' * indent}{piece};{comment}\n" for piece, comment, indent in parts)
    script = (
        "const run = (s) => { const out = []; new Function('out', s)(out); return out; };"
        f"const a = run({json.dumps(src)}), b = run({json.dumps(minify(src))});"
        "console.log(JSON.stringify([a, b]));"
    )
    if NODE is None:
        pytest.fail("node is not installed (CI has it)")
    a, b = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, check=True).stdout)
    assert a == b and len(a) >= len(parts)
