"""The 2-D toy's plots: a DSL's field lines, eigenfunctions and decision function on two moons.

`plot(model, params, ds, config, plot_dir)` (the run itself: `runs.toy`) writes

    toy_field_lines.png     P(class 1) on a grid over Ω, `toy.num_lines` learned field lines
                            from entry to exit, the training points;
    toy_eigenfunctions.png  u_1..u_4 along three of those lines (the basis DSL combines);
    toy_basis_maps.png      u_1..u_4 evaluated at every grid point (constant-shape sines
                            along each line, bent by the learned p, q, w and field).
"""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np

from lib.dsl import field_lines as fl, sturm_liouville as sl
from lib.dsl.training import Model
from lib.toolbox import plotting


def line_and_modes(model: Model, params, x: jax.Array):
    """For one point x (n,): the line's nodes (N, n) and the basis u_k on them (N, K)
    (same normalisation as the model's features)."""
    dsl = model.dsl
    cfg = dsl.cfg
    line = fl.sample(dsl._field_fn, params["field"], x, cfg.line, cfg.num_nodes)
    p, q, w = dsl.coef.apply(params["coef"], line.points)
    _, u = sl.solve(p, q, w, line.length, cfg.num_modes, mass=cfg.mass, grad=cfg.grad)
    if cfg.amplitude == "entry_slope":
        h = line.length / (cfg.num_nodes - 1)
        u = u * dsl.amp.apply(params["amp"], line.line.entry) / (u[1] / h)
    elif cfg.amplitude == "sup_norm":
        u = u * dsl.amp.apply(params["amp"], line.line.entry) / jnp.max(jnp.abs(u), axis=0)
    return line.points, u


def plot(model: Model, params, ds, config, plot_dir: str) -> None:
    """The three plots of the module docstring for one trained DSL (`params` unstacked)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415 (only when plotting)
    r = config.model.radius
    g = config.toy.grid
    lo, hi = (-r, r) if config.model.domain == "ball" else (0.0, r)
    axis = np.linspace(lo, hi, g)
    xx, yy = np.meshgrid(axis, axis)
    pts = np.stack([xx.ravel(), yy.ravel()], 1).astype(np.float32)
    inner = (np.linalg.norm(pts, axis=1) < 0.97 * r) if config.model.domain == "ball" else \
        np.all((pts > 0.015 * r) & (pts < 0.985 * r), axis=1)
    ev = jax.jit(model.dsl.evaluate)(params, jnp.asarray(pts[inner]))
    logits = np.asarray(model.dsl.head.apply(params["head"], ev.basis))
    prob = np.full(len(pts), np.nan)
    prob[inner] = jax.nn.softmax(logits, -1)[:, 1]
    basis = np.zeros((len(pts), model.dsl.cfg.num_modes))
    basis[inner] = np.asarray(ev.basis)

    rng = np.random.default_rng(0)
    starts = ds.x_train[rng.choice(len(ds.x_train), config.toy.num_lines, replace=False)]
    lm = jax.jit(lambda x: line_and_modes(model, params, x))
    lines = [jax.device_get(lm(jnp.asarray(s))) for s in starts]

    fig, ax = plt.subplots(figsize=(5.5, 5))
    im = ax.imshow(prob.reshape(g, g), origin="lower", extent=(lo, hi, lo, hi), cmap="RdBu_r",
                   vmin=0, vmax=1, alpha=0.6)
    for pts_line, _ in lines:
        ax.plot(pts_line[:, 0], pts_line[:, 1], "k-", linewidth=1)
        ax.plot(pts_line[0, 0], pts_line[0, 1], "go", markersize=3)
    ax.scatter(ds.x_train[:, 0], ds.x_train[:, 1], c=ds.y_train, cmap="coolwarm", s=6,
               edgecolors="none")
    if config.model.domain == "ball":
        ax.add_patch(plt.Circle((0, 0), r, fill=False, color="gray"))
    ax.set(title="DSL on two moons: P(class 1), field lines (green: entry)", aspect="equal")
    fig.colorbar(im, ax=ax, shrink=0.8)
    plotting.save(fig, os.path.join(plot_dir, "toy_field_lines.png"))

    k = min(4, model.dsl.cfg.num_modes)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    for ax, (pts_line, u) in zip(axes, lines[:3]):
        t = np.linspace(0, 1, u.shape[0])
        for i in range(k):
            ax.plot(t, u[:, i], label=f"u_{i + 1}")
        ax.set(xlabel="position on line (fraction of length)", title="basis along a field line")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    plotting.save(fig, os.path.join(plot_dir, "toy_eigenfunctions.png"))

    plotting.field_grid(os.path.join(plot_dir, "toy_basis_maps.png"),
                        [[basis[:, i].reshape(g, g) for i in range(k)]],
                        col_titles=[f"u_{i + 1}(x)" for i in range(k)],
                        shared_scale_per_row=False, title="DSL basis functions over Ω")
