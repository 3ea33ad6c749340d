"""The neural TPP's `train_loop.Task` for CADES: Adam on the negative log-likelihood per unit
of observed time, on minibatches of in-distribution training sequences.

Batch (global, rows = sequences drawn without replacement, seeded by (seed, step)):
    {"times": (B, L), "marks": (B, L), "mask": (B, L), "t_max": (B,)}
"""
from __future__ import annotations

import jax
import numpy as np

from lib.common import optim, train_loop
from lib.tpp import neural
from lib.tpp.events import Events


def nll_per_time(params, ev: Events, norm, num_marks: int) -> jax.Array:
    """Negative log-likelihood of the sequences `ev` per unit of their observed time ()."""
    return -neural.log_likelihood(params, ev, norm, num_marks).sum() / ev.t_max.sum()


def make_task(config, train_ev: Events, num_marks: int, norm) -> train_loop.Task:
    """The neural TPP (`config.neural`) trained on `train_ev` for `config.train.num_steps`."""
    n = config.neural
    opt = optim.make_optimizer(dict(name="adam", lr=n.lr, clip=n.clip), config.train.num_steps)
    data = {k: np.asarray(v) for k, v in train_ev._asdict().items()}
    N, seed = data["times"].shape[0], config.train.seed

    def init_state(key):
        return optim.init_state(
            neural.init_params(key, num_marks, n.hidden, n.mark_dim, n.num_components), opt)

    def loss_fn(params, batch):
        ev = Events(batch["times"], batch["marks"], batch["mask"], batch["t_max"])
        return nll_per_time(params, ev, norm, num_marks)

    def train_step(state, batch, key):
        del key
        loss, grads = jax.value_and_grad(loss_fn)(state["params"], batch)
        return train_loop.apply_gradients(state, grads, opt), {"nll_per_time": loss}

    def batch_fn(step, rows):
        idx = np.random.default_rng([seed, step]).choice(N, n.batch_size, replace=False)
        return {k: v[idx][rows] for k, v in data.items()}

    return train_loop.Task(init_state, train_step, batch_fn, n.batch_size)
