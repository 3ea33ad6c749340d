"""Classification sets for DSL, scaled into the field-line domain, and low-data subsamples.

    ds = load("wine", cfg.data, domain="ball", radius=1.0, seed=0)
    idx = subsample(ds.y_train, fraction=0.1, seed=3, min_per_class=2)

Sets (DATASETS): scikit-learn's breast_cancer (569 × 30, 2 classes), wine (178 × 13, 3),
a `make_classification` set (Madelon generator; size/features/classes from the config), the
8×8 digits (1,797 × 64, 10; lib.data.images) and Fashion-MNIST (lib.data.images from the
Debian package files at `data.fashion_path`, optionally subsampled and PCA-reduced).

Preprocessing (fitted on the training rows only): standardise each feature, optional PCA to
`pca_dim` dimensions, then put the points inside Ω: for the ball (‖z‖ < radius) divide by the
largest training norm and multiply by input_radius · radius; for the box [0, radius]ⁿ map
each feature's training range onto [margin, radius − margin] with margin = (1 −
input_radius)/2 · radius. Test points use the same map and are then clipped into the
`clip_radius` part of Ω, so every field line starts strictly inside the domain.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from lib.data import images

DATASETS = ("breast_cancer", "wine", "make_classification", "digits", "fashion_mnist", "moons")
# salt of the validation-split stream: a run splits with seed + VALIDATION_STREAM
VALIDATION_STREAM = 17


@dataclasses.dataclass(frozen=True)
class Dataset:
    """x_* (N, n) float32 inside Ω; y_* (N,) int32 in [0, num_classes); x_val/y_val
    (`split_validation`) hold out training rows for model selection (None: no split)."""
    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int
    x_val: np.ndarray | None = None
    y_val: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return int(self.x_train.shape[1])


def stratified_split(y: np.ndarray, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train_idx, test_idx): each class gives round(test_fraction · n_c) test rows."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    test = [rng.permutation(np.flatnonzero(y == c))[:int(round(test_fraction * np.sum(y == c)))]
            for c in np.unique(y)]
    test_idx = np.sort(np.concatenate(test))
    return np.setdiff1d(np.arange(len(y)), test_idx), test_idx


def split_validation(ds: Dataset, fraction: float, seed: int) -> Dataset:
    """The data set with a stratified `fraction` of its training rows moved to x_val/y_val
    (round(fraction · n_c) rows of each class; the scaling into Ω stays the one fitted on
    all training rows, so no test row is used). ValueError when a class would be left
    without a training row."""
    tr, va = stratified_split(ds.y_train, fraction, seed)
    missing = np.setdiff1d(np.unique(ds.y_train), np.unique(ds.y_train[tr]))
    if missing.size:
        raise ValueError(f"data.val_fraction = {fraction} leaves class(es) "
                         f"{missing.tolist()} of {ds.name!r} without training rows")
    return dataclasses.replace(ds, x_train=ds.x_train[tr], y_train=ds.y_train[tr],
                               x_val=ds.x_train[va], y_val=ds.y_train[va])


def subsample(y: np.ndarray, fraction: float, seed: int, min_per_class: int = 1) -> np.ndarray:
    """Sorted indices of a stratified `fraction` of rows: max(min_per_class, round(f · n_c))
    rows of each class c (all rows when fraction = 1)."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    if fraction == 1.0:
        return np.arange(len(y))
    rng = np.random.default_rng(seed)
    out = []
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        k = min(idx.size, max(min_per_class, int(round(fraction * idx.size))))
        out.append(rng.permutation(idx)[:k])
    return np.sort(np.concatenate(out))


