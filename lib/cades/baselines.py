"""Test statistics on rescaled sequences: the CADES scores and the baselines, batched.

All statistics map a `Rescaled` batch (τ on [0, V], mask) to (B,) and go through the same
two-sided split-conformal p-values (`lib.cades.conformal`):

  kl_arr, kl_int  the two CADES scores (`lib.cades.scores`), each alone = "CADES-arr/int"
  ks_arrival      √N · sup |F_N(u) − u| of u_i = τ_i / V against U[0,1]
  ks_interevent   √(N+1) · KS of the N + 1 gaps against Exp(1) (via 1 − e^{−w})
  sss             sum of squared spacings (3S): Σ_i w_i² / V over the N + 1 gaps
  chi2            Pearson χ² of the counts in 10 equal buckets of (0, V] against N/10 each
                  (0 for an empty sequence); as in the official code, the window end V is
                  counted in the last bucket (`count_end`)
  q_plus, q_minus MultiAD-Q±: (Σ_i w_i² ± Σ_i w_i w_{i+1}) / V over the N + 1 gaps (adjacent
                  pairs), i.e. 3S plus or minus the lag-1 spacing products

(KS and 3S as in Shchur et al., 2021, `statistics.py`; χ² and Q± as in CADES's
`anomaly_tpp/statistics.py`; an empty sequence has KS = 1.)
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from lib.cades import scores as sc
from lib.tpp.events import on_host
from lib.tpp.rescale import Rescaled, concatenate_marks, gaps

STATISTICS = ("kl_arr", "kl_int", "ks_arrival", "ks_interevent", "sss", "chi2", "q_plus",
              "q_minus")


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


def chi_squared(r: Rescaled, num_buckets: int = 10, count_end: bool = True) -> jnp.ndarray:
    """Pearson χ² (B,) of the bucket counts of τ_i / V in ((k−1)/K, k/K], k = 1..K, against
    the expected N/K each: Σ_k (c_k − N/K)² / (N/K); 0 when N = 0. `count_end`: add the
    window end V to the last bucket, as the official code does (its sequences end with V)."""
    u = r.tau / r.V[:, None]
    idx = jnp.clip(jnp.ceil(u * num_buckets).astype(jnp.int32) - 1, 0, num_buckets - 1)
    counts = (jax.nn.one_hot(idx, num_buckets) * r.mask[..., None]).sum(1)     # (B, K)
    if count_end:
        counts = counts.at[:, -1].add(1.0)
    n = r.mask.sum(-1).astype(counts.dtype)
    expected = jnp.maximum(n, 1.0)[:, None] / num_buckets
    stat = ((counts - expected) ** 2 / expected).sum(-1)
    return jnp.where(n > 0, stat, 0.0)


def _q_stat(r: Rescaled, sign: float) -> jnp.ndarray:
    w, m = gaps(r)
    w = jnp.where(m, w, 0.0)
    return ((w * w).sum(-1) + sign * (w[:, :-1] * w[:, 1:]).sum(-1)) / r.V


def q_plus(r: Rescaled) -> jnp.ndarray:
    """MultiAD-Q+ (B,): (Σ_{i=0}^{N} w_i² + Σ_{i=0}^{N−1} w_i w_{i+1}) / V."""
    return _q_stat(r, 1.0)


def q_minus(r: Rescaled) -> jnp.ndarray:
    """MultiAD-Q− (B,): (Σ_{i=0}^{N} w_i² − Σ_{i=0}^{N−1} w_i w_{i+1}) / V."""
    return _q_stat(r, -1.0)


def statistic_fns(names: Sequence[str], h_arr: float, h_int: float) -> dict[str, Callable]:
    """{name: Rescaled -> (B,)} for the named statistics (bandwidths for the KL scores)."""
    table = {"kl_arr": lambda r: sc.kl_arr(r, h_arr), "kl_int": lambda r: sc.kl_int(r, h_int),
             "ks_arrival": ks_arrival, "ks_interevent": ks_interevent, "sss": sss,
             "chi2": chi_squared, "q_plus": q_plus, "q_minus": q_minus}
    bad = [n for n in names if n not in table]
    if bad:
        raise ValueError(f"unknown statistic(s) {bad}; allowed: {list(STATISTICS)}")
    return {n: table[n] for n in names}


def make_scorer(compensator: Callable, statistics: Mapping[str, Callable],
                chunk: int = 256) -> Callable:
    """A function `ev -> {name: (B,)}` that rescales with `compensator(ev) -> (at_events,
    total)` and evaluates every statistic, `chunk` sequences at a time under one jit (it
    compiles once per sequence length). The chunks are cut and padded (with copies of the
    last sequence) in NumPy on the host: as JAX operations outside the jit they would each
    compile once per batch and sequence length."""
    names = list(statistics)

    @jax.jit
    def run(part):
        r = concatenate_marks(*compensator(part), part)
        return jnp.stack([statistics[n](r) for n in names])

    def score(ev) -> dict[str, np.ndarray]:
        ev = on_host(ev)
        B = ev.times.shape[0]
        outs = []
        for start in range(0, B, chunk):
            part = type(ev)(*(a[start:start + chunk] for a in ev))
            b = part.times.shape[0]
            if b < chunk:
                part = type(ev)(*(np.concatenate([a, np.repeat(a[-1:], chunk - b, 0)], 0)
                                  for a in part))
            outs.append(np.asarray(run(part))[:, :b])
        out = np.concatenate(outs, axis=1)
        return {n: out[i] for i, n in enumerate(names)}

    return score
