"""EANO: the Epidemiology-Aware Neural ODE over a graph of regions, solved with diffrax.

Choice (stated, see experiments/earth/NOTES.md): a **controlled** neural ODE. The
observed window x [W, N] plus a time channel is the control path X(t) [N, 2], a cubic
Hermite interpolation (`diffrax.backward_hermite_coefficients` + `CubicInterpolation`,
the JAX analogue of the released code's natural cubic spline). The CDE
dh = F(h) dX is solved as the ODE dh/dt = F(h) dX/dt (what `ControlTerm(...).to_ode()`
does), so that the epidemic compartments can carry their own autonomous mechanism term in
the same solve. Per region v the state holds five latents of size d:

    dh/dt = F(h) Ẋ,                    F(h) = tanh(W2 relu(W1 h)) ∈ R^{d×2}        (CDE, temporal)
    dz/dt = G(agc(z)) ⊙ F(h) Ẋ,        agc(z) = z + Ā_sem relu(W_z z),  G(·) = tanh(W_G ·) ∈ R^d
    ds/dt = -β ⊙ s ⊙ (Â(t) i) + ω ⊙ r                                           (epidemic mechanism,
    di/dt =  β ⊙ s ⊙ (Â(t) i) - γ ⊙ i                                            paper Eq. for EANO:
    dr/dt =  γ ⊙ i - ω ⊙ r                                                       transmission ∝ S Σ_u e_vu I_u)

with learned, data-driven rates β = 2 σ(W_β [h ‖ z]), γ = σ(W_γ h) and a learned waning
rate ω = σ(w_ω) (bounded so that the fixed-step solve stays stable), and Â(t) the continuous transmission graph of GLTG (`lib/earth/gltg.py`),
recomputed from z(t) at every evaluation. (The released code's G is a full d × d matrix per
region, G(·) F(h) Ẋ; a diagonal G, i.e. an elementwise gate, keeps the z-equation d times
cheaper, which is what makes the CPU runs fit.) (s, i, r) start as fractions (a softmax over the
three compartments), and the mechanism conserves s + i + r. With d = 1, Â = the true mixing
matrix and β, γ, ω the simulator's rates, `epidemic_rhs` is exactly the simulator's
equation (tests/earth/test_earth_eano.py checks the diffrax solve against the simulator).

The `neural` mechanism (the "w/o EANO" ablation) replaces the three epidemic lines by a
generic graph ODE of the same size, d[s‖i‖r]/dt = tanh(W [s‖i‖r ‖ Â(s‖i‖r) ‖ h]).
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


class EANOField(nn.Module):
    """The vector field of one sample: y = {h, z, s, i, r} each [N, d], xdot [N, 2].

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
        d = self.hidden
        h, z, s, i, r = y["h"], y["z"], y["s"], y["i"], y["r"]
        n = h.shape[0]
        f = jnp.tanh(self.f2(nn.relu(self.f1(h)))).reshape(n, d, 2)
        u = jnp.einsum("ndc,nc->nd", f, xdot)
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


def solve_eano(field: EANOField, field_params, y0, window, geo, sem, *, solver: str,
               adjoint: str, dt: float):
    """Integrate the EANO field driven by `window` [W, N] over t ∈ [0, W-1]; returns y(W-1)."""
    path = control_path(window)

    def vf(t, y, args):
        params, path_, geo_, sem_ = args
        return field.apply(params, y, path_.derivative(t), geo_, sem_)

    return integrate(vf, y0, 0.0, float(window.shape[0] - 1), (field_params, path, geo, sem),
                     solver=solver, adjoint=adjoint, dt=dt)
