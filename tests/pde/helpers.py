"""Shared helpers for the `lib/pde` tests."""
from __future__ import annotations

from typing import Callable, Sequence

import jax
import numpy as np

from lib.pde import trajectory


def advance(step_fn: Callable[[jax.Array], jax.Array], state: jax.Array, n_steps: int) -> jax.Array:
    """The state after `n_steps` steps (one jit-compiled scan)."""
    return jax.jit(lambda x: trajectory.simulate(x, step_fn, n_steps, n_steps).final_state)(state)


def observed_orders(errors: Sequence[float]) -> np.ndarray:
    """Convergence orders `log2(e_i / e_{i+1})` of errors at successively halved steps."""
    e = np.asarray(errors, dtype=float)
    return np.log2(e[:-1] / e[1:])
