"""SimCLR-style self-supervised training on the lib/common harness (scored by
`lib.cl_similarity.evaluation`).

    data = load_data(name, block, seed)                  # SSLData: train/test images, labels
    task = make_task(data.train_x, spec, mesh)           # lib.common.train_loop.Task
    result = train_loop.train(task, loop_cfg, workdir=..., mesh=mesh)
    out = evaluation.evaluate(result.state["params"], spec, data)   # probe, similarity stats

`RunSpec` holds one run's settings (batch size, loss, λ, optimiser, augmentation, network).
The step: two augmented views of each image of the batch (`augment.two_views`, keyed by the
step key), the network's projections z1, z2, the loss of `losses.sharded_loss_fn` (negatives
gathered over the "data" axis) plus λ·L_VRNS with n = the number of training images.
The batch of step s is a fixed function of (seed, s): epoch e = s // steps_per_epoch uses
the permutation rng(seed, e) of the training set, last partial batch dropped.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from lib.cl_similarity import augment, losses
from lib.cl_similarity.encoder import SimCLRNet
from lib.common import optim, train_loop
from lib.data import images as images_lib


class SSLData(NamedTuple):
    name: str
    train_x: np.ndarray   # (N, H, W, 1) float32 in [0, 1]
    train_y: np.ndarray   # (N,) int32
    test_x: np.ndarray
    test_y: np.ndarray
    num_classes: int


class RunSpec(NamedTuple):
    batch_size: int
    epochs: int
    loss: losses.Loss
    aux_weight: float
    optimizer: str          # "sgd" (momentum 0.9) or "adam"
    base_lr: float          # peak lr = base_lr · scale(B / 256)
    lr_scaling: str         # "linear", "sqrt" or "none"
    weight_decay: float
    warmup_epochs: int
    augment: augment.AugmentConfig
    net: SimCLRNet
    seed: int


def _pool(x: np.ndarray, factor: int) -> np.ndarray:
    """Average pooling of (N, H, W, C) by `factor` (H and W must divide)."""
    if factor == 1:
        return x
    n, h, w, c = x.shape
    if h % factor or w % factor:
        raise ValueError(f"downsample factor {factor} does not divide the image size {h}×{w}")
    return x.reshape(n, h // factor, factor, w // factor, factor, c).mean(axis=(2, 4))


def load_data(name: str, *, test_fraction: float, seed: int, num_images: int = -1,
              downsample: int = 1, path: str | None = None) -> SSLData:
    """A stratified train/test split of `name` (lib.data.images), optionally a random subset
    of `num_images` images (−1: all) and average-pooled by `downsample`."""
    ds = images_lib.load(name, path)
    if num_images != -1:
        if num_images > len(ds):
            raise ValueError(f"{name} has {len(ds)} images; asked for {num_images}")
        idx = np.sort(np.random.default_rng(seed).permutation(len(ds))[:num_images])
        ds = ds.subset(idx)
    train, test = images_lib.split(ds, test_fraction, seed)
    return SSLData(name, _pool(train.images, downsample), train.labels,
                   _pool(test.images, downsample), test.labels, ds.num_classes)


def steps_per_epoch(num_train: int, batch_size: int) -> int:
    if batch_size > num_train:
        raise ValueError(f"batch size {batch_size} exceeds the {num_train} training images")
    return num_train // batch_size


def peak_lr(spec: RunSpec) -> float:
    ratio = spec.batch_size / 256.0
    scale = {"linear": ratio, "sqrt": ratio**0.5, "none": 1.0}[spec.lr_scaling]
    return spec.base_lr * scale


def optimizer_block(spec: RunSpec, spe: int) -> dict:
    """`optim.make_optimizer`'s block: SGD (momentum 0.9) + wd or AdamW; linear warm-up then
    cosine decay (as App. D)."""
    names = {"sgd": "sgd", "adam": "adamw"}
    if spec.optimizer not in names:
        raise ValueError(f"optimizer must be 'sgd' or 'adam', got {spec.optimizer!r}")
    return dict(name=names[spec.optimizer], lr=peak_lr(spec), schedule="cosine",
                warmup=spec.warmup_epochs * spe, weight_decay=spec.weight_decay, momentum=0.9)


def make_task(train_x: np.ndarray, spec: RunSpec, mesh) -> tuple[train_loop.Task, int]:
    """(Task, num_steps) for `spec.epochs` epochs over `train_x` (N, H, W, C)."""
    n = train_x.shape[0]
    b = spec.batch_size
    spe = steps_per_epoch(n, b)
    num_steps = spec.epochs * spe
    opt = optim.make_optimizer(optimizer_block(spec, spe), num_steps)
    loss_fn = losses.sharded_loss_fn(spec.loss, mesh, aux_weight=spec.aux_weight, num_data=n)
    net = spec.net
    shape = train_x.shape[1:]

    def init_state(key):
        return optim.init_state(net.init(key, jnp.zeros((1, *shape), jnp.float32)), opt)

    def train_step(state, batch, key):
        x1, x2 = augment.two_views(key, batch["images"], spec.augment)

        def objective(params):
            _, z = net.apply(params, jnp.concatenate([x1, x2]))
            z1, z2 = z[:b], z[b:]
            return loss_fn(z1, z2), (z1, z2)

        (value, (z1, z2)), grads = jax.value_and_grad(objective, has_aux=True)(state["params"])
        new_state = train_loop.apply_gradients(state, grads, opt)
        z1, z2 = jax.lax.stop_gradient((z1, z2))
        st = losses.similarity_stats(z1, z2)
        vrns = losses.vrns_loss(z1, z2, n)
        metrics = {"loss": value, "vrns": vrns, "pos_mean": st.pos_mean,
                   "neg_mean": st.neg_mean, "neg_var": st.neg_var}
        return new_state, metrics

    def batch_fn(step, rows):
        epoch, i = divmod(int(step), spe)
        perm = np.random.default_rng([spec.seed, epoch]).permutation(n)
        return {"images": train_x[perm[i * b:(i + 1) * b]][rows]}

    return train_loop.Task(init_state, train_step, batch_fn, b), num_steps

