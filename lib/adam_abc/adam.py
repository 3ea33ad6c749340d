"""Adam in the parameterisation of the convergence analysis, as pure `init`/`update`.

The recursion (Jin, Li, Yu & Wang, ICML 2025, as the research notes give it —
`stats_papers.md` §D, second-hand: the paper's Algorithm/equation numbers were not
available), for a stochastic gradient g_t at θ_t and t = 1, 2, ...:

    m_t     = β1 m_{t−1} + (1 − β1) g_t                      m_0 = 0
    v_t     = β2,t v_{t−1} + (1 − β2,t) g_t ⊙ g_t             v_0 = v_init · 1  (>= 0)
    θ_{t+1} = θ_t − α_t m_t / (√(v_t + ε_root) + ε)            (elementwise)

with no bias correction, a fixed β1 ∈ [0, 1), a step size α_t > 0 and β2,t ∈ [0, 1) that
may follow schedules (`lib.adam_abc.schedules`). The stabilising constant (μ in the
notes) sits outside the square root (`eps`) or inside (`eps_root`); both are offered
because the paper's placement is not known here.

`bias_correction=True` divides m_t by 1 − β1^t and v_t by 1 − β2^t (Kingma & Ba); with
it, constant hyperparameters, v_init = 0 and α_t = optax's lr(t − 1), `adam` equals
`optax.adam` bit for bit (tested). Every array in the state has the shape of `params`.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from lib.adam_abc import schedules
from lib.adam_abc.schedules import Schedule


class AdamState(NamedTuple):
    """count: int32 (), updates done (t − 1 before computing update t); m, v: like params."""

    count: jax.Array
    m: Any
    v: Any


def _check(step_size, b1, b2, eps, eps_root, v_init, bias_correction) -> None:
    if not callable(step_size):
        schedules.check_positive("step_size", step_size)
    schedules.check_unit_interval("b1", b1)
    if callable(b2):
        if bias_correction:
            raise ValueError("bias_correction needs a constant b2 (1 − b2^t is the correction "
                             "for a constant b2 only); got a b2 schedule")
    else:
        schedules.check_unit_interval("b2", b2)
    for name, value in (("eps", eps), ("eps_root", eps_root), ("v_init", v_init)):
        schedules.check_nonnegative(name, value)
    values = [schedules.concrete(x) for x in (eps, eps_root, v_init)]
    if None not in values and max(values) == 0.0:
        raise ValueError("eps, eps_root and v_init are all 0: the update m/(√v + ε) is 0/0 "
                         "for a zero gradient; make eps > 0 (the paper's ε, μ > 0)")


def adam(step_size: float | Schedule, b1: float = 0.9, b2: float | Schedule = 0.999,
         eps: float = 1e-8, *, eps_root: float = 0.0, v_init: float = 0.0,
         bias_correction: bool = False) -> optax.GradientTransformation:
    """Adam as an `optax.GradientTransformation` (pure `init(params)`, `update(g, state)`).

    Args:
      step_size: α > 0, or a schedule t -> α_t (t = 1, 2, ...).
      b1: β1 ∈ [0, 1) (fixed, as the theory allows).
      b2: β2 ∈ [0, 1), or a schedule t -> β2,t.
      eps: ε >= 0 added to √v (the notes' μ). eps_root: added to v under the root.
      v_init: v_0 = v_init · 1 >= 0.
      bias_correction: Kingma & Ba's 1 − β^t corrections (off in the paper's form).

    Raises:
      ValueError naming the parameter for β outside [0, 1), a non-positive step size,
      negative ε / v_init, or ε = ε_root = v_init = 0. Traced values are not checked.

    `update` returns updates −α_t m̂_t / (√(v̂_t + ε_root) + ε) (add them to the params).
    """
    _check(step_size, b1, b2, eps, eps_root, v_init, bias_correction)

    def init(params) -> AdamState:
        return AdamState(
            count=jnp.zeros([], jnp.int32),
            m=jax.tree.map(jnp.zeros_like, params),
            v=jax.tree.map(lambda p: jnp.full_like(p, v_init), params))

    def update(grads, state: AdamState, params=None):
        del params
        count = state.count + 1                     # t, the index of this update
        alpha = schedules.value_at(step_size, count)
        beta2 = schedules.value_at(b2, count)
        m = jax.tree.map(lambda g, mm: (1 - b1) * g + b1 * mm, grads, state.m)
        v = jax.tree.map(lambda g, vv: (1 - beta2) * (g ** 2) + beta2 * vv, grads, state.v)
        if bias_correction:
            c1, c2 = 1 - b1 ** count, 1 - beta2 ** count
            m_hat = jax.tree.map(lambda x: x / c1.astype(x.dtype), m)
            v_hat = jax.tree.map(lambda x: x / c2.astype(x.dtype), v)
        else:
            m_hat, v_hat = m, v
        updates = jax.tree.map(
            lambda mm, vv: (-alpha) * (mm / (jnp.sqrt(vv + eps_root) + eps)), m_hat, v_hat)
        return updates, AdamState(count=count, m=m, v=v)

    return optax.GradientTransformation(init, update)
