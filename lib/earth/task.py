"""The EARTH training task: the horizons × seeds copies of one (dataset, model) trained side
by side. Params and optimiser states carry a leading copy axis and the step is vmapped over
it (each copy sees its own batch of its own horizon; Adam, clipping and weight decay act
per copy, so this equals separate runs but compiles once). Batch: [B, copies, W, N], split
on the mesh's "data" axis on B."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import replicas, train_loop
from lib.earth import data as data_lib


def copies(config) -> list[tuple[int, int]]:
    """(horizon, seed) of each independently trained copy."""
    return [(h, s) for h in config.data.horizons for s in range(config.num_seeds)]


def make_task(forecaster, prep: data_lib.Prepared, config) -> train_loop.Task:
    """A Task whose state holds stacked params/opt states of all copies."""
    cps = copies(config)
    w, bs = config.data.window, config.optim.batch_size
    train_t = {h: prep.targets("train", w, h) for h in config.data.horizons}
    x_example = jnp.zeros((w, prep.series.shape[1]), jnp.float32)
    opt = optax.chain(optax.clip_by_global_norm(config.optim.clip_norm),
                      optax.adamw(config.optim.lr, weight_decay=config.optim.weight_decay))

    def init_state(key):
        keys = jnp.stack([jax.random.fold_in(key, 1000 * h + s) for h, s in cps])
        return replicas.init_state(lambda k: forecaster.init(k, x_example), opt, keys)

    def loss_one(params, x, y):
        pred = jax.vmap(forecaster.apply, (None, 0))(params, x)
        return jnp.mean(jnp.abs(pred - y))                       # L1 on scaled targets

    update = replicas.update(loss_one, opt, batch_axes=(0, 0))

    def train_step(state, batch, key):
        del key
        x = jnp.swapaxes(batch["x"], 0, 1)                       # [copies, B, W, N]
        y = jnp.swapaxes(batch["y"], 0, 1)
        new, loss = update(state, x, y)
        out = {"loss": jnp.mean(loss)}
        for h in config.data.horizons:
            idx = [k for k, (hh, _) in enumerate(cps) if hh == h]
            out[f"loss_h{h}"] = jnp.mean(loss[jnp.asarray(idx)])
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
