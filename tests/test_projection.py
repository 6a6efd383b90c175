"""Deterministic 2-D projections (PCA closed form; UMAP with a fixed seed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from posecards.encodings.projection import pca_2d, project_2d
from posecards.encodings.sinusoidal import sinusoidal_pe


def test_pca_of_a_circle_is_the_circle() -> None:
    # PE with d_model = 2 is the unit circle (sin p, cos p): PCA keeps all of it, distances intact
    pe = sinusoidal_pe(np.linspace(0, 2 * np.pi, 64, endpoint=False), 2)
    y = pca_2d(pe)
    d_in = np.linalg.norm(pe[:, None] - pe[None], axis=-1)
    d_out = np.linalg.norm(y[:, None] - y[None], axis=-1)
    np.testing.assert_allclose(d_out, d_in, atol=1e-12)


def test_pca_matches_svd_variance_and_is_sign_stable() -> None:
    x = sinusoidal_pe(256, 64)
    y = pca_2d(x)
    s = np.linalg.svd(x - x.mean(0), compute_uv=False)
    np.testing.assert_allclose(y.var(axis=0) * len(x), s[:2] ** 2, rtol=1e-10)
    np.testing.assert_array_equal(pca_2d(x), y)
    # the sign convention fixes the axes, so negating the data negates the picture
    np.testing.assert_allclose(pca_2d(-x), -y, atol=1e-12)


def test_umap_is_deterministic_for_a_seed() -> None:
    x = sinusoidal_pe(60, 32)
    a = project_2d(x, "umap", seed=0)
    b = project_2d(x, "umap", seed=0)
    assert a.shape == (60, 2) and a.dtype == np.float64
    np.testing.assert_array_equal(a, b)


# slow: a fresh numba compile in a subprocess, the costliest test of `make check` (14.5 CPU s of
# about 200, tests/cputime.py); `make test` runs it
@pytest.mark.slow
def test_umap_kernels_from_the_disk_cache_give_the_numbers_of_a_fresh_compile(
    tmp_path: Path,
) -> None:
    """umap-learn's kernels are kept in numba's on-disk cache (compiled once per machine, not
    ~8 s per process); a process that compiles them afresh, cache off, lays out the same."""
    import umap.layouts

    x = sinusoidal_pe(60, 32)
    cached = project_2d(x, "umap", seed=0)
    kernel = umap.layouts._nb_optimize_layout_euclidean_single_epoch
    assert type(kernel._cache).__name__ == "FunctionCache"
    code = (
        "import sys, numpy as np\n"
        "import posecards.encodings.projection as p\n"
        "from posecards.encodings.sinusoidal import sinusoidal_pe\n"
        "p.cache_umap_kernels = lambda: None\n"
        "np.save(sys.argv[1], p.project_2d(sinusoidal_pe(60, 32), 'umap', seed=0))\n"
        "import umap.layouts as l\n"
        "assert type(l._nb_optimize_layout_euclidean_single_epoch._cache).__name__ == 'NullCache'\n"
    )
    out = tmp_path / "fresh.npy"
    subprocess.run([sys.executable, "-c", code, str(out)], check=True)  # ~8 s of JIT
    np.testing.assert_array_equal(np.load(out), cached)


def test_too_few_points_and_unknown_method() -> None:
    with pytest.raises(ValueError, match="at least 4 rows"):
        project_2d(np.zeros((3, 8)), "umap")
    with pytest.raises(ValueError, match="unknown projection method 'tsne'"):
        project_2d(np.zeros((5, 8)), "tsne")  # type: ignore[arg-type]


def test_snap_removes_last_bit_noise() -> None:
    from posecards.encodings.projection import snap

    x = sinusoidal_pe(64, 32)
    noisy = x * (1 + 2.0**-50 * np.cos(np.arange(x.size)).reshape(x.shape))  # a few ulp
    assert not np.array_equal(x, noisy)
    np.testing.assert_array_equal(snap(x), snap(noisy))
    np.testing.assert_allclose(snap(x), x, rtol=0, atol=1e-8)  # 9 digits of the largest value
    assert snap(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]


def test_umap_does_not_see_last_bit_noise() -> None:
    # what another CPU's sin/cos kernels change in the PE (an ulp here and there) leaves the
    # layout identical, not merely close
    x = sinusoidal_pe(60, 32)
    noisy = x * (1 + 2.0**-51 * np.sign(np.sin(np.arange(x.size))).reshape(x.shape))
    np.testing.assert_array_equal(project_2d(x, "umap"), project_2d(noisy, "umap"))
