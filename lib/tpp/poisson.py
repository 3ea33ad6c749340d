"""Poisson processes: homogeneous, sinusoidal-rate and piecewise-constant-rate.

Parameters are plain dicts of arrays (K = number of marks):
    homogeneous     {"rate": (K,)}                               λ_k(t) = rate_k
    sinusoidal      {"base": (K,), "amplitude": (K,), "period": ()}
                    λ_k(t) = base_k + amplitude_k sin(2π t / period)   (needs |amp| <= base)
    piecewise       {"breaks": (J,), "rates": (J + 1, K)}         rate j on [b_{j-1}, b_j)

Each family has `intensity(params, t) -> (K,)`, `cumulative(params, t) -> (K,)` (the
compensator Λ_k(t) = ∫_0^t λ_k), and `simulate(key, params, t_max, max_len, ...)`.
`compensator(family, params, ev)` and `log_likelihood(family, params, ev)` work on padded
batches; `fit_homogeneous` is the closed-form MLE rate_k = N_k / T.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from lib.tpp import simulate as sim
from lib.tpp.events import Events

# ----------------------------------------------------------------------------- families


def _hom_intensity(p, t):
    return jnp.asarray(p["rate"], jnp.float32) * jnp.ones_like(t)


def _hom_cumulative(p, t):
    return jnp.asarray(p["rate"], jnp.float32) * t


def _sin_intensity(p, t):
    return p["base"] + p["amplitude"] * jnp.sin(2 * jnp.pi * t / p["period"])


def _sin_cumulative(p, t):
    w = 2 * jnp.pi / p["period"]
    return p["base"] * t + p["amplitude"] * (1.0 - jnp.cos(w * t)) / w


def _pw_intensity(p, t):
    j = jnp.searchsorted(p["breaks"], t, side="right")
    return p["rates"][j]


def _pw_cumulative(p, t):
    edges = jnp.concatenate([jnp.zeros(1), p["breaks"]])
    ends = jnp.concatenate([p["breaks"], jnp.full(1, jnp.inf)])
    overlap = jnp.clip(jnp.minimum(ends, t) - edges, 0.0, None)        # (J + 1,)
    return overlap @ p["rates"]


FAMILIES = {
    "homogeneous": (_hom_intensity, _hom_cumulative),
    "sinusoidal": (_sin_intensity, _sin_cumulative),
    "piecewise": (_pw_intensity, _pw_cumulative),
}


def _family(name: str):
    if name not in FAMILIES:
        raise ValueError(f"unknown Poisson family {name!r}; allowed: {sorted(FAMILIES)}")
    return FAMILIES[name]


def intensity(family: str, params, t) -> jnp.ndarray:
    """λ_k(t), shape (K,)."""
    return jnp.atleast_1d(_family(family)[0](params, t))


def cumulative(family: str, params, t) -> jnp.ndarray:
    """Λ_k(t) = ∫_0^t λ_k(s) ds, shape (K,)."""
    return jnp.atleast_1d(_family(family)[1](params, t))


# ----------------------------------------------------------------------------- batches


def compensator(family: str, params, ev: Events) -> tuple[jnp.ndarray, jnp.ndarray]:
    """(Λ_{m_i}(t_i) (B, L), Λ_k(T) (B, K)) for a padded batch (padding entries are 0)."""
    cum = _family(family)[1]
    at = jax.vmap(jax.vmap(lambda t: jnp.atleast_1d(cum(params, t))))(ev.times)   # (B, L, K)
    at = jnp.take_along_axis(at, ev.marks[..., None], axis=-1)[..., 0]
    total = jax.vmap(lambda t: jnp.atleast_1d(cum(params, t)))(ev.t_max)
    return jnp.where(ev.mask, at, 0.0), total


def log_likelihood(family: str, params, ev: Events) -> jnp.ndarray:
    """Σ_i log λ_{m_i}(t_i) − Σ_k Λ_k(T) per sequence, (B,)."""
    lam = _family(family)[0]
    at = jax.vmap(jax.vmap(lambda t: jnp.atleast_1d(lam(params, t))))(ev.times)
    at = jnp.take_along_axis(at, ev.marks[..., None], axis=-1)[..., 0]
    _, total = compensator(family, params, ev)
    return jnp.where(ev.mask, jnp.log(jnp.maximum(at, 1e-30)), 0.0).sum(-1) - total.sum(-1)


def fit_homogeneous(ev: Events, num_marks: int) -> dict:
    """Closed-form MLE: rate_k = (events of mark k) / (total observed time)."""
    counts = jnp.zeros(num_marks).at[ev.marks.reshape(-1)].add(ev.mask.reshape(-1))
    return {"rate": counts / ev.t_max.sum()}


# ----------------------------------------------------------------------------- simulation


def simulate(key, family: str, params, t_max: float, max_len: int, max_proposals: int | None = None):
    """One sequence (Events row, complete flag) by Lewis thinning; the bound is
    Σ_k max rate (homogeneous, piecewise) or Σ_k (base_k + |amplitude_k|) (sinusoidal)."""
    lam = _family(family)[0]
    if family == "homogeneous":
        k = jnp.atleast_1d(params["rate"]).shape[0]
        bound = jnp.sum(jnp.atleast_1d(params["rate"]))
    elif family == "sinusoidal":
        k = jnp.atleast_1d(params["base"]).shape[0]
        bound = jnp.sum(jnp.atleast_1d(params["base"]) + jnp.abs(jnp.atleast_1d(params["amplitude"])))
    else:
        k = params["rates"].shape[1]
        bound = jnp.max(params["rates"].sum(-1))
    max_proposals = max_proposals or 2 * max_len
    return sim.thinning(key, lambda t: jnp.atleast_1d(lam(params, t)), bound, t_max, max_len,
                        max_proposals, num_marks=k)
