"""V independent INR fits (e.g. one image under several masks) as one `train_loop.Task`.

Parameters of the V fits are stacked on a leading axis (`jax.vmap` of `init`); the loss is the
sum of the V per-fit losses, and Adam is elementwise, so the fits stay independent while
sharing one jitted step. Per fit v (equation numbers refer to the README's derivation):

    L_v = Σ_n w_nv ‖f_v(x_n) − y_nv‖² / (C Σ_n w_nv)  +  λ R_v            (data + λ·KAR)

with w the observed-pixel weights and R the KAR form of `lib.kar_peak.kar` (none, "rowcol",
"grid", "ntk"). INR parameters and attention parameters get separate Adam learning rates.

Batch (global, rows = points; identical every step, so resume is exact):
    {"x": (N, d), "y": (N, V, C), "w": (N, V)}
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.kar_peak import kar as kar_lib
from lib.kar_peak.inrs import INR, KINDS
from lib.kar_peak.ntk import empirical_ntk

SINE_KINDS = ("siren", "finer")


def method_names() -> tuple[str, ...]:
    """Every allowed method name: an INR kind, optionally with '+kar'."""
    return KINDS + tuple(f"{k}+kar" for k in KINDS)


def parse_method(name: str) -> tuple[str, bool]:
    """'peak+kar' -> ('peak', True); ValueError for an unknown name."""
    if name not in method_names():
        raise ValueError(f"unknown method {name!r}; allowed: {method_names()}")
    kind, _, flag = name.partition("+")
    return kind, flag == "kar"


def make_inr(kind: str, inr_cfg, out_dim: int) -> INR:
    """The INR of `kind` with the hyper-parameters of the config's `inr` block."""
    c = inr_cfg
    return INR(kind=kind, width=c.width, depth=c.depth, out_dim=out_dim, levels=c.pe_levels,
               features=c.rff_features if kind == "rff" else c.peak_features,
               sigma=c.rff_sigma if kind == "rff" else c.peak_sigma,
               omega0=c.finer_omega0 if kind == "finer" else c.siren_omega0,
               bias_scale=c.finer_bias_scale, order=c.peak_order,
               learn_frequencies=c.peak_learn_frequencies, seed=c.seed)


class FitProblem(NamedTuple):
    """What the fits see. coords (N, d); y (N, V, C); w (N, V) observed weights;
    image_shape (H, W) for the 'rowcol' form (N = H·W, row-major) or None;
    ntk_points (S, d) and ntk_target (V, S, S) (one per fit) for the 'ntk' form, else None."""
    coords: np.ndarray
    y: np.ndarray
    w: np.ndarray
    image_shape: tuple[int, int] | None = None
    ntk_points: np.ndarray | None = None
    ntk_target: np.ndarray | None = None


class Fit(NamedTuple):
    task: train_loop.Task
    model: INR
    predict: callable       # stacked params -> (V, N, C) on problem.coords
    loss_terms: callable    # stacked params -> {"data": (V,), "kar": (V,)}


