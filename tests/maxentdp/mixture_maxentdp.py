"""A 1-D Gaussian mixture with its exact density and its exact posterior-mean denoiser
(shared by the MaxEntDP log-prob and sampler tests)."""
import jax
import jax.numpy as jnp
import numpy as np

WEIGHTS = np.array([0.3, 0.7], np.float32)
MEANS = np.array([-0.8, 0.6], np.float32)
STDS = np.array([0.25, 0.35], np.float32)


def log_density(x):
    """x (...,) -> log p(x)."""
    z = (x[..., None] - MEANS) / STDS
    return jax.scipy.special.logsumexp(
        jnp.log(WEIGHTS) - 0.5 * z ** 2 - jnp.log(STDS) - 0.5 * jnp.log(2 * jnp.pi), axis=-1)


def exact_eps(x_t, lsnr):
    """E[ε | x_t] at noise level log-SNR for x₀ from the mixture; x_t (..., 1), lsnr (...)."""
    ab = jax.nn.sigmoid(lsnr)[..., None]                      # ᾱ = sigmoid(log-SNR)
    var = ab * STDS ** 2 + (1 - ab)                           # (..., K)
    mean = jnp.sqrt(ab) * MEANS
    logr = jnp.log(WEIGHTS) - 0.5 * (x_t - mean) ** 2 / var - 0.5 * jnp.log(var)
    r = jax.nn.softmax(logr, axis=-1)
    eps_k = jnp.sqrt(1 - ab) * (x_t - mean) / var
    return jnp.sum(r * eps_k, axis=-1, keepdims=True)


def sample(key, n):
    kc, kn = jax.random.split(key)
    comp = jax.random.choice(kc, len(WEIGHTS), (n,), p=jnp.asarray(WEIGHTS))
    x = jnp.asarray(MEANS)[comp] + jnp.asarray(STDS)[comp] * jax.random.normal(kn, (n,))
    return x[:, None]
