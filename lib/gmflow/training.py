"""`lib.common.train_loop.Task`s of GMFlow: a GMFlow / flow-matching model (`make_task`)
and the metric classifier of the image part (`make_classifier_task`).

Model state: {"params", "opt_state", "ema", "step"}; AdamW with a linear warm-up, then a
constant or cosine-decayed rate, global-norm clipping, and an EMA of the parameters ("exp"
with a constant decay, 0 keeping it equal to the parameters, or the power-function "karras"
EMA), all set by the config's `optim` block (`optim_settings`). Class-conditional models
drop labels to the null class with probability p_uncond (10% in the paper) so one network
gives the conditional and unconditional GMs.
The classifier: Adam on the cross-entropy, batches drawn uniformly with replacement.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.gmflow import config_schema, losses
from lib.nn import tasks

Array = jax.Array

# salts of the batch streams: the classifier's draws are rng([seed, CLASSIFIER_STREAM, step]),
# an image model's rng([seed, step, IMAGE_STREAM])
CLASSIFIER_STREAM = 7
IMAGE_STREAM = 11


OPTIM_DEFAULTS = {k.split(".", 1)[1]: key.default for k, key in config_schema.KEYS.items()
                  if k.startswith("optim.")}


def optim_settings(block: Mapping) -> dict:
    """A config's `optim` block (or part of one) with config_schema's defaults for the keys
    it lacks; ValueError naming an unknown key."""
    given = dict(block.items())
    unknown = sorted(set(given) - set(OPTIM_DEFAULTS))
    if unknown:
        raise ValueError(f"optim block: unknown key(s) {unknown}; known: {sorted(OPTIM_DEFAULTS)}")
    return {**OPTIM_DEFAULTS, **given}


def optimizer_block(lr: float, warmup: int, clip: float = 10.0, *, schedule: str = "cosine",
                    end_lr_factor: float = 0.1, warmup_from: float = 0.0,
                    b2: float = 0.99) -> dict:
    """`optim.make_optimizer`'s block: AdamW (no weight decay), clipping, a warm-up from
    lr·warmup_from, then `schedule` (default: cosine decay to lr / 10, β₂ 0.99)."""
    return dict(name="adamw", lr=lr, schedule=schedule, warmup=warmup, warmup_from=warmup_from,
                end_lr_factor=end_lr_factor, clip=clip, b2=b2)


def optimizer_block_from(block: Mapping) -> dict:
    """`optimizer_block` for a config's `optim` block (`optim_settings`)."""
    s = optim_settings(block)
    return optimizer_block(s["lr"], s["warmup"], s["clip"], schedule=s["schedule"],
                           end_lr_factor=s["end_lr_factor"], warmup_from=s["warmup_from"],
                           b2=s["b2"])


def make_task(model, *, example_x: np.ndarray, batch_fn: Callable[[int], dict], batch_size: int,
              loss_kind: str, trans_ratio: float, num_steps: int, optim_block: Mapping,
              num_classes: int = 0, p_uncond: float = 0.0,
              t_min: float = 1e-4) -> train_loop.Task:
    """A Task training `model` (a `networks.GMFlowMLP`) with the loss `loss_kind`, the
    optimiser and parameter EMA of `optim_block` (the config's `optim`; `optim_settings`).

    batch_fn(step) -> {"x": (B, G, C) float32[, "label": (B,) int32]}, deterministic in step.
    """
    s = optim_settings(optim_block)
    opt = optim.make_optimizer(optimizer_block_from(s), num_steps)
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
        ema = optim.ema_update(state["ema"], new["params"], new["step"], s["ema_kind"],
                               s["ema_decay"], s["ema_gamma"])
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
