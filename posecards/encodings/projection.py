"""Deterministic 2-D projections of PE vectors (UMAP and PCA) for trajectory pictures."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64

MIN_UMAP_POINTS = 4
MIN_DIST = 0.1  # UMAP's min_dist: how tightly neighbours may pack


def pca_2d(vectors: npt.ArrayLike) -> F64:
    """Project rows onto the top two principal axes: Y = (X - mean) V[:, :2].

    Signs are fixed (the largest-magnitude loading of each axis is positive) so the same
    input always gives the same picture.
    """
    x = np.asarray(vectors, dtype=np.float64)  # (n, d)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"PCA needs a 2-D array with at least 2 rows, got shape {x.shape}")
    xc = x - x.mean(axis=0)  # (n, d)
    _, _, vt = np.linalg.svd(xc, full_matrices=False)  # vt: (min(n, d), d)
    axes = vt[:2]  # (2, d)
    if axes.shape[0] < 2:
        axes = np.vstack([axes, np.zeros_like(axes)])
    signs = np.sign(axes[np.arange(2), np.abs(axes).argmax(axis=1)])
    signs[signs == 0] = 1.0
    return np.asarray(xc @ (axes * signs[:, None]).T, dtype=np.float64)  # (n, 2)


# Inputs to UMAP are snapped to a grid this fine (relative to their largest value) first: numbers
# that differ from CPU to CPU only in their last bits become identical before UMAP sees them.
SNAP_DIGITS = 9


def snap(values: npt.ArrayLike) -> F64:
    """Round to SNAP_DIGITS significant digits of the largest |value|: ulp noise from a CPU's
    libm or BLAS (1e-16 relative) vanishes, except for a value within that noise of a grid
    midpoint (probability ~1e-7 per value)."""
    x = np.asarray(values, dtype=np.float64)
    top = float(np.abs(x).max()) if x.size else 0.0
    if top == 0.0 or not np.isfinite(top):
        return x.copy()
    step = 10.0 ** (np.floor(np.log10(top)) - SNAP_DIGITS)
    return np.asarray(np.round(x / step) * step, dtype=np.float64)


def cache_umap_kernels() -> None:
    """Keep umap-learn's compiled numba kernels in numba's on-disk cache.

    umap-learn compiles most of its kernels (the layout optimisation, the fuzzy graph) without
    ``cache=True``, so every process that runs UMAP spent ~8 s of CPU compiling them again. With
    the cache on they are compiled once per machine (into umap's ``__pycache__``, or
    ``NUMBA_CACHE_DIR``) and loaded in ~0.1 s after that: the same LLVM output for the same
    source, target (``NUMBA_CPU_NAME``) and signature, so the same numbers.
    Idempotent; call after ``import umap``.
    """
    import sys

    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher

    for name, module in list(sys.modules.items()):
        if module is None or (name != "umap" and not name.startswith("umap.")):
            continue
        for kernel in list(vars(module).values()):
            cache = getattr(kernel, "_cache", None)  # numba keeps it private
            if isinstance(kernel, CPUDispatcher) and isinstance(cache, NullCache):
                kernel.enable_caching()


def umap_2d(vectors: npt.ArrayLike, seed: int = 0, n_neighbors: int = 15) -> F64:
    """UMAP embedding, made as independent of the CPU as UMAP allows.

    - the neighbour graph comes from a distance matrix snapped to a grid (``snap``), so equal
      distances (the PE of positions p-1 and p+1 are equally far from p) are exactly equal on
      every machine, and ties are broken by umap's own (numba) sort, not by SIMD kernels;
    - the start layout is the snapped PCA projection, not the spectral layout (whose eigensolver
      depends on the BLAS build);
    - the curve parameters a, b fitted to min_dist rounded to 6 digits;
    - a fixed ``random_state`` (which also makes umap-learn single-threaded);
    - numba compiles for a generic CPU of the architecture (``NUMBA_CPU_NAME=generic``, set
      unless numba is already loaded or the variable is set), so the optimisation runs the same
      instructions on any x86-64 (or any arm64) CPU; the compiled kernels are kept in numba's
      on-disk cache (``cache_umap_kernels``).

    n_neighbors is clipped to n - 1. Fewer than 4 points is refused: UMAP's neighbour graph
    needs a few points to mean anything.
    """
    x = np.asarray(vectors, dtype=np.float64)  # (n, d)
    if x.ndim != 2 or x.shape[0] < MIN_UMAP_POINTS:
        raise ValueError(
            f"UMAP needs a 2-D array with at least {MIN_UMAP_POINTS} rows, got shape {x.shape}"
        )
    import os
    import sys
    import warnings

    if "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_CPU_NAME", "generic")
    import umap  # heavy (numba): imported only here

    cache_umap_kernels()

    dist = np.empty((x.shape[0], x.shape[0]), dtype=np.float64)  # (n, n): Euclidean distances
    for i in range(x.shape[0]):  # row by row: (n, d) at a time, not (n, n, d)
        diff = x - x[i]  # (n, d)
        dist[i] = np.sqrt((diff * diff).sum(axis=1))
    dist = snap(dist)
    init = snap(pca_2d(x))  # (n, 2)
    # the curve 1 / (1 + a·d^(2b)) fitted to min_dist (scipy curve_fit, whose last digits
    # follow numpy's exp/pow kernels), kept to 6 digits
    a, b = (float(f"{v:.6g}") for v in umap.umap_.find_ab_params(1.0, MIN_DIST))
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=min(n_neighbors, x.shape[0] - 1),
        min_dist=MIN_DIST,
        a=a,
        b=b,
        random_state=seed,
        metric="precomputed",
        init=init,
    )
    with warnings.catch_warnings():
        # "n_jobs value 1 overridden to 1 by setting random_state", "using precomputed metric;
        # inverse_transform will be unavailable": expected.
        warnings.simplefilter("ignore", UserWarning)
        y = reducer.fit_transform(dist)  # (n, 2) float32
    return np.asarray(y, dtype=np.float64)


def project_2d(
    vectors: npt.ArrayLike, method: Literal["umap", "pca"] = "umap", seed: int = 0
) -> F64:
    """Deterministic 2-D projection of the rows of ``vectors``: (n, d) -> (n, 2) float64."""
    if method == "umap":
        return umap_2d(vectors, seed=seed)
    if method == "pca":
        return pca_2d(vectors)
    raise ValueError(f"unknown projection method {method!r}; choose one of: umap, pca")
