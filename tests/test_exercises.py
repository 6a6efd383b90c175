"""The exercises that close every card page (issue 36, point 13): each card has 2 or 3, in both
languages; the page folds each answer under its question; and every answer is recomputed here
by another route than the card's content module (plain Python, the rotation itself, torch,
transformers' own ALiBi code, the raw measurement and config files), then found in the page."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict
from html import unescape
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as T
from markupsafe import Markup
from transformers.models.bloom.modeling_bloom import build_alibi_tensor

from posecards.cards import CARD_IDS
from posecards.config import PEParams
from posecards.content import compute_card
from posecards.experiment.files import measurements_path
from posecards.figures.style import theme
from posecards.render.fields import CardTextError
from posecards.render.html import card_page
from posecards.render.text import fill_card, load_card_text
from posecards.render.ui import ui_strings

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "posecards" / "data" / "configs"
MINUS = "\u2212"
PARAMS = PEParams()


def fixed(x: float, digits: int) -> str:
    """x printed with ``digits`` decimals, a real minus sign, no thousands separator."""
    s = f"{x:.{digits}f}"
    return MINUS + s[1:] if s.startswith("-") else s


def grouped(x: float) -> str:
    return f"{round(x):,}"


def page(card: int, lang: str) -> str:
    """Card ``card``'s page as the template renders it (the panels left out: not under test)."""
    filled = fill_card(load_card_text(card), lang, compute_card(card, PARAMS).numbers)
    return card_page(
        lang=lang,
        card=filled,
        panels=[],
        formula_svg=Markup("<svg></svg>"),
        downloads=[],
        other_lang=None,
        footer="",
        theme=theme_colours(),
        nav=[],
    )


def theme_colours() -> dict[str, str]:
    return asdict(theme("light"))


def answers(html: str) -> dict[str, tuple[str, str]]:
    """exercise id -> (question, folded answer) as the page's text shows them."""
    out = {}
    for m in re.finditer(
        r'<li id="exercise-([a-z0-9-]+)"><p>(.*?)</p>\s*<details><summary>[^<]*</summary>'
        r'<p class="answer">(.*?)</p></details></li>',
        html,
        re.S,
    ):
        out[m.group(1)] = (unescape(m.group(2)), unescape(m.group(3)))
    return out


# --- the independent recomputations, one per exercise: the strings its answer must show -----


def _pair_wavelength() -> list[str]:
    d, b, i = PARAMS.d_model, PARAMS.base, PARAMS.d_model // 8
    omega = b ** (-2 * i / d)
    # the smallest t > 0 with t * omega = 2 pi: the angle is back where it started
    t = 2 * math.pi / omega
    assert math.isclose(math.cos(t * omega), 1.0) and math.isclose(
        math.sin(t * omega), 0.0, abs_tol=1e-12
    )
    return [fixed(t, 2)]


def _counter_digits() -> list[str]:
    n = 1
    while len({p % 2**n for p in range(PARAMS.positions)}) < PARAMS.positions:
        n += 1
    return [f"{n} ", f"{2**n:,}", f"{2 ** (n - 1):,}"]


