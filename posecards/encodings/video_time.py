"""Time ids of video tokens in MRoPE (Qwen2-VL, Qwen2.5-VL ``get_rope_index``).

A video sampled at ``fps`` frames per second is cut into temporal patches of
``temporal_patch_size`` frames; each patch is one grid step along t, lasting

    second_per_grid_t = temporal_patch_size / fps   seconds.

Qwen2.5-VL spaces the time ids of consecutive grid steps by

    time_interval = tokens_per_second * second_per_grid_t      (truncated to an integer id:
    t_k = int(k * time_interval))                              ``mrope.mrope_position_ids``)

so a time id counts ``1 / tokens_per_second`` seconds whatever the frame rate; Qwen2-VL uses
``time_interval = 1``: one id per grid step, whatever time it spans.
"""

from __future__ import annotations

import numpy as np

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