def _raw(name: str, cfg, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(x, y, fixed test mask or None) before scaling."""
    if name in ("breast_cancer", "wine"):
        from sklearn import datasets as skd  # noqa: PLC0415 (heavy import)
        d = skd.load_breast_cancer() if name == "breast_cancer" else skd.load_wine()
        return d.data.astype(np.float64), d.target.astype(np.int32), None
    if name == "make_classification":
        from sklearn.datasets import make_classification  # noqa: PLC0415
        x, y = make_classification(
            n_samples=cfg.mc_samples, n_features=cfg.mc_features,
            n_informative=cfg.mc_informative, n_redundant=cfg.mc_redundant,
            n_classes=cfg.mc_classes, n_clusters_per_class=2, class_sep=cfg.mc_class_sep,
            flip_y=0.01, random_state=seed)
        return x, y.astype(np.int32), None
    if name == "moons":
        from sklearn.datasets import make_moons  # noqa: PLC0415
        x, y = make_moons(n_samples=cfg.moons_samples, noise=cfg.moons_noise, random_state=seed)
        return x, y.astype(np.int32), None
    if name == "digits":
        ds = images.load("digits")
        return ds.images.reshape(len(ds), -1).astype(np.float64), ds.labels, None
    if name == "fashion_mnist":
        if not images.available("fashion_mnist", cfg.fashion_path):
            raise FileNotFoundError(f"Fashion-MNIST files not found under data.fashion_path = "
                                    f"{cfg.fashion_path!r}; drop 'fashion_mnist' from datasets "
                                    "or install the Debian package dataset-fashion-mnist")
        rng = np.random.default_rng(seed)
        tr = images.load("fashion_mnist", cfg.fashion_path, part="train")
        te = images.load("fashion_mnist", cfg.fashion_path, part="test")
        i_tr = np.sort(rng.permutation(len(tr))[:cfg.fashion_train])
        i_te = np.sort(rng.permutation(len(te))[:cfg.fashion_test])
        x = np.concatenate([tr.images[i_tr], te.images[i_te]]).reshape(len(i_tr) + len(i_te), -1)
        y = np.concatenate([tr.labels[i_tr], te.labels[i_te]])
        mask = np.zeros(len(y), bool)
        mask[len(i_tr):] = True
        return x.astype(np.float64), y, mask
    raise ValueError(f"unknown data set {name!r}; known: {DATASETS}")


def to_domain(x_train: np.ndarray, x_test: np.ndarray, *, domain: str, radius: float,
              input_radius: float, clip_radius: float, pca_dim: int = 0
              ) -> tuple[np.ndarray, np.ndarray]:
    """The preprocessing of the module docstring; returns float32 (train, test)."""
    mean, std = x_train.mean(0), x_train.std(0)
    std = np.where(std > 1e-12, std, 1.0)
    a, b = (x_train - mean) / std, (x_test - mean) / std
    if pca_dim and pca_dim < a.shape[1]:
        _, _, vt = np.linalg.svd(a - a.mean(0), full_matrices=False)
        a, b = a @ vt[:pca_dim].T, b @ vt[:pca_dim].T
    if domain == "ball":
        scale = input_radius * radius / np.max(np.linalg.norm(a, axis=1))
        a, b = a * scale, b * scale
        norm = np.linalg.norm(b, axis=1, keepdims=True)
        b = b * np.minimum(1.0, clip_radius * radius / np.maximum(norm, 1e-12))
    elif domain == "box":
        lo, hi = a.min(0), a.max(0)
        span = np.where(hi - lo > 1e-12, hi - lo, 1.0)
        margin = 0.5 * (1.0 - input_radius) * radius
        a = margin + (a - lo) / span * (radius - 2 * margin)
        b = margin + (b - lo) / span * (radius - 2 * margin)
        edge = 0.5 * (1.0 - clip_radius) * radius
        b = np.clip(b, edge, radius - edge)
    else:
        raise ValueError(f"domain = {domain!r} is not 'ball' or 'box'")
    return a.astype(np.float32), b.astype(np.float32)


def load(name: str, cfg, *, domain: str, radius: float, seed: int) -> Dataset:
    """Data set `name`, split (stratified, `cfg.test_fraction`, or Fashion-MNIST's own test
    rows) and scaled into Ω; `cfg` is the config's `data` block."""
    x, y, test_mask = _raw(name, cfg, seed)
    if test_mask is None:
        tr, te = stratified_split(y, cfg.test_fraction, seed)
    else:
        tr, te = np.flatnonzero(~test_mask), np.flatnonzero(test_mask)
    pca = cfg.fashion_pca if name == "fashion_mnist" else 0
    x_tr, x_te = to_domain(x[tr], x[te], domain=domain, radius=radius,
                           input_radius=cfg.input_radius, clip_radius=cfg.clip_radius,
                           pca_dim=pca)
    return Dataset(name, x_tr, y[tr].astype(np.int32), x_te, y[te].astype(np.int32),
                   int(y.max()) + 1)
