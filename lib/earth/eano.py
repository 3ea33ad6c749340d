"""EANO: the Epidemiology-Aware Neural ODE over a graph of regions, solved with diffrax.

A **controlled** neural ODE. The observed window x [W, N] plus a time channel is the control
path X(t) [N, 2], a cubic Hermite interpolation (`diffrax.backward_hermite_coefficients` +
`CubicInterpolation`, the JAX analogue of the released code's natural cubic spline); the CDE
dy = F(y) dX is solved as the ODE dy/dt = F(y) dX/dt. Per region the state holds five
latents of size d: h (temporal), z (global trend), s, i, r (transmission). Â(t) is the
continuous transmission graph of GLTG (`lib/earth/gltg.py`), recomputed from z(t) at every
evaluation; Ā_sem the fused geographic + semantic graph. Two forms of the dynamics
(`DYNAMICS`, config key `model.dynamics`):

"official" (`ControlledField`, the released code's vector field): every latent is driven by
the data path through a full d × d matrix per region,

    u = F(h) Ẋ,   F(h) = tanh(W2 relu(W1 h)) ∈ R^{d×2}
    dh/dt = u,    dy/dt = G_y(a_y) u  for y ∈ {z, s, i, r},   G_y(a) = tanh(L_y a) ∈ R^{d×d}
    a_z = q + Ā_sem (q W),  q = relu(W_in z)                     (adaptive graph convolution)
    a_s = -[s ‖ Â(t) i] W_i,  a_i = [s ‖ Â(t) i] W_i - i W_r,  a_r = i W_r        (SIR layer)

so a_s + a_i + a_r = 0, and the solution depends on X only through its trace (no term moves
the state while Ẋ = 0). (h, z, s, i, r)(0) are linear maps of X(0). The "w/o EANO" ablation
replaces the SIR layer by a generic graph layer, [a_s ‖ a_i ‖ a_r] = tanh(W [l ‖ Â l]),
l = [s ‖ i ‖ r].

"sirs" (`EANOField`): a diagonal G for z and an explicit SIRS mechanism with learned rates
for s, i, r, through which alone the data reach the compartments:

    dh/dt = u,    dz/dt = G(agc(z)) ⊙ u,   agc(z) = z + Ā_sem relu(W_z z),  G(·) = tanh(W_G ·) ∈ R^d
    ds/dt = -β ⊙ s ⊙ (Â(t) i) + ω ⊙ r
    di/dt =  β ⊙ s ⊙ (Â(t) i) - γ ⊙ i
    dr/dt =  γ ⊙ i - ω ⊙ r

with β = 2 σ(W_β [h ‖ z]), γ = σ(W_γ h), ω = σ(w_ω) (bounded so that the fixed-step solve
stays stable). (s, i, r)(0) are fractions (a softmax over the three compartments), and the
mechanism conserves s + i + r. With d = 1, Â = the true mixing matrix and the simulator's
rates, `epidemic_rhs` is the simulator's equation (tests/earth/test_earth_eano.py checks
the diffrax solve against the simulator). Its "w/o EANO" ablation replaces the three
epidemic lines by d[s‖i‖r]/dt = tanh(W [l ‖ Â l ‖ h]).
"""
from __future__ import annotations

from typing import Any, Callable

import diffrax
import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.earth import gltg
from lib.pde.integrators import RK4

SOLVERS: dict[str, Callable[[], diffrax.AbstractSolver]] = {
    "rk4": RK4, "euler": diffrax.Euler, "heun": diffrax.Heun, "midpoint": diffrax.Midpoint,
    "tsit5": diffrax.Tsit5, "dopri5": diffrax.Dopri5,
}
ADJOINTS: dict[str, Callable[[], diffrax.AbstractAdjoint]] = {
    "recursive_checkpoint": diffrax.RecursiveCheckpointAdjoint,
    "backsolve": diffrax.BacksolveAdjoint,
    "direct": diffrax.DirectAdjoint,
}
MECHANISMS = ("sir", "neural")
DYNAMICS = ("official", "sirs")
STATES = ("z", "s", "i", "r")     # the latents driven through a gate (h is driven by F(h) Ẋ)
# Rate bounds (per unit of window time). With fixed steps of size 1 an explicit solver
# diverges on the quadratic transmission term when rates are unbounded and a test window
# leaves the training range; sigmoid-bounded rates keep β·dt ≤ 2 and γ·dt ≤ 1.
MAX_BETA = 2.0
MAX_GAMMA = 1.0


def epidemic_rhs(s, i, r, beta, gamma, omega, adj):
    """SIRS transmission through a graph (EANO's mechanism).

    s, i, r: [..., N, d] compartment latents; beta, gamma, omega: broadcastable to them;
    adj: [..., N, N] transmission graph (row v: who infects region v).
    Returns (ds, di, dr), each [..., N, d].
    """
    pressure = jnp.einsum("...vu,...ud->...vd", adj, i)
    force = beta * s * pressure
    return -force + omega * r, force - gamma * i, gamma * i - omega * r


