"""Everything that rolls a coarse state forward, behind one interface.

An `Emulator` has `init(key, u) -> params` and `rollout(params, u0, n, remat=False) ->
(n, *u0.shape)` (channels-last, frames at ΔT, 2ΔT, …, without `u0`; `remat` recomputes each
step's activations when the rollout is differentiated). MultiPDENet, the autoregressive
FNO / UNet baselines and the classical solver on the coarse grid all fit it, so training,
evaluation and the speed benchmark treat them alike.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.multipdenet import model as mpn
from lib.pde import navier_stokes, systems


class Emulator(NamedTuple):
    init: Callable[[jax.Array, jax.Array], Any]
    rollout: Callable[[Any, jax.Array, int], jax.Array]
    trainable: bool


def multipdenet(model: mpn.MultiPDENet) -> Emulator:
    """MultiPDENet (`lib.multipdenet.model`)."""
    return Emulator(
        init=lambda key, u: model.init(key, u),
        rollout=lambda params, u0, n, remat=False: mpn.rollout(model, params, u0, n, remat),
        trainable=True,
    )


def autoregressive(net: nn.Module) -> Emulator:
    """A network trained to take one macro step: `u_{k+1} = u_k + net(u_k)`."""

    def step(params, u):
        return u + net.apply(params, u)

    def rollout(params, u0, n, remat=False):
        f = jax.checkpoint(step) if remat else step

        def body(u, _):
            u = f(params, u)
            return u, u

        return jax.lax.scan(body, u0, None, length=n)[1]

    return Emulator(init=lambda key, u: net.init(key, u), rollout=rollout, trainable=True)


# Keyword arguments of `lib.multipdenet.physics.<pde>_rhs` that a dataset's parameters set
# (the names agree between the solvers and the Physics Block).
PHYSICS_PARAMETERS: dict[str, tuple[str, ...]] = {
    "burgers": ("viscosity",),
    "gray_scott": ("diffusivity_u", "diffusivity_v", "feed", "kill"),
    "kdv": (),
    "navier_stokes": ("viscosity", "drag", "forcing_wavenumber", "forcing_scale"),
}


def physics_coefficients(pde: str, params: Mapping[str, Any]) -> dict[str, float]:
    """The Physics Block's PDE coefficients for a dataset with parameters `params`."""
    return {name: float(params[name]) for name in PHYSICS_PARAMETERS[pde]}


def coarse_solver(metadata: Mapping[str, Any], steps_per_frame: int | None = None) -> Emulator:
    """The dataset's own classical solver run directly on the coarse grid (no learning).

    `steps_per_frame` solver steps per saved frame (default: the fewest that keep the
    step 5 % under the solver's stability limit on the coarse grid, at least 1). The state enters and
    leaves channels-last; Navier–Stokes converts velocity <-> vorticity.
    """
    pde, params = metadata["pde"], dict(metadata["params"])
    m, frame_dt = metadata["coarse_grid"], metadata["frame_dt"]
    params["n"] = m
    if steps_per_frame is None:
        # 5 % below the limit: the solvers' own CFL checks must not trip on rounding.
        steps_per_frame = max(1, math.ceil(frame_dt / (0.95 * _stable_dt(pde, params, m))))
    dt = frame_dt / steps_per_frame
    if pde == "navier_stokes":
        params["cfl"] = dt * params["max_velocity"] / (params["length"] / m)
    else:
        params["dt"] = dt
    solver = systems.build(pde, params, metadata["dtype"])
    ndim = solver.ndim
    to_state, to_fields = _converters(pde, params)

    def advance(state):
        return jax.lax.fori_loop(0, steps_per_frame, lambda _, s: solver.step(s), state)

    def rollout(params_unused, u0, n, remat=False):
        del params_unused, remat  # nothing to differentiate
        batch_shape = u0.shape[: u0.ndim - ndim - 1]
        flat = u0.reshape((-1,) + u0.shape[len(batch_shape):])
        fields = jnp.moveaxis(flat, -1, 1)  # (b, C, *grid)

        def body(state, _):
            state = jax.vmap(advance)(state)
            return state, jax.vmap(to_fields)(state)

        _, frames = jax.lax.scan(body, jax.vmap(to_state)(fields), None, length=n)
        frames = jnp.moveaxis(frames, 2, -1)  # (n, b, *grid, C)
        return frames.reshape((n,) + u0.shape)

    return Emulator(init=lambda key, u: {}, rollout=rollout, trainable=False)


def _stable_dt(pde: str, params: Mapping[str, Any], n: int) -> float:
    if pde == "navier_stokes":
        return navier_stokes.MAX_CFL * (params["length"] / n) / params["max_velocity"]
    if pde == "burgers":
        from lib.pde import burgers  # noqa: PLC0415
        return burgers.max_stable_dt(n, params["viscosity"], 2.0)
    if pde == "gray_scott":
        from lib.pde import gray_scott  # noqa: PLC0415
        return gray_scott.MAX_DT
    from lib.pde import kdv  # noqa: PLC0415
    amplitude = params["n_solitons"] * params["max_speed"] / 2
    return kdv.MAX_CFL * (params["length"] / n) / (6.0 * amplitude)


def _converters(pde: str, params: Mapping[str, Any]):
    if pde == "navier_stokes":
        length = params["length"]
        return (lambda f: navier_stokes.velocity_to_vorticity(f, length)[None],
                lambda s: navier_stokes.vorticity_to_velocity(s[0], length))
    identity = lambda x: x  # noqa: E731
    return identity, identity


def count_params(params: Any) -> int:
    return int(sum(np.size(x) for x in jax.tree.leaves(params)))
