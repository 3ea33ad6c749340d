"""A small complete experiment used by the harness tests (not a paper).

Linear-plus-MLP regression on a synthetic stream: every step's batch is a pure function
of (seed, step), as `lib.common.train_loop.Task` requires. Run it like any experiment:

    python tests/common/regression_app.py --config=tests/common/regression_app.py:tiny \
        --workdir=/tmp/run
"""
from __future__ import annotations

import os

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax

from lib.common import cli, config as config_lib, mesh as mesh_lib, train_loop
from lib.common import workdir as wd
from lib.common.config import Float, Int

SCHEMA = {
    **config_lib.TRAIN_SCHEMA,
    **config_lib.MESH_SCHEMA,
    "data.dim": Int(lo=1, hi=4096),
    "data.batch_size": Int(lo=1),
    "model.hidden": Int(lo=1),
    "optim.lr": Float(lo=0.0, lo_open=True, hi=10.0),
    "debug.nan_at_step": Int(lo=-1),
}


VARIANTS = ("tiny", "long")


def validate(config) -> None:
    config_lib.validate(config, SCHEMA)


def get_config(arg: str | None = None) -> ml_collections.ConfigDict:
    def tiny():
        c = ml_collections.ConfigDict()
        c.train = config_lib.train_block(60, log_every=5, checkpoint_every=10, keep_checkpoints=3)
        c.mesh = config_lib.mesh_block()
        c.data = ml_collections.ConfigDict(dict(dim=8, batch_size=16))
        c.model = ml_collections.ConfigDict(dict(hidden=32))
        c.optim = ml_collections.ConfigDict(dict(lr=1e-2))
        c.debug = ml_collections.ConfigDict(dict(nan_at_step=-1))
        return c

    def long():
        c = tiny()
        c.train.num_steps = 400
        c.train.log_every = 10
        c.train.checkpoint_every = 20
        return c

    return config_lib.variant_config({"tiny": tiny, "long": long}, arg, "tiny")


class MLP(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        h = nn.gelu(nn.Dense(self.hidden)(x))
        return nn.Dense(1)(h)[..., 0] + nn.Dense(1, use_bias=False)(x)[..., 0]


def make_task(config) -> train_loop.Task:
    model = MLP(config.model.hidden)
    opt = optax.adam(config.optim.lr)
    d, bs = config.data.dim, config.data.batch_size
    w_true = np.random.default_rng(1234).normal(size=d).astype(np.float32)

    def init_state(key):
        params = model.init(key, jnp.zeros((1, d)))
        return {"params": params, "opt_state": opt.init(params), "step": jnp.int32(0)}

    def train_step(state, batch, key):
        noise = 0.01 * jax.random.normal(key, batch["y"].shape)

        def loss_fn(p):
            pred = model.apply(p, batch["x"])
            loss = jnp.mean((pred - batch["y"] - noise) ** 2)
            inject = state["step"] + 1 == config.debug.nan_at_step
            return jnp.where(inject, jnp.nan, loss)

        loss, grads = jax.value_and_grad(loss_fn)(state["params"])
        updates, opt_state = opt.update(grads, state["opt_state"], state["params"])
        params = optax.apply_updates(state["params"], updates)
        return {"params": params, "opt_state": opt_state, "step": state["step"] + 1}, {"loss": loss}

    def batch_fn(step, rows):
        rng = np.random.default_rng([config.train.seed, step])
        x = rng.normal(size=(bs, d)).astype(np.float32)
        y = (x @ w_true + np.sin(x[:, 0])).astype(np.float32)
        return {"x": x[rows], "y": y[rows]}

    return train_loop.Task(init_state, train_step, batch_fn, bs)


def train_and_evaluate(config, workdir: str):
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    # Constant learning rate: num_steps sets nothing but the step count, so a rerun may
    # extend the run.
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               steps_extendable=True)
    result = train_loop.train(make_task(config), train_loop.LoopConfig.from_config(config.train),
                              workdir=workdir, mesh=mesh)
    if mesh_lib.is_primary():   # a SIGTERM raised guards.Preempted in train: nothing written
        flat = jax.tree.leaves(jax.device_get(result.state["params"]))
        np.savez(os.path.join(workdir, "final_params.npz"), *flat)
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS),
                             {"step": result.step, "resumed_from": result.resumed_from})
    return result


if __name__ == "__main__":
    cli.run(train_and_evaluate)
