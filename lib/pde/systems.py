"""The four PDE systems by name, each built from a flat dict of parameters.

`build(name, params)` is the one entry point the dataset layer and the tools use: it
checks the name and the parameters (ValueError before compute) and returns a `Solver`.
Parameters per system (all required, see `PARAMETERS`):

- navier_stokes: n, length, viscosity, drag, forcing_wavenumber, forcing_scale,
  max_velocity, peak_wavenumber, cfl (dt = cfl · (length/n) / max_velocity). The state is
  vorticity; datasets store the velocity (u, v), MultiPDENet's variables.
- burgers: n, viscosity, dt, n_modes (P2C2Net's Fourier-series initial condition).
- gray_scott: n, length, diffusivity_u, diffusivity_v, feed, kill, dt, n_squares.
- kdv: n, length, dt, n_solitons, min_speed, max_speed.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import jax

from lib.pde import burgers, checks, gray_scott, kdv, navier_stokes


class Solver(NamedTuple):
    """A PDE system ready to simulate.

    step: state `(C, *grid)` -> next state, one step of size `dt`.
    initial_state: PRNG key -> random state `(C, *grid)` in the requested dtype.
    observe: state -> the fields a dataset stores, `(len(saved_fields), *grid)`.
    """

    step: Callable[[jax.Array], jax.Array]
    initial_state: Callable[[jax.Array], jax.Array]
    observe: Callable[[jax.Array], jax.Array]
    dt: float
    state_fields: tuple[str, ...]
    saved_fields: tuple[str, ...]
    ndim: int
    length: float


def _navier_stokes(p: Mapping[str, Any], dtype) -> Solver:
    dt = checks.stable_time_step(p["max_velocity"], p["cfl"], p["length"] / p["n"])
    step = navier_stokes.make_step(
        p["n"], dt, p["length"], p["viscosity"], p["drag"], p["forcing_wavenumber"],
        p["forcing_scale"], p["max_velocity"],
    )
    return Solver(
        step=step,
        initial_state=lambda key: navier_stokes.random_initial_state(
            key, p["n"], p["length"], p["peak_wavenumber"], p["max_velocity"], dtype
        ),
        observe=lambda state: navier_stokes.vorticity_to_velocity(state[0], p["length"]),
        dt=dt, state_fields=navier_stokes.FIELD_NAMES, saved_fields=("u", "v"), ndim=2,
        length=p["length"],
    )


def _burgers(p: Mapping[str, Any], dtype) -> Solver:
    return Solver(
        step=burgers.make_step(p["n"], p["dt"], p["viscosity"]),
        initial_state=lambda key: burgers.random_initial_state(key, p["n"], p["n_modes"], dtype),
        observe=lambda state: state,
        dt=p["dt"], state_fields=burgers.FIELD_NAMES, saved_fields=burgers.FIELD_NAMES, ndim=2,
        length=burgers.LENGTH,
    )


def _gray_scott(p: Mapping[str, Any], dtype) -> Solver:
    return Solver(
        step=gray_scott.make_step(
            p["n"], p["dt"], p["length"], p["diffusivity_u"], p["diffusivity_v"], p["feed"], p["kill"]
        ),
        initial_state=lambda key: gray_scott.random_initial_state(
            key, p["n"], p["length"], p["n_squares"], dtype=dtype
        ),
        observe=lambda state: state,
        dt=p["dt"], state_fields=gray_scott.FIELD_NAMES, saved_fields=gray_scott.FIELD_NAMES,
        ndim=2, length=p["length"],
    )


def _kdv(p: Mapping[str, Any], dtype) -> Solver:
    return Solver(
        # Each soliton's peak is c/2 (a = 6): overlapping ones add up to at most this.
        step=kdv.make_step(p["n"], p["dt"], p["length"], max_amplitude=p["n_solitons"] * p["max_speed"] / 2),
        initial_state=lambda key: kdv.random_initial_state(
            key, p["n"], p["length"], p["n_solitons"], (p["min_speed"], p["max_speed"]), dtype
        ),
        observe=lambda state: state,
        dt=p["dt"], state_fields=kdv.FIELD_NAMES, saved_fields=kdv.FIELD_NAMES, ndim=1,
        length=p["length"],
    )


_BUILDERS = {
    "navier_stokes": _navier_stokes,
    "burgers": _burgers,
    "gray_scott": _gray_scott,
    "kdv": _kdv,
}

PARAMETERS: dict[str, tuple[str, ...]] = {
    "navier_stokes": ("n", "length", "viscosity", "drag", "forcing_wavenumber", "forcing_scale",
                      "max_velocity", "peak_wavenumber", "cfl"),
    "burgers": ("n", "viscosity", "dt", "n_modes"),
    "gray_scott": ("n", "length", "diffusivity_u", "diffusivity_v", "feed", "kill", "dt", "n_squares"),
    "kdv": ("n", "length", "dt", "n_solitons", "min_speed", "max_speed"),
}

NAMES = tuple(_BUILDERS)


def check_name(name: str) -> None:
    """ValueError unless `name` is one of `NAMES`."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown PDE name {name!r}; allowed: {list(NAMES)}")


def build(name: str, params: Mapping[str, Any], dtype: str = "float32") -> Solver:
    """The `Solver` of system `name` with `params` (exactly the keys `PARAMETERS[name]`).

    `dtype` is "float32" or "float64" (the latter needs `jax.enable_x64`). Raises a
    ValueError naming the problem (unknown name, missing or extra parameter, a bad value
    such as a negative viscosity or a time step above the CFL limit) before any compute.
    """
    check_name(name)
    expected, given = set(PARAMETERS[name]), set(params)
    if expected != given:
        raise ValueError(
            f"parameters of {name!r}: missing {sorted(expected - given)}, "
            f"unknown {sorted(given - expected)}; expected exactly {list(PARAMETERS[name])}"
        )
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype = {dtype!r} must be 'float32' or 'float64'")
    return _BUILDERS[name](params, dtype)
