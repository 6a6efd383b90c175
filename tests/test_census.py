"""The census of posecards/data/census.json (content/census.py, written by content/census_make.py)
against a recount by a script of its own over the same transformers.

The recount reads neither posecards' probe nor its family table: for each text model the census
lists, it takes transformers' default config (``AutoConfig.for_model``), its text part by
transformers' own ``get_text_config``, the standardized ``rope_parameters`` the config class
holds, ``max_position_embeddings``, and the modeling module's source file as text (which
``apply_rotary*`` function it defines and whether that calls ``rotate_half``; whether it builds
ALiBi or T5-style buckets; whether it has a position table). Where a category can be told that
way, its count and its model types must be the census's.

Recounted so (transformers 5.23.0):

- learned tables: a model without ``rope_parameters``, ALiBi or buckets whose modeling source
  (with the sibling ``..x.modeling_x`` modules it imports: DPR's is BERT's) builds a position
  ``nn.Embedding`` or a ``*Position*Embedding`` class;
- partial rotation: a ``partial_rotary_factor`` below 1 (in ``rope_parameters`` or on the
  config), a ``rotary_pct`` below 1, a ``config.rotary_dim`` the modeling source reads that is
  below the head dimension, or multi-head latent attention (``qk_nope_head_dim`` > 0: only the
  ``qk_rope_head_dim`` slots rotate). MiniMax M3's default ``rotary_dim`` (64, head_dim 128) is
  not read by its modeling source (``partial_rotary_factor`` of ``rope_parameters``, default 1):
  full rotation, as the census says;
- attention layers without position, per model: zeros of ``no_rope_layers`` (the modeling
  source's ``use_rope = config.no_rope_layers[layer_idx]``), layer types the per-layer-type
  ``rope_parameters`` give none (Beam), and full-attention layers where the attention's
  ``apply_rotary_pos_emb`` call is guarded by a sliding-window test (Cohere 2, EXAONE 4,
  AFMoE, ...; Cohere 2 MoE's ``force_rope`` computed as its modeling source does);
- layers without (self-)attention, per model: ``layer_types`` values other than full, sliding,
  chunked and indexed attention (linear attention, conv), and Mllama's
  ``cross_attention_layers`` (they attend to the image, not to the text's positions);
- MRoPE: the modeling source reads ``mrope_section`` from ``rope_parameters`` or expands the
  position ids to several axes in its rotary embedding (NeoMME's two axes). A default config
  names ``mrope_section`` itself only for Cosmos3 Edge: the eleven others take the modeling
  source's default, so the config alone would count 1, not 12.

Not told independently: which reads posecards refuses (``not_read``: a learned table posecards
cannot follow is told from a read one only by running the model, which is the probe's job), and
a position table of a RoPE model's folder (a vision tower's table is in the same modeling file
as the text model's rotation: file text does not say which tower owns it), so learned tables are
recounted among the models without RoPE only. Rotated-pair counts beyond full/partial are not
recounted (MLA and ``rotary_dim`` models would need the probe's head layout).
"""

from __future__ import annotations

import importlib.util
import json
import re
import warnings
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from posecards.content.census import CATEGORIES, CENSUS_FILE, census, counts

T = pytest.importorskip("transformers")


@cache
def _doc() -> dict[str, Any]:
    return json.loads(CENSUS_FILE.read_text(encoding="utf-8"))


def test_the_file_is_of_the_installed_transformers() -> None:
    assert _doc()["transformers"] == T.__version__, (
        "posecards/data/census.json was made with another transformers: rerun "
        "python -m posecards.content.census_make and read the diff"
    )
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    assert _doc()["model_types"] == len(list(CONFIG_MAPPING.keys()))
    # every model type is accounted for: read (as a text model or beside it) or not read
    read = {m["read_from"] for m in _doc()["models"].values()}
    read |= {t for m in _doc()["models"].values() for t in m["also"]}
    not_read = {t for v in _doc()["not_read"].values() for t in v}
    assert not read & not_read
    assert read | not_read == set(CONFIG_MAPPING.keys())


