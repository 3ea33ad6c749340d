"""GM-SDE / GM-ODE solvers (paper §3.3, Eqs. 9–10, App. A.2) and flow-matching baselines.

A GM sampler drives a `denoise(x, t) -> x₀ GM` function (one network evaluation = one NFE;
guidance, if any, is inside it, see `guidance.guided_denoiser`) over the uniform grid
t_i = 1 − i/NFE, i = 0..NFE, starting from x_1 ~ N(0, I). Points are (B, G, C).

    gm_sde   draw x̂₀ ~ q(x₀ | x_t), x_{t'} = c1 x_t + c2 x̂₀ + √c3 z           (Eq. 9)
    gm_ode   n Euler sub-steps of dx/dτ = (x − E[q̂(x₀ | x_τ)])/τ between network calls,
             q̂ from the last network GM by Eq. 10 (no extra NFE)
    order 2  before the update, reweight the GM toward the extrapolated mean
             μ + (μ − μ̂_prev)·h/(2 h_prev)·√max(0, 1 − (w̃² + c_a) s²/h_prev²), μ̂_prev the
             previous step's GM converted to the current (x_t, t) by Eq. 10 (App. A.2)

Flow-matching baselines on a velocity field v(x, t): Euler and Heun ODE (diffrax), and the
DDPM-type SDE, which is `gm_sde` on the point mass at x̂₀ = x − σ_t v (a GM-SDE with K = 1
and s = 0 is DDPM with the "small" variance, App. A.5). GM-ODE on a point mass is exactly
the Euler ODE (the x₀-prediction is constant along each step and the ODE is linear).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import diffrax
import jax
import jax.numpy as jnp

from lib.gmflow import denoising, mixture
from lib.gmflow.guidance import apply_bias
from lib.gmflow.mixture import GM

Array = jax.Array
Denoiser = Callable[[Array, Array], GM]
VelocityFn = Callable[[Array, Array], Array]
GM_SOLVERS = ("gm_sde", "gm_sde2", "gm_ode", "gm_ode2")
FM_SOLVERS = ("euler", "heun", "ddpm")


def default_substeps(nfe: int, budget: int = 128) -> int:
    """Sub-steps per network call for GM-ODE: ⌈budget/NFE⌉ (toy rule of App. A.4), ≥ 1."""
    return max(math.ceil(budget / nfe), 1)


def ode_substeps(gm_x0: GM, x_t: Array, t: Array, t_next: Array, n) -> Array:
    """Integrate dx/dτ = (x − E[q̂(x₀|x_τ)])/τ from t to t_next (< t, ≥ 0) with n Euler steps.

    q̂ is `gm_x0` (predicted at (x_t, t)) carried to (x_τ, τ) by Eq. 10; the vector field
    is never evaluated at τ = 0 (Euler uses the left end of each sub-step). `n` may be a
    traced integer (a `fori_loop`), so one compiled sampler serves every sub-step count;
    this is why the sub-steps are a plain loop and not a diffrax solve, whose step bound is
    static.
    """
    dt = (t_next - t) / n

    def body(j, x):
        tau = t + j * dt
        x0 = mixture.mean(denoising.convert_x0_gm(gm_x0, x_t, t, x, tau))
        return x + dt * (x - x0) / tau

    return jax.lax.fori_loop(0, n, body, x_t)


def second_order(gm: GM, prev_gm: GM, x: Array, t: Array, prev_x: Array, prev_t: Array,
                 h: Array, prev_h: Array, guidance: float = 0.0, ca: float = 0.005) -> GM:
    """App. A.2: tilt `gm` toward the second-order mean extrapolation (see module doc).

    prev_gm was predicted at (prev_x, prev_t) and is converted to (x, t) by Eq. 10; the
    extrapolation is damped by √max(0, 1 − (w̃² + c_a) s²/h_prev²), with s² the
    moment-matched variance of `gm`, so that strong guidance switches it off.
    """
    mu, var = mixture.moment_match(gm)
    mu_prev = mixture.mean(denoising.convert_x0_gm(prev_gm, prev_x, prev_t, x, t))
    damp = jnp.sqrt(jnp.maximum(1.0 - var * (guidance ** 2 + ca) / prev_h ** 2, 0.0))
    bias = (mu - mu_prev) * (0.5 * h / prev_h * damp)[..., None, None]
    return apply_bias(gm, mu, var, bias)


def gm_sample(denoise: Denoiser, x1: Array, key: Array, *, nfe, solver: str,
              substeps=None, guidance=0.0, ca: float = 0.005) -> Array:
    """Run a GM solver (`GM_SOLVERS`) from x1 (B, G, C) with `nfe` network calls -> x₀ samples.

    nfe and substeps may be Python ints or traced int32 scalars (one compilation for every
    NFE); substeps: GM-ODE Euler sub-steps per call (None: `default_substeps(nfe)`, which
    needs a Python int nfe); `guidance` is the probabilistic-guidance w̃, used only to damp
    the second-order term.
    """
    if solver not in GM_SOLVERS:
        raise ValueError(f"unknown GM solver {solver!r}; known: {GM_SOLVERS}")
    if isinstance(nfe, int) and nfe < 1:
        raise ValueError(f"the number of steps (NFE) must be >= 1, got {nfe}")
    if substeps is None:
        substeps = default_substeps(nfe)
    if isinstance(substeps, int) and substeps < 1:
        raise ValueError(f"GM-ODE sub-steps must be >= 1, got {substeps}")
    ode, order2 = solver.startswith("gm_ode"), solver.endswith("2")
    dtype = x1.dtype

    def step(i, carry):
        x, prev_gm, prev_x = carry
        i = jnp.asarray(i, jnp.int32)
        t, t_next = jnp.asarray(1.0 - i / nfe, dtype), jnp.asarray(1.0 - (i + 1) / nfe, dtype)
        gm = denoise(x, t)
        used = gm
        if order2:
            h = t - t_next
            prev_t = t + h                       # the uniform grid: h_prev = h
            corrected = second_order(gm, prev_gm, x, t, prev_x, prev_t, h, h, guidance, ca)
            used = jax.tree.map(lambda a, b: jnp.where(i > 0, a, b), corrected, gm)
        if ode:
            x_new = ode_substeps(used, x, t, t_next, substeps)
        else:
            k_sample, k_noise = jax.random.split(jax.random.fold_in(key, i))
            c1, c2, c3 = denoising.transition_coefficients(t, t_next)
            x0 = mixture.sample(used, k_sample)
            x_new = c1 * x + c2 * x0 + jnp.sqrt(c3) * jax.random.normal(k_noise, x.shape, dtype)
        return x_new, gm, x

    gm0 = jax.eval_shape(denoise, x1, jnp.asarray(1.0, dtype))
    init_gm = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), gm0)
    x, _, _ = jax.lax.fori_loop(0, nfe, step, (x1, init_gm, x1))
    return x


def velocity_denoiser(velocity: VelocityFn) -> Denoiser:
    """The point-mass x₀ GM at x − σ_t v(x, t) (flow-matching model as a K = 1, s = 0 GM)."""
    return lambda x, t: mixture.dirac(x - t * velocity(x, t))


def fm_sample(velocity: VelocityFn, x1: Array, key: Array, *, nfe: int, solver: str) -> Array:
    """Flow-matching baselines (`FM_SOLVERS`) with a budget of `nfe` velocity evaluations.

    euler: NFE steps of diffrax Euler. heun: ⌊NFE/2⌋ steps of diffrax Heun (2 evaluations
    per step; NFE = 1 raises). ddpm: `gm_sample(..., 'gm_sde')` on the point mass.
    """
    if solver not in FM_SOLVERS:
        raise ValueError(f"unknown flow-matching solver {solver!r}; known: {FM_SOLVERS}")
    if nfe < 1:
        raise ValueError(f"the number of steps (NFE) must be >= 1, got {nfe}")
    if solver == "ddpm":
        return gm_sample(velocity_denoiser(velocity), x1, key, nfe=nfe, solver="gm_sde")
    if solver == "heun" and nfe < 2:
        raise ValueError("Heun needs NFE >= 2 (two velocity evaluations per step)")
    steps = nfe if solver == "euler" else nfe // 2
    method = diffrax.Euler() if solver == "euler" else diffrax.Heun()
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, x, args: velocity(x, t)), method, t0=1.0, t1=0.0,
        dt0=-1.0 / steps, y0=x1, saveat=diffrax.SaveAt(t1=True), max_steps=steps + 1,
        stepsize_controller=diffrax.ConstantStepSize())
    return sol.ys[0]


def heun_nfe(nfe: int) -> int:
    """Velocity evaluations Heun actually uses within a budget of `nfe` (2 ⌊nfe/2⌋)."""
    return 2 * (nfe // 2)
