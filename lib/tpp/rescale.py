"""Time rescaling: a fitted TPP maps a sequence to a standard Poisson process.

Time-rescaling theorem: if Λ*_k is the compensator of mark k, the points Λ*_k(t_i) of the
mark-k events form a unit-rate Poisson process on [0, Λ*_k(T)]. As in CADES (and Shchur
et al., 2021, App. D) the K rescaled processes are concatenated into one unit-rate Poisson
sequence τ_1 < … < τ_N on [0, V], V = Σ_k Λ*_k(T): mark k is shifted by Σ_{j<k} Λ*_j(T).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax.numpy as jnp

from lib.tpp.events import Events


class Rescaled(NamedTuple):
    """tau (B, L): sorted rescaled arrivals, padding = V; mask (B, L): a prefix; V (B,)."""

    tau: jnp.ndarray
    mask: jnp.ndarray
    V: jnp.ndarray


def concatenate_marks(at_events: jnp.ndarray, total: jnp.ndarray, ev: Events) -> Rescaled:
    """(Λ_{m_i}(t_i) (B, L), Λ_k(T) (B, K)) -> one sorted unit-rate sequence per row."""
    offsets = jnp.cumsum(total, axis=-1) - total                       # (B, K) exclusive
    tau = at_events + jnp.take_along_axis(offsets, ev.marks, axis=-1)
    V = total.sum(-1)
    tau = jnp.sort(jnp.where(ev.mask, tau, jnp.inf), axis=-1)
    mask = jnp.arange(tau.shape[-1])[None, :] < ev.mask.sum(-1, keepdims=True)
    return Rescaled(jnp.where(mask, tau, V[:, None]), mask, V)


def rescale(compensator: Callable[[Events], tuple], ev: Events) -> Rescaled:
    """Apply a model's `compensator(ev) -> (at_events, total)` and concatenate marks."""
    at, total = compensator(ev)
    return concatenate_marks(at, total, ev)


def gaps(r: Rescaled) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Inter-event times w (B, L + 1) of [0, τ_1, …, τ_N, V] and their mask (N + 1 valid)."""
    B = r.tau.shape[0]
    padded = jnp.concatenate([jnp.zeros((B, 1)), r.tau, r.V[:, None]], axis=1)
    w = jnp.diff(padded, axis=1)                       # padding slots give 0 (tau = V there)
    n = r.mask.sum(-1, keepdims=True)
    mask = jnp.arange(w.shape[1])[None, :] <= n
    # index n holds V − τ_N because the padding of tau is V
    return w, mask
