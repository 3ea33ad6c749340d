"""`lib.common.train_loop.Task`s: the diffusion denoiser and the metric sketch encoder.

Diffusion state: {"params", "opt_state", "ema", "step"}; Adam with linear warm-up and cosine
decay, or a constant rate (the paper: constant 1e-4), global-norm clipping, an EMA of the
parameters (decay 0: EMA = params).
Batches are rows of a fixed training array drawn by a step-seeded generator, so a resumed
run sees the same batches as an uninterrupted one.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.nn import tasks
from lib.sketchdnn import loss as loss_lib
from lib.sketchdnn.diffusion import Process
from lib.sketchdnn.metrics import SketchEncoder

ENCODER_STREAM = 17   # the encoder's batch draws: rng([seed, ENCODER_STREAM, step])


def optimizer_block(lr: float, warmup: int, clip: float, constant: bool = False) -> dict:
    """`optim.make_optimizer`'s block: Adam with global-norm clipping (clip 0 = none), a
    constant rate (warm-up ignored) or warm-up then cosine decay to lr / 10."""
    return dict(name="adam", lr=lr, clip=clip, schedule="constant" if constant else "cosine",
                warmup=0 if constant else warmup, end_lr_factor=0.1)


def row_batch(data: np.ndarray, seed: int, step: int, batch: int, salt: int = 0) -> np.ndarray:
    idx = np.random.default_rng([seed, salt, step]).integers(0, len(data), batch)
    return data[idx]


def make_diffusion_task(process: Process, model, x_train: np.ndarray, *, batch_size: int,
                        lr: float, num_steps: int, warmup: int, clip: float, ema_decay: float,
                        low_t_max: int, low_t_weight: float, seed: int,
                        constant_lr: bool = False, ce_mean: str = "slots") -> train_loop.Task:
    """Task training `model` (a `denoiser.SketchDenoiser`) on x_train (N, S, 21);
    clip 0 = none; ce_mean: `loss.training_loss`'s CE normalisation."""
    opt = optim.make_optimizer(optimizer_block(lr, warmup, clip, constant_lr), num_steps)
    example = jnp.asarray(x_train[:1])

    def init_state(key):
        params = model.init(key, example, jnp.ones((1,), jnp.int32))
        return {**optim.init_state(params, opt), "ema": params}

    def train_step(state, batch, key):
        def objective(params):
            return loss_lib.training_loss(process, lambda x, t: model.apply(params, x, t),
                                          batch["x"], key, low_t_max=low_t_max,
                                          low_t_weight=low_t_weight, ce_mean=ce_mean)

        (value, parts), grads = jax.value_and_grad(objective, has_aux=True)(state["params"])
        new = train_loop.apply_gradients(state, grads, opt)
        ema = optim.ema_update(state["ema"], new["params"], new["step"], "exp", ema_decay)
        return ({**new, "ema": ema},
                {"loss": value, **parts, "grad_norm": optax.tree.norm(grads)})

    def batch_fn(step, rows):
        return {"x": row_batch(x_train, seed, step, batch_size)[rows]}

    return train_loop.Task(init_state, train_step, batch_fn, batch_size)


def make_encoder_task(encoder: SketchEncoder, images: np.ndarray, labels: np.ndarray, *,
                      batch_size: int, seed: int, lr: float = 1e-3) -> train_loop.Task:
    """Task training the metric encoder to classify rasters (N, R, R) into `labels`."""
    return tasks.make_classifier_task(encoder, images, labels, lr=lr, batch_size=batch_size,
                                      seed=seed, salt=ENCODER_STREAM)
