"""Drawing helpers shared by the card figures (heatmaps, colour bars, value tables)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import FigureBase
from matplotlib.image import AxesImage

from posecards.figures.style import Theme, visible_cmap

LUMA_WEIGHTS = np.array([0.2126, 0.7152, 0.0722])  # (3,) WCAG 2's weights of linear R, G, B


def linear_light(srgb: Any) -> np.ndarray:
    """sRGB channel values in [0, 1] -> linear light (WCAG 2's relative luminance terms)."""
    c = np.asarray(srgb, dtype=np.float64)
    return np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def relative_luminance(rgb: Any) -> float:
    """WCAG 2 relative luminance of an sRGB colour (components in [0, 1]; alpha ignored)."""
    return float(linear_light(np.asarray(rgb, dtype=np.float64)[:3]) @ LUMA_WEIGHTS)


def contrast_ratio(a: Any, b: Any) -> float:
    """WCAG 2 contrast ratio (L_lighter + 0.05) / (L_darker + 0.05): 1 (same) to 21."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_colour_on(rgb: Any) -> str:
    """Black or white, whichever contrasts more with a cell of colour ``rgb`` (>= 4.58:1 on any
    colour)."""
    black = contrast_ratio((0.0, 0.0, 0.0), rgb)
    return "black" if black >= contrast_ratio((1.0, 1.0, 1.0), rgb) else "white"


def heatmap(
    ax: Axes,
    values: npt.ArrayLike,
    theme: Theme,
    *,
    signed: bool = False,
    extent: tuple[float, float, float, float] | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    cbar_label: str | None = None,
    log: bool = False,
    cmap: Any = None,
) -> AxesImage:
    """imshow (small in SVG, unlike pcolormesh). Signed data: diverging map centred on 0.
    ``cmap`` overrides the theme's map (e.g. ``visible_cmap(theme, "sequential")``)."""
    cmap_override = cmap
    data = np.asarray(values, dtype=np.float64)
    if signed:
        m = float(np.nanmax(np.abs(data))) if vmax is None else float(vmax)
        norm: Normalize = Normalize(-m, m)
        cmap = theme.diverging
    elif log:
        from matplotlib.colors import LogNorm

        norm = LogNorm(vmin=vmin, vmax=vmax)
        cmap = theme.sequential
    else:
        norm = Normalize(vmin, vmax)
        cmap = theme.sequential
    if cmap_override is not None:
        cmap = cmap_override
    im = ax.imshow(
        data,
        cmap=cmap,
        norm=norm,
        aspect="auto",
        origin="upper",
        extent=extent,
        interpolation="nearest",
    )
    if colorbar:
        fig = ax.get_figure()
        assert fig is not None
        cb = fig.colorbar(im, ax=ax, fraction=0.05, pad=0.03)
        if cbar_label:
            cb.set_label(cbar_label)
    return im


def plain_number(v: float) -> str:
    """A tick label without exponents (mathtext superscripts fall under the size floor):
    1, 10, 100, 1k, 10k, 1M; 0.1, 0.01, 0.001 below one."""
    v = float(v)
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    if v >= 1:
        return f"{v:g}"
    return np.format_float_positional(v, trim="-")


def plain_log_ticks(axis: Any) -> None:
    """Label a log axis (``ax.xaxis`` or ``ax.yaxis``) at powers of ten with plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10.0, numticks=12))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: plain_number(v)))
    axis.set_minor_formatter(NullFormatter())


def grid(fig: FigureBase, nrows: int, ncols: int, **kw: Any) -> Any:
    """Subplots on a Figure or SubFigure with constrained spacing."""
    return fig.subplots(nrows, ncols, squeeze=False, **kw)


def upper_triangle(n: int) -> list[tuple[float, float]]:
    """Outline of the cells j > i of an n x n imshow (cell centres at integers): a staircase."""
    pts = [(n - 0.5, -0.5), (n - 0.5, n - 1.5)]
    for i in range(n - 2, -1, -1):  # bottom-left corner of row i's masked part, then up one row
        pts += [(i + 0.5, i + 0.5), (i + 0.5, i - 0.5)]
    return pts


def causal_bias_maps(axes: Any, bias: npt.ArrayLike, theme: Theme) -> AxesImage:
    """One (L, L) causal bias matrix per axes, on one shared one-sided colour scale from the
    most negative value to 0 (a causal bias is never positive); masked cells (-inf, keys after
    the query) blank and hatched. Returns the last image (for a colour bar)."""
    from matplotlib.patches import Polygon

    values = np.asarray(bias, dtype=np.float64)  # (s, L, L), -inf above the diagonal
    shown = np.where(np.isfinite(values), values, np.nan)
    n = shown.shape[-1]
    lo = min(float(np.nanmin(shown)), -1e-12)
    im = None
    for k, ax in enumerate(axes):
        im = heatmap(
            ax,
            shown[k],
            theme,
            vmin=lo,
            vmax=0.0,
            colorbar=False,
            cmap=visible_cmap(theme, "sequential"),
        )
        ax.add_patch(
            Polygon(
                upper_triangle(n),
                closed=True,
                fill=False,
                hatch="///",
                edgecolor=theme.neutral,
                linewidth=0.0,
            )
        )
    assert im is not None
    return im
