"""Theory curves over simulation points with error bars (PNG, matplotlib Agg).

`lib.common.plotting.line_plot` has neither error bars nor a log x axis, which every
figure of this paper needs; this is the one local figure helper (a candidate for
lib/common/plotting if another paper needs it).
"""
from __future__ import annotations

import os
from typing import Mapping, Sequence

from lib.common import plotting  # noqa: F401  (selects the Agg backend before pyplot)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402


def curves_and_points(path: str, *, curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                      points: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
                      xlabel: str, ylabel: str, title: str = "", logx: bool = True,
                      logy: bool = False, vlines: Mapping[str, float] | None = None) -> str:
    """Lines `curves` = {label: (x, y)}, markers with error bars `points` = {label: (x, y, err)},
    dashed vertical lines `vlines` = {label: x}; returns `path`."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (x, y) in curves.items():
        ax.plot(np.asarray(x), np.asarray(y), label=label, linewidth=1.5)
    for label, (x, y, err) in points.items():
        ax.errorbar(np.asarray(x), np.asarray(y), yerr=np.asarray(err), fmt="o", markersize=4,
                    capsize=3, label=label)
    for i, (label, x) in enumerate((vlines or {}).items()):
        ax.axvline(x, color=f"C{i + 5}", linestyle="--", linewidth=1, label=label)
    for on, axis, scale, limits in ((logx, ax.xaxis, ax.set_xscale, ax.get_xlim),
                                    (logy, ax.yaxis, ax.set_yscale, ax.get_ylim)):
        if on:
            scale("log")
            axis.set_minor_formatter(ticker.NullFormatter())    # no overlapping minor labels
            lo, hi = limits()
            if np.log10(hi / lo) < 2:                           # short range: 1, 2, 5 × 10^k
                axis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
