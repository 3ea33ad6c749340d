"""PNG figures of a KAR/PEAK run: reconstructions, NTK eigen-spectra, 1-D regression fits."""
from __future__ import annotations

import numpy as np

from lib.toolbox import plotting


def _show(ax, img, title):
    img = np.asarray(img)
    ax.imshow(img[..., 0] if img.shape[-1] == 1 else img, cmap="gray", vmin=0, vmax=1)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=7)


def reconstructions(path: str, rec: dict, mask_names) -> str:
    """Rows = masks; columns = truth, observed (missing pixels black), one per method."""
    plt = plotting.pyplot()
    methods = list(rec["pred"])
    n_rows, n_cols = len(mask_names), 2 + len(methods)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(1.6 * n_cols, 1.7 * n_rows), squeeze=False)
    for i, (name, mask) in enumerate(zip(mask_names, rec["masks"])):
        _show(axes[i][0], rec["truth"], "truth")
        _show(axes[i][1], rec["truth"] * (~mask)[..., None], f"observed ({name})")
        for j, m in enumerate(methods):
            _show(axes[i][2 + j], rec["pred"][m][i], m)
    return plotting.save(fig, path)


def spectra(path: str, spec: dict, title: str) -> str:
    """Eigenvalues (normalised by the largest) of the empirical NTK: init dashed, trained solid."""
    plt = plotting.pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (m, (e0, e1)) in enumerate(spec.items()):
        ax.plot(np.maximum(e1 / e1[0], 1e-12), color=f"C{i}", label=m)
        ax.plot(np.maximum(e0 / e0[0], 1e-12), color=f"C{i}", linestyle="--", linewidth=0.8)
    ax.set_yscale("log")
    ax.set(xlabel="index", ylabel="eigenvalue / largest", title=title + " (dashed: init)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return plotting.save(fig, path)


def regression(path: str, data, curves: dict) -> str:
    """First draw: truth, observations, posterior mean, each method's fit."""
    plt = plotting.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    x = data.x_test[:, 0]
    ax.plot(x, data.f_test[:, 0], color="k", linewidth=2, label="f*")
    ax.plot(x, data.post_mean[:, 0], color="gray", linestyle="--", label="posterior mean")
    for m, y in curves.items():
        ax.plot(x, y, linewidth=1, label=m)
    ax.scatter(data.x_train[:, 0], data.y_train[:, 0], color="k", s=12, zorder=5, label="observed")
    ax.set(xlabel="x", ylabel="f(x)", title="1-D regression, first draw")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return plotting.save(fig, path)
