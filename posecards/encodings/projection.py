"""Deterministic 2-D projections of PE vectors (UMAP and PCA) for trajectory pictures."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import F64

MIN_UMAP_POINTS = 4


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


def umap_2d(vectors: npt.ArrayLike, seed: int = 0, n_neighbors: int = 15) -> F64:
    """UMAP embedding with a fixed ``random_state`` (which also makes umap-learn single-threaded).

    n_neighbors is clipped to n - 1. Fewer than 4 points is refused: UMAP's neighbour graph
    needs a few points to mean anything.
    """
    x = np.asarray(vectors, dtype=np.float64)  # (n, d)
    if x.ndim != 2 or x.shape[0] < MIN_UMAP_POINTS:
        raise ValueError(
            f"UMAP needs a 2-D array with at least {MIN_UMAP_POINTS} rows, got shape {x.shape}"
        )
    import warnings

    import umap  # heavy (numba): imported only here

    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=min(n_neighbors, x.shape[0] - 1),
        min_dist=0.1,
        random_state=seed,
        init="spectral" if x.shape[0] > 10 else "random",
    )
    with warnings.catch_warnings():
        # "n_jobs value 1 overridden to 1 by setting random_state": expected, we want it.
        warnings.simplefilter("ignore", UserWarning)
        y = reducer.fit_transform(x)  # (n, 2) float32
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
