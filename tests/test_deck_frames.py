"""The deck's animation frames agree with the math layer; the deck text is complete and fills
from the cards' computed numbers in both languages. Fast: no rendering."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from posecards.config import DECK_CARD_IDS, PEParams
from posecards.deck import frames
from posecards.deck.notes import PARTS, load_deck_text
from posecards.encodings.alibi import alibi_bias, alibi_slopes
from posecards.encodings.rope import rope_angles, rotation_2d
from posecards.encodings.sinusoidal import pair_frequencies
from posecards.encodings.softmax import softmax
from posecards.render.fields import all_texts
from posecards.render.text import load_card_text


def wrap_angle(a: np.ndarray | float) -> np.ndarray:
    """Angle in (−π, π]."""
    return np.angle(np.exp(1j * np.asarray(a, dtype=np.float64)))


def probe(n: int) -> list[int]:
    return [0, n // 2, n - 1]


def test_rope_frames_rotate_q_and_k_by_their_positions_with_a_fixed_relative_angle() -> None:
    r = frames.rope_frames()
    n = len(r.m)
    assert n == frames.N_FRAMES
    for i in probe(n):
        m, k = float(r.m[i]), float(r.n[i])
        assert k - m == r.offset
        # angles from the math layer's rope_angles, vectors by an explicit rotation matrix
        assert r.angle_q[i] == pytest.approx(rope_angles([m], [r.theta])[0, 0], abs=0)
        np.testing.assert_allclose(r.q_rot[i], rotation_2d(m * r.theta) @ r.q, atol=1e-15)
        np.testing.assert_allclose(r.k_rot[i], rotation_2d(k * r.theta) @ r.k, atol=1e-15)
        # the drawn arrows' angles: q at mθ, k at nθ (both start at (1, 0))
        got_q = math.atan2(r.q_rot[i, 1], r.q_rot[i, 0])
        got_k = math.atan2(r.k_rot[i, 1], r.k_rot[i, 0])
        assert wrap_angle(got_q - m * r.theta) == pytest.approx(0.0, abs=1e-12)
        assert wrap_angle(got_k - k * r.theta) == pytest.approx(0.0, abs=1e-12)
        # the angle between the arrows (the arc drawn) is (n − m)θ in every frame
        rel = wrap_angle(got_k - got_q)
        assert rel == pytest.approx(wrap_angle(r.offset * r.theta), abs=1e-12)
        assert r.angle_k[i] - r.angle_q[i] == pytest.approx(r.offset * r.theta, abs=1e-12)
        # and so is the score: q · R((n − m)θ) k
        assert r.score[i] == pytest.approx(r.q @ rotation_2d(r.offset * r.theta) @ r.k, abs=1e-14)
    assert r.angle_q[-1] != r.angle_q[0]  # it does move


@pytest.mark.parametrize("d_model", [8, 64, 512])
def test_clock_hands_turn_at_their_pair_frequency(d_model: int) -> None:
    params = PEParams(d_model=d_model, base=10000.0, positions=128)
    c = frames.clock_frames(params)
    omega = pair_frequencies(d_model, 10000.0)
    assert len(set(c.pairs.tolist())) == len(c.pairs) >= 2
    np.testing.assert_array_equal(c.omega, omega[c.pairs])
    assert np.all(np.diff(c.omega) < 0)  # from fast to slow
    n = len(c.positions)
    for i in probe(n):
        p = float(c.positions[i])
        # a hand at (sin pω, cos pω) is at clockwise angle pω from 12 o'clock
        angle = np.arctan2(c.hands[i, :, 0], c.hands[i, :, 1])
        np.testing.assert_allclose(wrap_angle(angle - p * c.omega), 0.0, atol=1e-12)
        np.testing.assert_allclose(np.hypot(c.hands[i, :, 0], c.hands[i, :, 1]), 1.0, atol=1e-15)
    np.testing.assert_array_equal(c.hands[0], np.tile([0.0, 1.0], (len(c.pairs), 1)))


def test_alibi_frames_are_the_softmax_of_the_alibi_bias() -> None:
    a = frames.alibi_frames()
    slopes = alibi_slopes(frames.ALIBI_HEADS)[list(frames.ALIBI_SHOWN)]
    np.testing.assert_array_equal(a.slopes, slopes)
    bias = alibi_bias(frames.ALIBI_HEADS, frames.ALIBI_KEYS)
    n = len(a.query)
    for f in probe(n):
        i = int(a.query[f])
        for h, head in enumerate(frames.ALIBI_SHOWN):
            np.testing.assert_allclose(a.weights[f, h], softmax(bias[head, i]), atol=1e-15)
            j = np.arange(i + 1)
            np.testing.assert_allclose(
                a.relative[f, h, : i + 1], np.exp(-slopes[h] * (i - j)), rtol=1e-12
            )
            assert np.all(a.weights[f, h, i + 1 :] == 0)
            assert a.weights[f, h].sum() == pytest.approx(1.0, abs=1e-14)
    # fading with distance: the steepest head fades fastest
    last = a.relative[-1]
    assert np.all(np.diff(last[:, 0]) > 0)  # farthest key: larger for gentler heads


def test_deck_text_covers_every_panel_with_every_part() -> None:
    deck = load_deck_text()
    for c in DECK_CARD_IDS:
        assert c in deck.cards, f"no [cards.{c}]"
        assert c in deck.closing_items, f"no [closing.items.{c}]"
        for p in load_card_text(c).panels:
            text = deck.panels.get(p.id)
            assert text is not None, f"deck.toml has no [panels.{p.id}]"
            assert tuple(name for name, _ in text.parts) == PARTS


ZH_AVOID = ("token", "得分", "坑", "喂", "搞乱")
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_0-9]+)")


def test_deck_text_is_bilingual_and_uses_the_glossary() -> None:
    """Chinese notes use 词元/注意力分数/位置编码; no bare PE, no colloquialisms; the same
    placeholders in both languages except the per-language demo values."""
    deck = load_deck_text()
    slides = [
        deck.title,
        deck.closing,
        *deck.cards.values(),
        *deck.panels.values(),
        *deck.animations.values(),
    ]
    for s in slides:
        for _, b in all_texts((("title", s.title), *s.parts)):  # every variant too
            for bad in ZH_AVOID:  # 踩坑实例 is the glossary's word for a bug that shipped
                zh = re.sub("踩坑实[例录]", "", b.zh)
                assert bad not in zh, f"{s.key}: {bad!r} in the Chinese text"
            assert not re.search(r"(?<![A-Za-z])PE(?![A-Za-z(])", b.zh), f"{s.key}: bare PE"
            assert re.search(r"[\u4e00-\u9fff]", b.zh), f"{s.key}: no Chinese"
            assert not re.search(r"[\u4e00-\u9fff]", b.en), f"{s.key}: Chinese in the English"
            en = {re.sub(r"_en$", "", x) for x in PLACEHOLDER.findall(b.en)}
            zh = {re.sub(r"_zh$", "", x) for x in PLACEHOLDER.findall(b.zh)}
            assert en == zh, f"{s.key}: placeholders differ: {sorted(en ^ zh)}"
    asks = [b for s in slides for _, b in all_texts([("ask", dict(s.parts)["ask"])])]
    assert all(a.en.rstrip().endswith("?") and a.zh.rstrip().endswith("？") for a in asks)


def test_deck_text_kept_as_json_reads_back_as_parsed_and_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deck text's TOML data kept in the cache (notes._toml_data) is tomllib's, on the
    first read and from the kept copy; a kept copy changed after it was written is not
    trusted; a value JSON does not give back (a date) is parsed every time, never kept."""
    import tomllib

    from posecards.deck import notes
    from posecards.paths import data_dir

    monkeypatch.setenv("POSECARDS_CACHE_DIR", str(tmp_path / "cache"))
    path = data_dir("cards") / "deck.toml"
    source = path.read_text(encoding="utf-8")
    parsed = tomllib.loads(source)
    assert notes._toml_data(path, source) == parsed  # parsed, then kept
    (kept,) = (tmp_path / "cache" / "texts").iterdir()
    assert notes._toml_data(path, source) == parsed  # read back from the kept copy
    # a kept copy edited after it was written (its first line: the sha256 of the rest)
    digest, _, blob = kept.read_bytes().partition(b"\n")
    forged = blob.replace(b'"card": 3', b'"card": 4', 1)
    assert forged != blob
    kept.write_bytes(digest + b"\n" + forged)
    assert notes._toml_data(path, source) == parsed
    assert kept.read_bytes().partition(b"\n")[2] == blob  # and replaced by what is true
    dated = "when = 2026-12-01\n[animations.x]\ncard = 1\n"
    assert notes._toml_data(path, dated) == tomllib.loads(dated)
    assert len(list((tmp_path / "cache" / "texts").iterdir())) == 1  # nothing kept for it


def test_deck_text_is_read_from_the_folder_of_each_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one process (a test's run_here, a notebook): another cards folder, or the deck text
    edited, is what the next call reads; the same text is parsed once."""
    import shutil

    from posecards.paths import data_dir

    shipped = load_deck_text()
    own = tmp_path / "cards"
    shutil.copytree(data_dir("cards"), own)
    deck = own / "deck.toml"
    source = deck.read_text(encoding="utf-8")
    edited = source.replace(
        'title.en = "Positional encodings in Transformers"', 'title.en = "Where words are"', 1
    )
    assert edited != source
    deck.write_text(edited, encoding="utf-8")
    monkeypatch.setenv("POSECARDS_CARDS_DIR", str(own))
    assert load_deck_text().path == deck
    assert load_deck_text().title.title.en == "Where words are"
    assert load_deck_text() is load_deck_text()  # parsed once for the same text
    deck.write_text(source, encoding="utf-8")
    assert load_deck_text().title.title.en == shipped.title.title.en
    monkeypatch.delenv("POSECARDS_CARDS_DIR")
    assert load_deck_text() is shipped
