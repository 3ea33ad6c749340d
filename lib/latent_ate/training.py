"""The pre-training tasks of `lib.latent_ate.runs`: Adam on a cross-entropy classifier
(`make_cnn_task`) or a mean-squared autoencoder (`make_ae_task`), each a `train_loop.Task`.

Batch (global, rows = examples, uniform draws seeded by (seed, step)):
    cnn: {"x": (B, H, W, C), "y": (B,)}; autoencoder: {"x": (B, D)}
"""
from __future__ import annotations

import jax
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.latent_ate.networks import Autoencoder, ConvNet


def _batch_fn(arrays: dict, batch: int, seed: int):
    """Rows of the step's batch: uniform draws seeded by (seed, step) (resume-exact)."""
    n = next(iter(arrays.values())).shape[0]

    def fn(step, rows):
        idx = np.random.default_rng([seed, step]).integers(0, n, size=batch)[rows]
        return {k: v[idx] for k, v in arrays.items()}
    return fn


def _make_adam_task(model, loss, example, arrays, batch, lr, seed) -> train_loop.Task:
    opt = optax.adam(lr)

    def init_state(key):
        return optim.init_state(model.init(key, example), opt)

    def train_step(state, b, key):
        del key
        value, grads = jax.value_and_grad(loss)(state["params"], b)
        return train_loop.apply_gradients(state, grads, opt), {"loss": value}

    return train_loop.Task(init_state, train_step, _batch_fn(arrays, batch, seed), batch)


def make_cnn_task(images, labels, cfg, num_classes: int, seed: int):
    """Cross-entropy classifier on the pre-training images; cfg: channels, latent_dim, lr, batch."""
    model = ConvNet(tuple(cfg.channels), cfg.latent_dim, num_classes)

    def loss(params, b):
        logits, _ = model.apply(params, b["x"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, b["y"]).mean()

    return model, _make_adam_task(model, loss, images[:1], {"x": images, "y": labels},
                                  cfg.batch, cfg.lr, seed)


def make_ae_task(data, cfg, seed: int):
    """Mean-squared reconstruction of data (N, D); cfg: hidden, latent_dim, lr, batch."""
    model = Autoencoder(tuple(cfg.hidden), cfg.latent_dim, data.shape[1])

    def loss(params, b):
        recon, _ = model.apply(params, b["x"])
        return ((recon - b["x"]) ** 2).mean()

    return model, _make_adam_task(model, loss, data[:1], {"x": data}, cfg.batch, cfg.lr, seed)