def _sinusoid(n: int, d: int, b: float) -> np.ndarray:
    pe = np.zeros((n, d))
    for p in range(n):
        for i in range(d // 2):
            pe[p, 2 * i] = math.sin(p / b ** (2 * i / d))
            pe[p, 2 * i + 1] = math.cos(p / b ** (2 * i / d))
    return pe


def _similarity_at_offset() -> list[str]:
    d, k = PARAMS.d_model, 5
    pe = _sinusoid(40, d, PARAMS.base)
    dots = [pe[p] @ pe[p + k] / (d / 2) for p in (0, 7, 30)]  # three starts, one value
    assert max(dots) - min(dots) < 1e-12
    return [f"f({k})", fixed(dots[0], 3)]


def _first_slow_pair() -> list[str]:
    d, b, n = PARAMS.d_model, PARAMS.base, PARAMS.positions
    i = 0
    while 2 * math.pi * b ** (2 * i / d) <= n:
        i += 1
    return [f"i = {i}", fixed(2 * math.pi * b ** (2 * i / d), 1), f"i = {i - 1} "]


def _rotation(a: float) -> np.ndarray:
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def _rotated_score() -> list[str]:
    theta1 = 10000.0 ** (-2 / 128)
    q = _rotation(7 * theta1) @ np.array([1.0, 0.0])
    k = _rotation(3 * theta1) @ np.array([1.0, 0.0])
    moved = (_rotation(107 * theta1) @ [1.0, 0.0]) @ (_rotation(103 * theta1) @ [1.0, 0.0])
    assert math.isclose(q @ k, moved)  # only m - n enters
    return [fixed(q @ k, 3)]


def _unfinished_turns() -> list[str]:
    slow = [i for i in range(64) if 2 * math.pi * 10000.0 ** (2 * i / 128) > 4096]
    return [
        f"{len(slow)} ",
        f"i = {slow[0]} ",
        grouped(2 * math.pi * 10000.0 ** (2 * slow[0] / 128)),
    ]


def _bloom_slopes(heads: int) -> list[float]:
    """transformers 5.23.0's BLOOM ALiBi: the bias at key position 1 of a 2-token mask."""
    alibi = build_alibi_tensor(torch.ones(1, 2), heads, torch.float32)  # (heads, 1, 2)
    return [float(x) for x in alibi[:, 0, 1]]


def _alibi_bias() -> list[str]:
    slope = _bloom_slopes(8)[1]
    return [fixed(slope, 4), fixed(-slope * 100, 2)]


def _ntk_base() -> list[str]:
    d, s, b = 128, 4.0, 10000.0
    new = b * s ** (d / (d - 2))
    before, after = (2 * math.pi * base ** ((d - 2) / d) for base in (b, new))
    assert math.isclose(after / before, s)  # the slowest pair stretched exactly like PI
    return [grouped(new), grouped(before), grouped(after), fixed(after / before, 2)]


def _guessing_loss() -> list[str]:
    doc = json.loads(measurements_path().read_text(encoding="utf-8"))
    v = int(doc["config"]["vocab"])
    p = np.full(v, 1.0 / v)
    return [fixed(float(-(p * np.log(p)).sum()), 3)]


def _perplexity_ratio() -> list[str]:
    doc = json.loads(measurements_path().read_text(encoding="utf-8"))
    L, n = int(doc["config"]["train_length"]), max(doc["config"]["eval_lengths"])

    def beyond(scheme: str) -> float:
        rows = [
            r
            for r in doc["results"]
            if r.get("task", "local") == "local"  # the two-back task's loss by position
            and r["scheme"] == scheme
            and r["inference_scaling"] is None
            and r["eval_length"] == n
        ]
        return float(np.mean([np.mean(r["loss_by_position"][L:]) for r in rows]))

    rope, alibi = beyond("rope"), beyond("alibi")
    return [fixed(rope, 3), fixed(alibi, 3), fixed(math.exp(rope) / math.exp(alibi), 2)]


def _mla_cache() -> list[str]:
    c = json.loads((CONFIGS / "deepseek-v3.json").read_text(encoding="utf-8"))
    mla = c["kv_lora_rank"] + c["qk_rope_head_dim"]
    full = c["num_attention_heads"] * (
        c["qk_nope_head_dim"] + c["qk_rope_head_dim"] + c["v_head_dim"]
    )
    return [f"{mla} ", f"{full:,}", fixed(full / mla, 1)]


def _scout_temperature() -> list[str]:
    c = json.loads((CONFIGS / "llama-4-scout.json").read_text(encoding="utf-8"))
    t = c.get("text_config", c)
    pos = torch.tensor([1_000_000.0], dtype=torch.float64)
    # transformers 5.23.0, Llama4TextAttention.forward (NoPE layers, temperature tuning on)
    tau = torch.log1p(torch.floor((pos + 1.0) / t["floor_scale"])) * t["attn_scale"] + 1.0
    return [fixed(float(tau[0]), 4)]


def _bfloat16_position() -> list[str]:
    n = 1
    while torch.tensor(float(n), dtype=torch.bfloat16).item() == n:
        n += 1
    stored = torch.tensor(4001.0, dtype=torch.bfloat16).item()
    return [f"{n}", grouped(stored), fixed(abs(stored - 4001), 1)]


def _resize_first_patch() -> list[str]:
    # torch's area_pixel_compute_source_index (cubic, align_corners=False): (i + 1/2) n_in/n_out - 1/2;
    # the same map as torch's linear resize (which reproduces a ramp exactly away from the border)
    ramp = torch.arange(16, dtype=torch.float64)[None, None, None, :]
    out = torch.nn.functional.interpolate(ramp, size=(1, 40), mode="bilinear", align_corners=False)
    coords = (torch.arange(40, dtype=torch.float64) + 0.5) * 16 / 40 - 0.5
    assert torch.allclose(out[0, 0, 0, 3:37], coords[3:37])
    return ["0", fixed(float(coords[0]), 2)]


def _video_interval() -> list[str]:
    with torch.device("meta"):
        model = T.AutoModel.from_config(T.AutoConfig.for_model("qwen2_5_vl"))
    vc = model.config.vision_config
    per_grid = vc.temporal_patch_size / 3.0  # seconds per temporal patch at 3 fps
    ids, _ = model.get_rope_index(
        torch.zeros(1, 4, dtype=torch.long),
        torch.tensor([[2, 2, 2, 2]]),
        video_grid_thw=torch.tensor([[4, 2, 2]]),
        second_per_grid_ts=torch.tensor([per_grid]),
    )
    return [fixed(vc.tokens_per_second * per_grid, 3), f"{int(ids[0, 0, 3])}"]


def _port_rope_slot() -> list[str]:
    """Read from the two rotary modules: the angle one step right (w) gives each slot of
    Qwen2.5-VL's vision head and of Gemma 4 vision's head (64 each)."""
    from transformers.models.gemma4.modeling_gemma4 import Gemma4VisionRotaryEmbedding
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
        Qwen2_5_VLVisionRotaryEmbedding,
    )

    qcfg = T.Qwen2_5_VLConfig().vision_config
    qcfg.hidden_size, qcfg.num_heads = 128, 2
    pos = torch.tensor([[1, 0], [0, 1]])  # one step down, one step right
    cos, sin = Qwen2_5_VLVisionRotaryEmbedding(qcfg)(torch.zeros(1), pos)
    q_down, q_right = torch.atan2(sin, cos).double().numpy()  # (64,) each
    gcfg = T.Gemma4VisionConfig(hidden_size=128, num_attention_heads=2, head_dim=64)
    cos, sin = Gemma4VisionRotaryEmbedding(gcfg)(torch.zeros(1), pos[None])
    _, g_right = torch.atan2(sin[0], cos[0]).double().numpy()
    slot = 20
    assert q_right[slot] != 0 and q_down[slot] == 0  # the column turns it, the row does not
    w_first = np.flatnonzero(q_right[:32] != 0)  # first parts of the w pairs (rotate_half: +32)
    speeds = sorted(set(q_right[q_right != 0].tolist()), reverse=True)
    rank = speeds.index(q_right[slot])
    partner = [s for s in np.flatnonzero(q_right == q_right[slot]) if s != slot]
    gemma_speeds = sorted(set(g_right[g_right != 0].tolist()), reverse=True)
    gemma = np.flatnonzero(g_right == gemma_speeds[rank])  # the same rank, Gemma's own base
    assert len(partner) == 1 and gemma.size == 2
    return [f"{w_first.min()}", f"{w_first.max()}", f"{rank}", f"{partner[0]}", *map(str, gemma)]