def control_path(window: jax.Array) -> diffrax.CubicInterpolation:
    """X(t) [N, 2] = (observed value, t / (W - 1)) interpolated over ts = 0..W-1 (weeks).

    window: [W, N] scaled observations.
    """
    w = window.shape[0]
    ts = jnp.arange(w, dtype=window.dtype)
    time = jnp.broadcast_to((ts / (w - 1))[:, None], window.shape)
    xs = jnp.stack([window, time], axis=-1)  # [W, N, 2]
    return diffrax.CubicInterpolation(ts, diffrax.backward_hermite_coefficients(ts, xs))


def integrate(vector_field, y0, t0: float, t1: float, args: Any, *, solver: str = "rk4",
              adjoint: str = "recursive_checkpoint", dt: float = 1.0, saveat=None):
    """Solve dy/dt = vector_field(t, y, args) from t0 to t1 with fixed steps dt.

    Returns the diffrax solution's `ys` (at t1 only unless `saveat` is given).
    """
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; allowed: {sorted(SOLVERS)}")
    if adjoint not in ADJOINTS:
        raise ValueError(f"unknown adjoint {adjoint!r}; allowed: {sorted(ADJOINTS)}")
    steps = int(round((t1 - t0) / dt))
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(vector_field), SOLVERS[solver](), t0, t1, dt, y0, args=args,
        saveat=saveat or diffrax.SaveAt(t1=True), adjoint=ADJOINTS[adjoint](),
        stepsize_controller=diffrax.ConstantStepSize(), max_steps=max(steps + 1, 1))
    return sol.ys


def control_term(f1: nn.Module, f2: nn.Module, h, xdot):
    """u = F(h) Ẋ [N, d], F(h) = tanh(f2(relu(f1(h)))) reshaped to [N, d, 2]."""
    n, d = h.shape
    f = jnp.tanh(f2(nn.relu(f1(h)))).reshape(n, d, 2)
    return jnp.einsum("ndc,nc->nd", f, xdot)


def sir_layer(s, i, r, adj, w_i, w_r):
    """The released SIR layer's arguments (a_s, a_i, a_r), each [N, d].

    s, i, r: [N, d]; adj: [N, N]; w_i: [2d, d] (shared by the s and i lines); w_r: [d, d].
    a_s = -[s ‖ adj i] w_i,  a_i = [s ‖ adj i] w_i - i w_r,  a_r = i w_r (they sum to 0; r
    is not an argument of any line).
    """
    del r
    infection = jnp.concatenate([s, adj @ i], -1) @ w_i
    recovery = i @ w_r
    return -infection, infection - recovery, recovery


class ControlledField(nn.Module):
    """The released code's vector field (module docstring, "official"): y = {h, z, s, i, r}
    each [N, d], xdot [N, 2] -> dy/dt, each [N, d].

    Attributes: hidden d; mechanism "sir" (the SIR layer) or "neural" (ablation);
    learned_graph (GLTG on) or the fixed geographic graph; alpha the graph learner's
    saturation.
    """

    hidden: int
    mechanism: str = "sir"
    learned_graph: bool = True
    alpha: float = 3.0

    def setup(self):
        d = self.hidden
        xavier = nn.initializers.xavier_uniform()
        self.f1 = nn.Dense(d)
        self.f2 = nn.Dense(2 * d)
        self.agc_in = nn.Dense(d)
        self.agc_w = self.param("agc_w", xavier, (d, d))
        self.gate = {y: nn.Dense(d * d) for y in STATES}
        if self.learned_graph:
            self.graph_learner = gltg.GraphLearner(d, self.alpha)
        if self.mechanism == "sir":
            self.w_i = self.param("sir_w_i", xavier, (2 * d, d))
            self.w_r = self.param("sir_w_r", xavier, (d, d))
        elif self.mechanism == "neural":
            self.local = nn.Dense(3 * d)
        else:
            raise ValueError(f"unknown mechanism {self.mechanism!r}; allowed: {MECHANISMS}")

    def graph(self, z, geo):
        """Â(t) [N, N] from the global latent z [N, d] and the row-normalised geography."""
        return self.graph_learner(z, geo) if self.learned_graph else geo

    def gates(self, y, geo, sem):
        """{z, s, i, r: G_y [N, d, d]} at the state y."""
        d = self.hidden
        z, s, i, r = y["z"], y["s"], y["i"], y["r"]
        n = z.shape[0]
        adj = self.graph(z, geo)
        q = nn.relu(self.agc_in(z))
        args = {"z": q + sem @ (q @ self.agc_w)}
        if self.mechanism == "sir":
            args["s"], args["i"], args["r"] = sir_layer(s, i, r, adj, self.w_i, self.w_r)
        else:
            loc = jnp.concatenate([s, i, r], -1)
            args["s"], args["i"], args["r"] = jnp.split(
                jnp.tanh(self.local(jnp.concatenate([loc, adj @ loc], -1))), 3, axis=-1)
        return {k: jnp.tanh(self.gate[k](a)).reshape(n, d, d) for k, a in args.items()}

    def __call__(self, y, xdot, geo, sem):
        u = control_term(self.f1, self.f2, y["h"], xdot)
        out = {k: jnp.einsum("nij,nj->ni", g, u) for k, g in self.gates(y, geo, sem).items()}
        return {"h": u, **out}


