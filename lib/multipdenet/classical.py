"""The classical solvers of the cost–accuracy front, each with both of its knobs: grid and step.

A family builds `(fn, params)` with `fn(params, u0, k) -> (k, *u0.shape)`: `k` frames of the
truth's frame interval from channels-last velocity `u0` `(b, n, n, 2)`, like an `Emulator`'s
rollout. Its time step is `frame_dt / steps`, where `steps` is the fewest steps per frame
that keep the step 5 % under the solver's stability limit at the velocity bound of the
data's random initial fields (`default_steps`), divided by a `dt_factor` (`steps_for`):
the initial fields peak at speed 7, attractor states near 4.6, so a solver run on the
attractor can take a larger step than the bound allows. A step past what the flow tolerates
shows up as a non-finite rollout or a lower HCT, never as a refusal; every solver's own
stability check is told the bound that the chosen step implies.

Families (`FAMILIES[pde]`):
  spectral  Navier–Stokes: the dataset's pseudo-spectral ETDRK4 (`lib.pde.navier_stokes`);
            Burgers: pseudo-spectral ETDRK4 (`lib.pde.burgers_spectral`).
  solver    Burgers: the dataset's own FD4 + RK4 solver (`lib.pde.burgers`).
  fd4_rk4   MultiPDENet's Physics Block without networks (frozen 4th-order stencils, RK4).
  fd4_tuned Navier–Stokes: fd4_rk4 with its two stencil knobs tuned per grid and step, on the
            same taps: a hyperviscosity, the ∂xx stencil FD4's + θ·[1, −4, 6, −4, 1] (ν∇² gains
            −ν₄∂⁴ terms, ν₄ = −θ ν h²), and a dispersion correction, the ∂x stencil FD4's +
            φ·[1, −2, 0, 2, −1] (a dispersion-relation-preserving stencil: its modified wavenumber
            2(⅔ + 2φ) sin kh − 2(1/12 + φ) sin 2kh). θ, then φ at that θ, are the best of sweeps
            on the ICs the models were chosen on (`tools/bench/multipdenet_front.py --tune_fd4`
            writes `TUNING_FILE`).
  jax_cfd   Navier–Stokes: jax-cfd's pseudo-spectral Crank–Nicolson/RK4 IMEX (Carpenter–
            Kennedy low-storage RK4 for advection), an independent implementation; needs the
            `bench` extra (`available("jax_cfd")` says whether it is installed).
"""
from __future__ import annotations

import importlib.util
import math
from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from lib.multipdenet import emulators
from lib.multipdenet import model as mpn
from lib.multipdenet import tuning
from lib.pde import burgers, burgers_spectral, navier_stokes

# (family, label, marker) per system, in the front's order.
FAMILIES = {
    "navier_stokes": (("spectral", "spectral ETDRK4", "o"), ("fd4_rk4", "FD4+RK4", "s"),
                      ("jax_cfd", "jax-cfd CN/RK4", "^"), ("fd4_tuned", "FD4+RK4 tuned", "D")),
    "burgers": (("solver", "FD4+RK4 solver", "o"), ("fd4_rk4", "FD4+RK4 Physics Block", "s"),
                ("spectral", "spectral ETDRK4", "^")),
}
OPTIONAL = {"jax_cfd": ("jax_cfd", "bench")}   # family -> (module, setup.cfg extra)
MARGIN = 0.95                                   # the step stays 5 % under the limit
TUNING_FILE, tuned_knobs = tuning.TUNING_FILE, tuning.tuned_knobs   # the tuning file's reader


def available(family: str) -> bool:
    """Whether a family's optional package is installed (always True for the others)."""
    return family not in OPTIONAL or importlib.util.find_spec(OPTIONAL[family][0]) is not None


def missing_message(family: str) -> str:
    module, extra = OPTIONAL[family]
    return (f"classical family {family!r} skipped: {module} is not installed "
            f'(pip install -e ".[{extra}]")')


