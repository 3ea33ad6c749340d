"""Scoring a trained SimCLR network: linear-probe accuracy on its representations h and the
similarity statistics of its projections z on augmented test views."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.cl_similarity import augment, losses, probe
from lib.cl_similarity.training import RunSpec, SSLData

# salt of the evaluation views' key: a run scores views of key(seed + EVAL_STREAM)
EVAL_STREAM = 7


def embed(apply, params, x: np.ndarray, chunk: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """(h, z) of (N, H, W, C) images by `apply` = jax.jit(net.apply), in chunks of `chunk`
    (the last one zero-padded, so one compiled shape serves every call); host numpy arrays."""
    n = x.shape[0]
    pad = (-n) % chunk
    xp = np.concatenate([x, np.zeros((pad, *x.shape[1:]), x.dtype)]) if pad else x
    hs, zs = [], []
    for i in range(0, xp.shape[0], chunk):
        h, z = apply(params, jnp.asarray(xp[i:i + chunk]))
        hs.append(np.asarray(h))
        zs.append(np.asarray(z))
    return np.concatenate(hs)[:n], np.concatenate(zs)[:n]


def evaluate(params, spec: RunSpec, data: SSLData, *, probe_steps: int, probe_lr: float,
             probe_wd: float, max_pairs: int, eval_seed: int) -> dict:
    """Linear-probe accuracy on h and the similarity statistics of z on test-set views.

    The statistics use two augmented views (fixed key `eval_seed`) of the first `max_pairs`
    test images: mean positive cosine, mean and variance of the cross-view negative cosines
    (the paper's Table 1 quantity) and of the within-view ones.
    """
    apply = jax.jit(spec.net.apply)
    h_train, _ = embed(apply, params, data.train_x)
    h_test, _ = embed(apply, params, data.test_x)
    res = probe.linear_probe(jnp.asarray(h_train), jnp.asarray(data.train_y), jnp.asarray(h_test),
                             jnp.asarray(data.test_y), data.num_classes, steps=probe_steps,
                             lr=probe_lr, weight_decay=probe_wd)
    x = jnp.asarray(data.test_x[:max_pairs])
    x1, x2 = jax.jit(augment.two_views, static_argnums=2)(jax.random.key(eval_seed), x, spec.augment)
    _, z1 = embed(apply, params, np.asarray(x1))
    _, z2 = embed(apply, params, np.asarray(x2))
    st = jax.device_get(losses.similarity_stats(jnp.asarray(z1), jnp.asarray(z2)))
    return {"probe_train_acc": res.train_acc, "probe_test_acc": res.test_acc,
            "pos_mean": float(st.pos_mean), "neg_mean": float(st.neg_mean),
            "neg_var": float(st.neg_var), "within_mean": float(st.within_mean),
            "within_var": float(st.within_var), "num_pairs": int(x.shape[0])}
