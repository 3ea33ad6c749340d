"""`lib.common.train_loop.Task`s of GMFlow: a GMFlow / flow-matching model (`make_task`)
and the metric classifier of the image part (`make_classifier_task`).

Model state: {"params", "opt_state", "ema", "step"}; AdamW with linear warm-up and cosine
decay, global-norm clipping, an EMA of the parameters (decay 0 keeps it equal to the
parameters). Class-conditional models drop labels to the null class with probability
p_uncond (10% in the paper) so one network gives the conditional and unconditional GMs.
The classifier: Adam on the cross-entropy, batches drawn uniformly with replacement.
"""
from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.gmflow import losses
from lib.nn import tasks

Array = jax.Array

# salts of the batch streams: the classifier's draws are rng([seed, CLASSIFIER_STREAM, step]),
# an image model's rng([seed, step, IMAGE_STREAM])
CLASSIFIER_STREAM = 7
IMAGE_STREAM = 11


def optimizer_block(lr: float, warmup: int, clip: float = 10.0) -> dict:
    """`optim.make_optimizer`'s block: AdamW (β₂ = 0.99, no decay), clipping, warm-up then
    cosine decay to lr / 10."""
    return dict(name="adamw", lr=lr, schedule="cosine", warmup=warmup, end_lr_factor=0.1,
                clip=clip, b2=0.99)


def make_task(model, *, example_x: np.ndarray, batch_fn: Callable[[int], dict], batch_size: int,
              loss_kind: str, trans_ratio: float, lr: float, num_steps: int, warmup: int,
              ema_decay: float, num_classes: int = 0, p_uncond: float = 0.0,
              t_min: float = 1e-4) -> train_loop.Task:
    """A Task training `model` (a `networks.GMFlowMLP`) with the loss `loss_kind`.

    batch_fn(step) -> {"x": (B, G, C) float32[, "label": (B,) int32]}, deterministic in step.
    """
    opt = optim.make_optimizer(optimizer_block(lr, warmup), num_steps)
    loss = losses.loss_fn(loss_kind, trans_ratio, t_min)
    conditional = num_classes > 0
    ex_x = jnp.asarray(example_x[:1])
    ex_l = jnp.zeros((1,), jnp.int32) if conditional else None

    def init_state(key):
        params = model.init(key, ex_x, jnp.ones((1,)), ex_l)
        return {**optim.init_state(params, opt), "ema": params}

    def train_step(state, batch, key):
        k_drop, k_loss = jax.random.split(key)
        labels = None
        if conditional:
            drop = jax.random.uniform(k_drop, batch["label"].shape) < p_uncond
            labels = jnp.where(drop, num_classes, batch["label"])

        def objective(params):
            return loss(lambda x, t: model.apply(params, x, t, labels), batch["x"], k_loss)

        value, grads = jax.value_and_grad(objective)(state["params"])
        new = train_loop.apply_gradients(state, grads, opt)
        ema = jax.tree.map(lambda e, p: ema_decay * e + (1 - ema_decay) * p, state["ema"], new["params"])
        return ({**new, "ema": ema},
                {"loss": value, "grad_norm": optax.tree.norm(grads)})

    def rows_fn(step, rows):
        return {k: v[rows] for k, v in batch_fn(step).items()}

    return train_loop.Task(init_state, train_step, rows_fn, batch_size)


def image_rows(images: np.ndarray) -> np.ndarray:
    """(N, H, W, C) images in [0, 1] as an image model's input: (N, H·W, C) float32 in [-1, 1]."""
    n, h, w, c = images.shape
    return (images.reshape(n, h * w, c) * 2 - 1).astype(np.float32)


def image_batch_fn(x: np.ndarray, labels: np.ndarray, batch_size: int,
                   seed: int) -> Callable[[int], dict]:
    """batch_fn(step) for `make_task` on `image_rows` x (N, G, C): {"x": (B, G, C),
    "label": (B,)}, rows drawn uniformly with replacement."""

    def batch_fn(step):
        idx = np.random.default_rng([seed, step, IMAGE_STREAM]).integers(0, len(x), batch_size)
        return {"x": x[idx], "label": labels[idx]}

    return batch_fn


def make_classifier_task(clf, images: np.ndarray, labels: np.ndarray, *, lr: float,
                         batch_size: int, seed: int) -> train_loop.Task:
    """The metric classifier `clf` (a `networks.Classifier`) on (N, H, W, C) images."""
    return tasks.make_classifier_task(clf, images, labels, lr=lr, batch_size=batch_size,
                                      seed=seed, salt=CLASSIFIER_STREAM)


def classifier_loop(num_steps: int, seed: int) -> train_loop.LoopConfig:
    """The classifier's loop: ten logged rows, one checkpoint at the end."""
    return train_loop.LoopConfig(num_steps=num_steps, log_every=max(num_steps // 10, 1),
                                 checkpoint_every=num_steps, seed=seed)
