"""Rotary position embedding (RoPE, Su et al. 2021, "RoFormer"), in float64.

Pair ``k`` of a ``dim``-vector is rotated by the angle ``m * theta_k`` at position ``m``:
``R(a) = [[cos a, -sin a], [sin a, cos a]]`` applied to ``(x_a, x_b)``. Which coordinates form
pair ``k`` is the layout:

- ``"half"``: ``(k, k + dim/2)`` -- GPT-NeoX, HF Llama ``rotate_half``:
  ``x * cat(cos, cos) + rotate_half(x) * cat(sin, sin)``, ``rotate_half(x) = cat(-x2, x1)``.
- ``"interleaved"``: ``(2k, 2k + 1)`` -- Meta LLaMA ``torch.view_as_complex``, GPT-J, RoFormer:
  ``(x_2k + i x_2k+1) * e^(i m theta_k)``.

Because ``R(a)^T R(b) = R(b - a)``, ``<R_m q, R_n k> = <q, R_(n-m) k>``: scores see only ``n - m``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import (
    F64,
    I64,
    as_positions,
    check_even_dim,
    check_layout,
    check_positive_int,
)


def _as_inv_freq(inv_freq: npt.ArrayLike) -> F64:
    arr = np.asarray(inv_freq, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"inv_freq must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("inv_freq must hold finite numbers")
    return arr  # (dim/2,)


def _check_inv_freq_len(inv_freq: F64, dim: int) -> None:
    if inv_freq.size != dim // 2:
        raise ValueError(f"inv_freq must have dim/2 = {dim // 2} entries, got {inv_freq.size}")


def rope_angles(positions: int | npt.ArrayLike, inv_freq: npt.ArrayLike) -> F64:
    """Rotation angles ``angle[m, k] = positions[m] * inv_freq[k]``, shape ``(n, dim/2)``.

    An int ``n`` for ``positions`` means positions ``0..n-1``.
    """
    pos = as_positions(positions)  # (n,)
    theta = _as_inv_freq(inv_freq)  # (dim/2,)
    return np.outer(pos, theta)  # (n, dim/2)


def _rope_inputs(
    arr: F64, positions: int | npt.ArrayLike, inv_freq: npt.ArrayLike
) -> tuple[int, F64, F64]:
    """The checked inputs of a rotation of ``arr`` (shape ``(..., n, dim)``): ``dim``, the
    frequencies ``(dim/2,)`` and one position per row ``(n,)``."""
    dim = check_even_dim("dim", arr.shape[-1])
    theta = _as_inv_freq(inv_freq)  # (dim/2,)
    _check_inv_freq_len(theta, dim)
    pos = as_positions(positions)  # (n,)
    if pos.size != arr.shape[-2]:
        raise ValueError(
            f"positions must have one entry per row of x: x has n = {arr.shape[-2]}, "
            f"positions has {pos.size}"
        )
    return dim, theta, pos


def apply_rope(
    x: npt.ArrayLike,
    positions: int | npt.ArrayLike,
    inv_freq: npt.ArrayLike,
    layout: str = "half",
) -> F64:
    """Rotate vectors ``x`` of shape ``(..., n, dim)`` at ``positions`` (n,); same shape out.

    For each pair ``(a, b)`` of the layout and angle ``t = m * theta_k``:
    ``x_a' = x_a cos t - x_b sin t``, ``x_b' = x_b cos t + x_a sin t``. A 1-D ``x`` (dim,) is one
    vector at one position.
    """
    check_layout(layout)
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0:
        raise ValueError(f"x must have shape (..., n, dim) or (dim,), got {arr.shape}")
    squeeze = arr.ndim == 1
    if squeeze:
        arr = arr[None, :]  # (1, dim)
    dim, theta, pos = _rope_inputs(arr, positions, inv_freq)  # dim, (dim/2,), (n,)
    angles = np.outer(pos, theta)  # (n, dim/2)
    cos, sin = np.cos(angles), np.sin(angles)  # (n, dim/2)
    half = dim // 2
    if layout == "half":
        x1, x2 = arr[..., :half], arr[..., half:]  # (..., n, dim/2) each
    else:
        x1, x2 = arr[..., 0::2], arr[..., 1::2]  # (..., n, dim/2) each
    y1 = x1 * cos - x2 * sin  # (..., n, dim/2)
    y2 = x2 * cos + x1 * sin  # (..., n, dim/2)
    out = np.empty_like(arr)  # (..., n, dim)
    if layout == "half":
        out[..., :half], out[..., half:] = y1, y2
    else:
        out[..., 0::2], out[..., 1::2] = y1, y2
    return out[0] if squeeze else out


def apply_rope_complex(
    x: npt.ArrayLike, positions: int | npt.ArrayLike, inv_freq: npt.ArrayLike
) -> F64:
    """RoPE as complex multiplication: pair ``k`` read as ``z_k = x_2k + i x_(2k+1)`` (the
    interleaved layout) becomes ``z_k e^(i m theta_k)``; shape ``(..., n, dim)`` as ``x``.

    ``(a + ib) e^(it) = (a cos t - b sin t) + i (b cos t + a sin t)``: the same numbers as
    ``apply_rope(x, positions, inv_freq, "interleaved")``, computed with complex128 (Meta
    LLaMA's ``torch.view_as_complex`` route). The half layout pairs ``x_k`` with ``x_(k+dim/2)``
    instead: the same product after ``rope_layout_permutation``. The score follows:
    ``<R_m q, R_n k> = Re sum_k q~_k conj(k~_k) e^(i (m - n) theta_k)``.
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < 2:
        raise ValueError(f"x must have shape (..., n, dim), got {arr.shape}")
    dim, theta, pos = _rope_inputs(arr, positions, inv_freq)  # dim, (dim/2,), (n,)
    z = arr[..., 0::2] + 1j * arr[..., 1::2]  # (..., n, dim/2) complex128
    turned = z * np.exp(1j * np.outer(pos, theta))  # (..., n, dim/2)
    out = np.empty_like(arr)  # (..., n, dim)
    out[..., 0::2], out[..., 1::2] = turned.real, turned.imag
    return out


def rope_layout_permutation(dim: int) -> I64:
    """``P = [0, 2, ..., dim-2, 1, 3, ..., dim-1]`` with ``x_half = x_interleaved[P]``.

    Direction: ``P`` takes a vector in the interleaved layout (pairs ``(2k, 2k+1)``) to the same
    vector in the half layout (pairs ``(k, k + dim/2)``): coordinate ``2k`` moves to slot ``k``,
    ``2k + 1`` to slot ``k + dim/2``. So ``apply_rope(x[..., P], p, f, "half") ==
    apply_rope(x, p, f, "interleaved")[..., P]``. HF's ``convert_llama_weights_to_hf.py``
    ``permute`` applies exactly this to the rows of each head of the q/k projections
    (``W_hf[h] = W_meta[h][P]``). The inverse is ``rope_layout_inverse_permutation``.
    """
    dim = check_even_dim("dim", dim)
    return np.concatenate(
        [np.arange(0, dim, 2, dtype=np.int64), np.arange(1, dim, 2, dtype=np.int64)]
    )  # (dim,)


def rope_layout_inverse_permutation(dim: int) -> I64:
    """``Q = argsort(P)``, ``x_interleaved = x_half[Q]``: ``Q[2k] = k``, ``Q[2k+1] = k + dim/2``."""
    return np.argsort(rope_layout_permutation(dim)).astype(np.int64)  # (dim,)


def rope_scores(
    q: npt.ArrayLike,
    k: npt.ArrayLike,
    positions_q: int | npt.ArrayLike,
    positions_k: int | npt.ArrayLike,
    inv_freq: npt.ArrayLike,
    layout: str = "half",
) -> F64:
    """Raw RoPE attention scores ``S[i, j] = <R_(m_i) q_i, R_(n_j) k_j>``, shape ``(nq, nk)``.

    ``q`` is ``(nq, dim)``, ``k`` is ``(nk, dim)``; no ``1/sqrt(dim)`` and no softmax.
    """
    qa = np.asarray(q, dtype=np.float64)
    ka = np.asarray(k, dtype=np.float64)
    if qa.ndim != 2 or ka.ndim != 2:
        raise ValueError(f"q and k must be 2-D (n, dim), got shapes {qa.shape} and {ka.shape}")
    if qa.shape[1] != ka.shape[1]:
        raise ValueError(f"q and k must have the same dim, got {qa.shape[1]} and {ka.shape[1]}")
    q_rot = apply_rope(qa, positions_q, inv_freq, layout)  # (nq, dim)
    k_rot = apply_rope(ka, positions_k, inv_freq, layout)  # (nk, dim)
    return q_rot @ k_rot.T  # (nq, nk)


def rotation_2d(angle: float) -> F64:
    """``R(angle) = [[cos a, -sin a], [sin a, cos a]]``, shape ``(2, 2)`` (counter-clockwise)."""
    a = float(angle)
    if not math.isfinite(a):
        raise ValueError(f"angle must be a finite number, got {angle!r}")
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]], dtype=np.float64)  # (2, 2)


