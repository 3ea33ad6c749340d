"""The EARTH training task: the horizons × seeds copies of one (dataset, model) trained side
by side. Params and optimiser states carry a leading copy axis and the step is vmapped over
it (each copy sees its own batch of its own horizon; Adam, clipping and weight decay act
per copy, so this equals separate runs but compiles once). Batch: [B, copies, W, N], split
on the mesh's "data" axis on B.

Best-validation selection with early stopping (config block `select`, EpiGNN's protocol):
every `select.every_epochs` epochs (an epoch = ceil(training samples / batch) steps) each
copy's scaled validation MSE is computed inside the step; a copy keeps the parameters of
its best evaluation in `state["best_params"]` and stops improving its record once
`select.patience` evaluations in a row did not improve it (its best is then final, as if
training had stopped). The selection state (best_params, best_val, best_step, bad) lives
in the train state with the validation windows, so checkpoints and resume carry it; the step reports `active`, the
copies still within their patience, and `early_stop_clock` turns "no copy active" into a
stop of `train_loop.train` at a step boundary.
"""
from __future__ import annotations

import json
import math
import os

import jax
import jax.numpy as jnp
import numpy as np

from lib.common import optim, train_loop
from lib.common import workdir as wd
from lib.earth import data as data_lib
from lib.toolbox import replicas

LOSSES = ("l1", "mse")


def copies(config) -> list[tuple[int, int]]:
    """(horizon, seed) of each independently trained copy."""
    return [(h, s) for h in config.data.horizons for s in range(config.num_seeds)]


def selecting(config) -> bool:
    """Whether the config asks for best-validation selection (block `select`, enabled)."""
    return "select" in config and bool(config.select.enabled)


def steps_per_epoch(prep: data_lib.Prepared, config) -> int:
    """ceil(most training samples over the horizons / batch size)."""
    w = config.data.window
    n = max(len(prep.targets("train", w, h)) for h in config.data.horizons)
    return max(1, math.ceil(n / config.optim.batch_size))


