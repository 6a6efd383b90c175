"""Multimodal RoPE (MRoPE, Qwen2-VL / Qwen2.5-VL / Qwen3-VL): three position ids per token.

Every token has a position ``(t, h, w)``: time, row and column. Text tokens use ``t = h = w`` (plain
RoPE); an image's tokens share one ``t`` and count rows and columns from where the image starts.
Each of the ``n = head_dim/2`` frequencies of a head is driven by one axis:

    angle[m, j] = pos[axis_j, m] * inv_freq[j]

and the angles are laid out in the ``"half"`` layout (HF ``torch.cat((freq, freq))`` and
``rotate_half``). Which axis drives frequency ``j`` (``mrope_section = [s_t, s_h, s_w]``,
``s_t + s_h + s_w = n``):

- chunked (Qwen2-VL, Qwen2.5-VL; ``recomposition_frequencies`` splits by ``mrope_section``):
  ``j < s_t`` -> t, ``s_t <= j < s_t + s_h`` -> h, the rest -> w. The fastest frequencies follow
  time, the slowest follow the width.
- interleaved (Qwen3-VL): start from t everywhere, then ``j = 1, 4, 7, ... < 3 s_h`` -> h and
  ``j = 2, 5, 8, ... < 3 s_w`` -> w: t, h, w take turns, so each axis gets fast and slow
  frequencies; the last ``n - 3 s_h`` (for ``s_h = s_w``) stay with t.
- time_last (ERNIE 4.5 VL, ``Ernie4_5_VLMoeTextRotaryEmbedding``): the first ``s_h + s_w``
  frequencies alternate h (even ``j``) and w (odd ``j``), the last ``s_t`` -- the slowest --
  follow t. ERNIE's config lists its section as ``[s_h, s_w, s_t]`` (``[22, 22, 20]``); pass it
  here as ``(s_t, s_h, s_w)``. Its pairs are ``"interleaved"`` (``repeat_interleave(2)``), not
  ``"half"``.

``mrope_position_ids`` builds the ``(3, L)`` ids of a text/image sequence as
``Qwen2VLModel.get_rope_index`` does (identical for Qwen2.5-VL and Qwen3-VL images): text
continues from ``current``; an image with grid ``(T, H, W)`` (patches before merging) gets
``t = current + i_t * time_interval`` (truncated to an integer), ``h = current + row``,
``w = current + col`` over its ``T x H/m x W/m`` tokens (``m = spatial_merge_size``), and the next
segment starts at ``current + max(H, W) / m``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, I64, check_positive_int

MROPE_AXES: tuple[str, ...] = ("t", "h", "w")  # index 0, 1, 2 of the position ids
MROPE_LAYOUTS: tuple[str, ...] = ("chunked", "interleaved", "time_last")


def _section(mrope_section: Sequence[int], n_freq: int) -> tuple[int, int, int]:
    sec = list(mrope_section)
    if len(sec) != 3 or not all(
        isinstance(s, int | np.integer) and not isinstance(s, bool) and s >= 0 for s in sec
    ):
        raise ValueError(
            f"mrope_section must be three integers >= 0 (t, h, w), got {list(mrope_section)!r}"
        )
    if sum(sec) != n_freq:
        raise ValueError(
            f"mrope_section {sec} sums to {sum(sec)}, but the head has head_dim/2 = {n_freq} "
            "frequencies"
        )
    return int(sec[0]), int(sec[1]), int(sec[2])


def mrope_axes(mrope_section: Sequence[int], n_freq: int, layout: str = "chunked") -> I64:
    """The axis (0 = t, 1 = h, 2 = w) that drives each of the ``n_freq`` frequencies, ``(n_freq,)``.

    ``layout`` is ``"chunked"`` (Qwen2-VL, Qwen2.5-VL), ``"interleaved"`` (Qwen3-VL) or
    ``"time_last"`` (ERNIE 4.5 VL, ``s_h == s_w``); see the module docstring.
    ``sum(mrope_section)`` must be ``n_freq``.
    """
    n_freq = check_positive_int("n_freq", n_freq)
    if layout not in MROPE_LAYOUTS:
        raise ValueError(
            f"unknown MRoPE layout {layout!r}; choose one of: {', '.join(MROPE_LAYOUTS)}"
        )
    s_t, s_h, s_w = _section(mrope_section, n_freq)
    j = np.arange(n_freq, dtype=np.int64)  # (n_freq,)
    if layout == "chunked":
        # HF: torch.cat([m[i % 3] for i, m in enumerate(freq.split(mrope_section, dim=-1))])
        return np.where(j < s_t, 0, np.where(j < s_t + s_h, 1, 2)).astype(np.int64)
    if layout == "time_last":
        if s_h != s_w:
            raise ValueError(
                f"the time_last layout alternates h and w, so s_h must equal s_w, got {s_h}, {s_w}"
            )
        # HF: freq_hw = stack([freq_h, freq_w], -1).flatten(-2); cat([freq_hw, freq_t])
        return np.where(j >= s_h + s_w, 0, 1 + j % 2).astype(np.int64)
    axes = np.zeros(n_freq, dtype=np.int64)  # (n_freq,) t everywhere first
    # HF: freqs_thw[..., slice(offset, 3 * mrope_section[dim], 3)] = freq[dim, ..., same slice]
    axes[(j % 3 == 1) & (j < 3 * s_h)] = 1
    axes[(j % 3 == 2) & (j < 3 * s_w)] = 2
    return axes


def mrope_angles(position_ids: npt.ArrayLike, inv_freq: npt.ArrayLike, axes: npt.ArrayLike) -> F64:
    """``angle[m, j] = position_ids[axes[j], m] * inv_freq[j]``, shape ``(L, n_freq)``.

    ``position_ids`` is ``(3, L)`` (t, h, w); ``inv_freq`` and ``axes`` are ``(n_freq,)``.
    """
    pos = np.asarray(position_ids, dtype=np.float64)  # (3, L)
    if pos.ndim != 2 or pos.shape[0] != 3:
        raise ValueError(f"position_ids must have shape (3, L), got {pos.shape}")
    theta = np.asarray(inv_freq, dtype=np.float64).reshape(-1)  # (n_freq,)
    ax = np.asarray(axes, dtype=np.int64).reshape(-1)  # (n_freq,)
    if ax.shape != theta.shape:
        raise ValueError(
            f"axes and inv_freq must have the same length, got {ax.size}, {theta.size}"
        )
    if np.any((ax < 0) | (ax > 2)):
        raise ValueError("axes must be 0 (t), 1 (h) or 2 (w)")
    return pos[ax].T * theta[None, :]  # (L, n_freq)


def mrope_position_ids(segments: Sequence[tuple[Any, ...]], spatial_merge_size: int = 2) -> I64:
    """The ``(3, L)`` position ids (t, h, w) of a sequence, as ``get_rope_index`` builds them.

    ``segments`` is a list of ``("text", n)``, ``("image", (T, H, W))`` and
    ``("video", (T, H, W), time_interval)`` (Qwen2.5-VL: ``tokens_per_second *
    second_per_grid_t``; Qwen2-VL: 1), with the grid as ``image_grid_thw`` gives it (patches before
    the ``spatial_merge_size`` merge).
    """
    merge = check_positive_int("spatial_merge_size", spatial_merge_size)
    parts: list[I64] = []
    current = 0
    for seg in segments:
        kind = seg[0] if seg else None
        if kind == "text" and len(seg) == 2:
            n = check_positive_int("text length", seg[1])
            parts.append(np.broadcast_to(np.arange(n, dtype=np.int64) + current, (3, n)))
            current += n
        elif kind in ("image", "video") and len(seg) in (2, 3):
            grid = tuple(seg[1])
            if len(grid) != 3:
                raise ValueError(f"a {kind} grid is (T, H, W), got {seg[1]!r}")
            t, h, w = (check_positive_int(f"{kind} grid", int(g)) for g in grid)
            interval = float(seg[2]) if len(seg) == 3 else 1.0
            if kind == "image" and interval != 1.0:
                raise ValueError("an image has no time interval")
            gt, gh, gw = t, h // merge, w // merge
            if gh < 1 or gw < 1:
                raise ValueError(f"{kind} grid {grid} is smaller than spatial_merge_size {merge}")
            # HF: (arange(T) * time_interval).long(), then + current after the multiply
            tt = (np.arange(gt, dtype=np.float64) * interval).astype(np.int64) + current
            hh = np.arange(gh, dtype=np.int64) + current
            ww = np.arange(gw, dtype=np.int64) + current
            grid_t, grid_h, grid_w = np.meshgrid(tt, hh, ww, indexing="ij")  # (T, H/m, W/m)
            parts.append(np.stack([grid_t, grid_h, grid_w]).reshape(3, -1))
            current += max(h, w) // merge  # HF: max(grid_thw[1], grid_thw[2]) // merge
        else:
            raise ValueError(
                f"a segment is ('text', n), ('image', (T, H, W)) or ('video', (T, H, W), "
                f"time_interval), got {seg!r}"
            )
    if not parts:
        raise ValueError("segments must not be empty")
    return np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.int64)  # (3, L)