def make_fit(problem: FitProblem, method: str, config) -> Fit:
    """Task for the V fits of `method` (`config` needs blocks inr, kar, optim)."""
    kind, use_kar = parse_method(method)
    n, v, c = problem.y.shape
    if problem.w.shape != (n, v):
        raise ValueError(f"weights shape {problem.w.shape} must be (N, V) = {(n, v)}")
    if np.any(problem.w.sum(0) <= 0):
        raise ValueError("a fit has no observed point (all weights are zero)")
    form, residual, lam = config.kar.form, config.kar.residual, config.kar.weight
    if use_kar and form == "rowcol" and (problem.image_shape is None
                                         or int(np.prod(problem.image_shape)) != n):
        raise ValueError(f"KAR form 'rowcol' needs an image grid with H·W = N = {n}, got {problem.image_shape}")
    if use_kar and form == "ntk" and problem.ntk_target is None:
        raise ValueError("KAR form 'ntk' needs a known target kernel (the 1-D regression task)")
    model = make_inr(kind, config.inr, c)
    att = kar_lib.AttentionNet(rank=config.kar.rank, width=config.kar.att_width, levels=config.kar.att_levels)
    coords = jnp.asarray(problem.coords)
    lr = config.optim.sine.lr if kind in SINE_KINDS else config.optim.lr
    opt = optax.multi_transform({"inr": optax.adam(lr), "att": optax.adam(config.optim.att.lr)},
                                lambda p: {k: ("inr" if k == "inr" else "att") for k in p})
    if use_kar and form == "rowcol":
        h, wd = problem.image_shape
        att_inputs = {"att_row": jnp.linspace(-1, 1, h)[:, None], "att_col": jnp.linspace(-1, 1, wd)[:, None]}
    elif use_kar and form == "grid":
        att_inputs = {"att": coords}
    else:
        att_inputs = {}
    ntk_x = None if problem.ntk_points is None else jnp.asarray(problem.ntk_points)
    ntk_t = (jnp.zeros((v, 1, 1)) if problem.ntk_target is None else jnp.asarray(problem.ntk_target))
    if ntk_t.shape[0] != v:
        raise ValueError(f"ntk_target must hold one (S, S) kernel per fit: shape {ntk_t.shape}, V = {v}")

    def init_one(key):
        keys = jax.random.split(key, 1 + len(att_inputs))
        params = {"inr": model.init(keys[0], coords[:1])}
        for k, (name, xin) in zip(keys[1:], sorted(att_inputs.items())):
            params[name] = att.init(k, xin)
        return params

    def kar_term(p, pred, x, target):
        if not use_kar:
            return jnp.zeros(())
        if form == "rowcol":
            img = pred.reshape(*problem.image_shape, c)
            return kar_lib.kar_rowcol(img, att.apply(p["att_row"], att_inputs["att_row"]),
                                      att.apply(p["att_col"], att_inputs["att_col"]), residual)
        if form == "grid":
            return kar_lib.kar_grid(pred, att.apply(p["att"], x), residual)
        k = empirical_ntk(model.apply, p["inr"], ntk_x, ntk_x, method="jacobian",
                          chunk=config.kar.ntk_chunk)
        return kar_lib.kar_ntk(k, target)

    def terms_one(p, x, y, w, target):
        pred = model.apply(p["inr"], x)                                 # (N, C)
        data = jnp.sum(w[:, None] * (pred - y) ** 2) / (c * jnp.sum(w))
        return data, kar_term(p, pred, x, target)

    def loss_fn(params, batch):
        data, reg = jax.vmap(terms_one, in_axes=(0, None, 1, 1, 0))(params, batch["x"], batch["y"],
                                                                       batch["w"], ntk_t)
        return jnp.sum(data + lam * reg), (data, reg)

    def init_state(key):
        return optim.init_state(jax.vmap(init_one)(jax.random.split(key, v)), opt)

    def train_step(state, batch, key):
        del key
        (loss, (data, reg)), grads = jax.value_and_grad(loss_fn, has_aux=True)(state["params"], batch)
        return (train_loop.apply_gradients(state, grads, opt),
                {"loss": loss / v, "data": jnp.mean(data), "kar": jnp.mean(reg)})

    batch = {"x": problem.coords.astype(np.float32), "y": problem.y.astype(np.float32),
             "w": problem.w.astype(np.float32)}

    def batch_fn(step, rows):
        del step
        return {k: a[rows] for k, a in batch.items()}

    def predict(params):
        return jax.vmap(lambda p: model.apply(p["inr"], coords))(params)

    def loss_terms(params):
        data, reg = jax.vmap(terms_one, in_axes=(0, None, 1, 1, 0))(
            params, coords, jnp.asarray(batch["y"]), jnp.asarray(batch["w"]), ntk_t)
        return {"data": data, "kar": reg}

    task = train_loop.Task(init_state, train_step, batch_fn, n)
    return Fit(task, model, jax.jit(predict), jax.jit(loss_terms))


def unstack(params, i: int):
    """The i-th fit's parameters from the stacked pytree."""
    return jax.tree.map(lambda a: a[i], params)