def _alibi_twelve_heads() -> list[str]:
    return [fixed(_bloom_slopes(12)[8], 4), fixed(2 ** (-8 * 9 / 12), 4)]


def _shaw_table() -> list[str]:
    k, n = 4, 512  # Shaw et al.: a^K has a row per clipped distance -k..k
    return [f"2k + 1 = {2 * k + 1} ", f"{len(set(range(-n + 1, n))):,}"]


def _shift_cell() -> list[str]:
    from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

    q_len, m, i, j = 3, 5, 2, 1
    k_len = m + q_len
    cols = torch.arange(k_len + q_len, dtype=torch.float64).repeat(1, 1, q_len, 1)  # (1,1,Q,R)
    col = int(XLNetRelativeAttention.rel_shift_bnij(cols, klen=k_len)[0, 0, i, j])
    # XLNet's relative_positional_encoding ("bi"): column c holds distance K - c
    return [f"Q − i + j = {col}", f"{k_len - col}"]


def _critical_dimension() -> list[str]:
    # Liu et al.: the pairs whose period 2 pi b^(2i/d) fits in L tokens, two dimensions each
    d, b, L = 128, 500000.0, 32768
    turning = sum(2 * math.pi * b ** (2 * i / d) <= L for i in range(d // 2))
    return [f"= {2 * turning}"]


def _linear_factor() -> list[str]:
    # position interpolation: the last distance T - 1 onto the last trained one, L - 1
    L, T = 8192, 32768
    return [fixed((T - 1) / (L - 1), 4)]


EXPECTED: dict[int, dict[str, Callable[[], list[str]]]] = {
    1: {"pair-wavelength": _pair_wavelength, "counter-digits": _counter_digits},
    2: {"similarity-at-offset": _similarity_at_offset, "first-slow-pair": _first_slow_pair},
    3: {"rotated-score": _rotated_score, "unfinished-turns": _unfinished_turns},
    4: {"alibi-bias": _alibi_bias, "ntk-base": _ntk_base},
    5: {"guessing-loss": _guessing_loss, "perplexity-ratio": _perplexity_ratio},
    6: {"mla-cache": _mla_cache, "scout-temperature": _scout_temperature},
    7: {"bfloat16-position": _bfloat16_position, "alibi-twelve-heads": _alibi_twelve_heads},
    8: {"shaw-table": _shaw_table, "shift-cell": _shift_cell},
    9: {
        "resize-first-patch": _resize_first_patch,
        "port-rope-slot": _port_rope_slot,
        "video-interval": _video_interval,
    },
    10: {"critical-dimension": _critical_dimension, "linear-factor": _linear_factor},
}


def test_every_card_has_its_exercises() -> None:
    assert sorted(EXPECTED) == list(CARD_IDS)
    for card in CARD_IDS:
        ids = [e.id for e in load_card_text(card).exercises]
        assert 2 <= len(ids) <= 3
        assert ids == list(EXPECTED[card]), f"card {card}: a test recomputes every exercise"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("card", CARD_IDS)
def test_the_page_folds_the_recomputed_answer(card: int, lang: str) -> None:
    html = page(card, lang)
    shown = answers(html)
    assert list(shown) == list(EXPECTED[card])
    assert f"<h2>{ui_strings(lang)['exercises']}</h2>" in html
    assert html.count(f"<summary>{ui_strings(lang)['answer']}</summary>") == len(shown)
    for eid, recompute in EXPECTED[card].items():
        question, answer = shown[eid]
        for s in recompute():
            assert s in answer, f"card {card} {lang} {eid}: {s!r} not in {answer!r}"
        # the question does not give the answer away: its last number is only under the fold
        assert recompute()[-1] not in question, f"card {card} {eid}: the question gives it away"


def test_the_recomputation_is_not_vacuous() -> None:
    """A wrong number in a card's content is caught: the same check on a changed value fails."""
    filled = fill_card(
        load_card_text(4), "en", {**compute_card(4, PARAMS).numbers, "drill_bias": -24.0}
    )
    answer = dict((k, a) for k, _, a in filled.exercises)["alibi-bias"]
    assert fixed(-_bloom_slopes(8)[1] * 100, 2) not in answer


def test_exercises_are_two_or_three_with_question_and_answer(tmp_path: Path) -> None:
    src = (REPO / "cards" / "card2.toml").read_text(encoding="utf-8")
    one = src[: src.index("[exercises.first-slow-pair]")]
    (tmp_path / "card2.toml").write_text(one, encoding="utf-8")
    with pytest.raises(CardTextError, match=r"card2.toml line \d+: a card has 2 or 3"):
        load_card_text(2, tmp_path)
    extra = src.replace(
        "[exercises.first-slow-pair]\n", "[exercises.first-slow-pair]\nhint.en = 'x'\n"
    )
    (tmp_path / "card2.toml").write_text(extra, encoding="utf-8")
    with pytest.raises(CardTextError, match="only a question and an answer"):
        load_card_text(2, tmp_path)