def loop_config(prep: data_lib.Prepared, config) -> train_loop.LoopConfig:
    """The loop settings; with selection, num_steps = select.max_epochs epochs and metrics
    are logged at every evaluation."""
    cfg = train_loop.LoopConfig.from_config(config.train)
    if not selecting(config):
        return cfg
    every = config.select.every_epochs * steps_per_epoch(prep, config)
    num = config.select.max_epochs * steps_per_epoch(prep, config)
    return train_loop.LoopConfig(num_steps=num, log_every=every,
                                 checkpoint_every=max(every, config.train.checkpoint_every // every * every),
                                 keep_checkpoints=cfg.keep_checkpoints, seed=cfg.seed)


def pointwise_loss(kind: str, pred, y):
    """Mean L1 or squared error (scalar)."""
    if kind not in LOSSES:
        raise ValueError(f"unknown loss {kind!r}; allowed: {LOSSES}")
    d = pred - y
    return jnp.mean(jnp.abs(d)) if kind == "l1" else jnp.mean(d * d)


def update_selection(state: dict, val: jax.Array, patience: int) -> dict:
    """One validation round of every copy: val [C] scaled MSE of state["params"]. A copy
    whose `bad` count is below `patience` and whose val beats its record takes the current
    params as its best (bad = 0); an active copy that does not improve counts bad + 1; a
    copy out of patience keeps its record unchanged."""
    active = state["bad"] < patience
    better = active & (val < state["best_val"])

    def pick(best, cur):
        mask = better.reshape(better.shape + (1,) * (cur.ndim - 1))
        return jnp.where(mask, cur, best)

    return {**state,
            "best_params": jax.tree.map(pick, state["best_params"], state["params"]),
            "best_val": jnp.where(better, val, state["best_val"]),
            "best_step": jnp.where(better, state["step"], state["best_step"]),
            "bad": jnp.where(better, 0, jnp.where(active, state["bad"] + 1, state["bad"]))}


def make_task(forecaster, prep: data_lib.Prepared, config) -> train_loop.Task:
    """A Task whose state holds stacked params/opt states of all copies (and, with
    selection, each copy's best params and its early-stopping record)."""
    cps = copies(config)
    w, bs = config.data.window, config.optim.batch_size
    train_t = {h: prep.targets("train", w, h) for h in config.data.horizons}
    x_example = jnp.zeros((w, prep.series.shape[1]), jnp.float32)
    opt = optim.make_optimizer(dict(name="adamw", lr=config.optim.lr, clip=config.optim.clip,
                                    weight_decay=config.optim.weight_decay), config.train.num_steps)
    kind = getattr(forecaster, "loss", "l1")
    select = selecting(config)
    if select:
        every = config.select.every_epochs * steps_per_epoch(prep, config)
        patience = int(config.select.patience)
        vt = [prep.targets("val", w, h) for h, _ in cps]
        if len({len(t) for t in vt}) != 1 or len(vt[0]) == 0:
            raise data_lib.DataError(f"validation split sizes {sorted({len(t) for t in vt})} "
                                     "differ between horizons or are empty")
        # held in the state, not closed over: XLA would constant-fold the whole
        # validation pass over closed-over arrays at compile time
        val_x = np.stack([data_lib.windows(prep.scaled, t, w, h)
                          for t, (h, _) in zip(vt, cps)]).astype(np.float32)   # [C, V, W, N]
        val_y = np.stack([prep.scaled[t] for t in vt]).astype(np.float32)       # [C, V, N]

    def init_state(key):
        keys = jnp.stack([jax.random.fold_in(key, 1000 * h + s) for h, s in cps])
        st = replicas.init_state(lambda k: forecaster.init(k, x_example), opt, keys)
        if select:
            c = len(cps)
            st.update(best_params=jax.tree.map(jnp.copy, st["params"]), best_val=jnp.full((c,), jnp.inf, jnp.float32),
                      best_step=jnp.zeros((c,), jnp.int32), bad=jnp.zeros((c,), jnp.int32),
                      val_x=jnp.asarray(val_x), val_y=jnp.asarray(val_y))
        return st

    def loss_one(params, x, y):
        pred = jax.vmap(forecaster.apply, (None, 0))(params, x)
        return pointwise_loss(kind, pred, y)                     # on scaled targets

    update = replicas.update(loss_one, opt, batch_axes=(0, 0))

    def val_round(state):
        val = jax.vmap(lambda p, x, y: pointwise_loss(
            "mse", jax.vmap(forecaster.apply, (None, 0))(p, x), y))(
                state["params"], state["val_x"], state["val_y"])
        return update_selection(state, val, patience)

    def train_step(state, batch, key):
        del key
        x = jnp.swapaxes(batch["x"], 0, 1)                       # [copies, B, W, N]
        y = jnp.swapaxes(batch["y"], 0, 1)
        new, loss = update(state, x, y)
        out = {"loss": jnp.mean(loss)}
        for h in config.data.horizons:
            idx = [k for k, (hh, _) in enumerate(cps) if hh == h]
            out[f"loss_h{h}"] = jnp.mean(loss[jnp.asarray(idx)])
        if select:
            new = jax.lax.cond(new["step"] % every == 0, val_round, lambda s: s, new)
            out["active"] = jnp.sum(new["bad"] < patience).astype(jnp.float32)
        return new, out

    def batch_fn(step, rows):
        xs, ys = [], []
        for k, (h, s) in enumerate(cps):
            rng = np.random.default_rng([config.train.seed, s, k, step])
            t = rng.choice(train_t[h], size=bs, replace=len(train_t[h]) < bs)
            xs.append(data_lib.windows(prep.scaled, t, w, h))
            ys.append(prep.scaled[t])
        x = np.stack(xs, 1).astype(np.float32)                   # [B, copies, W, N]
        y = np.stack(ys, 1).astype(np.float32)
        return {"x": x[rows], "y": y[rows]}

    return train_loop.Task(init_state, train_step, batch_fn, bs)


class EarlyStopClock:
    """A `clock` for `train_loop.train(..., deadline=..., clock=...)` that stops the loop
    once no copy is active: it reads +inf (stop) once `on_log` has seen a metrics row of
    `workdir/metrics.jsonl` with `active` == 0, and before that `base()` (a wall-clock
    budget: deadline = base() + budget) or, without `base`, −inf (never late; deadline
    0.0). A workdir whose last row already has active == 0 (a finished run, rerun) stops
    at once."""

    def __init__(self, workdir: str, base=None):
        self.path = os.path.join(workdir, wd.METRICS)
        self.base = base
        self.done = False
        self.on_log(None)

    def on_log(self, step) -> None:
        del step
        if not os.path.exists(self.path):
            return
        last = None
        with open(self.path) as f:
            for line in f:
                if '"active"' in line:
                    last = line
        if last is not None and json.loads(last).get("active", 1.0) == 0:
            self.done = True

    def __call__(self) -> float:
        if self.done:
            return math.inf
        return self.base() if self.base is not None else -math.inf
