"""Plain SGD, θ_{t+1} = θ_t − α_t g_t, as pure `init`/`update` (the comparator of the theory).

With a constant α it equals `optax.sgd(α)` bit for bit (tested).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from lib.adam_abc import schedules
from lib.adam_abc.schedules import Schedule


class SGDState(NamedTuple):
    count: jax.Array  # int32 (), updates done


def sgd(step_size: float | Schedule) -> optax.GradientTransformation:
    """SGD with α > 0 or a schedule t -> α_t (t = 1, 2, ...); ValueError for α <= 0."""
    if not callable(step_size):
        schedules.check_positive("step_size", step_size)

    def init(params) -> SGDState:
        del params
        return SGDState(count=jnp.zeros([], jnp.int32))

    def update(grads, state: SGDState, params=None):
        del params
        count = state.count + 1
        alpha = schedules.value_at(step_size, count)
        return jax.tree.map(lambda g: (-alpha) * g, grads), SGDState(count=count)

    return optax.GradientTransformation(init, update)
