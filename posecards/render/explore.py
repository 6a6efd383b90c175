"""The interactive explorer: one self-contained HTML file (`posecards explore`, DIR/explore.html).

The page carries its own math (posecards/explore_js/math.js, a mirror of posecards/encodings
and posecards/formatting that the test suite checks against the Python, in Node and in
Chromium), every constant and default that math needs (``math_payload``, written here from the
Python), its drawing code (posecards/explore_js/page.js), its look (templates/explore.css) and
its text (cards/explore.toml, English and Chinese side by side).
Nothing is loaded from anywhere: the card pages' Content-Security-Policy plus a script-src
that allows exactly the one inline script, by its sha256.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import tomllib
from functools import cache
from typing import Any

from markupsafe import Markup

from posecards.config import LANGS, ExploreConfig
from posecards.engine.units import Context, Rendered
from posecards.paths import EXPLORE_JS_DIR, data_dir
from posecards.render.fields import CardTextError
from posecards.render.html import CSP, TemplateProblem, env
from posecards.render.ui import ui_strings

STRINGS_FILE = "explore.toml"
SCRIPTS = ("math.js", "page.js")  # in posecards/explore_js/, in this order
# Positions drawn in the heatmap and similarity views, and in ALiBi's attention view; the
# heatmap's smallest column and row in device pixels (narrower ones beat into moiré)
LIMITS = {
    "heat_positions": 2048,
    "attention_positions": 4096,
    "heat_column_px": 2.4,
    "heat_row_px": 1.3,
}

# views in display order: (id, canvases as (canvas id, caption string id or "", height/width,
# and optionally height/width below 520 px))
VIEWS: tuple[tuple[str, tuple[tuple[Any, ...], ...]], ...] = (
    ("heat", (("heat", "", 0.62),)),
    ("sim", (("sim", "", 0.5, 0.62),)),
    ("clocks", (("clocks", "", 0.42, 0.9),)),
    ("ladder", (("ladder", "", 0.55, 0.95),)),
    ("scaling", (("scaling", "", 0.6),)),
    (
        "rope",
        (
            ("turn", "rope_turn", 0.62, 0.42),
            ("score", "rope_score", 0.62),
            ("unseen", "rope_unseen", 0.62),
        ),
    ),
    ("calc", (("crit", "calc_crit", 0.62, 0.85), ("bound", "calc_bound", 0.62, 0.85))),
    ("axes2d", (("mrope", "axes2d_text", 0.62, 0.85), ("vis2d", "axes2d_vision", 0.62, 0.85))),
    ("terms", (("terms", "", 0.3, 1.15),)),
    ("buckets", (("t5", "buckets_t5", 0.36, 0.62), ("deberta", "buckets_deberta", 0.36, 0.62))),
    (
        "alibi",
        (
            ("slopes", "alibi_slopes", 0.62),
            ("attn", "alibi_attn", 0.62),
            ("bias", "alibi_bias", 0.62),
        ),
    ),
)
WIDE_VIEWS = ("rope", "calc", "axes2d", "terms", "alibi")
# the cards that explain each control (its help, h_<key> in cards/explore.toml, links to them)
HELP_CARDS: dict[str, tuple[int, ...]] = {
    "base": (2, 3), "d": (2, 3, 6), "layout": (7,), "ctx": (2,), "p": (2, 3), "play": (2,),
    "k": (2, 3), "preset": (6,), "rope_type": (4, 5), "partial": (6,), "factor": (4,),
    "orig": (4, 5), "test": (4, 5), "beta_fast": (4,), "beta_slow": (4,), "truncate": (4,),
    "low_ff": (4,), "high_ff": (4,), "heads": (4,), "head": (4,), "nb": (4,), "md": (4,),
    "bidir": (4,), "mrope": (6, 9), "mrope_layout": (6,), "conv": (9,),
    "calc_base": (10,), "seed": (8,),
}  # fmt: skip  # a whole row on wide screens, its plots side by side


class ExploreTextError(CardTextError):
    """cards/explore.toml is malformed: names the file and the key."""


def load_strings() -> dict[str, dict[str, str]]:
    """Every entry of cards/explore.toml: {id: {"en": ..., "zh": ...}}, both non-empty."""
    path = data_dir("cards") / STRINGS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExploreTextError(f"{path}: missing (the explorer's text)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ExploreTextError(f"{path}: syntax error: {exc}") from None
    out: dict[str, dict[str, str]] = {}
    for key, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"en", "zh"}:
            raise ExploreTextError(f"{path}: [{key}] must have exactly 'en' and 'zh'")
        for lang in ("en", "zh"):
            if not isinstance(entry[lang], str) or not entry[lang].strip():
                raise ExploreTextError(f"{path}: [{key}] {lang} is empty")
        out[key] = {"en": entry["en"], "zh": entry["zh"]}
    return out


def _source(name: str) -> str:
    text = env().loader.get_source(env(), name)[0]  # type: ignore[union-attr]
    if "</" in text:
        raise TemplateProblem(f"templates/{name} must not contain '</'")
    return str(text)


def script_source(name: str) -> str:
    """One of the page's scripts (``SCRIPTS``), as shipped in posecards/explore_js/."""
    text = (EXPLORE_JS_DIR / name).read_text(encoding="utf-8")
    if "</" in text:
        raise TemplateProblem(f"posecards/explore_js/{name} must not contain '</'")
    return text


