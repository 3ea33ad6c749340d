"""Diffusion policy over actions: VP cosine schedule, ε-prediction network, DDPM sampling.

The policy is a DDPM over a latent x ∈ R^A that is mapped to the action box by `bound`:
  "tanh"  a = tanh(x₀) (the issue's tanh-bounded actions; log π(a) gets the tanh Jacobian,
          see `logprob.py`); x̂₀ is clipped to the latent box [−U_MAX, U_MAX], U_MAX =
          atanh(1 − 1e-3), where replay actions are mapped;
  "clip"  a = clip(x₀, −1, 1) with x̂₀ clipped to the box [−1, 1], as in the official code
          (jaxrl5 `max_entropy_learner.py`, notes C.1).
Clipping x̂₀ at every sampling step (and in the log-prob integral) keeps ε̂ ≈ x_t at high
noise, where the integral's weights are largest (~1/ᾱ_T).

Forward process (variance preserving): x_t = √ᾱ(t) x₀ + √(1−ᾱ(t)) ε, with the cosine
schedule of DPM-Solver's `NoiseScheduleVP('cosine')`:
    √ᾱ(t) = cos(π/2 · (t+s)/(1+s)) / cos(π/2 · s/(1+s)),   s = 0.008, t ∈ [t_min, t_max];
the network sees log-SNR(t) = log ᾱ − log(1−ᾱ). Sampling uses T levels on
linspace(t_min, t_max, T+1) (notes: T = 20 on linspace(1e-3, T_max, 21)).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.maxentdp.networks import MLP, FourierFeatures

BOUNDS = ("tanh", "clip")
ACTION_EPS = 1e-3                               # replay actions are kept this far inside the box
U_MAX = float(np.arctanh(1.0 - ACTION_EPS))     # ≈ 3.8, the latent limit of the "tanh" bound
COSINE_S = 0.008
T_MIN = 1e-3
T_MAX = 0.9946  # DPM-Solver's cosine schedule end, where ᾱ is still > 0


def alpha_bar(t: jax.Array) -> jax.Array:
    """ᾱ(t) of the cosine VP schedule; t in [0, T_MAX]."""
    f = lambda u: jnp.cos(0.5 * jnp.pi * (u + COSINE_S) / (1.0 + COSINE_S))
    return (f(t) / f(0.0)) ** 2


def log_snr(ab: jax.Array) -> jax.Array:
    """log(ᾱ / (1 − ᾱ))."""
    return jnp.log(ab) - jnp.log1p(-ab)


class Schedule(NamedTuple):
    """The sampling grid: t (T+1,) increasing from t_min, ᾱ (T+1,) decreasing from ≈ 1."""

    t: jax.Array
    alpha_bar: jax.Array

    @property
    def steps(self) -> int:
        return self.t.shape[0] - 1


def schedule(steps: int, t_min: float = T_MIN, t_max: float = T_MAX) -> Schedule:
    if steps < 1:
        raise ValueError(f"diffusion steps must be >= 1, got {steps}")
    t = jnp.linspace(t_min, t_max, steps + 1, dtype=jnp.float32)
    return Schedule(t, alpha_bar(t))


class EpsNet(nn.Module):
    """ε_θ(s, x_t, log-SNR): (B, obs_dim), (B, A), (B,) -> (B, A).

    Learnable Fourier features of log-SNR -> MLP(time_hidden) -> concatenated with x_t and
    the state -> MLP(hidden) -> A (notes C.1: 64 features, (128, 128), (256, 256), mish).
    """

    act_dim: int
    fourier_dim: int = 64
    time_hidden: Sequence[int] = (128, 128)
    hidden: Sequence[int] = (256, 256)
    activation: str = "mish"

    @nn.compact
    def __call__(self, obs: jax.Array, x: jax.Array, lsnr: jax.Array) -> jax.Array:
        temb = FourierFeatures(self.fourier_dim)(lsnr)
        temb = MLP(self.time_hidden, None, self.activation)(temb)
        h = jnp.concatenate([temb, x, obs], axis=-1)
        return MLP(self.hidden, self.act_dim, self.activation)(h)


def to_action(x0: jax.Array, bound: str) -> jax.Array:
    """Latent x₀ -> action in [−1, 1]^A."""
    if bound == "tanh":
        return jnp.tanh(x0)
    if bound == "clip":
        return jnp.clip(x0, -1.0, 1.0)
    raise ValueError(f"unknown bound {bound!r}; expected one of {list(BOUNDS)}")


def from_action(a: jax.Array, bound: str, eps: float = ACTION_EPS) -> jax.Array:
    """Action -> latent (atanh of the action kept eps inside the box for "tanh")."""
    if bound == "tanh":
        return jnp.arctanh(jnp.clip(a, -1.0 + eps, 1.0 - eps))
    return a


def logprob_latent(x0: jax.Array, bound: str) -> jax.Array:
    """The latent at which log π of a sampled action a = to_action(x0) is evaluated.

    "tanh": x0 itself (a = tanh x0 is one-to-one). "clip": the action clip(x0, −1, 1), as the
    official code does (its sampler clips the final sample and `calc_log_prob` is evaluated
    at that clipped action), so the backup's log π(a'|s') is the density at the action the
    critic is evaluated at, and equals `Agent.log_prob` of that action.
    """
    return jnp.clip(x0, -1.0, 1.0) if bound == "clip" else x0


def x0_limit(bound: str) -> float:
    """The box |x̂₀| ≤ limit the sampler and the log-prob clip the clean estimate to."""
    return U_MAX if bound == "tanh" else 1.0


EpsFn = Callable[[jax.Array, jax.Array], jax.Array]  # (x (..., A), log-SNR (...)) -> ε (..., A)


def ddpm_sample(eps_fn: EpsFn, key: jax.Array, shape: tuple[int, ...], sched: Schedule,
                clip_x0: float | None) -> jax.Array:
    """Ancestral DDPM sampling on the grid, from x_T ~ N(0, I) to x at t_0 (≈ clean).

    Step i -> i−1 (ᾱ_i < ᾱ_{i−1}): x̂₀ = (x − √(1−ᾱ_i) ε_θ)/√ᾱ_i (clipped to
    [−clip_x0, clip_x0] unless None), then x ~ q(x_{i−1} | x_i, x̂₀), the Gaussian
    posterior of the forward process with mean (a σ²_{i−1}/σ²_i) x + (√ᾱ_{i−1} σ²_{i|i−1}/σ²_i) x̂₀
    and variance σ²_{i|i−1} σ²_{i−1}/σ²_i, where a = √(ᾱ_i/ᾱ_{i−1}), σ²_i = 1−ᾱ_i and
    σ²_{i|i−1} = σ²_i − a²σ²_{i−1}.
    """
    k0, key = jax.random.split(key)
    x = jax.random.normal(k0, shape, jnp.float32)
    batch_shape = shape[:-1]

    def body(x, inp):
        i, k = inp
        ab, ab_prev = sched.alpha_bar[i], sched.alpha_bar[i - 1]
        eps = eps_fn(x, jnp.broadcast_to(log_snr(ab), batch_shape))
        x0 = (x - jnp.sqrt(1.0 - ab) * eps) / jnp.sqrt(ab)
        if clip_x0 is not None:
            x0 = jnp.clip(x0, -clip_x0, clip_x0)
        a2 = ab / ab_prev
        s2, s2_prev = 1.0 - ab, 1.0 - ab_prev
        s2_cond = s2 - a2 * s2_prev
        mean = (jnp.sqrt(a2) * s2_prev / s2) * x + (jnp.sqrt(ab_prev) * s2_cond / s2) * x0
        std = jnp.sqrt(jnp.maximum(s2_cond * s2_prev / s2, 0.0))
        return mean + std * jax.random.normal(k, shape, jnp.float32), None

    idx = jnp.arange(sched.steps, 0, -1)
    x, _ = jax.lax.scan(body, x, (idx, jax.random.split(key, sched.steps)))
    return x


def sample_policy(net: EpsNet, params, obs: jax.Array, key: jax.Array, sched: Schedule,
                  bound: str) -> tuple[jax.Array, jax.Array]:
    """One action per state: obs (B, obs_dim) -> (action (B, A) in [−1, 1], latent x₀ (B, A))."""
    eps_fn = lambda x, l: net.apply(params, obs, x, l)
    x0 = ddpm_sample(eps_fn, key, (obs.shape[0], net.act_dim), sched, x0_limit(bound))
    return to_action(x0, bound), x0


def denoising_loss(net: EpsNet, params, obs, x_t, lsnr, eps_target) -> jax.Array:
    """Mean over the batch of ‖ε_target − ε_θ(s, x_t, log-SNR)‖² (notes C.1 step 5)."""
    pred = net.apply(params, obs, x_t, lsnr)
    return jnp.mean(jnp.sum((pred - eps_target) ** 2, axis=-1))
