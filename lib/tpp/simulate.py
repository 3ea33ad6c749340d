"""Simulators for single sequences as pure JAX functions, and a batched driver.

Each simulator maps `(key, ...) -> (Events row, complete)` for ONE sequence: fixed-size
arrays (`max_len` slots) plus a flag that is False when `max_len` slots or the proposal
budget were too few to cover [0, t_max]. `batch(sim, key, n)` vmaps a simulator over n
keys and raises ValueError when any sequence is incomplete, so a truncated sample is never
used silently.

Processes here: homogeneous Poisson, renewal (any positive gap sampler), self-correcting
(exact inversion of its compensator), and Lewis thinning for an intensity with a
constant upper bound. Hawkes (Ogata thinning) lives in `lib.tpp.hawkes`, the neural TPP
sampler in `lib.tpp.neural`.
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from lib.tpp.events import Events, compact


def _row(times, keep, t_max, max_len, marks=None):
    marks = jnp.zeros(times.shape, jnp.int32) if marks is None else marks
    ev = compact(times[None], marks[None], keep[None], jnp.asarray([t_max], jnp.float32), max_len)
    return Events(ev.times[0], ev.marks[0], ev.mask[0], ev.t_max[0])


def renewal(key, gap_sampler: Callable, t_max: float, max_len: int):
    """Renewal process started at 0: gaps `gap_sampler(key, (max_len + 1,))`, cumulated.

    complete: the (max_len + 1)-th arrival lies beyond t_max (so nothing was cut off).
    """
    arrivals = jnp.cumsum(gap_sampler(key, (max_len + 1,)))
    keep = arrivals[:max_len] <= t_max
    return _row(arrivals[:max_len], keep, t_max, max_len), arrivals[max_len] > t_max


def homogeneous_poisson(key, rate: float, t_max: float, max_len: int):
    """Poisson process of constant `rate` on [0, t_max] (exponential gaps)."""
    return renewal(key, lambda k, s: jax.random.exponential(k, s) / rate, t_max, max_len)


def gamma_renewal(key, shape: float, t_max: float, max_len: int):
    """Renewal process with Gamma(shape, scale=1/shape) gaps (mean 1, variance 1/shape)."""
    return renewal(key, lambda k, s: jax.random.gamma(k, shape, s) / shape, t_max, max_len)


def self_correcting(key, mu: float, alpha: float, t_max: float, max_len: int):
    """Self-correcting process λ(t) = exp(μ t − α N(t)) by exact inversion.

    Between events Λ(t_i → s) = e^{−α i}(e^{μ s} − e^{μ t_i})/μ; with E ~ Exp(1),
    t_{i+1} = t_i + log1p(μ E e^{α i − μ t_i}) / μ (stable for small μ).
    """
    e = jax.random.exponential(key, (max_len + 1,))

    def step(t, xs):
        i, ei = xs
        t_next = t + jnp.log1p(mu * ei * jnp.exp(alpha * i - mu * t)) / mu
        return t_next, t_next

    _, arrivals = jax.lax.scan(step, jnp.float32(0.0), (jnp.arange(max_len + 1, dtype=jnp.float32), e))
    keep = arrivals[:max_len] <= t_max
    return _row(arrivals[:max_len], keep, t_max, max_len), arrivals[max_len] > t_max


def thinning(key, intensity: Callable, bound: float, t_max: float, max_len: int,
             max_proposals: int, num_marks: int = 1):
    """Lewis thinning for a deterministic intensity `intensity(t) -> (K,)` with
    Σ_k intensity_k(t) <= bound on [0, t_max]. Marks are drawn ∝ intensity_k(t).

    complete: the proposals covered [0, t_max] and at most `max_len` events were kept.
    """
    k_gap, k_acc, k_mark = jax.random.split(key, 3)
    props = jnp.cumsum(jax.random.exponential(k_gap, (max_proposals,)) / bound)
    lam = jax.vmap(intensity)(props).reshape(max_proposals, num_marks)
    total = lam.sum(-1)
    keep = (jax.random.uniform(k_acc, (max_proposals,)) * bound < total) & (props <= t_max)
    marks = jax.random.categorical(k_mark, jnp.log(jnp.maximum(lam, 1e-30)), axis=-1)
    complete = (props[-1] > t_max) & (keep.sum() <= max_len)
    return _row(props, keep, t_max, max_len, marks.astype(jnp.int32)), complete


def batch(sim: Callable, key, n: int, what: str = "simulation") -> Events:
    """vmap `sim(key) -> (Events row, complete)` over `n` keys; ValueError if any row is
    incomplete (raise max_len / max_proposals)."""
    rows, complete = jax.jit(jax.vmap(sim))(jax.random.split(key, n))
    bad = int((~complete).sum())
    if bad:
        raise ValueError(f"{what}: {bad} of {n} sequences did not fit in "
                         f"{rows.times.shape[1]} slots or the proposal budget; raise max_len")
    return rows
