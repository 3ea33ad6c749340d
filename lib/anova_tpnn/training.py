"""The vmapped-replica training task of ANOVA-TPNN and its baselines (`make_task`), with
best-on-validation selection inside the train state."""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.anova_tpnn import baselines, data as data_lib
from lib.anova_tpnn.model import output_from_components, penalty
from lib.common import train_loop
from lib.toolbox import replicas as replicas_lib


def effective_batch(batch_size: int, n_train: int, data_shards: int) -> int:
    """min(batch_size, n_train), rounded down to a multiple of the data-axis size."""
    b = min(batch_size, n_train)
    b -= b % data_shards
    if b < data_shards:
        raise ValueError(f"training set of {n_train} rows is too small for {data_shards} "
                         "data shards")
    return b


def budget(config, n_train: int, batch: int) -> tuple[int, int]:
    """(num_steps, val_every) of one data set. With `epochs` > 0 the budget is in passes
    over the training rows, ceil(epochs · n_train / batch) steps, so a data set's size does
    not decide how far training gets; `eval.val_every_epochs` > 0 likewise sets the
    validation interval, max(1, round(val_every_epochs · n_train / batch)) steps.
    Otherwise `train.num_steps` and `eval.val_every` (the older configs' step budget)."""
    per_epoch = n_train / batch
    steps = (int(np.ceil(config.epochs * per_epoch)) if config.get("epochs", 0) > 0
             else config.train.num_steps)
    every_epochs = config.eval.get("val_every_epochs", 0)
    every = (max(1, int(round(every_epochs * per_epoch))) if every_epochs > 0
             else config.eval.val_every)
    return steps, every


def pointwise_loss(out: jax.Array, y: jax.Array, classification: bool) -> jax.Array:
    """Per-row loss: BCE-with-logits (classification) or squared error, same shape as y."""
    return optax.sigmoid_binary_cross_entropy(out, y) if classification else (out - y) ** 2


def make_task(model, name: str, ds: data_lib.Dataset, weights: np.ndarray, config,
              batch: int, seed: int) -> train_loop.Task:
    """A `train_loop.Task` training R = weights.shape[1] replicas of `model` at once.

    State: {"params", "opt_state"} stacked over replicas (leading axis R), "step"; with a
    validation split (ds.x_val non-empty) also "best_params" (R-stacked like params),
    "best_val" (R,) and "best_step" (R,), the best-on-validation selection.
    Batch, `replicas.batch_order` = "shared" (the older configs): x (B, p), y (B,), w (B, R)
    — every replica sees the same rows, weighted by its own resample weights (all ones in
    "seed" mode). "per_replica": x (B, R, p), y (B, R), w (B, R) — replica r draws its own
    B rows (without replacement) from the rows of its own sample (weights[:, r] > 0) with
    the generator (seed, step, r), as R independent runs would; fewer rows than B are all
    taken, padded with zero weight. Its order depends on (seed, step, r) only.
    Budget: `budget` (steps, validation interval) from the data set's size.
    Loss per replica: weighted MSE (regression) or BCE-with-logits (classification),
    plus optim.output_penalty · mean Σ_S f_S² for component models.

    Selection: after every `eval.val_every`-th update and after the last one, each
    replica's validation loss (mean MSE / BCE on ds.x_val) is computed with the model as
    it will be evaluated — ANOVA-TPNN's constants on the replica's whole weighted
    training sample, not on a minibatch — and a replica whose loss is below its best so
    far gets its params copied into best_params. Everything is inside the jitted step, so
    it is checkpointed with the state and a resumed run selects exactly what an
    uninterrupted run does. The test split is never used.
    """
    o = config.optim
    opt = optax.adam(o[name].lr, b1=o.b1, b2=o.b2)
    x_tr, y_tr = ds.x_train, ds.y_train
    x_init = np.sort(x_tr, axis=0)      # data-aware init reads sorted columns
    has_comps = baselines.HAS_COMPONENTS[name]
    classification = ds.task == "classification"
    replicas = weights.shape[1]
    select = len(ds.x_val) > 0
    last, every = budget(config, len(x_tr), batch)
    per_replica = config.replicas.get("batch_order", "shared") == "per_replica"
    own_rows = [np.flatnonzero(weights[:, r] > 0) for r in range(replicas)]

    def init_state(key):
        state = replicas_lib.init_state(lambda k: baselines.init_params(model, k, x_init), opt,
                                        jax.random.split(key, replicas))
        if select:
            state.update(best_params=jax.tree.map(jnp.copy, state["params"]),
                         best_val=jnp.full((replicas,), jnp.inf, jnp.float32),
                         best_step=jnp.zeros((replicas,), jnp.int32))
        return state

    def loss_one(params, x, y, w):
        consts = model.apply(params, x, w, method=model.constants)
        if has_comps:
            comps = model.apply(params, x, consts, method=model.components)
            out = output_from_components(comps)
            reg = o.output_penalty * penalty(comps) if o.output_penalty > 0 else 0.0
        else:
            out, reg = model.apply(params, x, consts), 0.0
        per_row = pointwise_loss(out, y, classification)
        return jnp.sum(w * per_row) / jnp.maximum(jnp.sum(w), 1.0) + reg

    def val_loss_one(params, w):
        consts = model.apply(params, jnp.asarray(x_tr), w, method=model.constants)
        out = model.apply(params, jnp.asarray(ds.x_val), consts)
        return jnp.mean(pointwise_loss(out, jnp.asarray(ds.y_val), classification))

    def update_best(state, params):
        val_losses = lambda p: jax.vmap(val_loss_one, in_axes=(0, 1))(p, jnp.asarray(weights))
        return replicas_lib.update_best(state, params, val_losses, every=every, last=last)

    update = replicas_lib.update(loss_one, opt,
                                 batch_axes=(1, 1, 1) if per_replica else (None, None, 1))

    def train_step(state, batch_, key):
        del key
        new, loss = update(state, batch_["x"], batch_["y"], batch_["w"])
        if select:
            new.update(update_best(state, new["params"]))
        return new, {"loss": jnp.mean(loss), "loss_max": jnp.max(loss)}

    def batch_fn(step, rows):
        if per_replica:
            return replica_batches(x_tr, y_tr, weights, own_rows, batch, seed, step, rows)
        idx = np.random.default_rng([seed, step]).choice(len(x_tr), batch, replace=False)
        return {"x": x_tr[idx][rows], "y": y_tr[idx][rows], "w": weights[idx][rows]}

    return train_loop.Task(init_state, train_step, batch_fn, batch)


def replica_batches(x, y, weights, own_rows, batch: int, seed: int, step: int, rows=slice(None)
                    ) -> dict:
    """The "per_replica" batch of `make_task`: x (B, R, p), y (B, R), w (B, R); replica r's
    B rows drawn from own_rows[r] by np.random.default_rng([seed, step, r])."""
    r_num = len(own_rows)
    idx = np.zeros((batch, r_num), np.int64)
    w = np.zeros((batch, r_num), np.float32)
    for r, own in enumerate(own_rows):
        take = own[np.random.default_rng([seed, step, r]).choice(
            len(own), min(batch, len(own)), replace=False)]
        idx[:len(take), r], idx[len(take):, r] = take, own[0]
        w[:len(take), r] = weights[take, r]
    return {"x": x[idx][rows], "y": y[idx][rows], "w": w[rows]}


def selected_params(state: dict) -> Any:
    """The params every evaluation uses: each replica's best-on-validation params when the
    run had a validation split, else the last step's."""
    return state["best_params"] if "best_params" in state else state["params"]
