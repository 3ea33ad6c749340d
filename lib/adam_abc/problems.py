"""Smooth objectives with unbounded gradients, and finite sums for minibatch noise.

Every problem is L-smooth and bounded below, as the theory assumes. The quadratic,
non-convex and least-squares gradients are unbounded on R^d (so no "bounded gradient"
assumption holds); the logistic loss has bounded gradients and is here as the classic
finite sum with minibatch noise:

* `quadratic`: f(θ) = ½ (θ − θ*)ᵀ H (θ − θ*), H = diag(h), h log-spaced in [1/κ, 1]
  (L = 1, μ = 1/κ, f* = 0).
* `nonconvex`: f(θ) = λ Σ_i θ_i² / (1 + θ_i²) + (1/2n) ‖Xθ − y‖² (the research notes'
  objective (ii)); the first term has curvature down to −λ/2, so f is non-convex when
  the smallest eigenvalue of XᵀX/n is below λ/2 (the default design, n = 2d). L <= 2λ +
  λ_max(XᵀX/n); f* is not known in closed form (0 is a lower bound).
* `least_squares`: f(θ) = (1/n) Σ_i ½ (x_iᵀθ − y_i)², a finite sum (f* exact).
* `logistic`: f(θ) = (1/n) Σ_i log(1 + exp(−y_i x_iᵀθ)) on non-separable data (f* and θ*
  by Newton's method in float64).

Shapes: θ is (d,); X is (n, d); y is (n,). Data are generated here from a seed (nothing
is read or downloaded).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

PROBLEMS = ("quadratic", "nonconvex", "least_squares", "logistic")
FINITE_SUMS = ("least_squares", "logistic")


class FiniteSum(NamedTuple):
    """f = (1/n) Σ f_i with f_i >= 0 and inf f_i = 0 (both least squares and logistic).

    batch_grad(θ (d,), idx (b,) int) -> (1/b) Σ_{i∈idx} ∇f_i(θ), shape (d,).
    mean_sq_component_grad(θ) -> (1/n) Σ_i ‖∇f_i(θ)‖², shape ().
    l_max: max_i L_i, the largest smoothness constant of a component.
    """

    x: jax.Array
    y: jax.Array
    batch_grad: Callable
    mean_sq_component_grad: Callable
    l_max: float

    @property
    def n(self) -> int:
        return int(self.x.shape[0])


class Problem(NamedTuple):
    """An L-smooth objective on R^d.

    loss: θ (d,) -> f(θ) (); grad: θ (d,) -> ∇f(θ) (d,) (exact, full batch).
    smoothness: L (an upper bound). f_star: inf f (nan when unknown). f_lower: a lower
    bound on f (f_star when known). minimiser: θ* (d,) or None. theta0: the start (d,).
    finite_sum: the component structure (minibatch oracles) or None.
    """

    name: str
    dim: int
    loss: Callable
    grad: Callable
    smoothness: float
    f_star: float
    f_lower: float
    minimiser: jax.Array | None
    theta0: jax.Array
    finite_sum: FiniteSum | None = None


def _start(dim: int, init_distance: float) -> jax.Array:
    """θ0 − θ* = init_distance · (1, ..., 1)/√d (so ‖θ0 − θ*‖ = init_distance)."""
    return jnp.full((dim,), init_distance / np.sqrt(dim), jnp.float32)


def quadratic(dim: int, condition: float = 10.0, init_distance: float = 3.0) -> Problem:
    """½ Σ_i h_i (θ_i − 1)², h = logspace(0, −log10 κ, d); θ* = 1, f* = 0, L = 1, μ = 1/κ."""
    if dim < 1 or condition < 1:
        raise ValueError(f"quadratic needs dim >= 1 and condition >= 1, got {dim}, {condition}")
    h = jnp.asarray(np.logspace(0.0, -np.log10(condition), dim), jnp.float32)
    opt = jnp.ones((dim,), jnp.float32)

    def loss(theta):
        return 0.5 * jnp.sum(h * (theta - opt) ** 2)

    def grad(theta):
        return h * (theta - opt)

    return Problem("quadratic", dim, loss, grad, 1.0, 0.0, 0.0, opt,
                   opt + _start(dim, init_distance))


def regression_data(n: int, dim: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """X (n, d) with N(0, 1) entries, y = X w + noise · N(0, 1), w ~ N(0, I/d) (float32)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim))
    w = rng.standard_normal(dim) / np.sqrt(dim)
    y = x @ w + noise * rng.standard_normal(n)
    return x.astype(np.float32), y.astype(np.float32)


