"""Neural tangent kernels: empirical (jvp/vjp, chunked), dense reference, analytic ReLU forms.

Empirical NTK of a model f(params, x): (n, d) -> (n, C), averaged over the C outputs:

    Θ(x, x') = (1/C) Σ_c ⟨∂_θ f_c(x), ∂_θ f_c(x')⟩                                   (NTK)

* `empirical_ntk(..., method="implicit")`: for each column point x'_j and output c, a vjp
  gives the parameter-space vector g = ∂_θ f_c(x'_j) and a jvp of f(·, x1) along g gives the
  column Θ(x1, x'_j). Columns are processed `chunk` at a time with `lax.map`, so memory is
  O(chunk·C·(P + n1)) regardless of n2 (P = number of parameters). No Jacobian is stored.
* `method="jacobian"`: Jacobian rows by vmapped vjps in chunks of `chunk` points,
  Θ = J1 J2ᵀ; memory O((n1 + n2)·C·P), faster for small nets.
* `dense_ntk`: `jax.jacrev` of the whole output, flattened, J Jᵀ (the test reference).

Analytic forms for the NTK-parameterised ReLU MLP (no biases)
    h_1 = W_1 x,   h_{l+1} = W_{l+1} relu(h_l)/√n_l,   f = h_{L+1},   all W ~ N(0, 1):
* `one_hidden_finite_ntk`: the exact NTK of a given one-hidden-layer net,
  Θ(x,x') = (1/m) Σ_j [relu(w_j·x) relu(w_j·x') + v_j² 1(w_j·x>0) 1(w_j·x'>0) x·x'].
* `relu_ntk_infinite`: the infinite-width limit through the arc-cosine recursion
  Σ^1 = x·x',  Σ^{l+1} = √(Σ^l_xx Σ^l_x'x') κ1(θ_l),  Σ̇^{l+1} = κ0(θ_l),
  Θ^1 = Σ^1,   Θ^{l+1} = Σ^{l+1} + Θ^l Σ̇^{l+1},
  κ0(θ) = (π − θ)/(2π),  κ1(θ) = (sin θ + (π − θ) cos θ)/(2π),  θ_l = arccos(Σ^l_xx'/√(Σ^l_xx Σ^l_x'x')).
"""
from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

Apply = Callable[[object, jnp.ndarray], jnp.ndarray]   # (params, (n, d)) -> (n, C)


def _pad_chunks(x: jnp.ndarray, chunk: int) -> tuple[jnp.ndarray, int]:
    n = x.shape[0]
    pad = (-n) % chunk
    xp = jnp.concatenate([x, jnp.repeat(x[-1:], pad, axis=0)]) if pad else x
    return xp.reshape(-1, chunk, *x.shape[1:]), n


def _check(x1, x2, chunk):
    if x1.ndim != 2 or x2.ndim != 2 or x1.shape[1] != x2.shape[1]:
        raise ValueError(f"NTK inputs must be (n, d) with equal d; got {x1.shape} and {x2.shape}")
    if chunk < 1:
        raise ValueError(f"NTK chunk must be >= 1, got {chunk}")


def empirical_ntk(apply_fn: Apply, params, x1: jnp.ndarray, x2: jnp.ndarray, *,
                  chunk: int = 32, method: str = "implicit") -> jnp.ndarray:
    """(n1, n2) output-averaged empirical NTK (see module docstring); differentiable in params."""
    _check(x1, x2, chunk)
    if method == "jacobian":
        j1 = jacobian_rows(apply_fn, params, x1, chunk)
        j2 = j1 if x2 is x1 else jacobian_rows(apply_fn, params, x2, chunk)
        return jnp.einsum("icp,jcp->ij", j1, j2) / j1.shape[1]
    if method != "implicit":
        raise ValueError(f"unknown NTK method {method!r}; allowed: ('implicit', 'jacobian')")
    n_out = apply_fn(params, x2[:1]).shape[-1]
    eye = jnp.eye(n_out)

    def column(xj):   # Θ(x1, xj) for one column point, summed over outputs
        _, vjp_fn = jax.vjp(lambda p: apply_fn(p, xj[None])[0], params)

        def per_output(e):
            (g,) = vjp_fn(e)                                               # ∂_θ f_c(xj)
            _, tang = jax.jvp(lambda p: apply_fn(p, x1), (params,), (g,))  # (n1, C)
            return tang @ e
        return jnp.sum(jax.vmap(per_output)(eye), axis=0)                # (n1,)

    chunks, n2 = _pad_chunks(x2, chunk)
    cols = jax.lax.map(jax.vmap(column), chunks)                          # (k, chunk, n1)
    return cols.reshape(-1, x1.shape[0])[:n2].T / n_out


