"""`lib.common.train_loop.Task` for a GMFlow / flow-matching model (pure pieces).

State: {"params", "opt_state", "ema", "step"}; AdamW with linear warm-up and cosine decay,
global-norm clipping, an EMA of the parameters (decay 0 keeps it equal to the parameters).
Class-conditional models drop labels to the null class with probability p_uncond (10% in
the paper) so one network gives the conditional and unconditional GMs.
"""
from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.gmflow import losses

Array = jax.Array


def optimizer_block(lr: float, warmup: int, clip: float = 10.0) -> dict:
    """`optim.make_optimizer`'s block: AdamW (β₂ = 0.99, no decay), clipping, warm-up then
    cosine decay to lr / 10."""
    return dict(name="adamw", lr=lr, schedule="cosine", warmup=warmup, end_lr_factor=0.1,
                clip=clip, b2=0.99)


def make_task(model, *, example_x: np.ndarray, batch_fn: Callable[[int], dict], batch_size: int,
              loss_kind: str, trans_ratio: float, lr: float, num_steps: int, warmup: int,
              ema_decay: float, num_classes: int = 0, p_uncond: float = 0.0,
              t_min: float = 1e-4) -> train_loop.Task:
    """A Task training `model` (a `networks.GMFlowMLP`) with the loss `loss_kind`.

    batch_fn(step) -> {"x": (B, G, C) float32[, "label": (B,) int32]}, deterministic in step.
    """
    opt = optim.make_optimizer(optimizer_block(lr, warmup), num_steps)
    loss = losses.loss_fn(loss_kind, trans_ratio, t_min)
    conditional = num_classes > 0
    ex_x = jnp.asarray(example_x[:1])
    ex_l = jnp.zeros((1,), jnp.int32) if conditional else None

    def init_state(key):
        params = model.init(key, ex_x, jnp.ones((1,)), ex_l)
        return {**optim.init_state(params, opt), "ema": params}

    def train_step(state, batch, key):
        k_drop, k_loss = jax.random.split(key)
        labels = None
        if conditional:
            drop = jax.random.uniform(k_drop, batch["label"].shape) < p_uncond
            labels = jnp.where(drop, num_classes, batch["label"])

        def objective(params):
            return loss(lambda x, t: model.apply(params, x, t, labels), batch["x"], k_loss)

        value, grads = jax.value_and_grad(objective)(state["params"])
        new = train_loop.apply_gradients(state, grads, opt)
        ema = jax.tree.map(lambda e, p: ema_decay * e + (1 - ema_decay) * p, state["ema"], new["params"])
        return ({**new, "ema": ema},
                {"loss": value, "grad_norm": optax.tree.norm(grads)})

    def rows_fn(step, rows):
        return {k: v[rows] for k, v in batch_fn(step).items()}

    return train_loop.Task(init_state, train_step, rows_fn, batch_size)
