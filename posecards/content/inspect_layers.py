"""The inspection card of a model whose layers differ (or with MRoPE, proportional pairs, MLA or a
query temperature): every layer's attention kind and RoPE, the wavelength of every pair per RoPE,
which slots of a head rotate (and on which MRoPE axis), and the softmax scale, the factor on
cos/sin and the query temperature as separate numbers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from posecards.content import CardContent
from posecards.content.figdata import inspect_layers as fd
from posecards.content.inspect_common import (
    card_name,
    common_numbers,
)
from posecards.content.reading import kind_frequencies, softmax_scale
from posecards.encodings.query_temperature import query_temperature
from posecards.encodings.rope import rope_pair_slots
from posecards.model.checkpoint import Checkpoint, CheckpointError
from posecards.model.layer_types import ATTENTION_KINDS
from posecards.model.positions import LayeredPositions

TEMPERATURE_POINTS = 1200  # positions at which the query temperature is drawn (log spaced)
NOT_ROTATED = -1  # slot code: the slot never rotates (partial rotary, MLA's content part)
ZERO_FREQUENCY = -2  # slot code: the slot rotates with frequency 0 (proportional RoPE)


def _values(r: Any, key: str) -> list[dict[str, Any]]:
    """The values of the reading's notes of one kind, for the figure that shows them."""
    return [dict(n.values) for n in r.notes if n.key == key]


def _kinds(
    r: Any, keys: list[str], nums: dict[str, Any]
) -> tuple[list[fd.KindSpectrum], list[fd.KindSlots]]:
    """Per RoPE kind: its spectrum (wavelength of each turning pair) and its head's slots."""
    spectra: list[fd.KindSpectrum] = []
    heads: list[fd.KindSlots] = []
    for key in keys:
        kind, kn = r.rope[key], nums[key]
        inv = kn.inv_freq  # (n_freq,)
        turning = inv > 0  # (n_freq,)
        n_pairs = kind.head_slots // 2  # pairs of a whole q/k head
        j = np.flatnonzero(turning).astype(np.float64)  # (t,) frequency index of turning pairs
        axes = (
            np.array(["thw".index(a) for a in kn.axes], dtype=np.float64)[turning]
            if kn.axes is not None
            else None
        )
        factor = kind.parameters.get("factor")
        spectra.append(
            fd.KindSpectrum(
                key=key,
                theta=kind.theta,
                rope_type=kind.rope_type,
                factor=float(factor) if factor is not None else 1.0,
                head_slots=float(kind.head_slots),
                pair=j,
                wavelength=2 * math.pi / inv[turning],  # (t,) positions per turn
                still_from=float(int(np.count_nonzero(turning))),  # first pair that never turns
                pairs=float(n_pairs),
                zero=kind.rope_type == "proportional",  # still pairs: frequency 0, not absent
                axes=axes,
            )
        )
        # (head_slots,) pair index of each slot, NOT_ROTATED outside the rotated block
        slots = rope_pair_slots(kind.head_slots, 2 * inv.size, kind.layout, first=kind.first_slot)
        pair = np.maximum(slots, 0)  # (head_slots,) a valid index everywhere
        moving = (slots >= 0) & turning[pair]  # (head_slots,) slots that turn
        code = slots.astype(np.float64)  # (head_slots,)
        code[(slots >= 0) & ~turning[pair]] = ZERO_FREQUENCY
        if kn.axes is not None:  # MRoPE: the axis (0 t, 1 h, 2 w) that drives the slot's pair
            axis = np.array(["thw".index(a) for a in kn.axes], dtype=np.float64)  # (n_freq,)
            code[moving] = axis[pair[moving]]
        heads.append(
            fd.KindSlots(
                key=key,
                theta=kind.theta,
                rope_type=kind.rope_type,
                factor=float(factor) if factor is not None else 1.0,
                code=code,
                layout=kind.layout,
                mrope=kn.axes is not None,
                first=float(kind.first_slot),
            )
        )
    return spectra, heads


