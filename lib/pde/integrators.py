"""Explicit Runge–Kutta time stepping through diffrax.

Classical RK4 is not one of diffrax's built-in solvers (its `Tsit5`, `Dopri5` ... are
embedded pairs), so it is written here as a Butcher tableau. The solvers in `lib/pde`
and the learned Physics Block of MultiPDENet both step with `rk4_step`, so a learned model
and its reference solver share one integrator.
"""
from __future__ import annotations

from typing import Any, Callable

import diffrax
import jax.numpy as jnp
import numpy as np
from jaxtyping import PyTree

_RK4_TABLEAU = diffrax.ButcherTableau(
    c=np.array([0.5, 0.5, 1.0]),
    b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
    b_error=np.zeros(4),
    a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
)


class RK4(diffrax.AbstractERK):
    """Classical 4th-order Runge–Kutta (fixed step; no error estimate)."""

    tableau = _RK4_TABLEAU
    interpolation_cls = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

    def order(self, terms):  # noqa: D102
        return 4


# Forward Euler (the ablation partner of RK4) is diffrax's own `Euler`.
SOLVERS: dict[str, type[diffrax.AbstractSolver]] = {"rk4": RK4, "euler": diffrax.Euler}

VectorField = Callable[[Any, PyTree, Any], PyTree]


def make_stepper(vector_field: VectorField, method: str = "rk4") -> Callable:
    """Return `step(y, t, dt, args) -> y_next`, one explicit step of `dy/dt = f(t, y, args)`.

    Args:
      vector_field: `f(t, y, args) -> dy/dt` with the same pytree structure as `y`.
      method: "rk4" (classical RK4) or "euler".

    The step goes through `diffrax.AbstractSolver.step`, so it composes with `lax.scan`,
    `vmap` and `jax.grad`; network parameters travel through `args`.
    """
    if method not in SOLVERS:
        raise ValueError(f"unknown time integrator {method!r}; allowed: {sorted(SOLVERS)}")
    solver = SOLVERS[method]()
    term = diffrax.ODETerm(vector_field)

    def step(y: PyTree, t: Any, dt: Any, args: Any = None) -> PyTree:
        t0 = jnp.asarray(t)
        t1 = t0 + dt
        state = solver.init(term, t0, t1, y, args)
        y1, _, _, _, _ = solver.step(term, t0, t1, y, args, state, made_jump=False)
        return y1

    return step
