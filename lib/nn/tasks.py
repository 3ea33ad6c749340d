"""`train_loop.Task`s that several papers train the same way.

`make_classifier_task`: Adam on the mean softmax cross-entropy of a Flax classifier
(`model.apply(params, x)` -> logits (B, classes)) over a fixed image array; each step's
batch is `batch_size` rows drawn uniformly with replacement by
`np.random.default_rng([seed, salt, step])`, so a resumed run sees the same batches.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop


def make_classifier_task(model, images: np.ndarray, labels: np.ndarray, *, lr: float,
                         batch_size: int, seed: int, salt: int) -> train_loop.Task:
    """A Task training `model` to classify images (N, ...) into integer `labels` (N,).

    Batch: {"x": (B, ...), "y": (B,)}; metrics: {"loss"}."""
    if len(images) != len(labels) or len(images) == 0:
        raise ValueError(f"images and labels must be non-empty and of one length: "
                         f"{len(images)} images, {len(labels)} labels")
    opt = optax.adam(lr)

    def init_state(key):
        return optim.init_state(model.init(key, jnp.asarray(images[:1])), opt)

    def train_step(state, batch, key):
        del key

        def loss(p):
            logits = model.apply(p, batch["x"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"]).mean()

        value, grads = jax.value_and_grad(loss)(state["params"])
        return train_loop.apply_gradients(state, grads, opt), {"loss": value}

    def batch_fn(step, rows):
        idx = np.random.default_rng([seed, salt, step]).integers(0, len(images), batch_size)
        return {"x": images[idx][rows], "y": labels[idx][rows]}

    return train_loop.Task(init_state, train_step, batch_fn, batch_size)