def _figures(
    r: Any,
    keys: list[str],
    attention: np.ndarray,
    rope_code: np.ndarray,
    windows: dict[str, Any],
    spectra: list[fd.KindSpectrum],
    heads: list[fd.KindSlots],
    context: float,
    positions: np.ndarray,
    tau: np.ndarray,
    scale: float,
    factors: list[float],
) -> dict[str, Any]:
    """The data of the card's four figures."""
    t = r.temperature
    steps = [fd.Llama3Step(**v) for v in _values(r, "llama3_step")]
    unread = [fd.MropeUnread(**v) for v in _values(r, "mrope_interleaved_unread")]
    figures: dict[str, Any] = {
        "i-layer-strip": fd.LayerStrip(
            attention=attention,
            rope=rope_code,
            kinds=keys,
            thetas=[r.rope[key].theta for key in keys],
            windows={k: float(v) for k, v in windows.items()},
        ),
        "i-spectrum": fd.Spectrum(kinds=spectra, context=context, notes=steps),
        "i-head-slots": fd.HeadSlots(kinds=heads, notes=unread),
        "i-scales": fd.Scales(
            position=positions,
            tau=tau,
            temperature=t.kind if t is not None else "none",
            layers_with=float(len(t.layers)) if t is not None else 0.0,
            softmax=scale,
            softmax_rule=r.softmax.rule,
            head_dim=float(r.softmax.head_dim),
            kinds=keys,
            factors=factors,
            context=context,
            notes=[fd.TuningNotBool(**v) for v in _values(r, "tuning_not_bool")],
        ),
    }
    return figures


def _variants(
    r: Any,
    found: LayeredPositions,
    numbers: dict[str, Any],
    keys: list[str],
    reach: list[str],
    still_pairs: int,
    still_slots: int,
) -> dict[str, str]:
    """Which phrasing of each text field applies, from the numbers."""
    t = r.temperature
    some_none = numbers["n_none"] > 0
    all_turn = still_pairs == 0
    one_factor = numbers["a_min"] == numbers["a_max"]
    with_tau = "-tau" if t is not None else ""
    if some_none and numbers["n_linear"] == 0:
        strip = "some-none"  # attention layers without RoPE (NoPE)
    elif some_none:
        strip = "some-linear" if numbers["n_nope"] == 0 else "some-none-and-linear"
    else:
        strip = ("all-one-reach", "all-two-reaches", "all-three-reaches")[len(reach) - 1]
    variants = {
        "thesis": "some-none" if some_none else ("all-one" if len(keys) == 1 else "all-several"),
        "formula.note": "one-factor" if one_factor else "factor-range",
        "panels.i-layer-strip.caption": "some-none" if some_none else "all-rope",
        "panels.i-spectrum.alt": "all-turn" if all_turn else "some-still",
        "panels.i-spectrum.caption": "all-turn" if all_turn else "some-still",
        "panels.i-head-slots.alt": "all-turn" if still_slots == 0 else "some-still",
        "panels.i-head-slots.caption": "all-turn" if still_slots == 0 else "some-still",
        "panels.i-scales.alt": "temperature" if t is not None else "no-temperature",
        "panels.i-scales.caption": ("one-factor" if one_factor else "factor-range") + with_tau,
        "takeaways.layers": strip,
        "takeaways.spectrum": "all-turn" if all_turn else "some-still",
        "takeaways.scales": "one-factor" if one_factor else "factor-range",
        "pitfalls.keys": "some" if r.ignored_keys else "none",
        "pitfalls.defaults": "some" if found.defaults else "none",
    }
    return variants


