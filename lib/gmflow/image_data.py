"""Image preprocessing for the class-conditional GMFlow experiment (numpy, no training).

    downsample(images, factor)          (N, H, W, C) -> (N, H/f, W/f, C) by f×f average pooling
                                        (Fashion-MNIST 28×28 -> 14×14 on CPU)
    class_balanced_subset(labels, n, seed)  sorted indices of n rows, n/num_classes per class,
                                        the real reference set of the FD and k-NN metrics
"""
from __future__ import annotations

import numpy as np


def downsample(images: np.ndarray, factor: int) -> np.ndarray:
    """f×f average pooling of NHWC images; H and W must be divisible by f (ValueError)."""
    n, h, w, c = images.shape
    if factor < 1 or h % factor or w % factor:
        raise ValueError(f"cannot downsample {h}×{w} images by {factor}: H and W must be "
                         "divisible by it")
    if factor == 1:
        return images
    return images.reshape(n, h // factor, factor, w // factor, factor, c).mean(
        axis=(2, 4)).astype(images.dtype)


def class_balanced_subset(labels: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Sorted indices of n rows drawn without replacement, ⌊n/C⌋ per class (C classes present,
    the remainder to the first classes); ValueError if a class has too few rows."""
    classes = np.unique(labels)
    per = np.full(len(classes), n // len(classes))
    per[:n % len(classes)] += 1
    rng = np.random.default_rng(seed)
    out = []
    for c, k in zip(classes, per):
        idx = np.flatnonzero(labels == c)
        if k > idx.size:
            raise ValueError(f"class {c} has {idx.size} rows, fewer than the {k} asked for")
        out.append(rng.choice(idx, size=k, replace=False))
    return np.sort(np.concatenate(out))
