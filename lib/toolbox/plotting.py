"""PNG plots: curves, theory-over-simulation points, field grids.

No module in lib/ selects a matplotlib backend: binaries get Agg from `lib.common.cli.run`,
a notebook keeps its inline backend, so `plt.show()` shows the figures there. pyplot loads
on the first figure (`pyplot()`): a process that draws none does not pay its import (about
0.5 s of CPU, a quarter of an experiment's imports).
"""
from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np


def pyplot():
    """`matplotlib.pyplot`, imported on first use."""
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: str, dpi: int = 110) -> str:
    """Write `fig` to `path` (folders created), close it, return `path`."""
    plt = pyplot()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path


def line_plot(path: str, series: Mapping[str, tuple[Sequence[float], Sequence[float]]], *,
              xlabel: str = "", ylabel: str = "", title: str = "", logy: bool = False,
              hline: float | None = None) -> str:
    """One figure with a line per entry of `series` = {label: (x, y)}; returns `path`."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (x, y) in series.items():
        ax.plot(np.asarray(x), np.asarray(y), label=label)
    if hline is not None:
        ax.axhline(hline, color="gray", linestyle="--", linewidth=1)
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8)
    return save(fig, path)


def smooth(y: Sequence[float], window: int | None = None) -> np.ndarray:
    """Centred moving median of `y` over `window` points (default ~5 % of the length, odd,
    at least 3; shrinking at the ends): a robust trend of a noisy loss curve."""
    y = np.asarray(y, np.float64)
    if window is None:
        window = max(3, (len(y) // 20) | 1)
    half = window // 2
    return np.array([np.median(y[max(0, i - half):i + half + 1]) for i in range(len(y))])


def loss_curve(path: str, steps: Sequence[float], values: Sequence[float], *, ylabel: str,
               title: str = "", logy: bool = True,
               points: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
               window: int | None = None, label: str = "logged") -> str:
    """Training loss: the logged values (legend `label`) faint, their moving median over
    `window` points (`smooth`) bold, and `points` = {label: (steps, values)} (e.g. a
    validation error) as joined markers."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    steps, values = np.asarray(steps), np.asarray(values, np.float64)
    ax.plot(steps, values, color="C0", alpha=0.25, linewidth=0.8, label=label)
    ax.plot(steps, smooth(values, window), color="C0", linewidth=2.0,
            label="moving median" + (f" ({window} rows)" if window else ""))
    for i, (label, (x, y)) in enumerate((points or {}).items()):
        ax.plot(np.asarray(x), np.asarray(y, np.float64), color=f"C{i + 1}", marker="o",
                markersize=4, linewidth=1.2, label=label)
        values = np.concatenate([values, np.asarray(y, np.float64)])
    if logy and np.all(values > 0):
        ax.set_yscale("log")
    ax.set(xlabel="step", ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def correlation_curves(path: str, curves: Mapping[str, tuple], *, highlight: str | None = None,
                       dashed: Sequence[str] = (), threshold: float | None = None,
                       xlabel: str = "time", ylabel: str = "correlation", title: str = "",
                       ylim: tuple[float, float] | None = None, legend_cols: int = 2) -> str:
    """Correlation-against-time curves = {label: (t, mean) or (t, mean, std)}: a ±1 std band
    where std is given, `highlight` drawn bold on top, the labels in `dashed` dashed, and the
    threshold (that defines the high-correlation time) as a labelled horizontal line;
    `ylim` (bottom, top) fixes the vertical range (default: matplotlib's); the legend has
    `legend_cols` columns."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    order = [k for k in curves if k != highlight] + ([highlight] if highlight in curves else [])
    for i, label in enumerate(order):
        t, mean, *rest = curves[label]
        t, mean = np.asarray(t), np.asarray(mean, np.float64)
        bold = label == highlight
        colour = "black" if bold else f"C{i % 10}"
        ax.plot(t, mean, color=colour, linewidth=2.4 if bold else 1.1,
                linestyle="--" if label in dashed else "-", label=label, zorder=3 if bold else 2)
        if rest and rest[0] is not None:
            std = np.asarray(rest[0], np.float64)
            ax.fill_between(t, mean - std, mean + std, color=colour,
                            alpha=0.18 if bold else 0.08, linewidth=0)
    if threshold is not None:
        ax.axhline(threshold, color="gray", linestyle=":", linewidth=1)
        ax.annotate(f"HCT threshold {threshold:g}", xy=(1.0, threshold),
                    xycoords=("axes fraction", "data"), xytext=(-4, 3),
                    textcoords="offset points", ha="right", fontsize=7, color="gray")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=legend_cols)
    return save(fig, path)


def curves_and_points(path: str, *, curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                      points: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
                      xlabel: str, ylabel: str, title: str = "", logx: bool = True,
                      logy: bool = False, vlines: Mapping[str, float] | None = None) -> str:
    """Lines `curves` = {label: (x, y)}, markers with error bars `points` = {label: (x, y, err)},
    dashed vertical lines `vlines` = {label: x}; returns `path`."""
    plt = pyplot()
    from matplotlib import ticker
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
    return save(fig, path)


def field_grid(path: str, rows: Sequence[Sequence[np.ndarray]], *,
               row_titles: Sequence[str] = (), col_titles: Sequence[str] = (),
               cmap: str = "RdBu_r", shared_scale_per_row: bool = True, title: str = "") -> str:
    """A grid of 2-D fields (rows x columns of (H, W) arrays), e.g. truth/pred/error in time."""
    plt = pyplot()
    n_rows, n_cols = len(rows), max(len(r) for r in rows)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(2.2 * n_cols, 2.2 * n_rows), squeeze=False)
    for i, row in enumerate(rows):
        lim = max(float(np.max(np.abs(f))) for f in row) if shared_scale_per_row else None
        for j in range(n_cols):
            ax = axes[i][j]
            ax.set_xticks([])
            ax.set_yticks([])
            if j >= len(row):
                ax.axis("off")
                continue
            f = np.asarray(row[j])
            v = lim if lim is not None else float(np.max(np.abs(f)))
            im = ax.imshow(f, origin="lower", cmap=cmap, vmin=-v, vmax=v)
            if i < len(row_titles) and j == 0:
                ax.set_ylabel(row_titles[i])
            if i == 0 and j < len(col_titles):
                ax.set_title(col_titles[j], fontsize=9)
        fig.colorbar(im, ax=list(axes[i]), shrink=0.8)
    if title:
        fig.suptitle(title)
    return save(fig, path)