def _temperature(t: Any, context: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions (log spaced up to the context, or 8 floor lengths) and the query temperature
    there (1 without one)."""
    top = max(context, 8 * t.floor_len) if t is not None else context
    positions = np.unique(np.round(np.geomspace(1.0, top, TEMPERATURE_POINTS)))  # (m,)
    if t is not None:
        tau = query_temperature(positions, t.scale, t.floor_len, t.shift)  # (m,)
    else:
        tau = np.ones_like(positions)  # (m,) no query temperature
    return positions, tau


def _reach(numbers: dict[str, Any], counts: dict[str, int]) -> list[str]:
    """The attention kinds of the layers (in ATTENTION_KINDS order), and the first two as numbers:
    named by the takeaway when every layer rotates (a second kind of count 0 when there is only
    one)."""
    reach = [k for k in ATTENTION_KINDS if counts[k]]
    a, b = reach[0], reach[1] if len(reach) > 1 else reach[0]
    numbers.update(
        attention_a=a,
        n_attention_a=counts[a],
        attention_b=b,
        n_attention_b=counts[b] if b != a else 0,
        n_nope=numbers["n_none"] - numbers["n_linear"],  # attention layers without RoPE (NoPE)
    )
    return reach


def layers_content(ckpt: Checkpoint, found: LayeredPositions) -> CardContent:
    r = found.reading
    keys = list(r.rope)  # the RoPE kinds, in the reading's order
    if not keys:
        raise CheckpointError(
            f"{ckpt.name}: no layer of this {r.model_type} config applies RoPE or any other "
            "position encoding posecards reads; there is no position to draw"
        )
    nums = {key: kind_frequencies(r.rope[key]) for key in keys}
    kind_index = {key: i for i, key in enumerate(keys)}
    n = r.num_layers
    attention = np.array([ATTENTION_KINDS.index(la.attention) for la in r.layers], dtype=np.float64)
    rope_code = np.array(
        [kind_index[la.rope] if la.rope is not None else -1 for la in r.layers], dtype=np.float64
    )  # (n,) kind index, -1: no RoPE
    windows = {la.attention: la.window for la in r.layers if la.window is not None}

    spectra, heads = _kinds(r, keys, nums)

    scale = softmax_scale(r)
    context = float(r.max_position_embeddings or 4096)
    t = r.temperature
    positions, tau = _temperature(t, context)
    factors = [nums[key].attention_factor for key in keys]
    first_attention = next(
        (la.index for la in r.layers if la.attention not in ("linear", "none")), 0
    )

    figures = _figures(
        r,
        keys,
        attention,
        rope_code,
        windows,
        spectra,
        heads,
        context,
        positions,
        tau,
        scale,
        factors,
    )
    still_pairs = sum(int(sp.pairs - sp.still_from) for sp in spectra)
    all_pairs = sum(int(sp.pairs) for sp in spectra)
    still_slots = sum(int(np.count_nonzero(h.code < 0)) for h in heads)
    wls = np.concatenate([sp.wavelength for sp in spectra])
    p_far = float(positions[-1])
    counts = {k: int(np.count_nonzero(attention == i)) for i, k in enumerate(ATTENTION_KINDS)}
    numbers: dict[str, Any] = {
        **common_numbers(ckpt, found),
        "n_layers": n,
        "n_rope": len(r.rope_layers),
        "n_none": n - len(r.rope_layers),
        "n_full": counts["full"],
        "n_sliding": counts["sliding"],
        "n_chunked": counts["chunked"],
        "n_linear": counts["linear"] + counts["none"],  # layers without softmax attention
        "n_kinds": len(keys),
        "wl_fast": float(wls.min()),
        "wl_slowest": float(wls.max()),
        "n_still": still_pairs,
        "n_pairs_total": all_pairs,
        "n_still_slots": still_slots,
        "n_slots_total": sum(int(h.code.size) for h in heads),
        "softmax": scale,
        "softmax_layer": first_attention,
        "a_min": float(min(factors)),
        "a_max": float(max(factors)),
        "p_far": p_far,
        "tau_far": float(tau[-1]),
        "n_tau_layers": len(t.layers) if t is not None else 0,
        "context": context,
        "read_from": r.modeling or "-",
        "ignored": ", ".join(r.ignored_keys) if r.ignored_keys else "—",
        "defaults": ", ".join(found.defaults) if found.defaults else "—",
    }
    reach = _reach(numbers, counts)
    variants = _variants(r, found, numbers, keys, reach, still_pairs, still_slots)
    return CardContent(card=card_name(found), figures=figures, numbers=numbers, variants=variants)
