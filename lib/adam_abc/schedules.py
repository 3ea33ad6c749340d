"""Step-size and β2 schedules, as pure functions of the iteration index t = 1, 2, ...

A schedule is a callable `t -> value` on an int32 scalar (traced inside `jax.jit`); the
optimisers in `adam.py` and `sgd.py` call it with the 1-based index of the update they
are computing, so `α_1` scales the first update (optax's schedules are 0-based: optax's
`lr(count)` is our `α_{count+1}`).

The two families the convergence theory of Jin, Li, Yu & Wang (ICML 2025) is read to
allow (research notes `stats_papers.md` §D; second-hand, the theorems were not
available):

* finite horizon T (non-asymptotic bound): constant α = α̂/√T and β2 = 1 − c/T over the
  T steps, fixed β1 (`horizon`);
* asymptotic (almost-sure / L1 last-iterate convergence): Robbins–Monro step sizes
  α_t = α0 / (t + t0)^p with 1/2 < p ≤ 1 (Σ α_t = ∞, Σ α_t² < ∞) and β2,t → 1, here
  1 − β2,t = c / (t + t0)^r (`polynomial`, `one_minus_polynomial`).

Constructors check concrete (Python / numpy) arguments and raise `ValueError` naming the
argument; traced arguments (hyperparameters swept inside a jitted function) are the
caller's to check.
"""
from __future__ import annotations

import math
from typing import Callable

import jax
import jax.numpy as jnp

Schedule = Callable[[jax.Array], jax.Array]


def concrete(x) -> float | None:
    """`float(x)` for a Python or concrete numpy/JAX scalar; None for a tracer."""
    if isinstance(x, jax.core.Tracer):
        return None
    return float(x)


def check_positive(name: str, value) -> None:
    """ValueError unless `value` > 0 (skipped for tracers)."""
    v = concrete(value)
    if v is not None and not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} = {v!r} must be a finite number > 0")


def check_unit_interval(name: str, value) -> None:
    """ValueError unless 0 <= `value` < 1 (skipped for tracers)."""
    v = concrete(value)
    if v is not None and not 0.0 <= v < 1.0:
        raise ValueError(f"{name} = {v!r} must lie in [0, 1)")


def check_nonnegative(name: str, value) -> None:
    v = concrete(value)
    if v is not None and not (v >= 0 and math.isfinite(v)):
        raise ValueError(f"{name} = {v!r} must be a finite number >= 0")


def polynomial(scale, power, offset=0.0, *, name: str = "step_size") -> Schedule:
    """t -> scale / (t + offset)^power, shape (). Robbins–Monro for 1/2 < power <= 1."""
    check_positive(f"{name} scale", scale)
    check_nonnegative(f"{name} power", power)
    check_nonnegative(f"{name} offset", offset)

    def schedule(t):
        return scale / (jnp.asarray(t, jnp.float32) + offset) ** power

    return schedule


def one_minus_polynomial(c, power, offset=0.0, *, name: str = "b2") -> Schedule:
    """t -> 1 − c / (t + offset)^power (a β2,t → 1 schedule), shape ().

    Requires c / (1 + offset)^power <= 1 so that β2,1 >= 0 (then β2,t ∈ [0, 1) for all t).
    """
    check_positive(f"{name} c", c)
    check_nonnegative(f"{name} power", power)
    check_nonnegative(f"{name} offset", offset)
    cc, pp, oo = concrete(c), concrete(power), concrete(offset)
    if None not in (cc, pp, oo) and cc / (1.0 + oo) ** pp > 1.0:
        raise ValueError(f"{name}: c / (1 + offset)^power = {cc / (1.0 + oo) ** pp:.4g} > 1 "
                         "makes β2 negative at t = 1; lower c or raise the offset")

    def schedule(t):
        return 1.0 - c / (jnp.asarray(t, jnp.float32) + offset) ** power

    return schedule


def horizon(alpha_hat: float, horizon_steps: int, beta2_c: float = 1.0) -> tuple[float, float]:
    """The finite-horizon calibration (α, β2) = (α̂/√T, 1 − c/T) for T steps (host floats)."""
    check_positive("alpha_hat", alpha_hat)
    check_positive("beta2_c", beta2_c)
    if int(horizon_steps) != horizon_steps or horizon_steps < 1:
        raise ValueError(f"horizon_steps = {horizon_steps!r} must be an integer >= 1")
    if beta2_c > horizon_steps:
        raise ValueError(f"beta2_c = {beta2_c!r} exceeds the horizon {horizon_steps}: "
                         "β2 = 1 − c/T would be negative")
    return alpha_hat / math.sqrt(horizon_steps), 1.0 - beta2_c / horizon_steps


def value_at(schedule_or_value, t):
    """α_t for a schedule, or the constant itself."""
    return schedule_or_value(t) if callable(schedule_or_value) else schedule_or_value
