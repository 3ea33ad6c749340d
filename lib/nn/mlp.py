"""A generic multilayer perceptron (Flax Linen), reusable by any paper.

    mlp = MLP(widths=(64, 64), out=10, activation="tanh")
    params = mlp.init(key, x)          # x (..., d)
    y = mlp.apply(params, x)           # (..., 10)

Hidden layers `widths` with `activation` between them, then a linear output layer of size
`out` (None: no output layer). `out_scale` multiplies the output layer's initial kernel (0 makes the network start
as the constant given by its bias, used for "start from a known function" inits).
`num_params(d_in, widths, out)` counts the parameters without building anything;
`width_for_budget` picks the width of an equal-width MLP with a parameter budget.
"""
from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

ACTIVATIONS = {"relu": nn.relu, "tanh": jnp.tanh, "gelu": nn.gelu, "silu": nn.silu,
               "softplus": nn.softplus, "mish": lambda x: x * jnp.tanh(nn.softplus(x))}


class MLP(nn.Module):
    """x (..., d) -> (..., out): Dense(widths[0]) -> act -> ... -> Dense(out); `out=None`
    ends with the last hidden layer's activation (a feature trunk)."""

    widths: Sequence[int]
    out: int | None
    activation: str = "relu"
    out_scale: float = 1.0

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation = {self.activation!r} is not one of "
                             f"{tuple(ACTIVATIONS)}")
        act = ACTIVATIONS[self.activation]
        h = x
        for width in self.widths:
            h = act(nn.Dense(width)(h))
        if self.out is None:
            return h
        init = nn.initializers.variance_scaling(self.out_scale ** 2, "fan_in", "truncated_normal") \
            if self.out_scale > 0 else nn.initializers.zeros
        return nn.Dense(self.out, kernel_init=init)(h)


def num_params(d_in: int, widths: Sequence[int], out: int) -> int:
    """Weights + biases of MLP(widths, out) on d_in inputs."""
    total, prev = 0, d_in
    for width in list(widths) + [out]:
        total += prev * width + width
        prev = width
    return total


def width_for_budget(budget: int, d_in: int, out: int, depth: int) -> int:
    """The width W ≥ 1 of an MLP with `depth` hidden layers of width W whose parameter count
    is closest to `budget`."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1; got {depth}")
    best, best_gap = 1, None
    for w in range(1, 4097):
        gap = abs(num_params(d_in, [w] * depth, out) - budget)
        if best_gap is None or gap < best_gap:
            best, best_gap = w, gap
    return best
