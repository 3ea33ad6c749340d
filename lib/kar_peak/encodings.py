"""Input encodings γ(x) placed in front of an INR backbone.

All take coordinates x of shape (..., d) in [-1, 1]^d and return features (..., F).

* `positional_encoding`: [sin(2^k π x), cos(2^k π x)]_{k<L} (Mildenhall et al.), fixed.
* `FourierFeatures`: [cos(2π Bx), sin(2π Bx)] with B ~ N(0, σ²) drawn from a fixed seed
  (Tancik et al.), not trained (B is a constant, not a parameter).
* `PEAK`: the paper's Plug-in Encoding for Aligned Kernels. Thm 3.3 builds an encoder whose
  tensor powers reproduce the power series of a dot-product kernel,
  K(γ(x)·γ(x')) = Σ_n c_n (φ(x)·φ(x'))^n = Σ_n ⟨√c_n φ(x)^{⊗n}, √c_n φ(x')^{⊗n}⟩,
  so γ(x) = [a_1 ⊙ φ(x), a_2 ⊙ φ(x)^{⊗2}, …, a_N ⊙ φ(x)^{⊗N}] with learnable coefficients
  a_n. Here φ is a Fourier base with learnable frequencies B (initialised N(0, σ²)) and the
  order-n tensor power is sketched by products of n fixed random permutations of φ
  (an unbiased Hadamard sketch of φ^{⊗n}, F features instead of F^n). Order 1 with
  learnable B and a_1 is the paper's recommended N_γ = 1.
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


def positional_encoding(x: jnp.ndarray, levels: int) -> jnp.ndarray:
    """(..., d) -> (..., 2·d·levels): sin/cos of 2^k π x for k = 0..levels-1."""
    if levels < 1:
        raise ValueError(f"positional encoding needs levels >= 1, got {levels}")
    freqs = (2.0 ** jnp.arange(levels)) * jnp.pi                    # (L,)
    arg = x[..., :, None] * freqs                                    # (..., d, L)
    arg = arg.reshape(*x.shape[:-1], -1)
    return jnp.concatenate([jnp.sin(arg), jnp.cos(arg)], axis=-1)


def gaussian_frequencies(seed: int, features: int, dim: int, sigma: float) -> np.ndarray:
    """(features, dim) Gaussian frequency matrix B ~ N(0, σ²), fixed by `seed`."""
    return (sigma * np.random.default_rng(seed).standard_normal((features, dim))).astype(np.float32)


def fourier_features(x: jnp.ndarray, freqs: jnp.ndarray) -> jnp.ndarray:
    """(..., d), B (m, d) -> (..., 2m): [cos(2π Bx), sin(2π Bx)]."""
    arg = 2.0 * jnp.pi * x @ freqs.T
    return jnp.concatenate([jnp.cos(arg), jnp.sin(arg)], axis=-1)


class FourierFeatures(nn.Module):
    """Random Fourier features with a fixed (untrained) Gaussian B of scale `sigma`."""
    features: int
    sigma: float
    seed: int = 0

    @nn.compact
    def __call__(self, x):
        freqs = jnp.asarray(gaussian_frequencies(self.seed, self.features, x.shape[-1], self.sigma))
        return fourier_features(x, freqs)


def _permutations(seed: int, order: int, size: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 7919)
    return np.stack([rng.permutation(size) for _ in range(order)])   # (order, size)


class PEAK(nn.Module):
    """Learnable encoding γ(x) = [a_n ⊙ sketch(φ(x)^{⊗n})]_{n=1..order} (see module docstring).

    features: m frequencies (φ has 2m entries); sigma: scale of the initial frequencies;
    learn_frequencies: train B (else only the coefficients a_n are learned).
    Output (..., 2m·order).
    """
    features: int
    sigma: float
    order: int = 1
    learn_frequencies: bool = True
    seed: int = 0

    @nn.compact
    def __call__(self, x):
        init_b = gaussian_frequencies(self.seed, self.features, x.shape[-1], self.sigma)
        freqs = self.param("frequencies", lambda _k: jnp.asarray(init_b))
        if not self.learn_frequencies:
            freqs = jax.lax.stop_gradient(freqs)
        phi = fourier_features(x, freqs)                                 # (..., 2m)
        perms = _permutations(self.seed, self.order, phi.shape[-1])
        terms = []
        for n in range(1, self.order + 1):
            if n == 1:
                t = phi
            else:   # Hadamard sketch of the n-th tensor power, scaled to unit mean square
                t = jnp.prod(jnp.stack([phi[..., perms[k]] for k in range(n)]), axis=0) * (2.0 ** ((n - 1) / 2))
            coef = self.param(f"coef_{n}", nn.initializers.constant(1.0 if n == 1 else 0.5),
                              (phi.shape[-1],))
            terms.append(coef * t)
        return jnp.concatenate(terms, axis=-1)
