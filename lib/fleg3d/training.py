"""Base-session training of the 3D-FLEG networks and their ablations (`make_task`): the
classification + alignment loss of `scoring.base_loss` under Adam with a cosine schedule.

Batch (global, `config.per_class_batch` clouds of every base class, each rotated about z):
    {"points": (B, N, 3), "desc": (B, D), "labels": (B,)}
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.common import optim, train_loop
from lib.fleg3d import bank as bank_lib, scoring
from lib.fleg3d.model import FlegNet

# trained network -> (FlegNet variant, whether the alignment loss is on)
NETWORKS = {"fleg3d": ("fleg3d", True), "no_extraction": ("no_extraction", True),
            "no_embedding": ("no_embedding", True), "no_align": ("fleg3d", False),
            "filp3d": ("filp3d", False)}


def make_model(config, variant: str) -> FlegNet:
    return FlegNet(NETWORKS[variant][0], tuple(config.model.widths), tuple(config.model.geo_widths),
                   text_dim=384)


def make_task(config, variant: str, bank: bank_lib.Bank, base_text: np.ndarray) -> train_loop.Task:
    """Base-session training of one network: class-balanced batches of the base train set,
    random rotation about z per cloud (descriptors are invariant, so only points move)."""
    model = make_model(config, variant)
    align = config.loss.align_weight if NETWORKS[variant][1] else 0.0
    opt = optim.make_optimizer(dict(name="adam", lr=config.optim.lr, schedule="cosine",
                                    warmup=config.optim.warmup), config.train.num_steps)
    rows = next(iter(bank.protocols.values())).base_train       # shared by every protocol
    by_class = [rows[bank.labels[rows] == c] for c in range(config.data.base_classes)]
    m = config.per_class_batch
    txt = jnp.asarray(base_text)

    def init_state(key):
        return optim.init_state(
            model.init(key, jnp.asarray(bank.points[:1]), jnp.asarray(bank.desc[:1])), opt)

    def train_step(state, batch, key):
        def loss_fn(p):
            out = model.apply(p, batch["points"], batch["desc"])
            return scoring.base_loss(out, batch["labels"], txt,
                                     temperature=config.model.temperature, align_weight=align)
        grads, metrics = jax.grad(loss_fn, has_aux=True)(state["params"])
        return train_loop.apply_gradients(state, grads, opt), metrics

    def batch_fn(step, sl):
        rng = np.random.default_rng([config.train.seed, step])
        idx = np.concatenate([rng.choice(r, m, replace=False) for r in by_class])
        a = rng.uniform(0, 2 * np.pi, len(idx))
        rot = np.zeros((len(idx), 3, 3), np.float32)
        rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1] = np.cos(a), -np.sin(a), np.sin(a), np.cos(a)
        rot[:, 2, 2] = 1
        pts = np.einsum("bij,bnj->bni", rot, bank.points[idx]).astype(np.float32)
        return {"points": pts[sl], "desc": bank.desc[idx][sl],
                "labels": bank.labels[idx].astype(np.int32)[sl]}

    return train_loop.Task(init_state, train_step, batch_fn, m * config.data.base_classes)