def test_counts_are_the_records_counted() -> None:
    c = census()
    assert {k: list(v) for k, v in c.counts.items()} == counts(_doc()["models"])
    assert {k: list(v) for k, v in c.shipped_counts.items()} == counts(_doc()["shipped"])
    positions = sum(c.n(p) for p in ("rope", "alibi", "learned", "relative"))
    assert positions == len(c.models)
    assert c.n("layout:half") + c.n("layout:interleaved") >= c.n("rope")
    assert c.n("partial") + c.n("full_rotation") == c.n("rope")
    assert set(CATEGORIES) <= set(c.counts)


# --- the independent recount --------------------------------------------------------------------

ROOT = Path(T.__file__).resolve().parent


def _text(model_type: str) -> Any:
    cfg = T.AutoConfig.for_model(model_type)
    try:
        return cfg.get_text_config(decoder=True)
    except ValueError:  # two text configs (encoder-decoder composites): the decoder's
        return cfg.get_text_config()


def _rope_parameters(text: Any) -> dict[str, dict[str, Any]]:
    """key -> rope parameters: ``rope`` for one set, else the layer types (as the class keeps them)."""
    p = getattr(text, "rope_parameters", None) or {}
    if p and all(isinstance(v, dict) or v is None for v in p.values()):
        # per layer type; None: that layer type rotates nothing (Beam's full-attention layers)
        return {k: dict(v) for k, v in p.items() if v is not None}
    return {"rope": dict(p)} if p else {}


def _source(text: Any) -> str:
    """Every modeling_*.py file of the config class's model folder, as text."""
    spec = importlib.util.find_spec(type(text).__module__)
    assert spec is not None and spec.origin is not None
    files = sorted(Path(spec.origin).parent.glob("modeling_*.py"))
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def _defs(src: str, prefix: str) -> dict[str, str]:
    """name -> body of every top-level function of a modeling file whose name starts so."""
    pattern = rf"\ndef ({prefix}\w*)\(.*?(?=\ndef |\nclass |\Z)"
    return {m.group(1): m.group(0) for m in re.finditer(pattern, src, re.S)}


def _apply_layouts(src: str) -> set[str]:
    """The layouts of the ``apply_rotary*`` functions a modeling file defines: each rotate_*
    function it calls is ``interleaved`` if it slices even and odd slots (``::2``), else
    ``half``; a body that slices them itself is ``interleaved``."""
    rotate = {
        name: "interleaved" if re.search(r"0?::2\]", body) else "half"
        for name, body in _defs(src, "rotate").items()
    }
    out = set()
    for body in _defs(src, "apply_rotary").values():
        out |= {layout for name, layout in rotate.items() if f"{name}(" in body}
        if re.search(r"\[\.\.\., ?0?::2\]", body):
            out.add("interleaved")
    return out


def _base_in_source(src: str) -> float | None:
    """``inv_freq = 1.0 / (B ** (torch.arange(0, dim, 2) ...)``: B, if the file writes one."""
    m = re.search(r"1\.0 / \((\d+(?:\.\d+)?) \*\* \(torch\.arange\(0, dim, 2", src)
    return float(m.group(1)) if m else None


_TABLE = re.compile(
    r"(?:\w*pos\w*|wpe)\s*=\s*(?:nn\.Embedding|\w*Position\w*Embedding\w*)\(|"
    r"class \w*Position\w*\(nn\.Embedding\)",
    re.I,
)
_MROPE = re.compile(
    r"rope_parameters(?:\.get\(|\[)\"mrope_section\"|position_ids\.expand\([23], -1, -1\)"
)
# an attention forward that rotates only when its layer is a sliding (local) one
_GUARD = re.compile(
    r"\n\s+if ([^\n]*(?:sliding|local)[^\n]*):\n(?:\s+cos, sin = position_embeddings\n)?"
    r"\s+query_states, key_states = apply_rotary_pos_emb\("
)
ATTENTION_TYPES = {"full_attention", "sliding_attention", "chunked_attention", "indexed_attention"}


