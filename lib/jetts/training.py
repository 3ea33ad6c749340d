"""Training the outcome / process reward models of `lib.jetts.reward_models`: the masked
binary cross-entropy at the read-out positions and the `train_loop.Task` that fine-tunes the
LM and the head together.

Batch (global, rows = examples; `reward_models.encode_examples` output):
    {"tokens": (B, T), "valid": (B, T), "pos": (B, S), "start": (B,), "mask": (B, S),
     "label": (B, S)}
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.jetts.reward_models import readout_logits
from lib.lm import sft
from lib.lm.model import LMConfig


def loss_fn(cfg: LMConfig, params: Any, batch: dict) -> tuple[jax.Array, dict]:
    logits = readout_logits(cfg, params, batch["tokens"], batch["valid"], batch["pos"],
                            batch["start"])
    m = batch["mask"]
    bce = optax.sigmoid_binary_cross_entropy(logits, batch["label"])
    denom = jnp.maximum(m.sum(), 1.0)
    acc = (((logits > 0) == (batch["label"] > 0.5)) * m).sum() / denom
    return (bce * m).sum() / denom, {"accuracy": acc}


def init_head(cfg: LMConfig, logprob_feature: bool = False) -> dict:
    head = {"w": jnp.zeros((cfg.d_model,), jnp.float32), "b": jnp.zeros((), jnp.float32)}
    if logprob_feature:
        head["a"] = jnp.zeros((), jnp.float32)
    return head


def make_task(cfg: LMConfig, base_params: Any, data: dict[str, np.ndarray], *,
              batch_size: int, lr: float, num_steps: int, warmup_steps: int = 0,
              weight_decay: float = 0.0, grad_clip: float = 1.0,
              seed: int = 0, logprob_feature: bool = False) -> train_loop.Task:
    """A `train_loop.Task` fine-tuning LM + head on `encode_examples` output."""
    n = len(data["tokens"])
    if n < batch_size:
        raise ValueError(f"{n} reward-model examples are fewer than batch_size = {batch_size}")
    opt = sft.make_optimizer(lr, num_steps, warmup_steps=warmup_steps,
                             weight_decay=weight_decay, grad_clip=grad_clip)

    def init_state(key):
        del key
        params = {"lm": jax.tree.map(jnp.asarray, base_params),
                  "head": init_head(cfg, logprob_feature)}
        return optim.init_state(params, opt)

    def train_step(state, batch, key):
        del key
        (loss, aux), grads = jax.value_and_grad(
            lambda p: loss_fn(cfg, p, batch), has_aux=True)(state["params"])
        return (train_loop.apply_gradients(state, grads, opt),
                {"loss": loss, **aux})

    return train_loop.Task(init_state, train_step,
                           train_loop.epoch_batches(data, batch_size, seed), batch_size)

