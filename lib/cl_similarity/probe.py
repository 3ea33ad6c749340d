"""Linear probe: multinomial logistic regression on frozen, L2-normalised features.

As in the paper's evaluation (App. D: frozen, normalised encoder features, a linear
classifier, top-1 accuracy), but trained full batch by Adam for a fixed number of steps
(the features of these small sets fit in memory), so the result is deterministic.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from lib.cl_similarity.losses import normalize
from lib.common import optim


class ProbeResult(NamedTuple):
    train_acc: float
    test_acc: float


def fit_linear(features: jax.Array, labels: jax.Array, num_classes: int, *, steps: int = 500,
               lr: float = 0.05, weight_decay: float = 1e-4) -> dict:
    """Weights {"w": (D, K), "b": (K,)} minimising cross-entropy + wd/2·‖w‖² on (N, D) features."""
    if features.ndim != 2 or features.shape[0] != labels.shape[0]:
        raise ValueError(f"features (N, D) and labels (N,) disagree: {features.shape}, "
                         f"{labels.shape}")
    x = normalize(features)
    onehot = jax.nn.one_hot(labels, num_classes)
    params = {"w": jnp.zeros((x.shape[1], num_classes)), "b": jnp.zeros((num_classes,))}
    opt = optax.adam(lr)

    def loss_fn(p):
        logits = x @ p["w"] + p["b"]
        ce = -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(logits), axis=-1))
        return ce + 0.5 * weight_decay * jnp.sum(p["w"] ** 2)

    return optim.minimize(loss_fn, params, opt, steps)[0]


def accuracy(params: dict, features: jax.Array, labels: jax.Array) -> float:
    pred = jnp.argmax(normalize(features) @ params["w"] + params["b"], axis=-1)
    return float(jnp.mean(pred == labels))


def linear_probe(train_x, train_y, test_x, test_y, num_classes: int, **kwargs) -> ProbeResult:
    """Fit on (train_x, train_y), report top-1 accuracy on both sets."""
    params = jax.jit(fit_linear, static_argnames=("num_classes", "steps"))(
        train_x, train_y, num_classes, **kwargs)
    return ProbeResult(accuracy(params, train_x, train_y), accuracy(params, test_x, test_y))
