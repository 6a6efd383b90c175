"""Numbers as the card text prints them: the filters of ``{{ x | num(3) }}`` placeholders, and
what figures print beside their data. Every layer but the math may use them (no dependencies).
"""

from __future__ import annotations

import math

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


MINUS = "\u2212"  # a real minus sign, as typeset: "−0.5", not "-0.5"


def _minus(s: str) -> str:
    return MINUS + s[1:] if s.startswith("-") else s


def num(value: float, digits: int = 3) -> str:
    """Fixed-point: num(0.98765, 2) -> '0.99'. Negative zero prints as 0."""
    s = f"{float(value):.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else _minus(s)


def sci(value: float, digits: int = 1) -> str:
    """Scientific with a real times sign: sci(1.1e-16) -> '1.1×10⁻¹⁶'."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return num(v, 0) if v == 0 else str(v)
    exp = math.floor(math.log10(abs(v)))
    mant = v / 10**exp
    if round(abs(mant), digits) >= 10:
        mant, exp = mant / 10, exp + 1
    return _minus(f"{mant:.{digits}f}") + f"×10{str(exp).translate(_SUPERSCRIPT)}"


def below(value: float, exponent: int) -> str:
    """A quantity at rounding level, as a bound: below(8.9e-16, -14) -> '< 10⁻¹⁴'.

    Rounding noise (10⁻¹⁶…10⁻¹³) differs from CPU to CPU in every digit; the card states the
    bound it stays under instead. The bound is fixed in the card text, with a wide margin over
    the values seen, so it prints the same everywhere; a value at or above it (unusual
    parameters) prints as sci(value, 1).
    """
    v = abs(float(value))
    if v < 10.0**exponent:
        return f"< 10{str(exponent).translate(_SUPERSCRIPT)}"
    return sci(value, 1)


def group(value: float) -> str:
    """Integer with thousands separators: 131072 -> '131,072'."""
    return _minus(f"{round(float(value)):,}")


def sig(value: float, digits: int = 3) -> str:
    """Significant digits: sig(62831.85, 3) -> '62,800'; sig(0.0123) -> '0.0123'."""
    v = float(value)
    if v == 0:
        return "0"
    exp = math.floor(math.log10(abs(v)))
    rounded = round(v, digits - 1 - exp)
    if abs(rounded) >= 1000:
        return _minus(f"{round(rounded):,}")
    decimals = max(0, digits - 1 - exp)
    return _minus(f"{rounded:.{decimals}f}")


WL_SIG_FROM = 1e6  # from here on a wavelength prints with 4 significant digits


def wl(value: float) -> str:
    """A wavelength in positions, one rule on every card: 3 significant digits below 1,000,
    whole positions up to a million (never rounded to a multiple of 10): 6.28, 62.8, 628, 6,283,
    60,611; from a million on 4 significant digits, 40,950,000. A model keeps inv_freq in
    float32 (about 7 significant digits), so the last digits of an 8-digit wavelength would be
    the exact formula's, not what the model computes (Llama 4 Scout: 40,947,128 exact,
    40,947,129.8 from transformers' float32 inv_freq; both print 40,950,000)."""
    v = float(value)
    if abs(v) >= WL_SIG_FROM:
        return sig(v, 4)
    return group(v) if abs(v) >= 1000 else sig(v, 3)