def stable_dt(meta: Mapping[str, Any], family: str, n: int) -> float:
    """The stable step of `family` on an `n`² grid at the data's velocity bound: NS, the
    RK4 advective limit `MAX_CFL · dx / max_velocity` (every NS family integrates advection
    with an RK4 stage structure); Burgers, `burgers(_spectral).max_stable_dt` at |u| <= 2."""
    if meta["pde"] == "navier_stokes":
        return navier_stokes.MAX_CFL * (meta["length"] / n) / meta["params"]["max_velocity"]
    if meta["pde"] == "burgers":
        lib = burgers_spectral if family == "spectral" else burgers
        return lib.max_stable_dt(n, meta["params"]["viscosity"], 2.0)
    raise ValueError(f"no classical front for pde = {meta['pde']!r}")


def default_steps(meta: Mapping[str, Any], family: str, n: int) -> int:
    """Steps per frame at the velocity bound: the fewest keeping the step 5 % under it."""
    return max(1, math.ceil(meta["frame_dt"] / (MARGIN * stable_dt(meta, family, n))))


def steps_for(meta: Mapping[str, Any], family: str, n: int, dt_factor: float) -> int:
    """Steps per frame at `dt_factor` × the default step (fewer steps, at least one). The
    Burgers FD4 `solver` checks its step against the data's bound itself, so it keeps its
    default step; its scheme is swept as `fd4_rk4`."""
    if not dt_factor >= 1:
        raise ValueError(f"dt_factor = {dt_factor} must be >= 1 (1: the default step)")
    if family == "solver":
        return default_steps(meta, family, n)
    return max(1, math.ceil(default_steps(meta, family, n) / dt_factor - 1e-9))


def implied_bound(meta: Mapping[str, Any], family: str, n: int, steps: int) -> float:
    """The velocity bound under which `steps` steps per frame keep the 5 % margin (the data's
    bound when they do already): what the solvers' own stability checks are given. Exact
    where the limit is advective (∝ 1 / bound): every family the sweep reaches."""
    v0 = meta["params"]["max_velocity"] if meta["pde"] == "navier_stokes" else 2.0
    return v0 * min(1.0, MARGIN * stable_dt(meta, family, n) * steps / meta["frame_dt"])


def build(meta: Mapping[str, Any], family: str, n: int, steps: int,
          knobs: tuple[float, float] | None = None) -> tuple:
    """`(fn, params)` of `family` on an `n`² grid taking `steps` steps per truth frame;
    `knobs` = (θ, φ) sets `fd4_tuned`'s stencils (default: the tuned ones, `tuned_knobs`)."""
    if not available(family):
        raise ValueError(missing_message(family))
    if knobs is not None and family != "fd4_tuned":
        raise ValueError(f"knobs are the fd4_tuned family's, not {family!r}'s")
    bound = implied_bound(meta, family, n, steps)
    if family == "fd4_rk4":
        return _fd4_rk4(meta, n, steps)
    if family == "fd4_tuned" and meta["pde"] == "navier_stokes":
        return _fd4_rk4(meta, n, steps, tuned_knobs(n, steps) if knobs is None else knobs)
    if family == "jax_cfd":
        return _jax_cfd(meta, n, steps), {}
    if family == "spectral" and meta["pde"] == "burgers":
        return _spectral_burgers(meta, n, steps, bound), {}
    if (family, meta["pde"]) in (("spectral", "navier_stokes"), ("solver", "burgers")):
        params = dict(meta["params"], **({"max_velocity": bound} if meta["pde"] == "navier_stokes" else {}))
        return emulators.coarse_solver(dict(meta, coarse_grid=n, params=params), steps).rollout, {}
    raise ValueError(f"no classical family {family!r} for pde = {meta['pde']!r}; allowed: "
                     f"{', '.join(f for f, _, _ in FAMILIES[meta['pde']])}")


