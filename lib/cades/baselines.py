"""Test statistics on rescaled sequences: the CADES scores and the baselines, batched.

All statistics map a `Rescaled` batch (τ on [0, V], mask) to (B,) and go through the same
two-sided split-conformal p-values (`lib.cades.conformal`):

  kl_arr, kl_int  the two CADES scores (`lib.cades.scores`), each alone = "CADES-arr/int"
  ks_arrival      √N · sup |F_N(u) − u| of u_i = τ_i / V against U[0,1]
  ks_interevent   √(N+1) · KS of the N + 1 gaps against Exp(1) (via 1 − e^{−w})
  sss             sum of squared spacings (3S): Σ_i w_i² / V over the N + 1 gaps

(KS and 3S as in Shchur et al., 2021, `statistics.py`; an empty sequence has KS = 1.)
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from lib.cades import scores as sc
from lib.tpp.rescale import Rescaled, concatenate_marks, gaps

STATISTICS = ("kl_arr", "kl_int", "ks_arrival", "ks_interevent", "sss")


def _ks_sorted(x: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """√n · KS distance of sorted masked U[0,1] candidates x (L,) (mask is a prefix)."""
    n = mask.sum()
    nf = jnp.maximum(n, 1).astype(x.dtype)
    i = jnp.arange(1, x.shape[0] + 1, dtype=x.dtype)
    d_plus = jnp.max(jnp.where(mask, i / nf - x, -jnp.inf))
    d_minus = jnp.max(jnp.where(mask, x - (i - 1) / nf, -jnp.inf))
    return jnp.where(n > 0, jnp.maximum(d_plus, d_minus) * jnp.sqrt(nf), 1.0)


def ks_arrival(r: Rescaled) -> jnp.ndarray:
    return jax.vmap(_ks_sorted)(r.tau / r.V[:, None], r.mask)


def ks_interevent(r: Rescaled) -> jnp.ndarray:
    w, m = gaps(r)
    x = jnp.sort(jnp.where(m, 1.0 - jnp.exp(-w), jnp.inf), axis=-1)
    m_sorted = jnp.arange(w.shape[1])[None] < m.sum(-1, keepdims=True)
    return jax.vmap(_ks_sorted)(jnp.where(m_sorted, x, 0.0), m_sorted)


def sss(r: Rescaled) -> jnp.ndarray:
    w, m = gaps(r)
    return jnp.where(m, w * w, 0.0).sum(-1) / r.V


def statistic_fns(names: Sequence[str], h_arr: float, h_int: float) -> dict[str, Callable]:
    """{name: Rescaled -> (B,)} for the named statistics (bandwidths for the KL scores)."""
    table = {"kl_arr": lambda r: sc.kl_arr(r, h_arr), "kl_int": lambda r: sc.kl_int(r, h_int),
             "ks_arrival": ks_arrival, "ks_interevent": ks_interevent, "sss": sss}
    bad = [n for n in names if n not in table]
    if bad:
        raise ValueError(f"unknown statistic(s) {bad}; allowed: {list(STATISTICS)}")
    return {n: table[n] for n in names}


def make_scorer(compensator: Callable, statistics: Mapping[str, Callable],
                chunk: int = 256) -> Callable:
    """A function `ev -> {name: (B,)}` that rescales with `compensator(ev) -> (at_events,
    total)` and evaluates every statistic, `chunk` sequences at a time under one jit (it
    compiles once per sequence length)."""
    names = list(statistics)

    @jax.jit
    def run(part):
        r = concatenate_marks(*compensator(part), part)
        return jnp.stack([statistics[n](r) for n in names])

    def score(ev) -> dict[str, np.ndarray]:
        B = ev.times.shape[0]
        outs = []
        for start in range(0, B, chunk):
            part = type(ev)(*(a[start:start + chunk] for a in ev))
            b = part.times.shape[0]
            if b < chunk:
                part = type(ev)(*(jnp.concatenate([a, jnp.repeat(a[-1:], chunk - b, 0)], 0)
                                  for a in part))
            outs.append(np.asarray(run(part))[:, :b])
        out = np.concatenate(outs, axis=1)
        return {n: out[i] for i, n in enumerate(names)}

    return score
