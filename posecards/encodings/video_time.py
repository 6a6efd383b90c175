"""Time ids of video tokens in MRoPE (Qwen2-VL, Qwen2.5-VL ``get_rope_index``).

A video sampled at ``fps`` frames per second is cut into temporal patches of
``temporal_patch_size`` frames; each patch is one grid step along t, lasting

    second_per_grid_t = temporal_patch_size / fps   seconds.

Qwen2.5-VL spaces the time ids of consecutive grid steps by

    time_interval = tokens_per_second * second_per_grid_t      (truncated to an integer id:
    t_k = int(k * time_interval))                              ``mrope.mrope_position_ids``)

so a time id counts ``1 / tokens_per_second`` seconds whatever the frame rate; Qwen2-VL uses
``time_interval = 1``: one id per grid step, whatever time it spans (so does ERNIE 4.5 VL, whose
step merges ``temporal_merge_size`` frames).

Qwen3-VL puts no clock in its ids: ``get_rope_index`` cuts a video into grids of one temporal
step each, and the processor writes each step's time as text before it,
``f"<{t:.1f} seconds>"``, with

    t_k = (time of the step's first frame + time of its last frame) / 2       (``patch_timestamps``)

so the t id of a step is where it starts in the token sequence: it moves on by the timestamp's
tokens, the vision start and end tokens and the step's ``max(H, W) / merge``, whatever the frame
rate (``timestamped_video_segments`` lays that sequence out for ``mrope.mrope_position_ids``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64, check_positive_int


def second_per_grid(fps: float, temporal_patch_size: int = 2) -> float:
    """Seconds one temporal grid step spans: ``temporal_patch_size / fps``."""
    f = float(fps)
    if not np.isfinite(f) or f <= 0:
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    return check_positive_int("temporal_patch_size", temporal_patch_size) / f


def video_time_interval(
    fps: float, tokens_per_second: float, temporal_patch_size: int = 2
) -> float:
    """Qwen2.5-VL's spacing of time ids: ``tokens_per_second * temporal_patch_size / fps``."""
    tps = float(tokens_per_second)
    if not np.isfinite(tps) or tps <= 0:
        raise ValueError(f"tokens_per_second must be a positive number, got {tokens_per_second!r}")
    return tps * second_per_grid(fps, temporal_patch_size)


def grid_step_seconds(grid_t: int, fps: float, temporal_patch_size: int = 2) -> F64:
    """``(grid_t,)``: the start time (s) of each temporal grid step."""
    t = check_positive_int("grid_t", grid_t)
    return np.arange(t, dtype=np.float64) * second_per_grid(fps, temporal_patch_size)


def patch_timestamps(frame_indices: npt.ArrayLike, fps: float, temporal_patch_size: int = 2) -> F64:
    """``(ceil(n / p),)``: the time (s) Qwen3-VL's processor writes before each temporal step.

    The indices of the sampled frames (in the source video, at ``fps``) are padded to a
    multiple of ``p = temporal_patch_size`` by repeating the last; each step's time is the mean
    of its first and last frame's (``Qwen3VLProcessor._calculate_timestamps``).
    """
    idx = np.asarray(frame_indices, dtype=np.float64).reshape(-1)  # (n,)
    if idx.size == 0:
        raise ValueError("frame_indices must not be empty")
    p = check_positive_int("temporal_patch_size", temporal_patch_size)
    pad = (-idx.size) % p
    steps = np.concatenate([idx, np.full(pad, idx[-1])]).reshape(-1, p)  # (steps, p)
    seconds = steps * second_per_grid(fps, 1)  # (steps, p) frame index * (1 / fps)
    return (seconds[:, 0] + seconds[:, -1]) / 2.0  # (steps,)


def timestamped_video_segments(
    grid_thw: tuple[int, int, int], stamp_tokens: int
) -> list[tuple[Any, ...]]:
    """Qwen3-VL's token sequence of one video, as ``mrope.mrope_position_ids`` segments.

    Per temporal step: the timestamp text (``stamp_tokens`` tokens) and the vision start token
    (text), the step as a video grid of one step ``(1, H, W)``, the vision end token (text).
    """
    t, h, w = (check_positive_int("grid_thw", int(g)) for g in grid_thw)
    n = check_positive_int("stamp_tokens", stamp_tokens)
    step: list[tuple[Any, ...]] = [("text", n + 1), ("video", (1, h, w), 1.0), ("text", 1)]
    return step * t