def _source_with_imports(text: Any) -> str:
    """The model folder's modeling source and the sibling modeling modules it imports."""
    src = _source(text)
    for other in sorted(set(re.findall(r"from \.\.(\w+)\.modeling_(\w+) import", src))):
        f = ROOT / "models" / other[0] / f"modeling_{other[1]}.py"
        if f.is_file():
            src += "\n" + f.read_text(encoding="utf-8")
    return src


def _attr(text: Any, key: str) -> Any:
    try:
        return getattr(text, key, None)
    except Exception:  # noqa: BLE001 -- a per-layer attribute a heterogeneous config refuses
        return None


def _partial(text: Any, params: dict[str, dict[str, Any]], src: str) -> bool:
    factors = [p.get("partial_rotary_factor") for p in params.values()]
    factors += [_attr(text, "partial_rotary_factor"), _attr(text, "rotary_pct")]
    if any(f is not None and f < 1 for f in factors):
        return True
    if (_attr(text, "qk_nope_head_dim") or 0) > 0:
        return True
    rotary = _attr(text, "rotary_dim")
    if rotary is None or "config.rotary_dim" not in src:
        return False
    return bool(rotary < (_attr(text, "head_dim") or text.hidden_size // text.num_attention_heads))


def _layer_types(text: Any) -> list[str]:
    n = _attr(text, "num_hidden_layers") or 0
    return list(_attr(text, "layer_types") or ["full_attention"] * n)


def _nope_layers(text: Any, params: dict[str, dict[str, Any]], src: str) -> int:
    if not params:
        return 0
    types = _layer_types(text)
    nope = [False] * len(types)
    if "config.no_rope_layers[layer_idx]" in src:
        nope = [not use for use in text.no_rope_layers]
    if "rope" not in params:  # per layer type: a type given no frequencies rotates nothing
        nope = [
            n or (t in ATTENTION_TYPES and t not in params)
            for n, t in zip(nope, types, strict=True)
        ]
    guard = _GUARD.search(src)
    if guard and _attr(text, "sliding_window") is not None:
        force = [False] * len(types)
        if "force_rope" in guard.group(1):  # Cohere 2 MoE: dense-MLP layers of pattern 1
            force = [
                m == "dense" and text.prefix_dense_sliding_window_pattern == 1
                for m in text.mlp_layer_types
            ]
        nope = [
            n or (t == "full_attention" and not f)
            for n, t, f in zip(nope, types, force, strict=True)
        ]
    return sum(nope)


def _other_layers(text: Any) -> int:
    """Layers without self-attention: linear attention, conv, Mllama's cross-attention."""
    other = sum(t not in ATTENTION_TYPES for t in _layer_types(text))
    return other + len(_attr(text, "cross_attention_layers") or ())


@cache
def _recount() -> dict[str, dict[str, Any]]:
    """For each text model of the census (read from the same model type), what the config class
    and the modeling source say."""
    T.logging.set_verbosity_error()
    warnings.filterwarnings("ignore")
    out = {}
    for name, rec in _doc()["models"].items():
        text = _text(rec["read_from"])
        params = _rope_parameters(text)
        # the full-attention layers' frequencies, else the first layer type's (as the census)
        main = (
            params.get("rope") or params.get("full_attention") or params[min(params)]
            if params
            else {}
        )
        src = _source(text)
        used = set(getattr(text, "layer_types", None) or ())  # the layer types a layer has
        out[name] = {
            "model_type": text.model_type,
            "rope_types": sorted({p.get("rope_type", "default") for p in params.values()}),
            "per_layer_type": len(params.keys() & used) > 1,
            # a config that names no base: the one the modeling code writes (GPT-J, CodeGen)
            "theta": main.get("rope_theta") or _base_in_source(src),
            "max_position_embeddings": getattr(text, "max_position_embeddings", None),
            "layouts": _apply_layouts(src),
            "alibi": "alibi" in src.lower() and not params,
            "buckets": hasattr(text, "relative_attention_num_buckets") and not params,
            "table": bool(_TABLE.search(_source_with_imports(text))),
            "partial": _partial(text, params, src),
            "nope_layers": _nope_layers(text, params, src),
            "other_layers": _other_layers(text),
            "mrope": bool(_MROPE.search(src)),
        }
    return out


def test_recount_text_models() -> None:
    """Each record is the text model the config class names."""
    wrong = {n: r["model_type"] for n, r in _recount().items() if r["model_type"] != n}
    assert not wrong


def test_recount_rope_types_and_layer_types() -> None:
    """The scalings in default configs, per-layer-type RoPE: the config classes' own
    rope_parameters, counted here, give the census's model types for each."""
    c = census()
    mine: dict[str, list[str]] = {}
    for name in c.counts["rope"]:
        for t in _recount()[name]["rope_types"]:
            if t != "default":
                mine.setdefault(t, []).append(name)
    assert mine == {k: list(v) for k, v in c.scalings().items()}
    per_layer = [n for n in c.counts["rope"] if _recount()[n]["per_layer_type"]]
    assert per_layer == list(c.counts["per_layer_type"])


def test_recount_base_against_context() -> None:
    """Every RoPE model's base and trained context are the config class's."""
    c = census()
    for m in c.rope_models():
        r = _recount()[m.name]
        assert (m.theta, m.max_position_embeddings) == (r["theta"], r["max_position_embeddings"]), m
    pairs = Counter((m.theta, m.max_position_embeddings) for m in c.rope_models())
    assert sum(pairs.values()) == c.n("rope")


def test_recount_layouts_from_the_modeling_source() -> None:
    """Where the modeling file's apply_rotary functions are all of one layout, the census (the
    probe measured which slot turns with which) says that layout."""
    c = census()
    differ = []
    for name in c.counts["rope"]:
        src = _recount()[name]["layouts"]
        if len(src) == 1:
            (want,) = src
            if c.models[name]["layouts"] != [want]:
                differ.append((name, src, c.models[name]["layouts"]))
    assert not differ, differ
    for layout in ("half", "interleaved"):
        one = [n for n in c.counts["rope"] if _recount()[n]["layouts"] == {layout}]
        assert set(one) <= set(c.counts[f"layout:{layout}"])


def test_recount_alibi_and_buckets() -> None:
    c = census()
    assert sorted(n for n, r in _recount().items() if r["alibi"]) == list(c.counts["alibi"])
    assert sorted(n for n, r in _recount().items() if r["buckets"]) == list(c.counts["relative"])


def test_recount_learned_tables() -> None:
    """The models without rotation, ALiBi or buckets are those whose modeling source builds a
    position table: the census's learned ones."""
    c = census()
    mine = sorted(
        n
        for n, r in _recount().items()
        if not r["rope_types"] and not r["alibi"] and not r["buckets"] and r["table"]
    )
    assert mine == list(c.counts["learned"])
    assert len(mine) == c.n("learned")


def test_recount_partial_rotation_and_mrope() -> None:
    c = census()
    for key in ("partial", "mrope"):
        mine = [n for n in c.counts["rope"] if _recount()[n][key]]
        assert mine == list(c.counts[key]), key


def test_recount_layers_without_position_or_attention() -> None:
    """Per model, the number of attention layers without position and of layers without
    attention are the census's (which the probe counted layer by layer)."""
    c = census()
    for key in ("nope_layers", "other_layers"):
        differ = {
            n: (c.models[n][key], _recount()[n][key])
            for n in c.counts["rope"]
            if c.models[n][key] != _recount()[n][key]
        }
        assert not differ, (key, differ)
        mine = [n for n in c.counts["rope"] if _recount()[n][key]]
        assert mine == list(c.counts[key]), key
