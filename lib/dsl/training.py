"""Training pieces shared by the DSL experiment and its 2-D toy: models, replica plans, Task.

    model = Model("dsl", config, dim, classes)       # or "mlp": matched parameter count
    plan = make_plan(y_train, fractions, num_seeds, min_per_class, seed)
    task = make_task(model, ds, plan, lr, weight_decay, batch, seed)   # lib.common.train_loop
    logits = predict(model, params, x, chunk)        # (R, N, C) for R-stacked params
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.dsl import data as data_lib, field_lines as fl
from lib.dsl.model import DSL, DSLConfig, count, mlp_baseline
from lib.common import optim, train_loop
from lib.toolbox import replicas

MODELS = ("dsl", "mlp")
# a run's replica seed is train.seed + RUN_SEED_STRIDE * seed: runs of different seeds draw
# from separate streams
RUN_SEED_STRIDE = 7919


def dsl_config(m) -> DSLConfig:
    """DSLConfig from the config's `model` block."""
    line = fl.LineConfig(domain=m.domain, radius=m.radius, t_max=m.t_max,
                         num_steps=m.ode_steps, solver=m.solver, normalize=m.normalize)
    return DSLConfig(num_modes=m.num_modes, num_nodes=m.num_nodes,
                     field_widths=tuple(m.field_widths), coef_widths=tuple(m.coef_widths),
                     amp_widths=tuple(m.amp_widths), activation=m.activation,
                     amplitude=m.amplitude, mass=m.mass, grad=m.grad, p_min=m.p_min,
                     w_min=m.w_min, line=line)


class Model:
    """init(key) -> params and apply(params, x (B, n)) -> logits (B, C) of one model kind."""

    def __init__(self, kind: str, config, dim: int, out: int):
        self.kind = kind
        if kind == "dsl":
            self.dsl = DSL(dsl_config(config.model), dim, out)
            self.init, self.apply = self.dsl.init, self.dsl.apply
            self.num_params = count(jax.eval_shape(self.dsl.init, jax.random.key(0)))
        elif kind == "mlp":
            budget = Model("dsl", config, dim, out).num_params
            mlp, self.num_params = mlp_baseline(dim, out, config.mlp.depth, budget,
                                                config.mlp.activation)
            self.width = mlp.widths[0]
            self.init = lambda key: mlp.init(key, jnp.zeros((1, dim)))
            self.apply = mlp.apply
        else:
            raise ValueError(f"unknown model {kind!r}; expected one of {MODELS}")


# ----------------------------------------------------------------------------- replicas


@dataclasses.dataclass(frozen=True)
class Plan:
    """Replica r trains on rows index[r, :sizes[r]] of the training set; it belongs to
    fraction fractions[group[r]] and seed seeds[r]."""
    fractions: tuple
    group: np.ndarray
    seeds: np.ndarray
    index: np.ndarray
    sizes: np.ndarray

    @property
    def num(self) -> int:
        return int(self.group.size)


def make_plan(y_train: np.ndarray, fractions, num_seeds: int, min_per_class: int,
              seed: int) -> Plan:
    """One replica per (fraction, seed) with a stratified subsample (lib.dsl.data.subsample)."""
    rows, group, seeds = [], [], []
    for g, frac in enumerate(fractions):
        for s in range(num_seeds):
            rows.append(data_lib.subsample(y_train, frac, seed * 1000 + s, min_per_class))
            group.append(g)
            seeds.append(s)
    sizes = np.array([r.size for r in rows])
    index = np.zeros((len(rows), sizes.max()), np.int64)
    for i, r in enumerate(rows):
        index[i, :r.size] = r
    return Plan(tuple(fractions), np.array(group), np.array(seeds), index, sizes)


def frac_label(f: float) -> str:
    return f"f{100 * f:g}"