def _fd4_rk4(meta: Mapping[str, Any], n: int, steps: int, knobs: tuple[float, float] | None = None) -> tuple:
    """The Physics Block without networks: FD4 stencils (+ spectral projection for NS) + RK4;
    with `knobs` (θ, φ), the `fd4_taps` stencils at those parameters (`stencil_params`): the
    same taps, so the same cost."""
    model = mpn.make_model(
        meta["pde"], h=meta["length"] / n, macro_dt=meta["frame_dt"], n_micro=steps,
        coefficients=emulators.physics_coefficients(meta["pde"], meta["params"]),
        filter_mode="frozen" if knobs is None else "symmetric", filter_layout="fd4_taps",
        corrector=None, micro_net=None, macro_net=None)
    if knobs is None:
        return (lambda p, u0, k: mpn.rollout(model, p, u0, k)), model.init(jax.random.key(0), jnp.zeros((1, n, n, 2)))
    return (lambda p, u0, k: mpn.rollout(model, p, u0, k)), stencil_params(*knobs)


def stencil_params(theta: float, dispersion: float = 0.0) -> dict:
    """The `fd4_taps` filter parameters: ∂xx FD4's + θ·[1, −4, 6, −4, 1], ∂x FD4's + φ·[1, −2, 0, 2, −1]."""
    return {"params": {"filters": {"first_order": jnp.full((1,), dispersion), "second_order": jnp.full((1,), theta)}}}


def _spectral_burgers(meta: Mapping[str, Any], n: int, steps: int, bound: float):
    step = jax.vmap(burgers_spectral.make_step(n, meta["frame_dt"] / steps, meta["params"]["viscosity"], bound))

    def rollout(params_unused, u0, k):
        def frame(state, _):
            state = jax.lax.fori_loop(0, steps, lambda _, x: step(x), state)
            return state, jnp.moveaxis(state, 1, -1)
        return jax.lax.scan(frame, jnp.moveaxis(u0, -1, 1), None, length=k)[1]
    return rollout


def jax_cfd_equation(meta: Mapping[str, Any], n: int):
    """jax-cfd's `NavierStokes2D` for the dataset's Kolmogorov flow on an `n`² grid (2/3
    filter, forcing `A sin(k_f y) x̂` at the cell corners as the workspace's solvers have it).
    Its arrays are indexed `[x, y]`, the workspace's `[y, x]`."""
    import jax_cfd.base as cfd  # noqa: PLC0415  (the bench extra)
    import jax_cfd.spectral as spectral  # noqa: PLC0415
    p, length = meta["params"], meta["length"]
    grid = cfd.grids.Grid((n, n), domain=((0, length), (0, length)))
    forcing = lambda g: cfd.forcings.kolmogorov_forcing(  # noqa: E731
        g, scale=p["forcing_scale"], k=p["forcing_wavenumber"], offsets=((0, 0), (0, 0)))
    return spectral.equations.NavierStokes2D(p["viscosity"], grid, drag=p["drag"], smooth=True,
                                             forcing_fn=forcing)


def _jax_cfd(meta: Mapping[str, Any], n: int, steps: int):
    import jax_cfd.spectral as spectral  # noqa: PLC0415
    length = meta["length"]
    step = spectral.time_stepping.crank_nicolson_rk4(jax_cfd_equation(meta, n), meta["frame_dt"] / steps)

    def to_hat(u):                      # (n, n, 2) velocity [y, x] -> jax-cfd's ω̂ [x, y]
        return jnp.fft.rfftn(navier_stokes.velocity_to_vorticity(jnp.moveaxis(u, -1, 0), length).T)

    def to_velocity(w_hat):
        return jnp.moveaxis(navier_stokes.vorticity_to_velocity(jnp.fft.irfftn(w_hat).T, length), 0, -1)

    def rollout(params_unused, u0, k):
        def frame(w_hat, _):
            w_hat = jax.lax.fori_loop(0, steps, lambda _, x: jax.vmap(step)(x), w_hat)
            return w_hat, jax.vmap(to_velocity)(w_hat)
        return jax.lax.scan(frame, jax.vmap(to_hat)(u0), None, length=k)[1].astype(u0.dtype)
    return rollout


def max_speed(u: np.ndarray) -> float:
    """The largest speed `|(u, v)|` of channels-last velocity fields `(..., n, n, 2)`."""
    return float(np.sqrt((np.asarray(u, np.float64) ** 2).sum(-1)).max())
