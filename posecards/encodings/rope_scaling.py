"""RoPE inverse frequencies, plain and context-extended ("RoPE scaling"), in float64.

``rope_inv_freq(dim, base, scaling)`` returns ``(inv_freq, attention_factor)`` exactly as the
``ROPE_INIT_FUNCTIONS`` of Hugging Face transformers 5.23.0 (``modeling_rope_utils.py``) do for the
same ``rope_parameters`` / ``rope_scaling`` dict, but in float64 (transformers works in float32).
``dim`` is the rotary dimension itself: HF's ``int(head_dim * partial_rotary_factor)``.

Notation: ``d = dim``, ``b = base``, ``k = 0, 1, ..., d/2 - 1``, ``theta_k = b^(-2k/d)``,
``s`` = factor, ``L`` = original_max_position_embeddings, ``lambda_k = 2 pi / theta_k``
(wavelength). An explicit ``attention_factor`` in the dict wins for yarn and longrope.

========  ========================================================  =========================
type      inv_freq[k]                                               attention_factor
========  ========================================================  =========================
default   theta_k = b^(-2k/d)                                       1
linear    theta_k / s                                               1
ntk       b'^(-2k/d),  b' = b * s^(d/(d-2))  (posecards' own,       1
          static NTK-aware)
dynamic   seq_len <= M: theta_k;  else b'^(-2k/d) with              1
          b' = b * (s * seq_len / M - (s - 1))^(d/(d-2)),
          M = max_position_embeddings
yarn      theta_k * (1 - r_k) + (theta_k / s) * r_k,                mscale and mscale_all_dim:
          r_k = clip((k - lo) / (hi - lo), 0, 1),                   m(s, mscale) /
          lo = max(c(beta_fast), 0),                                m(s, mscale_all_dim);
          hi = min(c(beta_slow), d - 1),                            else m(s, 1);
          c(beta) = d ln(L / (2 pi beta)) / (2 ln b),               m(s, x) = 0.1 x ln s + 1
          floor(lo), ceil(hi) if truncate                           (1 if s <= 1)
longrope  theta_k / f_k,  f = long_factor if seq_len > L,           sqrt(1 + ln s / ln L)
          else short_factor                                         (1 if s <= 1)
llama3    lambda_k < L / high_freq_factor: theta_k;                 1
          lambda_k > L / low_freq_factor: theta_k / s;
          between: (1 - a) theta_k / s + a theta_k,
          a = (L / lambda_k - low_freq_factor)
              / (high_freq_factor - low_freq_factor);
          high_freq_factor <= low_freq_factor (Llama 4 Scout: both
          1): no band between, a step at L / low_freq_factor
========  ========================================================  =========================

Each type is declared once in ``ROPE_REGISTRY`` (a ``RopeType``: the keys it requires, whether
transformers fills ``original_max_position_embeddings`` for it or reads ``head_dim`` without a
fallback, whether posecards needs ``max_position_embeddings``, its function here, its GGUF
name); ``ROPE_TYPES``, ``CONFIG_ROPE_TYPES``, ``rope_partial.HEAD_ROPE_TYPES`` and the model
readers look it up.

Defaults and quirks copied from transformers 5.23.0:

- ``rope_type`` falls back to the legacy key ``type``, then to ``"default"``; ``rope_theta`` in the
  dict takes priority over ``base`` (HF: values in ``rope_parameters`` win over the attribute).
- ``original_max_position_embeddings`` (yarn, longrope, llama3) missing or None falls back to
  ``max_position_embeddings`` (HF ``standardize_rope_params`` does ``setdefault``). HF also lets a
  top-level ``config.original_max_position_embeddings`` (Phi-3) override the dict's value; here the
  dict is all there is, so put that number into it.
- yarn: ``factor`` None means ``max_position_embeddings / original_max_position_embeddings``
  (DeepSeek-V3); ``beta_fast``/``beta_slow`` are read with ``or`` (0 or None -> 32 / 1); mscale is
  used only if both ``mscale`` and ``mscale_all_dim`` are truthy; ``truncate`` defaults to True
  and a present ``None`` counts as False; the upper ramp bound is clipped at ``d - 1`` (not
  ``d/2 - 1``).
- longrope: ``factor`` None means ``max_position_embeddings / original_max_position_embeddings``
  (Phi-3); the long factors are used only when ``seq_len`` is given and ``> L``.
- dynamic: the threshold is ``max_position_embeddings`` (not ``original_max_position_embeddings``).

- llama3: ``high_freq_factor <= low_freq_factor`` only makes transformers warn; it then computes a
  step (keep ``theta_k`` up to the wavelength ``L / low_freq_factor``, divide by ``s`` beyond), and
  so does this function. With equal factors a wavelength exactly at ``L / low_freq_factor`` would
  be 0/0 in transformers; that (measure-zero) case raises.

Differences on purpose: ``partial_rotary_factor`` other than 1 is refused (``dim`` is the rotary
dim: see ``rope_partial.head_inv_freq`` for partial and proportional RoPE), unknown keys are
refused (a typo would silently change a figure), and an impossible value (dim 2 for
``ntk``/``dynamic``) raises instead of dividing by 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from posecards.encodings._checks import (
    F64,
    check_base,
    check_even_dim,
    check_positive,
    check_positive_int,
)
from posecards.encodings.dynamic_ntk import dynamic_ntk_base, ntk_base

# YaRN's ramp ends when the keys are absent or 0: HF `beta_fast or 32`, `beta_slow or 1`
YARN_BETAS: dict[str, float] = {"beta_fast": 32.0, "beta_slow": 1.0}

SCALING_KEYS: tuple[str, ...] = (
    "rope_type",
    "type",
    "rope_theta",
    "partial_rotary_factor",
    "factor",
    "original_max_position_embeddings",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "truncate",
    "short_factor",
    "long_factor",
    "low_freq_factor",
    "high_freq_factor",
)


def _missing(key: str, rope_type: str) -> ValueError:
    required = ", ".join(ROPE_REGISTRY[rope_type].required)
    return ValueError(
        f"scaling[{key!r}] is required for rope_type {rope_type!r}; required keys: {required}"
    )


def _factor(scaling: Mapping[str, Any], rope_type: str) -> float:
    if scaling.get("factor") is None:
        raise _missing("factor", rope_type)
    return check_positive("scaling['factor']", scaling["factor"])


def _original_length(
    scaling: Mapping[str, Any], rope_type: str, max_position_embeddings: int | None
) -> float:
    """L = scaling['original_max_position_embeddings'], else max_position_embeddings (HF)."""
    value = scaling.get("original_max_position_embeddings")
    if value is None:
        value = max_position_embeddings
    if value is None:
        raise _missing("original_max_position_embeddings", rope_type)
    return check_positive("scaling['original_max_position_embeddings']", value)


def _exponents(dim: int) -> F64:
    """2k/d for k = 0..d/2-1, so that theta_k = base^(-2k/d)."""
    return np.arange(0, dim, 2, dtype=np.float64) / dim  # (dim/2,)


def _default_inv_freq(dim: int, base: float) -> F64:
    """theta_k = base^(-2k/d)."""
    return np.asarray(1.0 / base ** _exponents(dim), dtype=np.float64)  # (dim/2,)


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN's magnitude ``m(s, mscale) = 0.1 * mscale * ln(s) + 1`` for ``s > 1``, else 1.

    HF ``get_mscale`` (modeling_rope_utils) and DeepSeek's ``yarn_get_mscale`` (the MLA softmax
    scale, ``posecards.encodings.mla``) are this function.
    """
    if scale <= 1.0:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def _yarn_correction_dim(num_rotations: float, dim: int, base: float, length: float) -> float:
    """Dimension index whose wavelength fits ``num_rotations`` times into ``length``:
    d * ln(L / (2 pi * rotations)) / (2 ln base)."""
    return (dim * math.log(length / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn(
    dim: int,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None,
    max_position_embeddings: int | None,
) -> tuple[F64, float]:
    if "factor" not in scaling:
        raise _missing("factor", "yarn")
    length = _original_length(scaling, "yarn", max_position_embeddings)
    if scaling["factor"] is None:
        # DeepSeek-V3 style: factor = max_position_embeddings / original_max_position_embeddings.
        if max_position_embeddings is None:
            raise ValueError(
                "scaling['factor'] is None for rope_type 'yarn': pass max_position_embeddings "
                "(factor = max_position_embeddings / original_max_position_embeddings) or a factor"
            )
        factor = check_positive_int("max_position_embeddings", max_position_embeddings) / length
    else:
        factor = check_positive("scaling['factor']", scaling["factor"])

    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        mscale = scaling.get("mscale")
        mscale_all_dim = scaling.get("mscale_all_dim")
        if mscale and mscale_all_dim:  # truthiness, as in HF
            attention_factor = yarn_mscale(factor, float(mscale)) / yarn_mscale(
                factor, float(mscale_all_dim)
            )
        else:
            attention_factor = yarn_mscale(factor)

    beta_fast = float(scaling.get("beta_fast") or YARN_BETAS["beta_fast"])  # HF: `or 32`
    beta_slow = float(scaling.get("beta_slow") or YARN_BETAS["beta_slow"])  # HF: `or 1`
    truncate = scaling.get("truncate", True)  # HF: a present None counts as False

    # Ramp bounds in units of the pair index k (correction range).
    low = _yarn_correction_dim(beta_fast, dim, base, length)
    high = _yarn_correction_dim(beta_slow, dim, base, length)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # HF: prevent a singular ramp

    k = np.arange(dim // 2, dtype=np.float64)  # (dim/2,)
    ramp = np.clip((k - low) / (high - low), 0.0, 1.0)  # (dim/2,) 0 -> keep, 1 -> interpolate
    extrapolation = 1.0 - ramp  # (dim/2,) g_k
    theta = _default_inv_freq(dim, base)  # (dim/2,)
    # inv_freq_k = (1 - g_k) * theta_k / s + g_k * theta_k
    inv_freq = (theta / factor) * (1.0 - extrapolation) + theta * extrapolation  # (dim/2,)
    return inv_freq, float(attention_factor)


def _factor_list(scaling: Mapping[str, Any], key: str, half: int) -> F64:
    arr = np.asarray(scaling[key], dtype=np.float64).reshape(-1)  # (dim/2,)
    if arr.shape != (half,):
        raise ValueError(f"scaling[{key!r}] must have dim/2 = {half} entries, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0.0):
        raise ValueError(f"scaling[{key!r}] must hold finite numbers > 0")
    return arr


def _longrope(
    dim: int,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None,
    max_position_embeddings: int | None,
) -> tuple[F64, float]:
    for key in ("short_factor", "long_factor"):
        if scaling.get(key) is None:
            raise _missing(key, "longrope")
    length = _original_length(scaling, "longrope", max_position_embeddings)
    short = _factor_list(scaling, "short_factor", dim // 2)  # (dim/2,)
    long = _factor_list(scaling, "long_factor", dim // 2)  # (dim/2,)

    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        if scaling.get("factor") is not None:
            factor = check_positive("scaling['factor']", scaling["factor"])
        elif max_position_embeddings is not None:
            # Phi-3 style: factor = max_position_embeddings / original_max_position_embeddings.
            factor = check_positive_int("max_position_embeddings", max_position_embeddings) / length
        else:
            raise ValueError(
                "rope_type 'longrope' needs scaling['factor'], scaling['attention_factor'] or "
                "max_position_embeddings to set the attention factor"
            )
        # attention_factor = sqrt(1 + ln s / ln L), or 1 when s <= 1
        attention_factor = (
            1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(length))
        )

    ext = long if (seq_len and seq_len > length) else short  # (dim/2,) HF: `if seq_len and ...`
    inv_freq = 1.0 / (ext * base ** _exponents(dim))  # (dim/2,) theta_k / f_k
    return inv_freq, float(attention_factor)


def _llama3(
    dim: int,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None,
    max_position_embeddings: int | None,
) -> tuple[F64, float]:
    factor = _factor(scaling, "llama3")
    for key in ("low_freq_factor", "high_freq_factor"):
        if scaling.get(key) is None:
            raise _missing(key, "llama3")
    low_freq_factor = check_positive("scaling['low_freq_factor']", scaling["low_freq_factor"])
    high_freq_factor = check_positive("scaling['high_freq_factor']", scaling["high_freq_factor"])
    length = _original_length(scaling, "llama3", max_position_embeddings)

    low_freq_wavelen = length / low_freq_factor  # longer wavelengths: divide by s
    high_freq_wavelen = length / high_freq_factor  # shorter wavelengths: keep
    theta = _default_inv_freq(dim, base)  # (dim/2,)
    wavelen = 2 * math.pi / theta  # (dim/2,) lambda_k
    inv_freq = np.where(wavelen > low_freq_wavelen, theta / factor, theta)  # (dim/2,)
    # Boundaries belong to the smooth band (HF: ~(w < high) * ~(w > low)); a is 1 resp. 0 there.
    # With high_freq_factor <= low_freq_factor the band is empty (or one exact wavelength): a step.
    medium = (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen)  # (dim/2,)
    if np.any(medium):
        if high_freq_factor == low_freq_factor:
            raise ValueError(
                "scaling['high_freq_factor'] == scaling['low_freq_factor'] and a wavelength lies "
                "exactly at original_max_position_embeddings / low_freq_factor: transformers "
                "computes 0/0 there"
            )
        # a = (L / lambda_k - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smooth = (length / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed = (1 - smooth) * theta / factor + smooth * theta  # (dim/2,)
        inv_freq = np.where(medium, smoothed, inv_freq)  # (dim/2,)
    return np.asarray(inv_freq, dtype=np.float64), 1.0


def _default(
    dim: int,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None,
    max_pos: int | None,
) -> tuple[F64, float]:
    """theta_k = base^(-2k/d)."""
    return _default_inv_freq(dim, base), 1.0


def _linear(
    dim: int,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None,
    max_pos: int | None,
) -> tuple[F64, float]:
    """theta_k / s  (position interpolation: m -> m / s)."""
    return _default_inv_freq(dim, base) / _factor(scaling, "linear"), 1.0


def _ntk(
    dim: int,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None,
    max_pos: int | None,
) -> tuple[F64, float]:
    """base' = base * s^(d/(d-2))."""
    alpha = _factor(scaling, "ntk")
    return _default_inv_freq(dim, ntk_base(dim, base, alpha, "ntk")), 1.0


def _dynamic(
    dim: int,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None,
    max_pos: int | None,
) -> tuple[F64, float]:
    """dynamic_ntk_base of seq_len; the base itself without seq_len (HF: alpha = 1)."""
    factor = _factor(scaling, "dynamic")
    if seq_len is None:  # HF: seq_len defaults to max_position_embeddings, alpha = 1
        return _default_inv_freq(dim, ntk_base(dim, base, 1.0, "dynamic")), 1.0
    if max_pos is None:
        raise ValueError("max_position_embeddings is required for rope_type 'dynamic' with seq_len")
    return _default_inv_freq(dim, dynamic_ntk_base(dim, base, factor, seq_len, max_pos)), 1.0


# inv_freq and attention factor of one type: (dim, base, scaling, seq_len, max_position_embeddings)
InvFreq = Callable[[int, float, Mapping[str, Any], int | None, int | None], tuple[F64, float]]


@dataclass(frozen=True)
class RopeType:
    """One RoPE type, declared once: what a config names it, what it needs, who computes it.

    ``name``: the ``rope_type`` value (transformers 5.23.0's name; ``ntk`` is posecards' own).
    ``required``: the keys of the ``rope_parameters`` dict it cannot do without, besides
    ``rope_type`` and ``rope_theta`` (those of transformers' ``_validate_<name>_rope_parameters``).
    ``original_length``: transformers' ``standardize_rope_params`` fills
    ``original_max_position_embeddings`` for it (from the config's attribute, else
    ``max_position_embeddings``). ``head_dim_without_fallback``: its transformers init reads
    ``getattr(config, "head_dim", hidden_size // heads)`` without ``or``, so a config class that
    holds ``head_dim = None`` cannot build it. ``max_position``: posecards needs the config's
    ``max_position_embeddings`` to read it (a context it extends or a threshold). ``in_transformers``:
    a config may name it (``default`` or a key of ``ROPE_INIT_FUNCTIONS``). ``inv_freq``: its
    frequencies on the rotary width (``rope_inv_freq``); None for ``proportional``, whose
    frequencies span the whole head (``rope_partial.proportional_inv_freq``, through
    ``head_inv_freq``). ``gguf``: the value of llama.cpp's ``<arch>.rope.scaling.type`` that
    posecards reads as this type (None: a GGUF file naming it is refused).
    """

    name: str
    required: tuple[str, ...] = ()
    original_length: bool = False
    head_dim_without_fallback: bool = False
    max_position: bool = False
    in_transformers: bool = True
    inv_freq: InvFreq | None = None
    gguf: str | None = None


_ORIG = "original_max_position_embeddings"
ROPE_REGISTRY: dict[str, RopeType] = {
    t.name: t
    for t in (
        RopeType("default", inv_freq=_default),
        RopeType("linear", ("factor",), inv_freq=_linear, gguf="linear"),
        RopeType(
            "dynamic", ("factor",), head_dim_without_fallback=True, max_position=True,
            inv_freq=_dynamic,
        ),
        RopeType(
            "yarn", ("factor", _ORIG), original_length=True, head_dim_without_fallback=True,
            max_position=True, inv_freq=_yarn, gguf="yarn",
        ),
        RopeType(
            "longrope", ("short_factor", "long_factor", _ORIG), original_length=True,
            head_dim_without_fallback=True, max_position=True, inv_freq=_longrope,
        ),
        RopeType(
            "llama3", ("factor", "low_freq_factor", "high_freq_factor", _ORIG),
            original_length=True, max_position=True, inv_freq=_llama3,
        ),
        RopeType("ntk", ("factor",), in_transformers=False, inv_freq=_ntk),
        RopeType("proportional"),
    )
}  # fmt: skip
# the types rope_inv_freq computes (on the rotary width): every one but proportional
_INV_FREQ: dict[str, InvFreq] = {n: t.inv_freq for n, t in ROPE_REGISTRY.items() if t.inv_freq}
ROPE_TYPES: tuple[str, ...] = tuple(_INV_FREQ)
# the rope_type values transformers 5.23.0 reads: "default" and ROPE_INIT_FUNCTIONS' keys
CONFIG_ROPE_TYPES: tuple[str, ...] = tuple(n for n, t in ROPE_REGISTRY.items() if t.in_transformers)
# the keys of ``scaling`` each of rope_inv_freq's types cannot do without (the explorer's payload)
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {n: ROPE_REGISTRY[n].required for n in ROPE_TYPES}


def rope_inv_freq(
    dim: int,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    seq_len: int | None = None,
    max_position_embeddings: int | None = None,
) -> tuple[F64, float]:
    """RoPE inverse frequencies ``theta_k`` (shape ``(dim/2,)``) and the attention factor.

    Default: ``theta_k = base^(-2k/dim)``, ``k = 0..dim/2-1``, attention factor 1. ``scaling`` is a
    Hugging Face ``rope_parameters``/``rope_scaling`` dict selecting one of ``ROPE_TYPES``; see the
    module docstring for each formula. ``seq_len`` matters for ``dynamic`` and ``longrope``;
    ``max_position_embeddings`` is the model's (extended) context length, HF's
    ``config.max_position_embeddings``. The attention factor multiplies HF's cos and sin.
    """
    dim = check_even_dim("dim", dim)
    scaling = {} if scaling is None else scaling
    if not isinstance(scaling, Mapping):
        raise ValueError(f"scaling must be a dict (HF rope_parameters) or None, got {scaling!r}")
    unknown = sorted(set(scaling) - set(SCALING_KEYS))
    if unknown:
        raise ValueError(
            f"unknown scaling key(s) {', '.join(map(repr, unknown))}; choose from: "
            + ", ".join(SCALING_KEYS)
        )
    rope_type = scaling.get("rope_type") or scaling.get("type") or "default"
    if rope_type not in ROPE_TYPES:
        raise ValueError(f"unknown rope_type {rope_type!r}; choose one of: {', '.join(ROPE_TYPES)}")
    partial = scaling.get("partial_rotary_factor")
    if partial is not None and check_positive("scaling['partial_rotary_factor']", partial) != 1.0:
        raise ValueError(
            f"partial_rotary_factor must be 1 or absent (got {partial!r}): pass the rotary dim "
            "int(head_dim * partial_rotary_factor) as dim instead"
        )
    base = check_base(scaling["rope_theta"] if scaling.get("rope_theta") is not None else base)
    if seq_len is not None:
        seq_len = check_positive_int("seq_len", seq_len)
    if max_position_embeddings is not None:
        max_position_embeddings = check_positive_int(
            "max_position_embeddings", max_position_embeddings
        )

    return _INV_FREQ[rope_type](dim, base, scaling, seq_len, max_position_embeddings)
