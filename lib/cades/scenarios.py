"""Synthetic scenarios: goodness-of-fit alternatives to a standard Poisson process, and the
multivariate server-stop / server-overload / latency scenarios (after Shchur et al., 2021,
`scenarios/spp.py` and `scenarios/multivariate.py`, as used by CADES).

Each `Scenario` has `sample_id(key, n)` and `sample_ood(key, n, eta) -> Events` where the
detectability η ∈ [0, eta_max] interpolates from in-distribution (η = 0) to clearly
anomalous. SPP families (ID: Poisson rate 1 on [0, T]):

  increasing_rate   rate 1 + 0.5 η                    decreasing_rate  rate 1 − 0.5 η
  inhomogeneous     λ(t) = max(0, 1 + 2η sin(2πt/50))  stopping         no events after T(1 − 0.3η)
  renewal_up        Gamma(k, 1/k) gaps, k = 1 + 4η     renewal_down     Gamma gaps, k = 1 − η
  hawkes            exp. kernel, branching η, μ = 1 − η, β = 1
  self_correcting   λ(t) = exp(μt − αN(t)), μ = α = η + 1e-5
  uniform           gaps (1 − η) E + η, E ~ Exp(1) (mean 1; η = 1: regular spacing)

The official code's versions of two families (`Zh-Shuai/CADES`, `simulate/uniform.py` and
`simulate/poisson.py`), used by its published plots:

  uniform_official        deterministic comb: events at k(1 + 2η), k = 1, 2, ..., strictly
                          inside (0, T) (not Poisson even at η = 0)
  inhomogeneous_official  λ(t) = clip(1 + 2η sin(2πt/50), 0, 2) (its thinning proposes at
                          rate 2, so the intensity is capped at 2; equal to `inhomogeneous`
                          for η <= 0.5)

Multivariate (T = 100, β = 1): server_* is a 3-mark Hawkes with μ = (3, 0, 0) and
α_{1,0} = α_{2,0} = 1 (mark 0 triggers 1 and 2); after the failure time T − 50η the
sequence restarts from a process without the edge 0→2 (stop), and also with α_{1,0} = 2
(overload). latency: triggers ~ Poisson(3), each answered (mark 1) after a
N(1 + 0.3η, 0.1²) delay.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from lib.tpp import hawkes, poisson
from lib.tpp import simulate as sim
from lib.tpp.events import Events, compact

SPP_FAMILIES = ("increasing_rate", "decreasing_rate", "inhomogeneous", "stopping", "renewal_up",
                "renewal_down", "hawkes", "self_correcting", "uniform")
ALL_SPP_FAMILIES = SPP_FAMILIES + ("inhomogeneous_official", "uniform_official")
# the nine families of the official experiments/spp.py, in its order
OFFICIAL_SPP_FAMILIES = ("increasing_rate", "decreasing_rate", "inhomogeneous_official",
                         "renewal_up", "renewal_down", "hawkes", "self_correcting", "stopping",
                         "uniform_official")
MULTIVARIATE = ("server_stop", "server_overload", "latency")
SCENARIOS = ALL_SPP_FAMILIES + MULTIVARIATE

# (h_arr, h_int) hard-coded per scenario in CADES's experiments/*.py (see the notes).
PAPER_BANDWIDTHS = {
    "increasing_rate": (0.005, 1.0), "decreasing_rate": (0.005, 1.0),
    "inhomogeneous": (0.1, 1.0), "renewal_up": (0.05, 1.0), "renewal_down": (0.1, 0.5),
    "hawkes": (0.1, 1.0), "self_correcting": (0.1, 0.5), "stopping": (0.05, 1.0),
    "uniform": (0.1, 0.1), "inhomogeneous_official": (0.1, 1.0), "uniform_official": (0.1, 0.1),
    "server_stop": (0.01, 0.01), "server_overload": (0.01, 0.01),
    "latency": (0.5, 0.5),
}


@dataclasses.dataclass
class Scenario:
    name: str
    id_setting: str          # scenarios with the same ID process share it ("spp", "server", ...)
    num_marks: int
    t_max: float
    max_len: int             # slots for the ID and OOD samples
    eta_max: float
    _id: Callable            # key -> (row, complete)
    _ood: Callable           # (key, eta) -> (row, complete); eta may be traced

    def __post_init__(self):
        # one compilation per scenario, whatever the number of draws and η values
        self._id_batch = jax.jit(jax.vmap(self._id))
        self._ood_batch = jax.jit(jax.vmap(self._ood, in_axes=(0, None)))

    @staticmethod
    def _checked(rows, complete, what: str) -> Events:
        bad = int(np.sum(~np.asarray(complete)))      # on the host: no program per batch size
        if bad:
            raise ValueError(f"{what}: {bad} of {len(complete)} sequences did not fit in "
                             f"{rows.times.shape[1]} slots; raise max_len")
        return rows

    def sample_id(self, key, n: int) -> Events:
        return self._checked(*self._id_batch(jax.random.split(key, n)), f"{self.name} ID")

    def sample_ood(self, key, n: int, eta: float) -> Events:
        if not 0.0 <= eta <= self.eta_max:
            raise ValueError(f"{self.name}: detectability {eta!r} outside [0, {self.eta_max}]")
        return self._checked(*self._ood_batch(jax.random.split(key, n), jnp.float32(eta)),
                             f"{self.name} OOD (eta = {eta})")


def inhomogeneous_intensity(t, eta, cap=None):
    """λ(t) = 1 + 2η sin(2πt/50), clipped below at 0 and, with `cap`, above at `cap`
    (the official family: cap = 2). t: any shape -> same shape."""
    lam = jnp.maximum(1.0 + 2 * eta * jnp.sin(2 * jnp.pi * t / 50.0), 0.0)
    return lam if cap is None else jnp.minimum(lam, cap)


def comb(eta, t_max: float, max_len: int):
    """The official "uniform" sequence: events at k(1 + 2η) for k = 1, 2, ... while < t_max
    -> (Events row, complete). Deterministic; complete: every such event fit in max_len."""
    step = 1.0 + 2.0 * eta
    k = jnp.arange(1, max_len + 2, dtype=jnp.float32)
    times = k * step
    keep = times < t_max
    row = Events(jnp.where(keep, times, t_max)[:max_len], jnp.zeros(max_len, jnp.int32),
                 keep[:max_len], jnp.float32(t_max))
    return row, ~keep[max_len]


def hawkes_ogata(key, params, t_max: float, max_len: int, max_proposals: int | None = None):
    """Ogata thinning for an exponential-kernel Hawkes process -> (Events row, complete).

    The same draws as `lib.tpp.hawkes.simulate` (one key per proposal, split in three the
    same way: exponential gap, uniform acceptance, Gumbel mark noise), so the same key
    gives the same sequence. But all draws are made up front in one vectorised call, the
    scan carries only the state and emits each proposal and its accept flag, and the
    events are packed once at the end (`compact`): no (max_len,) buffer is rewritten at
    every step. P = max_proposals (default 3 max_len + 50). complete: the proposals passed
    t_max and at most max_len events were accepted.
    """
    mu, alpha, beta = (jnp.asarray(params[k], jnp.float32) for k in ("mu", "alpha", "beta"))
    K = mu.shape[0]
    max_proposals = max_proposals or 3 * max_len + 50
    keys = jax.vmap(lambda k: jax.random.split(k, 3))(jax.random.split(key, max_proposals))
    gap = jax.vmap(jax.random.exponential)(keys[:, 0])
    unif = jax.vmap(jax.random.uniform)(keys[:, 1])
    gumbel = jax.vmap(lambda k: jax.random.gumbel(k, (K,)))(keys[:, 2])

    def step(carry, x):
        t, R, count, done = carry
        e, u, g = x
        bound = jnp.sum(mu + jnp.sum(alpha * beta * R, axis=1))
        s = t + e / bound
        R_s = R * jnp.exp(-beta * (s - t))
        lam_s = mu + jnp.sum(alpha * beta * R_s, axis=1)
        accept = u * bound < lam_s.sum()
        m = jnp.argmax(jnp.log(jnp.maximum(lam_s, 1e-30)) + g)   # categorical ∝ lam_s
        in_window = s <= t_max
        take = accept & in_window & ~done
        R_new = jnp.where(done, R, R_s + jnp.where(take, jax.nn.one_hot(m, K), 0.0)[None, :])
        carry = (jnp.where(done, t, s), R_new, count + take, done | ~in_window)
        return carry, (s, m.astype(jnp.int32), take)

    init = (jnp.float32(0.0), jnp.zeros((K, K)), jnp.int32(0), jnp.bool_(False))
    (_, _, count, done), (s, m, take) = jax.lax.scan(step, init, (gap, unif, gumbel))
    ev = compact(s[None], m[None], take[None], jnp.asarray([t_max], jnp.float32), max_len)
    return Events(ev.times[0], ev.marks[0], ev.mask[0], ev.t_max[0]), done & (count <= max_len)


def _spp(name: str, t_max: float, max_len: int) -> Scenario:
    L = max_len
    pois = lambda key, rate: sim.homogeneous_poisson(key, rate, t_max, L)

    def ood(key, eta):
        if name == "increasing_rate":
            return pois(key, 1.0 + 0.5 * eta)
        if name == "decreasing_rate":
            return pois(key, 1.0 - 0.5 * eta)
        if name == "inhomogeneous":
            lam = lambda t: inhomogeneous_intensity(t, eta)[None]
            return sim.thinning(key, lam, 1.0 + 2 * eta, t_max, L, 3 * L)
        if name == "inhomogeneous_official":
            lam = lambda t: inhomogeneous_intensity(t, eta, cap=2.0)[None]
            return sim.thinning(key, lam, 2.0, t_max, L, 3 * L)
        if name == "uniform_official":
            return comb(eta, t_max, L)
        if name == "stopping":
            row, ok = pois(key, 1.0)
            keep = row.mask & (row.times <= t_max * (1.0 - 0.3 * eta))
            ev = compact(row.times[None], row.marks[None], keep[None], row.t_max[None], L)
            return Events(ev.times[0], ev.marks[0], ev.mask[0], ev.t_max[0]), ok
        if name == "renewal_up":
            return sim.gamma_renewal(key, 1.0 + 4.0 * eta, t_max, L)
        if name == "renewal_down":
            return sim.gamma_renewal(key, 1.0 - eta, t_max, L)
        if name == "hawkes":
            p = {"mu": jnp.array([1.0 - eta]), "alpha": jnp.array([[eta]]),
                 "beta": jnp.ones((1, 1))}
            return hawkes_ogata(key, p, t_max, L)
        if name == "self_correcting":
            return sim.self_correcting(key, eta + 1e-5, eta + 1e-5, t_max, L)
        if name == "uniform":
            gap = lambda k, s: (1.0 - eta) * jax.random.exponential(k, s) + eta
            return sim.renewal(key, gap, t_max, L)
        raise ValueError(f"unknown SPP family {name!r}")

    eta_max = 0.95 if name in ("renewal_down", "hawkes") else 1.0
    return Scenario(name, "spp", 1, t_max, L, eta_max, lambda k: pois(k, 1.0), ood)


SERVER_ID = {"mu": jnp.array([3.0, 0.0, 0.0]),
             "alpha": jnp.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
             "beta": jnp.ones((3, 3))}


def _server(name: str, t_max: float, max_len: int) -> Scenario:
    alpha_ood = SERVER_ID["alpha"].at[2, 0].set(0.0)
    if name == "server_overload":
        alpha_ood = alpha_ood.at[1, 0].set(2.0)
    ood_params = dict(SERVER_ID, alpha=alpha_ood)

    def ood(key, eta):
        t_fail = t_max - 0.5 * t_max * eta
        k1, k2 = jax.random.split(key)
        before, ok1 = hawkes.simulate(k1, SERVER_ID, t_fail, max_len)
        after, ok2 = hawkes.simulate(k2, ood_params, t_max - t_fail, max_len)
        times = jnp.concatenate([before.times, after.times + t_fail])
        marks = jnp.concatenate([before.marks, after.marks])
        keep = jnp.concatenate([before.mask, after.mask & (after.times + t_fail <= t_max)])
        ev = compact(times[None], marks[None], keep[None], jnp.asarray([t_max], jnp.float32),
                     max_len)
        ok = ok1 & ok2 & (keep.sum() <= max_len)
        return Events(ev.times[0], ev.marks[0], ev.mask[0], ev.t_max[0]), ok

    return Scenario(name, "server", 3, t_max, max_len, 1.0,
                    lambda k: hawkes.simulate(k, SERVER_ID, t_max, max_len), ood)


def _latency(t_max: float, max_len: int, rate: float = 3.0) -> Scenario:
    half = max_len // 2

    def sample(key, eta):
        k1, k2 = jax.random.split(key)
        trig, ok = sim.homogeneous_poisson(k1, rate, t_max, half)
        resp = trig.times + 1.0 + 0.3 * eta + 0.1 * jax.random.normal(k2, trig.times.shape)
        times = jnp.concatenate([trig.times, resp])
        marks = jnp.concatenate([jnp.zeros(half, jnp.int32), jnp.ones(half, jnp.int32)])
        keep = jnp.concatenate([trig.mask, trig.mask & (resp <= t_max) & (resp >= 0)])
        ev = compact(times[None], marks[None], keep[None], jnp.asarray([t_max], jnp.float32),
                     max_len)
        return Events(ev.times[0], ev.marks[0], ev.mask[0], ev.t_max[0]), ok

    return Scenario("latency", "latency", 2, t_max, max_len, 1.0, lambda k: sample(k, 0.0),
                    sample)


def make(name: str, t_max: float, max_len: int) -> Scenario:
    """The scenario `name` on [0, t_max] with `max_len` event slots."""
    if name in ALL_SPP_FAMILIES:
        return _spp(name, t_max, max_len)
    if name in ("server_stop", "server_overload"):
        return _server(name, t_max, max_len)
    if name == "latency":
        return _latency(t_max, max_len)
    raise ValueError(f"unknown scenario {name!r}; allowed: {list(SCENARIOS)}")


def standard_poisson_compensator(ev: Events):
    """The true ID model of the SPP scenarios: Λ(t) = t (rate 1)."""
    return poisson.compensator("homogeneous", {"rate": jnp.ones(1)}, ev)
