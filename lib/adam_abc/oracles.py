"""Stochastic gradient oracles with known constants of the ABC inequality.

The ABC inequality (Khaled & Richtárik), the noise assumption of Jin, Li, Yu & Wang
(ICML 2025; research notes `stats_papers.md` §D, second-hand):

    E[‖g(θ)‖² | θ] <= 2A (f(θ) − f*) + B ‖∇f(θ)‖² + C,        E[g(θ) | θ] = ∇f(θ).

Oracles (θ is (d,), g is (d,); ξ, ζ are independent, zero mean, unit variance per
coordinate, so every cross term vanishes):

* `gaussian`, `student_t`, `skewed`: g = ∇f(θ) + σ ζ with ζ standard normal, Student-t
  with ν (integer >= 3) degrees of freedom rescaled to unit variance (heavy tails: not
  almost surely bounded, infinite kurtosis for ν <= 4), or a mean-zero two-point law
  (1 − p)/s w.p. p and −p/s otherwise, s = √(p(1 − p)) (the rare large positive
  gradients of Reddi et al.'s counterexample). A = 0, B = 1, C = dσ², with equality.
* `multiplicative`: g = ∇f(θ) ⊙ (1 + s ξ) + σ ζ, ξ, ζ standard normal: A = 0,
  B = 1 + s², C = dσ² (equality); the noise grows with the gradient, unboundedly.
* `minibatch` (finite sums f = (1/n)Σ f_i, f_i >= 0, inf f_i = 0, f_i L_i-smooth): the
  mean of ∇f_i over b indices drawn uniformly with replacement. Exactly
  E‖g‖² = (1 − 1/b)‖∇f‖² + (1/b)(1/n)Σ‖∇f_i‖², and ‖∇f_i‖² <= 2 L_i f_i gives
  A = L_max/b, B = 1 − 1/b, C = 2 L_max f*/b (an inequality).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from lib.adam_abc.problems import Problem

NOISES = ("gaussian", "student_t", "skewed", "multiplicative", "minibatch")
ADDITIVE = ("gaussian", "student_t", "skewed")


class Oracle(NamedTuple):
    """sample: (θ (d,), key) -> g (d,). second_moment: θ -> exact E‖g(θ)‖² ().
    a, b, c: the ABC constants A, B, C."""

    name: str
    sample: Callable
    second_moment: Callable
    a: float
    b: float
    c: float


def unit_noise(kind: str, key: jax.Array, shape: tuple, *, df: int = 3,
               skew_p: float = 0.05) -> jax.Array:
    """Zero-mean, unit-variance i.i.d. noise of `shape` (float32).

    student_t: Z / √(χ²_ν/ν) · √((ν − 2)/ν) for integer ν >= 3, with χ²_ν built from
    ⌊ν/2⌋ exponentials (χ²_2 = −2 log U) plus one squared normal when ν is odd.
    """
    if kind == "gaussian":
        return jax.random.normal(key, shape)
    if kind == "student_t":
        kz, ku = jax.random.split(key)
        z = jax.random.normal(kz, (1 + df % 2, *shape))
        u = jax.random.uniform(ku, (df // 2, *shape), minval=jnp.finfo(jnp.float32).tiny)
        chi2 = -2.0 * jnp.sum(jnp.log(u), axis=0) + jnp.sum(z[1:] ** 2, axis=0)
        return z[0] * jnp.sqrt((df - 2.0) / chi2)
    if kind == "skewed":
        s = (skew_p * (1.0 - skew_p)) ** 0.5
        u = jax.random.uniform(key, shape)
        return jnp.where(u < skew_p, (1.0 - skew_p) / s, -skew_p / s)
    raise ValueError(f"unknown noise kind {kind!r}; allowed: {list(ADDITIVE)}")


def _check_noise_args(sigma: float, mult: float, df: int, skew_p: float) -> None:
    if not sigma >= 0:
        raise ValueError(f"sigma = {sigma!r} must be >= 0")
    if not mult >= 0:
        raise ValueError(f"mult = {mult!r} must be >= 0")
    if int(df) != df or df < 3:
        raise ValueError(f"df = {df!r} must be an integer >= 3 (finite variance needs ν > 2)")
    if not 0.0 < skew_p < 1.0:
        raise ValueError(f"skew_p = {skew_p!r} must lie in (0, 1)")


def additive(problem: Problem, kind: str = "gaussian", sigma: float = 1.0, *,
             mult: float = 0.0, df: int = 3, skew_p: float = 0.05) -> Oracle:
    """g = ∇f(θ) ⊙ (1 + mult·ξ) + σ ζ, ζ of `kind`; A = 0, B = 1 + mult², C = dσ²."""
    _check_noise_args(sigma, mult, df, skew_p)
    d = problem.dim

    def sample(theta, key):
        g = problem.grad(theta)
        if mult:
            key, k1 = jax.random.split(key)
            g = g * (1.0 + mult * jax.random.normal(k1, g.shape))
        if sigma:
            g = g + sigma * unit_noise(kind, key, g.shape, df=df, skew_p=skew_p)
        return g

    def second_moment(theta):
        return (1.0 + mult ** 2) * jnp.sum(problem.grad(theta) ** 2) + d * sigma ** 2

    name = kind if not mult else f"multiplicative({kind})"
    return Oracle(name, sample, second_moment, 0.0, 1.0 + mult ** 2, d * sigma ** 2)


def minibatch(problem: Problem, batch_size: int) -> Oracle:
    """Uniform minibatches of `batch_size` components (with replacement)."""
    fs = problem.finite_sum
    if fs is None:
        raise ValueError(f"problem {problem.name!r} is not a finite sum; minibatch noise "
                         "needs one of least_squares, logistic")
    if int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size = {batch_size!r} must be an integer >= 1")
    b = int(batch_size)

    def sample(theta, key):
        idx = jax.random.randint(key, (b,), 0, fs.n)
        return fs.batch_grad(theta, idx)

    def second_moment(theta):
        full = jnp.sum(problem.grad(theta) ** 2)
        return (1.0 - 1.0 / b) * full + fs.mean_sq_component_grad(theta) / b

    return Oracle(f"minibatch(b={b})", sample, second_moment, fs.l_max / b, 1.0 - 1.0 / b,
                  2.0 * fs.l_max * problem.f_star / b)


def make_oracle(problem: Problem, noise: str, *, sigma: float, mult: float, df: int,
                skew_p: float, batch_size: int) -> Oracle:
    """The oracle a setting name `<problem>-<noise>` asks for (see module docstring)."""
    if noise in ADDITIVE:
        return additive(problem, noise, sigma, df=df, skew_p=skew_p)
    if noise == "multiplicative":
        return additive(problem, "gaussian", sigma, mult=mult)
    if noise == "minibatch":
        return minibatch(problem, batch_size)
    raise ValueError(f"unknown noise {noise!r}; allowed: {list(NOISES)}")


def abc_bound(oracle: Oracle, problem: Problem, theta: jax.Array) -> jax.Array:
    """The right-hand side 2A(f(θ) − f*) + B‖∇f(θ)‖² + C at θ (d,), shape ()."""
    out = oracle.b * jnp.sum(problem.grad(theta) ** 2) + oracle.c
    if oracle.a:
        out = out + 2.0 * oracle.a * (problem.loss(theta) - problem.f_star)
    return out