def rope_relative_upper_bound(distances: npt.ArrayLike, inv_freq: npt.ArrayLike) -> F64:
    """RoFormer long-term-decay bound (paper Sec. 3.4.3), shape ``(len(distances),)``.

    ``B(r) = (1/(d/2)) * sum_{j=1}^{d/2} |S_j(r)|`` with ``S_j(r) = sum_{i<j} e^(i r theta_i)``.
    By Abel summation ``|sum_i h_i e^(i r theta_i)| <= max_i |h_(i+1) - h_i| * (d/2) * B(r)``
    (``h_i = q~_i conj(k~_i)``, ``h_(d/2) = 0``), which bounds the RoPE score at distance ``r``.
    """
    r = np.asarray(distances, dtype=np.float64).reshape(-1)  # (m,)
    if r.size == 0:
        raise ValueError("distances must not be empty")
    if not np.all(np.isfinite(r)):
        raise ValueError("distances must be finite numbers")
    theta = _as_inv_freq(inv_freq)  # (d/2,)
    out = np.empty(r.size, dtype=np.float64)  # (m,)
    chunk = max(1, (1 << 20) // theta.size)  # rows per chunk: about 2^20 complex numbers
    for start in range(0, r.size, chunk):
        rc = r[start : start + chunk]  # (c,)
        partial_sums = np.cumsum(np.exp(1j * np.outer(rc, theta)), axis=1)  # (c, d/2) S_1..S_d/2
        out[start : start + chunk] = np.abs(partial_sums).mean(axis=1)  # (c,)
    return out


def rope_pair_slots(head_dim: int, rotated_dim: int, layout: str = "half", first: int = 0) -> I64:
    """Which pair each slot of a head belongs to, shape ``(head_dim,)``; -1: the slot does not rotate.

    The rotated block is slots ``first .. first + rotated_dim - 1`` (partial rotary: ``first = 0``
    and ``rotated_dim = int(head_dim * p)``; MLA: ``first = qk_nope_head_dim``,
    ``rotated_dim = qk_rope_head_dim``). Inside it, slot ``first + s`` holds pair
    ``s mod rotated_dim/2`` in the ``"half"`` layout (pairs ``(k, k + rotated_dim/2)``, HF
    ``rotate_half`` on ``q[..., :rotary_dim]``) and pair ``s // 2`` in the ``"interleaved"`` layout
    (pairs ``(2k, 2k + 1)``: GLM, Cohere, Llama 4, DeepSeek ``rope_interleave``).
    """
    check_layout(layout)
    head_dim = check_positive_int("head_dim", head_dim)
    rotated_dim = check_even_dim("rotated_dim", rotated_dim)
    if isinstance(first, bool) or not isinstance(first, int | np.integer) or first < 0:
        raise ValueError(f"first must be an integer >= 0, got {first!r}")
    if first + rotated_dim > head_dim:
        raise ValueError(f"first + rotated_dim = {first + rotated_dim} exceeds head_dim {head_dim}")
    s = np.arange(rotated_dim, dtype=np.int64)  # (rotated_dim,)
    pair = s % (rotated_dim // 2) if layout == "half" else s // 2  # (rotated_dim,)
    out = np.full(head_dim, -1, dtype=np.int64)  # (head_dim,)
    out[first : first + rotated_dim] = pair
    return out
