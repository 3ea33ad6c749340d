"""Pre-trained feature extractors, trained once on a split disjoint from the causal sample.

Three networks (`networks.py`), each trained with lib/common/train_loop on its task of
`training.py` (Orbax checkpoints through lib/common/checkpoint.py; a rerun restores the final
step and skips training):

  cnn            ConvNet classifier on the pre-training images (the 10-class task); its
                 penultimate ReLU layer (latent_dim) is the "pre-trained latent" Z — the
                 stand-in for the paper's DenseNet/BERT features.
  pixel_ae       MLP autoencoder on the flattened pixels with a low-dimensional linear
                 bottleneck: the third adjustment set (a generic, label-free pre-training).
  confounder_ae  MLP autoencoder on the standardised cnn features with a 5-d linear
                 bottleneck (the paper's d→128→64→5→64→128→d recipe, smaller); its code U
                 on the causal images is the confounder of the "complex" design.

`pretrain_and_extract` trains (or restores) the three and returns the causal pool's
features; the arrays are cached as .npy under <workdir>/features/ so later runs of the
same workdir reuse them without recomputation.
"""
from __future__ import annotations

import os

import jax
import numpy as np
from absl import logging

from lib.common import train_loop
from lib.latent_ate import features, training

def train_or_restore(task, cfg, workdir: str, mesh, seed: int):
    """Train `task` for cfg.steps in `workdir` (resuming / reusing its checkpoints); params."""
    loop = train_loop.LoopConfig(num_steps=cfg.steps, log_every=max(cfg.steps // 20, 1),
                                 checkpoint_every=cfg.steps, keep_checkpoints=1, seed=seed)
    result = train_loop.train(task, loop, workdir=workdir, mesh=mesh)   # Preempted on SIGTERM
    return jax.device_get(result.state["params"])



def pretrain_and_extract(config, workdir: str, mesh) -> dict:
    """Train/restore the three networks and return the causal pool's arrays (float32):

    pixels (N, H·W·C), labels (N,), cnn (N, latent_dim), pixel_ae (N, k), confounder
    (N, q) (the confounder AE's code, standardised by its pre-training moments) and
    cnn_pool_logits (N, classes) (for the classifier's accuracy on the pool). Cached as
    <workdir>/features/<name>.npy; each network's checkpoints are in
    <workdir>/pretrain/<network>/checkpoints.
    """
    cache = os.path.join(workdir, "features")
    names = ("pixels", "labels", "cnn", "pixel_ae", "confounder", "cnn_pool_logits")
    if all(os.path.exists(os.path.join(cache, f"{n}.npy")) for n in names):
        logging.info("reusing cached features in %s", cache)
        return {n: np.load(os.path.join(cache, f"{n}.npy")) for n in names}
    p = config.pretrain
    pre, pool = features.split_data(config.data, config.seed)
    logging.info("pre-training on %d images, causal pool of %d", len(pre), len(pool))
    root = os.path.join(workdir, "pretrain")

    model, task = training.make_cnn_task(pre.images, pre.labels, p.cnn, pre.num_classes,
                                         config.seed)
    params = train_or_restore(task, p.cnn, os.path.join(root, "cnn"), mesh, config.seed)
    cnn_fn = jax.jit(lambda x: model.apply(params, x))
    pre_z = features.apply_batched(lambda x: cnn_fn(x)[1], pre.images)
    pool_out = [cnn_fn(pool.images[i:i + 1024]) for i in range(0, len(pool), 1024)]
    pool_logits = np.concatenate([np.asarray(o[0]) for o in pool_out])
    pool_z = np.concatenate([np.asarray(o[1]) for o in pool_out])

    flat_pre = pre.images.reshape(len(pre), -1)
    flat_pool = pool.images.reshape(len(pool), -1)
    model_ae, task_ae = training.make_ae_task(flat_pre, p.pixel_ae, config.seed + 1)
    params_ae = train_or_restore(task_ae, p.pixel_ae, os.path.join(root, "pixel_ae"), mesh,
                                 config.seed + 1)
    pool_ae = features.apply_batched(jax.jit(lambda x: model_ae.apply(params_ae, x)[1]),
                                     flat_pool)

    pre_zs, pool_zs = features.standardize(pre_z, pool_z)
    model_c, task_c = training.make_ae_task(pre_zs.astype(np.float32), p.confounder_ae,
                                            config.seed + 2)
    params_c = train_or_restore(task_c, p.confounder_ae, os.path.join(root, "confounder_ae"),
                                mesh, config.seed + 2)
    code_fn = jax.jit(lambda x: model_c.apply(params_c, x)[1])
    pre_u = features.apply_batched(code_fn, pre_zs.astype(np.float32))
    _, pool_u = features.standardize(
        pre_u, features.apply_batched(code_fn, pool_zs.astype(np.float32)))

    out = {"pixels": flat_pool, "labels": pool.labels, "cnn": pool_z, "pixel_ae": pool_ae,
           "confounder": pool_u, "cnn_pool_logits": pool_logits}
    if jax.process_index() == 0:
        os.makedirs(cache, exist_ok=True)
        for n, a in out.items():   # via a temporary file: a SIGTERM never leaves half a cache
            path = os.path.join(cache, f"{n}.npy")
            np.save(path + ".tmp.npy", np.asarray(a))
            os.replace(path + ".tmp.npy", path)
    return {n: np.asarray(a) for n, a in out.items()}