@cache
def _script() -> str:
    """The page's one inline script: ``SCRIPTS`` in order, as ``render.jsmin`` ships them."""
    from posecards.render.jsmin import minify

    return "".join(minify(script_source(name)) for name in SCRIPTS)


def _defaults(fn: Any) -> dict[str, Any]:
    """A function's keyword defaults, by parameter name."""
    import inspect

    return {
        name: p.default
        for name, p in inspect.signature(fn).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def math_payload() -> dict[str, Any]:
    """Every constant, key list and default math.js uses, read from the Python it mirrors."""
    from posecards import formatting
    from posecards.encodings import (
        alibi,
        buckets,
        mrope,
        rope_2d,
        rope_base_bound,
        rope_partial,
        rope_scaling,
        seeded,
        similarity,
        sinusoidal,
    )
    from posecards.encodings._checks import LAYOUTS

    functions = {
        "pair_frequencies": sinusoidal.pair_frequencies,
        "wavelengths": sinusoidal.wavelengths,
        "sinusoidal_pe": sinusoidal.sinusoidal_pe,
        "offset_profile": similarity.offset_profile,
        "rope_inv_freq": rope_scaling.rope_inv_freq,
        "head_inv_freq": rope_partial.head_inv_freq,
        "alibi_slopes": alibi.alibi_slopes,
        "t5_relative_bucket": buckets.t5_relative_bucket,
        "mrope_axes": mrope.mrope_axes,
        "smallest_base": rope_base_bound.smallest_base,
        "num": formatting.num,
        "sig": formatting.sig,
    }
    return {
        "defaults": {name: _defaults(fn) for name, fn in functions.items()},
        "layouts": list(LAYOUTS),
        "frequencies": list(sinusoidal.FREQUENCIES),
        "rope_types": list(rope_scaling.ROPE_TYPES),
        "required_keys": {k: list(v) for k, v in rope_scaling.REQUIRED_KEYS.items()},
        "scaling_keys": list(rope_scaling.SCALING_KEYS),
        "yarn_defaults": dict(rope_scaling.YARN_BETAS),
        "head_rope_types": list(rope_partial.HEAD_ROPE_TYPES),
        "proportional_keys": list(rope_partial.PROPORTIONAL_KEYS),
        "log_band": buckets.LOG_BAND,
        # the 2-D / MRoPE view's math (mrope.py, rope_2d.py)
        "mrope_layouts": list(mrope.MROPE_LAYOUTS),
        "vision_conventions": list(rope_2d.CONVENTIONS),
        # the calculators' (rope_base_bound.py): the base scan's step
        "grid_ratio": rope_base_bound.GRID_RATIO,
        # the seeded generator (seeded.py): its seeds and the counter's step
        "seeds": seeded.SEEDS,
        "seed_step": seeded.STEP,
    }


def csp(script: str) -> str:
    """The card pages' policy, plus the one inline script of this page (by its hash)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return f"{CSP}; script-src 'sha256-{digest}'"


def _label_key(prefix: str, name: str) -> str:
    return prefix + re.sub(r"[^a-z0-9]", "_", name.lower())


def presets(strings: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """Every RoPE of the example configs posecards ships (docs/examples/<folder>/config.json),
    one per folder and layer kind, as posecards reads them the way transformers 5.23.0 does
    (``model.layers.read_layers``: class defaults filled, rope_parameters standardized): what a
    preset sets the controls to. Names from cards/explore.toml (``m_<folder>``, ``k_<kind>``)."""
    from posecards.model.layers import read_layers

    root = data_dir("examples")
    out = []
    for folder in sorted(p for p in root.iterdir() if (p / "config.json").is_file()):
        reading = read_layers(json.loads((folder / "config.json").read_text(encoding="utf-8")))
        for key, kind in sorted(reading.rope.items()):
            for label in (_label_key("m_", folder.name), _label_key("k_", key)):
                if label not in strings:
                    raise ExploreTextError(f"cards/{STRINGS_FILE}: [{label}] missing (a preset)")
            out.append(
                {
                    "id": folder.name if key == "rope" else f"{folder.name}:{key}",
                    "model": _label_key("m_", folder.name),
                    "kind": _label_key("k_", key),
                    "source": f"docs/examples/{folder.name}/config.json",
                    "head_dim": kind.head_dim,
                    "parameters": dict(kind.parameters),
                    "partial_in_default": kind.partial_in_default,
                    "layout": kind.layout,
                    "max_position_embeddings": kind.max_position_embeddings,
                }
            )
    return out


def axes2d_payload(strings: dict[str, dict[str, str]]) -> dict[str, Any]:
    """What the 2-D / MRoPE view needs beside the math: every MRoPE of the example configs
    (docs/examples, read by ``model.layers.read_layers`` as transformers 5.23.0 reads them: its
    ``mrope_section``, which layout its model's module uses, the text head's base and width),
    and card 9's vision heads (``content.card9``: one head width, each convention's base)."""
    from posecards.config import PEParams
    from posecards.content import card9
    from posecards.model.layers import read_layers

    root = data_dir("examples")
    mrope = []
    for folder in sorted(p for p in root.iterdir() if (p / "config.json").is_file()):
        reading = read_layers(json.loads((folder / "config.json").read_text(encoding="utf-8")))
        for kind in reading.rope.values():
            if kind.mrope_section is None:
                continue
            model = _label_key("m_", folder.name)
            if model not in strings:
                raise ExploreTextError(f"cards/{STRINGS_FILE}: [{model}] missing (an MRoPE model)")
            mrope.append(
                {
                    "id": folder.name,
                    "model": model,
                    "source": f"docs/examples/{folder.name}/config.json",
                    "head_dim": kind.head_dim,
                    "rope_theta": float(kind.parameters["rope_theta"]),
                    "section": list(kind.mrope_section),
                    "layout": kind.mrope_layout,
                }
            )
    bases = {c: float(b or PEParams().base) for c, b in card9.ROPE_BASE.items()}
    return {"mrope": mrope, "vision_head_dim": card9.ROPE_HEAD_DIM, "vision_grid": card9.ROPE_GRID,
            "vision_bases": bases}  # fmt: skip


TERMS_LABELS = ("rms", "kinds_key", "query_i", "key_j")  # card 8's [labels] the view shows


def terms_payload() -> dict[str, Any]:
    """What the four-terms view needs beside the math: card 8's shapes (``content.card8``: tokens,
    d_head, the content's rms), which terms each scheme keeps (``SCHEME_KINDS``) and the words
    card 8 prints for them (its [labels] in cards/card8.toml, both languages)."""
    from dataclasses import fields

    from posecards.content import card8
    from posecards.encodings.score_terms import ScoreTerms
    from posecards.render.text import load_card_text

    labels = load_card_text(8).labels
    keys = {k for kinds in card8.SCHEME_KINDS.values() for k in kinds}
    keys |= {f"scheme_{s}" for s in card8.SCHEME_KINDS} | set(TERMS_LABELS)
    return {"names": [f.name for f in fields(ScoreTerms)],  # cc, cp, pc, pp
            "tokens": card8.TERMS_TOKENS, "d_head": card8.TERMS_HEAD,
            "content_rms": card8.TERMS_CONTENT_RMS,
            "schemes": [[s, list(kinds)] for s, kinds in card8.SCHEME_KINDS.items()],
            "labels": {k: [labels[k].get(c) for c in LANGS] for k in sorted(keys)}}  # fmt: skip


def card_link(card: int | str, params: Any) -> str:
    """The explorer from a card's page (``DIR/<lang>/card-N-....html``), opened with that card's
    parameters in its URL fragment: each control by its id and own value (sliders on a log₂
    scale hold the exponent), as the page writes it, and ``view``: the view the page scrolls to
    (``v-<view>``) when it opens."""
    from urllib.parse import urlencode

    from posecards.content import card4

    def log2(x: float) -> str:
        return f"{math.log2(x):g}"

    sinusoid = {"d": str(params.d_model), "base": f"{params.base:g}", "ctx": log2(params.positions)}
    state: dict[int | str, dict[str, str]] = {
        2: sinusoid,  # its view is the first
        3: {**sinusoid, "rope-type": "default", "view": "rope"},
        4: {
            "d": str(card4.ROPE_DIM), "rope-type": "yarn", "factor": str(card4.ROPE_FACTOR),
            "orig": log2(card4.ROPE_ORIG), "test": log2(card4.UNSEEN_TEST), "view": "scaling",
        },
        6: {"preset": "gemma-4-26b-a4b-it:full_attention", "view": "scaling"},
        7: {"layout": "half"},  # its view is the first
        8: {"d": str(params.d_model), "base": f"{params.base:g}", "view": "terms"},
        9: {"view": "axes2d"},
        10: {"view": "calc"},
    }  # fmt: skip
    query = urlencode(state.get(card, {}))
    return "../explore.html" + ("#" + query if query else "")


def card_pages() -> dict[int, str]:
    """Each card's page in a build, relative to its language folder: ``card-3-rope-rotation.html``."""
    from posecards.config import CARD_IDS
    from posecards.render.outputs import card_stem
    from posecards.render.text import load_card_text

    return {n: f"{card_stem(n, load_card_text(n).slug)}.html" for n in CARD_IDS}