def jacobian_rows(apply_fn: Apply, params, x: jnp.ndarray, chunk: int = 32) -> jnp.ndarray:
    """(n, C, P) Jacobian of every output at every point, by vmapped vjps in chunks."""
    flat, unravel = ravel_pytree(params)
    n_out = apply_fn(params, x[:1]).shape[-1]
    eye = jnp.eye(n_out)

    def row(xi):
        _, vjp_fn = jax.vjp(lambda q: apply_fn(unravel(q), xi[None])[0], flat)
        return jax.vmap(lambda e: vjp_fn(e)[0])(eye)                      # (C, P)

    chunks, n = _pad_chunks(x, chunk)
    rows = jax.lax.map(jax.vmap(row), chunks)
    return rows.reshape(-1, n_out, flat.shape[0])[:n]


def dense_ntk(apply_fn: Apply, params, x1: jnp.ndarray, x2: jnp.ndarray) -> jnp.ndarray:
    """Reference: full `jax.jacrev` Jacobians flattened to (n·C, P), then J1 J2ᵀ, averaged over C."""
    def jac(x):
        j = jax.jacrev(apply_fn)(params, x)                               # leaves (n, C, *shape)
        n, c = x.shape[0], jax.tree.leaves(j)[0].shape[1]
        return jnp.concatenate([leaf.reshape(n, c, -1) for leaf in jax.tree.leaves(j)], axis=-1)
    j1, j2 = jac(x1), jac(x2)
    return jnp.einsum("icp,jcp->ij", j1, j2) / j1.shape[1]


# ----------------------------------------------------------------------------- analytic


def ntk_mlp_init(key: jax.Array, in_dim: int, widths: tuple[int, ...]) -> list[jnp.ndarray]:
    """Standard-normal weights of the NTK-parameterised ReLU MLP in_dim -> widths -> 1."""
    dims = (in_dim, *widths, 1)
    keys = jax.random.split(key, len(dims) - 1)
    return [jax.random.normal(k, (dims[i + 1], dims[i])) for i, k in enumerate(keys)]


def ntk_mlp_apply(params: list[jnp.ndarray], x: jnp.ndarray) -> jnp.ndarray:
    """(n, d) -> (n, 1): h_1 = W_1 x, h_{l+1} = W_{l+1} relu(h_l)/√n_l."""
    h = x @ params[0].T
    for w in params[1:]:
        h = jax.nn.relu(h) @ w.T / jnp.sqrt(h.shape[-1])
    return h


def one_hidden_finite_ntk(params: list[jnp.ndarray], x1: jnp.ndarray, x2: jnp.ndarray) -> jnp.ndarray:
    """Exact (n1, n2) NTK of the one-hidden-layer net `[W (m, d), v (1, m)]` (module docstring)."""
    if len(params) != 2:
        raise ValueError(f"one_hidden_finite_ntk needs a one-hidden-layer net, got {len(params)} layers")
    w, v = params[0], params[1][0]
    m = w.shape[0]
    z1, z2 = x1 @ w.T, x2 @ w.T                                           # (n, m)
    term_v = jax.nn.relu(z1) @ jax.nn.relu(z2).T
    d1, d2 = (z1 > 0).astype(x1.dtype), (z2 > 0).astype(x2.dtype)
    term_w = ((d1 * v ** 2) @ d2.T) * (x1 @ x2.T)
    return (term_v + term_w) / m


def _arccos_step(s12, s11, s22):
    norm = jnp.sqrt(s11 * s22)
    cos = jnp.clip(s12 / jnp.maximum(norm, 1e-30), -1.0, 1.0)
    theta = jnp.arccos(cos)
    k0 = (jnp.pi - theta) / (2 * jnp.pi)
    k1 = (jnp.sin(theta) + (jnp.pi - theta) * cos) / (2 * jnp.pi)
    return norm * k1, k0


def relu_ntk_infinite(x1: jnp.ndarray, x2: jnp.ndarray, hidden_layers: int) -> jnp.ndarray:
    """(n1, n2) infinite-width NTK of the NTK-parameterised ReLU MLP with `hidden_layers`."""
    if hidden_layers < 1:
        raise ValueError(f"hidden_layers must be >= 1, got {hidden_layers}")
    s12 = x1 @ x2.T
    s11 = jnp.sum(x1 * x1, -1)[:, None]
    s22 = jnp.sum(x2 * x2, -1)[None, :]
    theta = s12
    for _ in range(hidden_layers):
        new12, dot = _arccos_step(s12, s11, s22)
        s11, s22 = s11 / 2.0, s22 / 2.0            # E relu(u)^2 = Σ_xx / 2
        s12 = new12
        theta = s12 + theta * dot
    return theta
