"""Metapopulation SIRS epidemic on a mobility graph, with seasonal forcing and reporting noise.

Regions v = 1..N with populations P_v sit at random points of the unit square; regions
closer than `radius` (and every region's nearest neighbour) are adjacent. Mixing is
row-stochastic,

    C = (1 - m) I + m · rownorm(A_off ⊙ P_u),            (travel to neighbours ∝ population)

and the compartment fractions s, i, r of each region follow (time in weeks)

    ds_v/dt = -β(t) s_v Σ_u C_vu i_u + ω r_v
    di_v/dt =  β(t) s_v Σ_u C_vu i_u - γ i_v
    dr_v/dt =  γ i_v - ω r_v,          β(t) = β0 (1 + a cos(2π (t - φ) / 52)).

This is the epidemic mechanism EANO assumes (paper: transmission ∝ S · Σ_u e_vu I_u,
recovery ∝ γ I). Weekly reported counts are Gamma–Poisson (negative binomial) draws around
ρ · P_v · (new infections in the week). The ODE is integrated with numpy RK4 at
`substeps` steps per week, independently of the diffrax code in `lib/earth/eano.py`, so
the test comparing the two checks something.
"""
from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class SimConfig:
    num_regions: int = 10
    num_weeks: int = 520
    radius: float = 0.35
    mobility: float = 0.1          # m: fraction of contacts made in neighbouring regions
    beta0: float = 2.2             # per week
    gamma: float = 1.4             # per week (about 5-day infectious period)
    omega: float = 1.0 / 40.0      # per week (waning immunity, recurring seasons)
    seasonal_amp: float = 0.35
    phase: float = 0.0             # weeks
    report_rate: float = 0.02
    dispersion: float = 20.0       # negative-binomial size; inf -> Poisson
    mean_population: float = 1e6
    substeps: int = 14
    seed: int = 0


def _graph(rng: np.random.Generator, n: int, radius: float):
    pos = rng.uniform(size=(n, 2))
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    adj = (dist < radius).astype(np.float64)
    far = dist + np.eye(n) * 1e9
    nearest = far.argmin(axis=1)
    adj[np.arange(n), nearest] = 1.0
    adj = np.maximum(adj, adj.T)
    np.fill_diagonal(adj, 1.0)
    while True:  # join components by their closest pair until the graph is connected
        reach = np.zeros(n, bool)
        reach[0] = True
        for _ in range(n):
            reach = reach | (adj[reach].sum(axis=0) > 0)
        if reach.all():
            return pos, adj
        sub = np.where(reach[:, None] & ~reach[None, :], dist, np.inf)
        a, b = np.unravel_index(np.argmin(sub), sub.shape)
        adj[a, b] = adj[b, a] = 1.0


def mixing_matrix(adj: np.ndarray, populations: np.ndarray, mobility: float) -> np.ndarray:
    """C = (1 - m) I + m rownorm(A_off ⊙ P_u): [N, N] row-stochastic (isolated rows stay I)."""
    n = adj.shape[0]
    off = adj * (1.0 - np.eye(n)) * populations[None, :]
    rows = off.sum(axis=1, keepdims=True)
    travel = np.where(rows > 0, off / np.maximum(rows, 1e-300), 0.0)
    has = (rows[:, 0] > 0).astype(np.float64)
    return np.eye(n) * (1.0 - mobility * has)[:, None] + mobility * travel


def beta_at(t, cfg: SimConfig):
    """β(t) (per week) for t in weeks."""
    return cfg.beta0 * (1.0 + cfg.seasonal_amp * np.cos(2 * np.pi * (np.asarray(t) - cfg.phase) / 52.0))


def sirs_rhs(t, y, cfg: SimConfig, mix: np.ndarray):
    """y = (s, i, r, cum) each [N]; cum integrates new infections (fraction of P_v)."""
    s, i, r, _ = y
    force = beta_at(t, cfg) * s * (mix @ i)
    return (-force + cfg.omega * r, force - cfg.gamma * i, cfg.gamma * i - cfg.omega * r, force)


def _rk4(f, t, y, dt):
    k1 = f(t, y)
    k2 = f(t + dt / 2, tuple(a + dt / 2 * b for a, b in zip(y, k1)))
    k3 = f(t + dt / 2, tuple(a + dt / 2 * b for a, b in zip(y, k2)))
    k4 = f(t + dt, tuple(a + dt * b for a, b in zip(y, k3)))
    return tuple(a + dt / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(y, k1, k2, k3, k4))


def simulate(cfg: SimConfig = SimConfig()) -> dict:
    """Run the simulator; everything the forecaster cannot see is returned as ground truth.

    Returns a dict with
      counts [T, N] float64 reported weekly counts (the forecasting series),
      adjacency [N, N] 0/1 with self loops (what a benchmark's adjacency file holds),
      mixing [N, N] the true coupling C, populations [N], positions [N, 2],
      s, i, r [T + 1, N] fractions at weeks 0..T, incidence [T, N] true weekly new
      infections (fraction), beta [T + 1] β at weeks 0..T, and the scalar rates.
    """
    if cfg.num_regions < 2 or cfg.num_weeks < 2 or cfg.substeps < 1:
        raise ValueError(f"simulator needs num_regions >= 2, num_weeks >= 2, substeps >= 1; got {cfg}")
    rng = np.random.default_rng(cfg.seed)
    n = cfg.num_regions
    pos, adj = _graph(rng, n, cfg.radius)
    pop = cfg.mean_population * rng.lognormal(0.0, 0.6, size=n)
    mix = mixing_matrix(adj, pop, cfg.mobility)
    i0 = np.zeros(n)
    i0[rng.choice(n, size=max(1, n // 5), replace=False)] = 1e-3
    r0 = rng.uniform(0.1, 0.4, size=n)
    y = (1.0 - i0 - r0, i0, r0, np.zeros(n))
    f = lambda t, yy: sirs_rhs(t, yy, cfg, mix)  # noqa: E731
    dt = 1.0 / cfg.substeps
    traj = [y]
    for week in range(cfg.num_weeks):
        for k in range(cfg.substeps):
            y = _rk4(f, week + k * dt, y, dt)
        traj.append(y)
    s, i, r, cum = (np.stack([t[j] for t in traj]) for j in range(4))
    incidence = np.diff(cum, axis=0)
    mean = cfg.report_rate * pop[None, :] * incidence
    if np.isinf(cfg.dispersion):
        counts = rng.poisson(mean)
    else:
        counts = rng.poisson(rng.gamma(cfg.dispersion, np.maximum(mean, 1e-12) / cfg.dispersion))
    return dict(counts=counts.astype(np.float64), adjacency=adj, mixing=mix, populations=pop,
                positions=pos, s=s, i=i, r=r, incidence=incidence,
                beta=beta_at(np.arange(cfg.num_weeks + 1), cfg), gamma=cfg.gamma,
                omega=cfg.omega)