class EANOField(nn.Module):
    """The "sirs" vector field of one sample: y = {h, z, s, i, r} each [N, d], xdot [N, 2].

    Attributes: hidden d; mechanism "sir" (EANO) or "neural" (ablation); learned_graph
    (GLTG on) or the fixed geographic graph; alpha the graph learner's saturation.
    """

    hidden: int
    mechanism: str = "sir"
    learned_graph: bool = True
    alpha: float = 3.0

    def setup(self):
        d = self.hidden
        self.f1 = nn.Dense(d)
        self.f2 = nn.Dense(2 * d)
        self.agc = nn.Dense(d)
        self.g_z = nn.Dense(d)
        if self.learned_graph:
            self.graph_learner = gltg.GraphLearner(d, self.alpha)
        if self.mechanism == "sir":
            self.rate_beta = nn.Dense(d)
            self.rate_gamma = nn.Dense(d)
            self.log_omega = self.param("logit_omega", nn.initializers.constant(-3.0), (d,))
        elif self.mechanism == "neural":
            self.local = nn.Dense(3 * d)
        else:
            raise ValueError(f"unknown mechanism {self.mechanism!r}; allowed: {MECHANISMS}")

    def graph(self, z, geo):
        """Â(t) [N, N] from the global latent z [N, d] and the row-normalised geography."""
        return self.graph_learner(z, geo) if self.learned_graph else geo

    def __call__(self, y, xdot, geo, sem):
        h, z, s, i, r = y["h"], y["z"], y["s"], y["i"], y["r"]
        u = control_term(self.f1, self.f2, h, xdot)
        agc = z + sem @ nn.relu(self.agc(z))
        dz = jnp.tanh(self.g_z(agc)) * u
        adj = self.graph(z, geo)
        if self.mechanism == "sir":
            beta = MAX_BETA * nn.sigmoid(self.rate_beta(jnp.concatenate([h, z], -1)))
            gamma = MAX_GAMMA * nn.sigmoid(self.rate_gamma(h))
            omega = MAX_GAMMA * nn.sigmoid(self.log_omega)
            ds, di, dr = epidemic_rhs(s, i, r, beta, gamma, omega, adj)
        else:
            loc = jnp.concatenate([s, i, r], -1)
            dl = jnp.tanh(self.local(jnp.concatenate([loc, adj @ loc, h], -1)))
            ds, di, dr = jnp.split(dl, 3, axis=-1)
        return {"h": u, "z": dz, "s": ds, "i": di, "r": dr}


class EANOEncoder(nn.Module):
    """Initial latents from X(t0) [N, 2]: h0, z0 linear; (s, i, r)0 a softmax over compartments."""

    hidden: int

    @nn.compact
    def __call__(self, x0):
        d = self.hidden
        n = x0.shape[0]
        sir = jax.nn.softmax(nn.Dense(3 * d)(x0).reshape(n, 3, d), axis=1)
        return {"h": nn.Dense(d)(x0), "z": nn.Dense(d)(x0), "s": sir[:, 0], "i": sir[:, 1],
                "r": sir[:, 2]}


class LinearEncoder(nn.Module):
    """Initial latents {h, z, s, i, r} [N, d], each a linear map of X(t0) [N, 2]."""

    hidden: int

    @nn.compact
    def __call__(self, x0):
        return {k: nn.Dense(self.hidden, name=f"init_{k}")(x0) for k in ("h", *STATES)}


def field_and_encoder(dynamics: str, hidden: int, mechanism: str = "sir",
                      learned_graph: bool = True, alpha: float = 3.0):
    """(vector field, encoder) modules of a form of the dynamics (`DYNAMICS`)."""
    if dynamics == "official":
        return (ControlledField(hidden, mechanism, learned_graph, alpha),
                LinearEncoder(hidden))
    if dynamics == "sirs":
        return EANOField(hidden, mechanism, learned_graph, alpha), EANOEncoder(hidden)
    raise ValueError(f"unknown EANO dynamics {dynamics!r}; allowed: {DYNAMICS}")


def solve_eano(field: nn.Module, field_params, y0, window, geo, sem, *, solver: str,
               adjoint: str, dt: float):
    """Integrate `field` (ControlledField or EANOField) driven by `window` [W, N] over
    t ∈ [0, W-1]; returns y(W-1)."""
    path = control_path(window)

    def vf(t, y, args):
        params, path_, geo_, sem_ = args
        return field.apply(params, y, path_.derivative(t), geo_, sem_)

    return integrate(vf, y0, 0.0, float(window.shape[0] - 1), (field_params, path, geo, sem),
                     solver=solver, adjoint=adjoint, dt=dt)
