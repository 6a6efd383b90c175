"""Card 6's MRoPE figures: which axis (t, h, w) drives each frequency of two models' heads
(c6-mrope-axes), and the (t, h, w) position ids of text, an image, text (c6-mrope-ids).

Draw functions only draw the arrays of ``posecards.content.card6_mrope``; all text comes from the
[labels] of ``cards/card6.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import FigureBase
from matplotlib.ticker import NullLocator

from posecards.figures import Labels, roles
from posecards.figures.style import Theme

# the data each figure draws (content/figdata/card6.py), as content/card6_mrope.py computes it
if TYPE_CHECKING:
    from posecards.content.figdata.card6 import MropeAxes, MropeIds

# marker per MRoPE axis (t, h, w)
_AXIS_MARKER = ("o", "s", "^")


def _compact(v: float) -> str:
    """A wavelength as a short tick label, 3 significant digits: 6.28, 199, 35.3k, 5.06M."""
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def draw_mrope_axes(fig: FigureBase, data: MropeAxes, t: Labels, theme: Theme) -> None:
    """Per model a 3 x (head_dim/2) map: row t, h or w is filled where that axis drives the
    frequency; under it the wavelengths of a few frequencies; at the right the count per axis."""
    axes = fig.subplots(2, 1)
    cat = theme.categorical
    for ax, key in zip(axes, data.models, strict=True):
        d = data.model(key)
        drive = np.asarray(d.axes)  # (n,) 0 t, 1 h, 2 w
        n = drive.size
        rows = np.full((3, n), 0.0)  # (3, n) 0 = empty, 1 + a = axis a drives it
        for a in range(3):
            rows[a, drive == a] = 1.0 + a
        ax.imshow(
            rows,
            cmap=ListedColormap([theme.box, cat[0], cat[1], cat[2]]),
            vmin=-0.5,
            vmax=3.5,
            aspect="auto",
            interpolation="nearest",
        )
        ax.hlines([0.5, 1.5], -0.5, n - 0.5, colors=theme.background, linewidth=1.5)
        ax.set_yticks([0, 1, 2], labels=[t("axis_t"), t("axis_h"), t("axis_w")])
        ticks = np.asarray(d.tick_j)
        ax.set_xticks(
            ticks.tolist(),
            labels=[_compact(float(v)) for v in np.asarray(d.tick_wavelength)],
        )
        ax.tick_params(length=2)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        right = ax.secondary_yaxis("right")
        right.set_yticks([0, 1, 2], labels=[str(int(c)) for c in np.asarray(d.count)])
        right.tick_params(length=0)
        right.yaxis.set_minor_locator(NullLocator())
        ax.set_title(t(f"mrope_{key}"), fontsize=roles.fontsize("subplot_title"), loc="left")
    axes[-1].set_xlabel(t("mrope_x"))


# ---------------------------------------------------------------- panel 6


def draw_mrope_ids(fig: FigureBase, data: MropeIds, t: Labels, theme: Theme) -> None:
    ax = fig.subplots()
    ids = np.asarray(data.ids)  # (3, L)
    kinds = list(data.kinds)
    image = np.array([k == "image" for k in kinds], dtype=np.float64)  # (L,)
    n = ids.shape[1]
    ax.imshow(
        np.repeat(image[None, :], 3, axis=0),
        cmap=ListedColormap([theme.box, theme.pitfall_box]),
        vmin=0.0,
        vmax=1.0,
        aspect="auto",
        interpolation="nearest",
    )
    for r in range(3):
        for c in range(n):
            ax.text(
                c,
                r,
                f"{int(ids[r, c])}",
                ha="center",
                va="center",
                color=theme.text,
                fontsize=roles.fontsize("cell_number"),
            )
    ax.hlines([0.5, 1.5], -0.5, n - 0.5, colors=theme.background, linewidth=2)
    ax.vlines(np.arange(n - 1) + 0.5, -0.5, 2.5, colors=theme.background, linewidth=2)
    ax.set_yticks([0, 1, 2], labels=[t("axis_t"), t("axis_h"), t("axis_w")])
    ax.set_xticks(range(n), labels=[str(i) for i in range(n)])
    ax.set_xlabel(t("token"))
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    rows, cols = (int(v) for v in data.token_grid)
    top = ax.secondary_xaxis("top")
    first = kinds.index("image")
    last = n - 1 - kinds[::-1].index("image")
    top.set_xticks(
        [0.5 * (first - 1), 0.5 * (first + last), 0.5 * (last + n)],
        labels=[
            t("ids_text", n=first),
            t("ids_image", R=rows, C=cols),
            t("ids_text", n=n - 1 - last),
        ],
    )
    top.tick_params(length=0)
    top.xaxis.set_minor_locator(NullLocator())


# ---------------------------------------------------------------- figure page: nine configs
