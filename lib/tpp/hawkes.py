"""Multivariate Hawkes process with exponential kernels: likelihood, compensator, MLE, Ogata.

    λ_k(t) = μ_k + Σ_{t_l < t} α_{k, m_l} β_{k, m_l} exp(−β_{k, m_l} (t − t_l))

Parameters: {"mu": (K,), "alpha": (K, K), "beta": (K, K)}; α_{kj} is the branching ratio
(expected number of mark-k children of one mark-j event, the kernel's integral; the
convention of `tick`'s `adjacency`), β_{kj} the decay. Stationary iff the spectral radius
of α is < 1.

Everything is an O(L) `lax.scan` over events with the state R_{kj}(t) = Σ_{l: m_l = j}
exp(−β_{kj}(t − t_l)); between events t_{i−1} → t_i (Δ = t_i − t_{i−1}):

    Λ_k(t_i) − Λ_k(t_{i−1}) = μ_k Δ + Σ_j α_{kj} R_{kj}(t_{i−1}) (1 − e^{−β_{kj} Δ})
    λ_k(t_i)                 = μ_k + Σ_j α_{kj} β_{kj} R_{kj}(t_{i−1}) e^{−β_{kj} Δ}
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from lib.common import optim
from lib.tpp.events import Events, compact


def _scan_sequence(params, times, marks, mask, t_max):
    """One sequence -> (Λ_{m_i}(t_i) (L,), log λ_{m_i}(t_i) (L,), Λ_k(T) (K,))."""
    mu, alpha, beta = params["mu"], params["alpha"], params["beta"]
    K = mu.shape[0]

    def step(carry, x):
        t_prev, R, lam_cum = carry
        t, m, valid = x
        dt = t - t_prev
        decay = jnp.exp(-beta * dt)
        inc = mu * dt + jnp.sum(alpha * R * (1.0 - decay), axis=1)
        R_minus = R * decay
        lam = mu + jnp.sum(alpha * beta * R_minus, axis=1)
        new_cum = lam_cum + inc
        onehot = jax.nn.one_hot(m, K, dtype=R.dtype)
        R_new = R_minus + onehot[None, :]
        carry_new = (t, R_new, new_cum)
        carry = jax.tree.map(lambda a, b: jnp.where(valid, a, b), carry_new, carry)
        return carry, (new_cum[m], jnp.log(jnp.maximum(lam[m], 1e-30)))

    init = (jnp.float32(0.0), jnp.zeros((K, K), jnp.float32), jnp.zeros(K, jnp.float32))
    (t_last, R, lam_cum), (at, loglam) = jax.lax.scan(step, init, (times, marks, mask))
    dt = t_max - t_last
    total = lam_cum + mu * dt + jnp.sum(alpha * R * (1.0 - jnp.exp(-beta * dt)), axis=1)
    return jnp.where(mask, at, 0.0), jnp.where(mask, loglam, 0.0), total


def compensator(params, ev: Events) -> tuple[jnp.ndarray, jnp.ndarray]:
    """(Λ_{m_i}(t_i) (B, L), Λ_k(T) (B, K)) for a padded batch."""
    at, _, total = jax.vmap(_scan_sequence, in_axes=(None, 0, 0, 0, 0))(params, *ev)
    return at, total


def log_likelihood(params, ev: Events) -> jnp.ndarray:
    """Σ_i log λ_{m_i}(t_i) − Σ_k Λ_k(T) per sequence, (B,)."""
    _, loglam, total = jax.vmap(_scan_sequence, in_axes=(None, 0, 0, 0, 0))(params, *ev)
    return loglam.sum(-1) - total.sum(-1)


def spectral_radius(params) -> jnp.ndarray:
    return jnp.max(jnp.abs(jnp.linalg.eigvals(params["alpha"])))


# ----------------------------------------------------------------------------- MLE


def _constrain(raw):
    return {k: jax.nn.softplus(v) for k, v in raw.items()}


def _unconstrain(params):
    inv = lambda x: jnp.log(jnp.expm1(jnp.maximum(x, 1e-6)))   # inverse softplus
    return {k: inv(jnp.asarray(v, jnp.float32)) for k, v in params.items()}


def fit_mle(ev: Events, num_marks: int, *, num_steps: int = 500, lr: float = 0.05,
            init: dict | None = None, fit_beta: bool = True) -> tuple[dict, jnp.ndarray]:
    """Maximum likelihood by full-batch Adam on softplus-parametrised (μ, α, β).

    Returns (params, loss history (num_steps,)) where the loss is −log-likelihood per unit
    of observed time. Default start: μ_k = N_k / (2 T_total), α = 0.1, β = 1.
    """
    if init is None:
        counts = jnp.zeros(num_marks).at[ev.marks.reshape(-1)].add(ev.mask.reshape(-1))
        init = {"mu": jnp.maximum(counts / ev.t_max.sum() / 2, 1e-3),
                "alpha": jnp.full((num_marks, num_marks), 0.1),
                "beta": jnp.ones((num_marks, num_marks))}
    raw0 = _unconstrain(init)
    fixed_beta = raw0["beta"]
    total_time = ev.t_max.sum()
    opt = optax.adam(lr)

    def loss_fn(raw):
        if not fit_beta:
            raw = dict(raw, beta=fixed_beta)
        return -log_likelihood(_constrain(raw), ev).sum() / total_time

    raw, losses = jax.jit(lambda r: optim.minimize(loss_fn, r, opt, num_steps))(raw0)
    if not fit_beta:
        raw = dict(raw, beta=fixed_beta)
    return _constrain(raw), losses


# ----------------------------------------------------------------------------- Ogata thinning


def simulate(key, params, t_max: float, max_len: int, max_proposals: int | None = None):
    """One sequence by Ogata's thinning -> (Events row, complete flag).

    At the current time t the total intensity Σ_k λ_k(t+) bounds the intensity until the
    next event (kernels decay), so: propose s = t + Exp(1)/λ̄, accept with probability
    Σ_k λ_k(s)/λ̄, draw the mark ∝ λ_k(s). complete: the proposals passed t_max within
    `max_proposals` steps and at most `max_len` events were accepted.
    """
    mu, alpha, beta = (jnp.asarray(params[k], jnp.float32) for k in ("mu", "alpha", "beta"))
    K = mu.shape[0]
    max_proposals = max_proposals or 3 * max_len + 50

    def step(carry, k):
        t, R, count, done, times, marks = carry
        k1, k2, k3 = jax.random.split(k, 3)
        bound = jnp.sum(mu + jnp.sum(alpha * beta * R, axis=1))
        s = t + jax.random.exponential(k1) / bound
        R_s = R * jnp.exp(-beta * (s - t))
        lam_s = mu + jnp.sum(alpha * beta * R_s, axis=1)
        accept = jax.random.uniform(k2) * bound < lam_s.sum()
        m = jax.random.categorical(k3, jnp.log(jnp.maximum(lam_s, 1e-30)))
        in_window = s <= t_max
        take = accept & in_window & ~done
        slot = jnp.minimum(count, max_len - 1)
        times = jnp.where(take & (count < max_len), times.at[slot].set(s), times)
        marks = jnp.where(take & (count < max_len), marks.at[slot].set(m), marks)
        R_new = R_s + jnp.where(take, jax.nn.one_hot(m, K), 0.0)[None, :]
        t_new = jnp.where(done, t, s)
        R_new = jnp.where(done, R, R_new)
        return (t_new, R_new, count + take, done | ~in_window, times, marks), None

    init = (jnp.float32(0.0), jnp.zeros((K, K)), jnp.int32(0), jnp.bool_(False),
            jnp.full(max_len, t_max, jnp.float32), jnp.zeros(max_len, jnp.int32))
    (_, _, count, done, times, marks), _ = jax.lax.scan(
        step, init, jax.random.split(key, max_proposals))
    keep = jnp.arange(max_len) < count
    ev = compact(times[None], marks[None], keep[None], jnp.asarray([t_max], jnp.float32), max_len)
    row = Events(ev.times[0], ev.marks[0], ev.mask[0], ev.t_max[0])
    return row, done & (count <= max_len)
