"""GMFlow figures (matplotlib Agg): scatter grids of 2-D samples and image mosaics."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lib.toolbox import plotting


def scatter_grid(path: str, rows: Mapping[str, Sequence[np.ndarray]], col_titles: Sequence[str],
                 lim: float = 4.5, title: str = "") -> str:
    """Rows {label: [(n, 2) samples per column]} of small scatter plots on [-lim, lim]²."""
    plt = plotting.pyplot()
    n_rows, n_cols = len(rows), len(col_titles)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(1.6 * n_cols, 1.6 * n_rows), squeeze=False)
    for i, (label, cols) in enumerate(rows.items()):
        for j in range(n_cols):
            ax = axes[i][j]
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_xlim(-lim, lim)
            ax.set_ylim(-lim, lim)
            if j < len(cols) and cols[j] is not None:
                ax.scatter(cols[j][:, 0], cols[j][:, 1], s=0.3, alpha=0.5, linewidths=0)
            if j == 0:
                ax.set_ylabel(label, fontsize=7)
            if i == 0:
                ax.set_title(col_titles[j], fontsize=8)
    if title:
        fig.suptitle(title)
    return plotting.save(fig, path, dpi=90)


def image_rows(path: str, rows: Mapping[str, np.ndarray], title: str = "") -> str:
    """Rows {label: images (n, H, W, 1) in [0, 1]}, each shown as one horizontal strip."""
    plt = plotting.pyplot()
    fig, axes = plt.subplots(len(rows), 1, figsize=(12, 0.75 * len(rows) + 0.4), squeeze=False)
    for ax, (label, imgs) in zip(axes[:, 0], rows.items()):
        strip = np.concatenate(list(np.clip(imgs[..., 0], 0, 1)), axis=1)
        ax.imshow(strip, cmap="gray", vmin=0, vmax=1, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_ylabel(label, fontsize=7, rotation=0, ha="right", va="center")
    if title:
        fig.suptitle(title)
    return plotting.save(fig, path, dpi=90)
