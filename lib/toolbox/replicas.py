"""R independent replicas of one model trained in one vmapped step.

The train state is `lib.common.optim.init_state`'s, every leaf of "params" and "opt_state"
stacked over replicas (leading axis R); "step" is shared. Replica r starts from its own key
and its own optimiser state, and its update sees only its own loss, so a replica's
trajectory is the one it would follow trained alone.

    state = replicas.init_state(lambda k: model.init(k, x), opt, jax.random.split(key, R))
    step = replicas.update(loss_one, opt, batch_axes=(1, 1))   # loss_one(params, x, y)
    state, loss = step(state, batch["x"], batch["y"])           # loss (R,)
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import optax


def init_state(init_params: Callable[[jax.Array], Any], optimizer: optax.GradientTransformation,
               keys: jax.Array) -> dict:
    """{"params": vmap(init_params)(keys), "opt_state": vmapped optimizer.init, "step": 0};
    keys (R,) — one per replica."""
    params = jax.vmap(init_params)(keys)
    return {"params": params, "opt_state": jax.vmap(optimizer.init)(params),
            "step": jnp.int32(0)}


def update(loss_fn: Callable, optimizer: optax.GradientTransformation, *,
           batch_axes: Sequence[int | None] = (), has_aux: bool = False) -> Callable:
    """step(state, *batch) -> (state, loss (R,)) or (state, loss, aux) with `has_aux`: one
    optimiser update of every replica on loss_fn(params_r, *batch_r), vmapped.

    batch_axes: for each batch argument, its replica axis (None: shared by all replicas).
    Entries of the state other than params/opt_state/step are carried over unchanged.
    """
    grad = jax.value_and_grad(loss_fn, has_aux=has_aux)

    def one(params, opt_state, *batch):
        value, grads = grad(params, *batch)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    vmapped = jax.vmap(one, in_axes=(0, 0, *batch_axes))

    def step(state, *batch):
        if len(batch) != len(batch_axes):
            raise ValueError(f"{len(batch)} batch arguments, {len(batch_axes)} batch_axes")
        params, opt_state, value = vmapped(state["params"], state["opt_state"], *batch)
        new = {**state, "params": params, "opt_state": opt_state, "step": state["step"] + 1}
        return (new, *value) if has_aux else (new, value)

    return step


def update_best(state: dict, params: Any, val_losses: Callable[[Any], jax.Array], *,
                every: int, last: int) -> dict:
    """Per-replica best-validation selection, inside the jitted step.

    `state` holds `step` (before this update), `best_params` (stacked like `params`),
    `best_val` (R,) and `best_step` (R,). Every `every` steps and at step `last`,
    `val_losses(params)` (R,) is computed and each replica whose loss is below its best
    (NaN never wins) keeps `params` and the step; otherwise nothing is evaluated.
    Returns the new {best_params, best_val, best_step}.
    """
    def check(_):
        val = val_losses(params)
        better = val < state["best_val"]

        def pick(new, old):
            return jnp.where(better.reshape((-1,) + (1,) * (new.ndim - 1)), new, old)

        return (jax.tree.map(pick, params, state["best_params"]),
                jnp.where(better, val, state["best_val"]),
                jnp.where(better, state["step"] + 1, state["best_step"]))

    def keep(_):
        return state["best_params"], state["best_val"], state["best_step"]

    step = state["step"] + 1
    best = jax.lax.cond((step % every == 0) | (step == last), check, keep, None)
    return dict(zip(("best_params", "best_val", "best_step"), best))