def _views() -> list[dict[str, Any]]:
    """``VIEWS`` as the template reads them: each canvas with its caption and aspects."""
    return [
        {
            "id": vid,
            "wide": vid in WIDE_VIEWS,
            "canvases": [
                {
                    "id": c[0],
                    "caption": c[1],
                    "aspect": c[2],
                    "narrow": c[3] if len(c) > 3 else None,
                }
                for c in cv
            ],
        }
        for vid, cv in VIEWS
    ]


def _squeeze(html: str) -> str:
    """The markup without indentation and blank lines (HTML reads any run of blanks as one),
    and without the line break after a block's end tag before the next tag (a blank between
    blocks draws nothing; the page has no <pre>); the scripts' bytes untouched (the CSP holds
    the hash of one)."""
    parts = re.split(r"(<script[^>]*>.*?</script>)", html, flags=re.S)
    return "".join(
        p if p.startswith("<script") else _BLOCK_END.sub(r"\1", re.sub(r"[ \t]*\n\s*", "\n", p))
        for p in parts
    )


_BLOCK_END = re.compile(
    r"(</(?:div|details|p|section|fieldset|legend|summary|option|h2|h3)>)\n(?=<)"
)


def explore_page(cfg: ExploreConfig) -> str:
    """The whole explorer as one HTML document (deterministic: same inputs, same bytes)."""
    from dataclasses import asdict

    from posecards._version import __version__
    from posecards.content.card4 import UNSEEN_MIN  # card 4's rule: a new arc over 0.01 rad
    from posecards.encodings.rope_partial import HEAD_ROPE_TYPES
    from posecards.encodings.rope_scaling import ROPE_TYPES
    from posecards.figures.style import theme
    from posecards.render.jsmin import minify_css

    strings = load_strings()
    model_presets = presets(strings)
    axes2d = axes2d_payload(strings)
    pages = card_pages()
    data: dict[str, Any] = {
        "lang": cfg.lang,
        "theme": cfg.theme,
        # each string as [text in LANGS[0], in LANGS[1], ...] (no key repeated 200 times)
        "langs": list(LANGS),
        "strings": {k: [v[code] for code in LANGS] for k, v in strings.items()},
        "limits": LIMITS,
        "math": math_payload(),
        "presets": model_presets,
        "axes2d": axes2d,
        "terms": terms_payload(),
        "unseen_min": UNSEEN_MIN,
        "card_pages": pages,
        "version": __version__,
    }
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    payload = payload.replace("</", "<\\/")
    script = _script()
    try:
        return _squeeze(
            env()
            .get_template("explore.html.j2")
            .render(
                lang=cfg.lang,
                ui=ui_strings(cfg.lang),
                languages=[(code, ui_strings(code)["language_name"]) for code in LANGS],
                theme=cfg.theme,
                s=strings,
                views=_views(),
                presets=model_presets,
                axes2d=axes2d,
                # a card not built yet (card 10 on another branch) gets its link once it is
                help_cards={k: [n for n in v if n in pages] for k, v in HELP_CARDS.items()},
                card_pages=pages,
                rope_types=HEAD_ROPE_TYPES,
                known_rope_types=ROPE_TYPES,
                themes=[asdict(theme(name)) for name in ("light", "dark")],
                csp=csp(script),
                css=Markup(minify_css(_source("explore.css"))),  # noqa: S704 - our own stylesheet
                data=Markup(payload),  # noqa: S704 - JSON with '</' escaped
                script=Markup(script),  # noqa: S704 - our own script, hashed into the CSP
            )
        )
    except Exception as exc:  # jinja2 errors name the template
        if isinstance(exc, TemplateProblem | ExploreTextError):
            raise
        import jinja2

        if isinstance(exc, jinja2.TemplateError):
            raise TemplateProblem(f"templates/explore.html.j2: {exc}") from None
        raise


def explore_bytes(cfg: ExploreConfig) -> bytes:
    return explore_page(cfg).encode("utf-8")


def render_explore(job: ExploreConfig, ctx: Context) -> Rendered:
    """A build's explorer unit: the page, opening in the build's first language and theme."""
    return Rendered({"explore.html": explore_bytes(job)})
