"""The data of each card-1 figure, as content/card1.py computes it and figures/card1.py draws it."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# The data of each figure (what its draw function in figures/card1.py reads, and, field by field
# in this order, what `posecards data ID` exports). Typed: a renamed field fails mypy.
@dataclass(frozen=True, eq=False)
class Sentence:
    """c1-permutation in one language: the sentence, its reordering, and attention on both."""

    tokens: list[str]
    tokens_reordered: list[str]
    weights_plain: F64  # (n, n) no PE
    weights_plain_reordered: F64  # (n, n)
    weights_pe: F64  # (n, n) with PE
    weights_pe_reordered: F64  # (n, n)
    deviation_without_pe: float
    deviation_with_pe: float
    weight_deviation_without_pe: float  # max |W(PX) - P W(X) P^T|
    weight_deviation_with_pe: float


@dataclass(frozen=True, eq=False)
class Permutation:
    """c1-permutation: the demo in each card language (fields flat, as exported)."""

    tokens_en: list[str]
    tokens_reordered_en: list[str]
    weights_plain_en: F64  # (n, n)
    weights_plain_reordered_en: F64  # (n, n)
    weights_pe_en: F64  # (n, n)
    weights_pe_reordered_en: F64  # (n, n)
    deviation_without_pe_en: float
    deviation_with_pe_en: float
    weight_deviation_without_pe_en: float
    weight_deviation_with_pe_en: float
    tokens_zh: list[str]
    tokens_reordered_zh: list[str]
    weights_plain_zh: F64  # (n, n)
    weights_plain_reordered_zh: F64  # (n, n)
    weights_pe_zh: F64  # (n, n)
    weights_pe_reordered_zh: F64  # (n, n)
    deviation_without_pe_zh: float
    deviation_with_pe_zh: float
    weight_deviation_without_pe_zh: float
    weight_deviation_with_pe_zh: float
    order: I64  # (n,) the reordering
    demo_d_model: int

    def sentence(self, lang: str) -> Sentence:
        """The demo in one language: "en" or "zh"; English for any other."""
        lang = lang if hasattr(self, f"tokens_{lang}") else "en"
        return Sentence(**{f.name: getattr(self, f"{f.name}_{lang}") for f in fields(Sentence)})


@dataclass(frozen=True, eq=False)
class Where:
    """c1-where: the largest change of one head's scores when every position shifts."""

    places: list[str]
    change: F64  # (4,)
    shift: int
    width: int
    tokens: int
    score_scale: float


@dataclass(frozen=True, eq=False)
class Counting:
    """c1-counting: positions, normalised positions for two lengths, binary digits and their smooth twins."""

    positions: F64  # (16,)
    short_positions: F64  # (8,)
    normalised: F64  # (16,)
    normalised_short: F64  # (8,)
    digits: F64  # (3, 16)
    smooth: F64  # (3, 16)
    length: int
    short_length: int
    p: int
    repeat: int


@dataclass(frozen=True, eq=False)
class Wavelengths:
    """c1-wavelengths: each pair's wavelength against typical context lengths."""

    pair: I64  # (256,)
    wavelengths: F64  # (256,)
    context_lengths: F64  # (5,)
    pairs_turning: I64  # (5,)
    shortest: float
    longest: float
    d_model: int
    base: float


@dataclass(frozen=True, eq=False)
class PeTable:
    """c1-pe-table: the encoding for d = 8 as numbers."""

    pe: F64  # (10, 8)
    positions: I64  # (10,)
    dims: I64  # (8,)
    d_model: int
    wavelengths: F64  # (4,)
    base: float


@dataclass(frozen=True, eq=False)
class Trajectory:
    """c1-trajectory and c1-pairs: the path of the PE vectors in 2-D and two raw pairs."""

    positions: I64  # (128,)
    umap: F64  # (128, 2)
    pca: F64  # (128, 2)
    fast: F64  # (128, 2)
    slow: F64  # (128, 2)
    slow_pair: int
    slow_dims: I64  # (2,)
    fast_wavelength: float
    slow_wavelength: float
    fast_turns: float
    slow_turns: float
    d_model: int
    base: float