def classification_data(n: int, dim: int, signal: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """X (n, d) N(0, 1); y ∈ {±1} with P(y = 1 | x) = σ(x·w), w ~ N(0, (signal²/d) I)
    (a well-specified logistic model: non-separable for n >> d)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim))
    w = signal * rng.standard_normal(dim) / np.sqrt(dim)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-(x @ w))), 1.0, -1.0)
    return x.astype(np.float32), y.astype(np.float32)


def nonconvex(dim: int, rows: int, lam: float = 1.0, noise: float = 0.5, seed: int = 0,
              init_distance: float = 3.0) -> Problem:
    """λ Σ θ_i²/(1+θ_i²) + (1/2n)‖Xθ − y‖²; starts at θ0 = init_distance·1/√d."""
    x_np, y_np = regression_data(rows, dim, noise, seed)
    gram = jnp.asarray(x_np.T @ x_np / rows)
    xty = jnp.asarray(x_np.T @ y_np / rows)
    yy = float(y_np.astype(np.float64) @ y_np / rows)
    smooth = 2.0 * lam + float(np.linalg.eigvalsh(x_np.T.astype(np.float64) @ x_np / rows)[-1])

    def loss(theta):
        q = theta ** 2
        return lam * jnp.sum(q / (1.0 + q)) + 0.5 * (theta @ gram @ theta - 2 * xty @ theta + yy)

    def grad(theta):
        return lam * 2.0 * theta / (1.0 + theta ** 2) ** 2 + gram @ theta - xty

    return Problem("nonconvex", dim, loss, grad, smooth, float("nan"), 0.0, None,
                   _start(dim, init_distance))


def least_squares(n: int, dim: int, noise: float = 0.5, seed: int = 0,
                  init_distance: float = 3.0) -> Problem:
    """(1/n) Σ ½(x_iᵀθ − y_i)²; f* and θ* by float64 least squares; L_i = ‖x_i‖²."""
    x_np, y_np = regression_data(n, dim, noise, seed)
    x64, y64 = x_np.astype(np.float64), y_np.astype(np.float64)
    opt64 = np.linalg.lstsq(x64, y64, rcond=None)[0]
    f_star = float(0.5 * np.mean((x64 @ opt64 - y64) ** 2))
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    gram, xty = x.T @ x / n, x.T @ y / n

    def loss(theta):
        return 0.5 * jnp.mean((x @ theta - y) ** 2)

    def grad(theta):
        return gram @ theta - xty

    def batch_grad(theta, idx):
        xb, yb = x[idx], y[idx]
        return xb.T @ (xb @ theta - yb) / idx.shape[0]

    def mean_sq_component_grad(theta):
        r = x @ theta - y
        return jnp.mean(r ** 2 * jnp.sum(x ** 2, axis=1))

    fs = FiniteSum(x, y, batch_grad, mean_sq_component_grad,
                   float(np.max(np.sum(x64 ** 2, axis=1))))
    smooth = float(np.linalg.eigvalsh(x64.T @ x64 / n)[-1])
    opt = jnp.asarray(opt64, jnp.float32)
    return Problem("least_squares", dim, loss, grad, smooth, f_star, f_star, opt,
                   opt + _start(dim, init_distance), fs)


def _newton_logistic(x: np.ndarray, y: np.ndarray, iters: int = 50) -> np.ndarray:
    """The minimiser of the mean logistic loss (float64 Newton; the data must be
    non-separable)."""
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        m = y * (x @ w)
        s = 1.0 / (1.0 + np.exp(m))                        # σ(−m)
        g = -(x * (y * s)[:, None]).mean(axis=0)
        hess = (x * (s * (1 - s))[:, None]).T @ x / len(y)
        step = np.linalg.solve(hess, g)
        w -= step
        if np.max(np.abs(step)) < 1e-13:
            break
    return w


def logistic(n: int, dim: int, signal: float = 2.0, seed: int = 0,
             init_distance: float = 3.0) -> Problem:
    """(1/n) Σ log(1 + exp(−y_i x_iᵀθ)); L = λ_max(XᵀX/n)/4, L_i = ‖x_i‖²/4."""
    x_np, y_np = classification_data(n, dim, signal, seed)
    x64, y64 = x_np.astype(np.float64), y_np.astype(np.float64)
    opt64 = _newton_logistic(x64, y64)
    f_star = float(np.mean(np.logaddexp(0.0, -y64 * (x64 @ opt64))))
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)

    def loss(theta):
        return jnp.mean(jnp.logaddexp(0.0, -y * (x @ theta)))

    def _grad_rows(theta, xb, yb):
        """Per-row gradients (b, d): −y_i σ(−y_i x_iᵀθ) x_i."""
        return -(yb * jax.nn.sigmoid(-yb * (xb @ theta)))[:, None] * xb

    def grad(theta):
        return jnp.mean(_grad_rows(theta, x, y), axis=0)

    def batch_grad(theta, idx):
        return jnp.mean(_grad_rows(theta, x[idx], y[idx]), axis=0)

    def mean_sq_component_grad(theta):
        s = jax.nn.sigmoid(-y * (x @ theta))
        return jnp.mean(s ** 2 * jnp.sum(x ** 2, axis=1))

    fs = FiniteSum(x, y, batch_grad, mean_sq_component_grad,
                   float(np.max(np.sum(x64 ** 2, axis=1))) / 4.0)
    smooth = float(np.linalg.eigvalsh(x64.T @ x64 / n)[-1]) / 4.0
    opt = jnp.asarray(opt64, jnp.float32)
    return Problem("logistic", dim, loss, grad, smooth, f_star, f_star, opt,
                   opt + _start(dim, init_distance), fs)
