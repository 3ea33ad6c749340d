"""ANOVA-T^dPNN (eq. 7): f(x) = β_0 + Σ_{1≤|S|≤d} f_S(x_S), f_S = Σ_k β_{S,k} φ(x_S | b_{S,k}, γ_{S,k}).

All main effects and all interactions up to `max_order` (2 = the paper's ANOVA-T²PNN),
K = `num_units` basis units per component (the official code's `num_Ks`).

The identifiability constants (`basis.sigmoid_mass`) are an explicit argument:
  * training: computed on the current minibatch, with gradients, as the official code does;
  * evaluation: computed once on the whole training sample (`constants(x_train)`) and
    frozen, so every f_S has μ_n-mean zero in each of its coordinates.

Interface shared with the baselines (lib/anova_tpnn/baselines.py), all through Linen
`apply(params, ..., method=...)`:
    constants(x, weights)      -> {order: (C_o, o, K)}          (baselines: {})
    components(x, consts)      -> {0: intercept (n,), order o ≥ 1: (n, C_o)}
    __call__(x, consts)        -> (n,)  = intercept + Σ components
    penalty(comps)             -> mean squared component output (the optional reg_lambda)
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.anova_tpnn import basis


def component_orders(num_features: int, max_order: int) -> tuple[int, ...]:
    """Orders 1..max_order; ValueError naming both numbers when max_order > num_features."""
    if max_order > num_features:
        raise ValueError(f"requested interaction order {max_order} exceeds the number of "
                         f"features {num_features}; use max_order <= {num_features}")
    if max_order < 1:
        raise ValueError(f"max_order must be >= 1, got {max_order}")
    return tuple(range(1, max_order + 1))


def component_names(num_features: int, max_order: int) -> list[tuple[int, ...]]:
    """Feature tuples of every component in the column order of `stack_components`."""
    return [tuple(int(v) for v in row) for o in component_orders(num_features, max_order)
            for row in basis.component_index(num_features, o)]


def stack_components(comps: dict) -> jax.Array:
    """{order: (n, C_o)} -> (n, Σ_o C_o), orders ascending (order 0, the intercept f_∅,
    excluded)."""
    return jnp.concatenate([comps[o] for o in sorted(k for k in comps if k != 0)],
                           axis=-1)


def output_from_components(comps: dict) -> jax.Array:
    """intercept + Σ_S f_S, (n,)."""
    return comps[0] + jnp.sum(stack_components(comps), axis=-1)


class ANOVATPNN(nn.Module):
    """ANOVA-TPNN. Params per order o: b_o, log_gamma_o (C_o, o, K), beta_o (C_o, K);
    and a scalar intercept. Call `init_from_data` (not Linen's plain init) to get the
    paper's data-aware thresholds and temperatures."""

    num_features: int
    max_order: int = 2
    num_units: int = 10

    def setup(self):
        self.orders = component_orders(self.num_features, self.max_order)
        self.index = {o: basis.component_index(self.num_features, o) for o in self.orders}
        k = self.num_units
        self.b = {str(o): self.param(f"b_{o}", nn.initializers.uniform(2.0),
                                     (len(self.index[o]), o, k)) for o in self.orders}
        self.log_gamma = {str(o): self.param(f"log_gamma_{o}", nn.initializers.constant(-1.0),
                                             (len(self.index[o]), o, k)) for o in self.orders}
        total = sum(len(i) for i in self.index.values())
        scale = 1.0 / np.sqrt(k * total)
        self.beta = {str(o): self.param(f"beta_{o}", nn.initializers.normal(scale),
                                        (len(self.index[o]), k)) for o in self.orders}
        self.intercept = self.param("intercept", nn.initializers.zeros, ())

    def _sel(self, x, o):
        return x[:, self.index[o]]

    def constants(self, x: jax.Array, weights: jax.Array | None = None) -> dict:
        """Identifiability constants m on the (weighted) sample x: {order: (C_o, o, K)}."""
        return {o: basis.sigmoid_mass(self._sel(x, o), self.b[str(o)], self.log_gamma[str(o)],
                                      weights) for o in self.orders}

    def components(self, x: jax.Array, consts: dict) -> dict:
        out = {0: jnp.broadcast_to(self.intercept, x.shape[:1])}
        for o in self.orders:
            phi = basis.units(self._sel(x, o), self.b[str(o)], self.log_gamma[str(o)], consts[o])
            out[o] = jnp.einsum("nck,ck->nc", phi, self.beta[str(o)])
        return out

    def __call__(self, x: jax.Array, consts: dict) -> jax.Array:
        return output_from_components(self.components(x, consts))

    def data_aware(self, key: jax.Array, x_sorted: jax.Array) -> dict:
        """{order: (b, log_gamma)} from `basis.data_aware_init`; x_sorted (n, p) has every
        column sorted ascending."""
        keys = jax.random.split(key, len(self.orders))
        return {o: basis.data_aware_init(kk, self._sel(x_sorted, o), self.num_units)
                for kk, o in zip(keys, self.orders)}


def init_from_data(model: ANOVATPNN, key: jax.Array, x_sorted: jax.Array) -> dict:
    """Linen init, then b and log γ replaced by their data-aware values from the training
    rows x_sorted (n, p), every column sorted ascending (e.g. `np.sort(x_train, axis=0)`)."""
    k1, k2 = jax.random.split(key)
    params = model.init(k1, x_sorted[:2], method=model.constants)
    init = model.apply(params, k2, x_sorted, method=model.data_aware)
    p = dict(params["params"])
    for o, (b, lg) in init.items():
        p[f"b_{o}"], p[f"log_gamma_{o}"] = b, lg
    return {"params": p}


def penalty(comps: dict) -> jax.Array:
    """Mean over rows of Σ_S f_S(x)² (the official code's optional `reg_lambda` term)."""
    return jnp.mean(jnp.sum(stack_components(comps) ** 2, axis=-1))
