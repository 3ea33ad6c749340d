"""The pre-training data and the arrays of the pre-trained features.

`split_data` splits the images into a pre-training set and a causal pool, disjoint by
construction; `apply_batched`, `pool_pixels` and `standardize` turn images and network
outputs into the feature arrays (the networks train in `runs.pretrain_and_extract`).

Images are NHWC float32 in [0, 1] (lib/data/images.py).
"""
from __future__ import annotations

import numpy as np

from lib.data import images as images_lib


def apply_batched(fn, x: np.ndarray, batch: int = 1024) -> np.ndarray:
    """Apply a jitted fn to x in row chunks; returns a numpy array."""
    return np.concatenate([np.asarray(fn(x[i:i + batch])) for i in range(0, x.shape[0], batch)])


def pool_pixels(flat: np.ndarray, factor: int) -> np.ndarray:
    """(N, S·S) square single-channel images -> (N, (S/f)²) by f × f average pooling."""
    side = round(np.sqrt(flat.shape[1]))
    if side * side != flat.shape[1] or side % factor:
        raise ValueError(f"cannot pool {flat.shape[1]} pixels ({side}² expected) by {factor}")
    s = side // factor
    return flat.reshape(-1, s, factor, s, factor).mean(axis=(2, 4)).reshape(-1, s * s)


def standardize(train: np.ndarray, *others: np.ndarray):
    """Standardise by the columns of `train` (std 0 -> 1); returns the transformed arrays."""
    mean, std = train.mean(0), train.std(0)
    std = np.where(std > 1e-8, std, 1.0)
    return tuple((a - mean) / std for a in (train,) + others)


# ----------------------------------------------------------------------------- data


def split_data(data_cfg, seed: int):
    """(pre-training ImageSet, causal pool ImageSet): disjoint by construction.

    fashion_mnist: pre-training = the first `pretrain_size` rows of a permutation of the
    60k training part; causal pool = the 10k test part. digits: a stratified split with
    `pool_fraction` of the 1,797 images in the pool.
    """
    if data_cfg.name == "fashion_mnist":
        if not images_lib.available("fashion_mnist", data_cfg.path):
            raise FileNotFoundError(f"Fashion-MNIST files not found under {data_cfg.path!r}; "
                                    "set data.path or use data.name='digits'")
        pre = images_lib.load_fashion_mnist(data_cfg.path, "train")
        pool = images_lib.load_fashion_mnist(data_cfg.path, "test")
        take = np.random.default_rng(seed).permutation(len(pre))[:data_cfg.pretrain_size]
        return pre.subset(np.sort(take)), pool
    ds = images_lib.load("digits")
    pool, pre = images_lib.split(ds, data_cfg.pool_fraction, seed)
    return pre, pool