def make_task(model: Model, ds: data_lib.Dataset, plan: Plan, lr: float, weight_decay: float,
              batch: int, seed: int, clip: float = 0.0, val_every: int = 0,
              num_steps: int = 0) -> train_loop.Task:
    """A `train_loop.Task` training every replica of `plan` at once.

    State: {"params", "opt_state"} stacked over replicas (leading axis R), "step".
    Batch: x (B, R, n), y (B, R), w (B, R): replica r's column holds B rows of its own
    subsample (without replacement; when the subsample has fewer than B rows, all of them and
    zero-weight padding). Loss per replica: weighted softmax cross-entropy; AdamW, after
    clipping each replica's gradient to global norm `clip` when clip > 0 (exit times have
    1/(∇g·ã) singularities where a line grazes ∂Ω; one such step can undo a trained model).
    Metrics: mean loss and batch accuracy per training fraction (loss_f5, acc_f5, ...).

    Selection (with ds.x_val and val_every > 0; num_steps = the run's last step): after
    every val_every-th update and after the last, each replica's validation loss (mean
    cross-entropy on all of ds.x_val) is computed and a replica whose loss is below its best
    so far gets its params copied into "best_params" (R-stacked), with "best_val" (R,) and
    "best_step" (R,): per-replica best-on-validation selection (early stopping without
    halting: the trajectory is unchanged). It lives in the jitted step and the state, so a
    resumed run selects what an uninterrupted one does. `selected_params` reads it.
    """
    opt = optim.make_optimizer(dict(name="adamw", lr=lr, weight_decay=weight_decay, clip=clip),
                               num_steps)
    r = plan.num
    onehot_groups = jnp.asarray(plan.group[None, :] == np.arange(len(plan.fractions))[:, None],
                                jnp.float32)                      # (G, R)

    select = ds.x_val is not None and len(ds.x_val) > 0 and val_every > 0
    if select and num_steps < 1:
        raise ValueError("validation selection needs the run's num_steps >= 1")

    def init_state(key):
        state = replicas.init_state(model.init, opt, jax.random.split(key, r))
        if select:
            state.update(best_params=jax.tree.map(jnp.copy, state["params"]),
                         best_val=jnp.full((r,), jnp.inf, jnp.float32),
                         best_step=jnp.zeros((r,), jnp.int32))
        return state

    def val_loss_one(params):
        logits = model.apply(params, jnp.asarray(ds.x_val))
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(
            logits, jnp.asarray(ds.y_val)))

    def update_best(state, params):
        return replicas.update_best(state, params, jax.vmap(val_loss_one),
                                    every=val_every, last=num_steps)

    def loss_one(params, x, y, w):
        logits = model.apply(params, x)
        ce = optax.softmax_cross_entropy_with_integer_labels(logits, y)
        acc = (jnp.argmax(logits, -1) == y).astype(jnp.float32)
        tot = jnp.maximum(jnp.sum(w), 1.0)
        return jnp.sum(w * ce) / tot, jnp.sum(w * acc) / tot

    update = replicas.update(loss_one, opt, batch_axes=(1, 1, 1), has_aux=True)

    def train_step(state, batch_, key):
        del key
        new, loss, acc = update(state, batch_["x"], batch_["y"], batch_["w"])
        if select:
            new.update(update_best(state, new["params"]))
        per_group = onehot_groups / onehot_groups.sum(1, keepdims=True)
        metrics = {"loss": jnp.mean(loss)}
        for g, f in enumerate(plan.fractions):
            metrics[f"loss_{frac_label(f)}"] = per_group[g] @ loss
            metrics[f"acc_{frac_label(f)}"] = per_group[g] @ acc
        return new, metrics

    def batch_fn(step, rows):
        idx = np.zeros((batch, r), np.int64)
        w = np.zeros((batch, r), np.float32)
        for i in range(r):
            n_i = plan.sizes[i]
            rng = np.random.default_rng([seed, step, i])
            take = rng.choice(n_i, min(batch, n_i), replace=False)
            idx[:take.size, i] = plan.index[i, take]
            w[:take.size, i] = 1.0
            idx[take.size:, i] = plan.index[i, 0]
        return {"x": ds.x_train[idx][rows], "y": ds.y_train[idx][rows], "w": w[rows]}

    return train_loop.Task(init_state, train_step, batch_fn, batch)


def selected_params(state: dict):
    """Each replica's best-on-validation params when the run selected, else the last."""
    return state["best_params"] if "best_params" in state else state["params"]


def effective_batch(batch_size: int, data_shards: int) -> int:
    """batch_size rounded down to a multiple of the data-axis size (at least one per shard)."""
    b = batch_size - batch_size % data_shards
    if b < data_shards:
        raise ValueError(f"optim.batch_size = {batch_size} is smaller than the {data_shards} "
                         "data shards")
    return b


def predict(model: Model, params, x: np.ndarray, chunk: int) -> tuple[np.ndarray, dict]:
    """Logits (R, N, C) of every replica at rows x (N, n), in chunks of rows, and for DSL the
    field-line statistics over replicas and rows: mean length, share exiting Ω at both ends
    (one compiled function for both)."""
    if model.kind == "dsl":
        def one(params, xc):
            ev = model.dsl.evaluate(params, xc)
            return model.dsl.head.apply(params["head"], ev.basis), ev.length, ev.exited
    else:
        def one(params, xc):
            return model.apply(params, xc), jnp.zeros(xc.shape[0]), jnp.ones(xc.shape[0], bool)
    fn = jax.jit(jax.vmap(one, in_axes=(0, None)))
    parts = [jax.device_get(fn(params, jnp.asarray(x[i:i + chunk])))
             for i in range(0, len(x), chunk)]
    logits, length, exited = (np.concatenate([np.asarray(p[k]) for p in parts], axis=1)
                              for k in range(3))
    stats = {"mean_length": float(length.mean()), "exited_share": float(exited.mean())}
    return logits, stats
