"""A neural TPP: GRU history encoder, Weibull-mixture inter-event times, categorical marks.

As in CADES's released model (`recurrent_tpp.py` of Zh-Shuai/CADES, after Shchur et al.):
the GRU reads, for each event i, the feature x_i = [(log τ_i − m)/s, embed(mark_i)] with
τ_i = t_i − t_{i−1}; the context c_i (c_0 = learned h0) parametrises the next event:

    p(τ | c) = Σ_c w_c Weibull(τ / σ; rate_c, shape_c) / σ,  S_c(x) = exp(−rate_c x^{shape_c})
    p(mark = k | c) = softmax(W_m c)_k        (marks independent of time given history)

σ = exp(m) is the training set's geometric-mean gap (a fixed unit of time).
Per-mark compensator: Λ_k(t_i) = Σ_{j <= i} p(k | c_{j−1}) · (−log S(τ_j | c_{j−1})), and
Λ_k(T) adds the survival term of the open interval (t_N, T].

`NeuralTPP` is a Linen module that only declares the parameters; the math lives in the
pure functions below, which take that parameter dict (so the same code runs under
`lax.scan` in the sampler).
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.tpp.events import Events, compact

_MIN_GAP = 1e-6


class NeuralTPP(nn.Module):
    """Parameter container: `params = NeuralTPP(...).init(key)["params"]`."""

    num_marks: int
    hidden: int = 32
    mark_dim: int = 8
    num_components: int = 8

    @nn.compact
    def __call__(self):
        H, E, C, K = self.hidden, self.mark_dim, self.num_components, self.num_marks
        F = 1 + E
        glorot, ortho = nn.initializers.glorot_uniform(), nn.initializers.orthogonal()
        return {
            "embed": self.param("embed", nn.initializers.normal(0.5), (K, E)),
            "w_x": self.param("w_x", glorot, (F, 3 * H)),
            "w_h": self.param("w_h", ortho, (H, 3 * H)),
            "b": self.param("b", nn.initializers.zeros, (3 * H,)),
            "b_hn": self.param("b_hn", nn.initializers.zeros, (H,)),
            "h0": self.param("h0", nn.initializers.zeros, (H,)),
            "w_out": self.param("w_out", nn.initializers.normal(0.1 / H ** 0.5), (H, 3 * C + K)),
            "b_out": self.param("b_out", _out_bias(C, K), (3 * C + K,)),
        }


def _out_bias(C: int, K: int):
    def init(key, shape, dtype=jnp.float32):
        # mixture weights uniform, rates 1, shapes spread around 1 (log shape in [−0.5, 0.5])
        return jnp.concatenate([jnp.zeros(C), jnp.zeros(C), jnp.linspace(-0.5, 0.5, C),
                                jnp.zeros(K)]).astype(dtype)
    return init


def init_params(key, num_marks: int, hidden: int, mark_dim: int, num_components: int) -> dict:
    return NeuralTPP(num_marks, hidden, mark_dim, num_components).init(key)["params"]


# ----------------------------------------------------------------------------- pure math


def _gru(p, h, x):
    H = h.shape[-1]
    gx, gh = x @ p["w_x"] + p["b"], h @ p["w_h"]
    r = jax.nn.sigmoid(gx[..., :H] + gh[..., :H])
    z = jax.nn.sigmoid(gx[..., H:2 * H] + gh[..., H:2 * H])
    n = jnp.tanh(gx[..., 2 * H:] + r * (gh[..., 2 * H:] + p["b_hn"]))
    return (1.0 - z) * n + z * h


def _features(p, gap, mark, norm):
    m, s = norm
    lg = (jnp.log(jnp.maximum(gap, _MIN_GAP)) - m) / s
    return jnp.concatenate([lg[..., None], p["embed"][mark]], axis=-1)


def _heads(p, ctx, num_marks: int):
    """ctx (..., H) -> log w (..., C), log rate (..., C), shape (..., C), log p(mark) (..., K)."""
    out = ctx @ p["w_out"] + p["b_out"]
    C = (out.shape[-1] - num_marks) // 3
    log_w = jax.nn.log_softmax(jnp.clip(out[..., :C], -5.0, 5.0), axis=-1)
    log_rate = jnp.clip(out[..., C:2 * C], -8.0, 8.0)
    shape = jnp.exp(jnp.clip(out[..., 2 * C:3 * C], -2.0, 2.0))
    log_pm = jax.nn.log_softmax(out[..., 3 * C:], axis=-1)
    return log_w, log_rate, shape, log_pm


def _log_survival_and_density(heads, x):
    """Weibull mixture at scaled gap x (...,): (log S(x), log f(x))."""
    log_w, log_rate, shape, _ = heads
    x = jnp.maximum(x, _MIN_GAP)[..., None]
    cum = jnp.exp(log_rate + shape * jnp.log(x))                        # rate x^shape
    log_s = jax.nn.logsumexp(log_w - cum, axis=-1)
    log_f = jax.nn.logsumexp(log_w + log_rate + jnp.log(shape) + (shape - 1) * jnp.log(x) - cum,
                             axis=-1)
    return log_s, log_f


def _sequence_terms(p, ev: Events, norm, num_marks: int):
    """Per interval j = 0..L of each row: scaled gap, context heads, validity.

    Interval j < N ends at event j; interval N is the open one (t_N, T].
    """
    B, L = ev.times.shape
    times_ext = jnp.concatenate([ev.times, ev.t_max[:, None]], axis=1)          # (B, L + 1)
    prev = jnp.concatenate([jnp.zeros((B, 1)), ev.times], axis=1)
    n = ev.counts
    idx = jnp.arange(L + 1)[None]
    gaps = jnp.where(idx <= n[:, None], times_ext - prev, 0.0)
    # interval N (the open one): times_ext[N] is T or padding (= T), prev[N] = t_N
    x = _features(p, gaps[:, :L], ev.marks, norm)                              # (B, L, F)

    def step(h, xi):
        h = _gru(p, h, xi)
        return h, h

    h0 = jnp.broadcast_to(p["h0"], (B, p["h0"].shape[0]))
    _, hs = jax.lax.scan(step, h0, jnp.swapaxes(x, 0, 1))
    ctx = jnp.concatenate([h0[:, None], jnp.swapaxes(hs, 0, 1)], axis=1)          # (B, L + 1, H)
    heads = _heads(p, ctx, num_marks)
    return gaps / jnp.exp(norm[0]), heads, idx < n[:, None], idx == n[:, None]


def log_likelihood(p, ev: Events, norm, num_marks: int) -> jnp.ndarray:
    """Σ_i [log p(τ_i) + log p(m_i)] + log S(T − t_N), per sequence (B,), in the data's
    time unit (the Jacobian −log σ per event is included)."""
    x, heads, is_event, is_last = _sequence_terms(p, ev, norm, num_marks)
    log_s, log_f = _log_survival_and_density(heads, x)
    marks_ext = jnp.concatenate([ev.marks, jnp.zeros_like(ev.marks[:, :1])], axis=1)
    log_pm = jnp.take_along_axis(heads[3], marks_ext[..., None], axis=-1)[..., 0]
    ev_term = jnp.where(is_event, log_f - norm[0] + log_pm, 0.0).sum(-1)
    return ev_term + jnp.where(is_last, log_s, 0.0).sum(-1)


def compensator(p, ev: Events, norm, num_marks: int) -> tuple[jnp.ndarray, jnp.ndarray]:
    """(Λ_{m_i}(t_i) (B, L), Λ_k(T) (B, K))."""
    x, heads, is_event, is_last = _sequence_terms(p, ev, norm, num_marks)
    log_s, _ = _log_survival_and_density(heads, x)
    inc = -log_s[..., None] * jnp.exp(heads[3])                                   # (B, L+1, K)
    valid = (is_event | is_last)[..., None]
    inc = jnp.where(valid, inc, 0.0)
    cum = jnp.cumsum(inc, axis=1)
    at = jnp.take_along_axis(cum[:, :-1], ev.marks[..., None], axis=-1)[..., 0]
    return jnp.where(ev.mask, at, 0.0), inc.sum(1)


def gap_normaliser(ev: Events) -> tuple[float, float]:
    """(mean, std) of log inter-event times over a training batch (the input scaling)."""
    B, L = ev.times.shape
    prev = jnp.concatenate([jnp.zeros((B, 1)), ev.times[:, :-1]], axis=1)
    lg = jnp.log(jnp.maximum(ev.times - prev, _MIN_GAP))
    n = ev.mask.sum()
    m = jnp.where(ev.mask, lg, 0.0).sum() / n
    s = jnp.sqrt(jnp.where(ev.mask, (lg - m) ** 2, 0.0).sum() / n)
    return float(m), float(max(s, 1e-3))


# ----------------------------------------------------------------------------- sampling


def simulate(key, p, norm, num_marks: int, t_max: float, max_len: int):
    """One sequence from the model (autoregressive sampling) -> (Events row, complete).

    Gap: pick component c ~ w, then x = (E / rate_c)^{1/shape_c} with E ~ Exp(1) (the
    Weibull inverse survival), τ = σ x; mark ~ p(mark | context).
    """
    def step(carry, k):
        h, t, done = carry
        k1, k2, k3 = jax.random.split(k, 3)
        log_w, log_rate, shape, log_pm = _heads(p, h, num_marks)
        c = jax.random.categorical(k1, log_w)
        e = jax.random.exponential(k2)
        x = jnp.exp((jnp.log(e) - log_rate[c]) / shape[c])
        tau = x * jnp.exp(norm[0])
        m = jax.random.categorical(k3, log_pm)
        t_new = t + tau
        ok = (t_new <= t_max) & ~done
        h_new = _gru(p, h, _features(p, tau, m, norm))
        return (jnp.where(ok, h_new, h), jnp.where(ok, t_new, t), done | ~ok), (t_new, m, ok)

    init = (p["h0"], jnp.float32(0.0), jnp.bool_(False))
    (_, _, done), (times, marks, keep) = jax.lax.scan(step, init, jax.random.split(key, max_len + 1))
    ev = compact(times[None, :max_len], marks[None, :max_len].astype(jnp.int32), keep[None, :max_len],
                 jnp.asarray([t_max], jnp.float32), max_len)
    return Events(ev.times[0], ev.marks[0], ev.mask[0], ev.t_max[0]), done
