"""Card text: placeholder filters, strict filling, and clear errors for malformed card files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from posecards.formatting import group, num, sci, sig, wl
from posecards.paths import data_dir
from posecards.render.text import CardTextError, fill, load_card_text


def test_filters_format_numbers() -> None:
    assert num(0.98765, 2) == "0.99"
    assert num(-0.0001, 2) == "0.00"
    assert sci(1.1102230246251565e-16) == "1.1×10⁻¹⁶"
    assert sci(9.96e-3, 1) == "1.0×10⁻²"
    assert sci(2.5e4, 2) == "2.50×10⁴"
    assert group(131072) == "131,072"
    assert sig(62831.853, 3) == "62,800"
    assert sig(0.012345, 3) == "0.0123"
    assert sig(6.2831853, 3) == "6.28"


def test_one_rounding_rule_for_wavelengths() -> None:
    """2π·1000 prints the same everywhere (issue 11: it was 6,280 on card 1, 6,283 on card 2)."""
    two_pi = 2 * 3.141592653589793
    assert [wl(two_pi * 10**k) for k in range(5)] == ["6.28", "62.8", "628", "6,283", "62,832"]
    assert fill("{{ x | wl }}", {"x": two_pi * 1000}, "t") == "6,283"


def test_cards_print_wavelengths_with_the_one_rule() -> None:
    """No card formats a wavelength placeholder (lam..., lambda...) with another filter."""
    import re

    for path in sorted(Path(__file__).resolve().parent.parent.glob("cards/*.toml")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"\{\{\s*(lam\w*|lambda\w*|wavelength\w*)\s*\|\s*(\w+)", text):
            if path.stem in ("card1", "card2"):
                assert m.group(2) == "wl", f"{path.name}: {m.group(0)}"


def test_fill_is_strict_and_names_the_placeholder() -> None:
    assert fill("f(1) = {{ f1 | num(3) }}", {"f1": 0.5}, "x") == "f(1) = 0.500"
    with pytest.raises(CardTextError, match="placeholder 'f2' has no value"):
        fill("{{ f2 }}", {"f1": 1.0}, "card9.toml: 'thesis' (en)")


def _copy_cards(tmp_path: Path) -> Path:
    folder = tmp_path / "cards"
    shutil.copytree(data_dir("cards"), folder)
    return folder


@pytest.mark.parametrize("card", [1, 2, 3, 4, 5])
def test_every_card_file_loads(card: int) -> None:
    text = load_card_text(card)
    assert text.id == card
    assert len(text.takeaways) == 3 and len(text.pitfalls) >= 2
    assert 3 <= len(text.panels) <= 5
    assert all(p.id.startswith(f"c{card}-") for p in text.panels)


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    folder = _copy_cards(tmp_path)
    path = folder / "card1.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n[broken\n", encoding="utf-8")
    with pytest.raises(CardTextError, match=r"card1\.toml: syntax error: .*line \d+"):
        load_card_text(1, folder)


def test_missing_chinese_text_names_key_and_line(tmp_path: Path) -> None:
    folder = _copy_cards(tmp_path)
    path = folder / "card2.toml"
    lines = path.read_text(encoding="utf-8").splitlines()
    # drop the zh line of the [thesis] table
    start = lines.index("[thesis]")
    zh = next(i for i in range(start, len(lines)) if lines[i].startswith("zh"))
    del lines[zh]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        CardTextError, match=r"card2\.toml line \d+: 'thesis' has no 中文 \(zh\) text"
    ):
        load_card_text(2, folder)


def test_negative_numbers_use_a_real_minus_sign() -> None:
    assert num(-1.5, 1) == "−1.5"
    assert sci(-2.5e-3) == "−2.5×10⁻³"
    assert sig(-62831.8, 3) == "−62,800" and group(-1234) == "−1,234"


class _CharWidth:
    """A stand-in measure: every character is one point wide."""

    def width(self, s: str, size: float, weight: str = "normal") -> float:
        return float(len(s))


def test_wrap_keeps_numbers_whole_and_punctuation_off_line_starts() -> None:
    from posecards.render.compose import wrap

    text = "误差最大为 8.7×10⁻⁸。然后继续"
    lines = wrap(text, 14, 10, _CharWidth())  # type: ignore[arg-type]
    assert all(len(ln) <= 14 for ln in lines)
    assert not any(ln[0] in "。，、" for ln in lines)
    assert any("8.7×10⁻⁸。" in ln for ln in lines)  # the number moved down with its full stop
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    en = wrap("the quick brown fox jumps over the lazy dog", 12, 10, _CharWidth())  # type: ignore[arg-type]
    assert en == ["the quick", "brown fox", "jumps over", "the lazy dog"]


def test_below_prints_a_bound_for_rounding_noise() -> None:
    from posecards.formatting import below

    assert below(8.9e-16, -14) == "< 10⁻¹⁴"
    assert below(-1.0e-15, -14) == "< 10⁻¹⁴"
    assert below(0.0, -15) == "< 10⁻¹⁵"
    # at or above the bound, the value itself
    assert below(1e-14, -14) == "1.0×10⁻¹⁴"
    assert below(3.2e-12, -14) == "3.2×10⁻¹²"
    assert fill("gap {{ x | below(-13) }}", {"x": 3.6e-14}, "t") == "gap < 10⁻¹³"


def test_rounding_level_numbers_stay_well_under_their_printed_bound() -> None:
    # every {{ x | below(e) }} of the card text: at the default parameters x is at least 5 times
    # under 10^e, so other CPUs' rounding noise cannot push it over and change the text
    import re

    from posecards.config import PEParams
    from posecards.content import compute_card

    for card in (1, 2, 3):
        source = (data_dir("cards") / f"card{card}.toml").read_text(encoding="utf-8")
        bounds = set(re.findall(r"\{\{ (\w+) \| below\((-\d+)\) \}\}", source))
        if card == 1:  # the permutation demo alone: the rest of card 1 costs a UMAP fit
            from posecards.content.card1 import _permutation

            numbers = _permutation(PEParams())[1]
        else:
            numbers = compute_card(card, PEParams()).numbers
        checked = [(k, int(e)) for k, e in bounds if k in numbers]
        assert checked, card
        for key, exponent in checked:
            assert abs(numbers[key]) < 10.0**exponent / 5, (card, key, numbers[key])
