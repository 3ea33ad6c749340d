"""Field lines of a vector field through a point, integrated to the domain boundary (diffrax).

For a field a: Ω → ℝⁿ and a point x ∈ Ω the field line is γ_x(t) with

    dγ/dt = ã(γ),   γ(0) = x,   t ∈ [t⁻, t⁺],                                   (FL)

where t^± are the times the line leaves Ω (notes §B "Field line through x"). With
`normalize=True` (default) ã = a/‖a‖, so t is arc length and L = t⁺ − t⁻ is the line's
geometric length; with False, ã = a (t is the field's own time).

Forward: integrate (FL) from t = 0 with a diffrax `Event` whose condition is the signed
distance-like function g(z) (> 0 inside Ω) and an Optimistix Newton root find, which makes the
exit time exact to the root-finder tolerance and differentiable (diffrax differentiates
through the event). Backward: the same with −ã. If no exit happens before `t_max` the line is
cut there (both ends still get Dirichlet conditions; `Line.exited` says which happened).

Domains: "ball" (‖z‖ < radius, g = radius² − ‖z‖²) or "box" ([0, radius]ⁿ,
g = min_i min(z_i, radius − z_i)).

`sample` then puts N uniform nodes t_j = t⁻ + j L/(N−1) on the line (evaluated from the two
solutions' dense interpolants) — the grid of the Sturm–Liouville problem — and returns the
input's position s₀ = −t⁻ ∈ [0, L] on it.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import diffrax
import jax
import jax.numpy as jnp
import optimistix as optx

DOMAINS = ("ball", "box")
SOLVERS = {"tsit5": diffrax.Tsit5, "heun": diffrax.Heun, "bosh3": diffrax.Bosh3}

Field = Callable[[jax.Array, object], jax.Array]     # (z (n,), params) -> a(z) (n,)


class LineConfig(NamedTuple):
    """How field lines are traced (see the module docstring)."""
    domain: str = "ball"
    radius: float = 1.0
    t_max: float = 4.0
    num_steps: int = 16          # constant steps of size t_max / num_steps, per direction
    solver: str = "tsit5"
    normalize: bool = True
    root_tol: float = 1e-6


class Line(NamedTuple):
    """One traced field line (add a leading batch axis under vmap).

    t_minus, t_plus: () exit times (t_minus ≤ 0 ≤ t_plus); exited: (2,) bool, whether the
    backward / forward solves hit ∂Ω before t_max; entry, exit: (n,) end points γ(t^∓).
    """
    t_minus: jax.Array
    t_plus: jax.Array
    exited: jax.Array
    entry: jax.Array
    exit: jax.Array


def check_line_config(cfg: LineConfig) -> None:
    """`ValueError` naming a bad tracing option."""
    if cfg.domain not in DOMAINS:
        raise ValueError(f"domain = {cfg.domain!r} is not one of {DOMAINS}")
    if cfg.solver not in SOLVERS:
        raise ValueError(f"solver = {cfg.solver!r} is not one of {tuple(SOLVERS)}")
    if not cfg.radius > 0 or not cfg.t_max > 0 or cfg.num_steps < 1:
        raise ValueError(f"radius, t_max must be > 0 and num_steps >= 1; got {cfg.radius}, "
                         f"{cfg.t_max}, {cfg.num_steps}")


def inside(z: jax.Array, cfg: LineConfig) -> jax.Array:
    """g(z) (> 0 strictly inside Ω, 0 on ∂Ω) for points z (..., n)."""
    if cfg.domain == "ball":
        return cfg.radius ** 2 - jnp.sum(z * z, axis=-1)
    return jnp.min(jnp.minimum(z, cfg.radius - z), axis=-1)


def _direction(field: Field, params, z: jax.Array, normalize: bool) -> jax.Array:
    a = field(z, params)
    if normalize:
        a = a / jnp.sqrt(jnp.sum(a * a) + 1e-12)
    return a


def _solve_one_way(field: Field, params, x: jax.Array, sign: float, cfg: LineConfig):
    """diffrax solution of dz/dt = sign·ã(z), z(0) = x, stopped at ∂Ω or t_max (dense)."""
    def vf(t, z, args):
        return sign * _direction(field, args, z, cfg.normalize)

    def cond(t, y, args, **kwargs):
        return inside(y, cfg)

    event = diffrax.Event(cond, optx.Newton(rtol=cfg.root_tol, atol=cfg.root_tol))
    return diffrax.diffeqsolve(
        diffrax.ODETerm(vf), SOLVERS[cfg.solver](), t0=0.0, t1=cfg.t_max,
        dt0=cfg.t_max / cfg.num_steps, y0=x, args=params, event=event,
        saveat=diffrax.SaveAt(t1=True, dense=True),
        stepsize_controller=diffrax.ConstantStepSize(), max_steps=cfg.num_steps + 2,
        throw=False)


def trace(field: Field, params, x: jax.Array, cfg: LineConfig):
    """(Line, backward solution, forward solution) for one point x (n,) inside Ω."""
    fwd = _solve_one_way(field, params, x, 1.0, cfg)
    bwd = _solve_one_way(field, params, x, -1.0, cfg)
    t_plus, t_minus = fwd.ts[-1], -bwd.ts[-1]
    exited = jnp.stack([bwd.event_mask, fwd.event_mask]) if bwd.event_mask is not None \
        else jnp.array([True, True])
    line = Line(t_minus, t_plus, exited, bwd.ys[-1], fwd.ys[-1])
    return line, bwd, fwd


class Sampled(NamedTuple):
    """A field line on its SL grid: points (N, n) at t_j = t⁻ + j h; length L = t⁺ − t⁻ ();
    position s₀ = −t⁻ () of the input on [0, L]; the `Line` it came from."""
    points: jax.Array
    length: jax.Array
    position: jax.Array
    line: Line


def sample(field: Field, params, x: jax.Array, cfg: LineConfig, num_nodes: int) -> Sampled:
    """Trace the line through x (n,) and evaluate it at `num_nodes` uniform nodes."""
    line, bwd, fwd = trace(field, params, x, cfg)
    length = line.t_plus - line.t_minus
    ts = line.t_minus + length * jnp.linspace(0.0, 1.0, num_nodes)
    back = jax.vmap(lambda t: bwd.evaluate(jnp.clip(-t, 0.0, -line.t_minus)))(ts)
    ahead = jax.vmap(lambda t: fwd.evaluate(jnp.clip(t, 0.0, line.t_plus)))(ts)
    points = jnp.where((ts < 0)[:, None], back, ahead)
    points = points.at[0].set(line.entry).at[-1].set(line.exit)
    return Sampled(points, length, -line.t_minus, line)


def interpolate(values: jax.Array, length: jax.Array, position: jax.Array) -> jax.Array:
    """Piecewise-linear (the P1 finite-element function) value at `position` ∈ [0, length]
    of nodal values (N, K) on N uniform nodes; returns (K,)."""
    n = values.shape[0]
    f = jnp.clip(position / jnp.maximum(length, 1e-12) * (n - 1), 0.0, n - 1.0)
    j = jnp.clip(jnp.floor(f).astype(jnp.int32), 0, n - 2)
    frac = f - j
    return (1.0 - frac) * values[j] + frac * values[j + 1]
