"""Small image classification sets: scikit-learn's 8×8 digits and Fashion-MNIST.

    from lib.data import images
    ds = images.load("digits")                                   # (1797, 8, 8, 1) in [0, 1]
    ds = images.load("fashion_mnist", path="/usr/share/datasets/fashion-mnist")
    train, test = images.split(ds, test_fraction=0.25, seed=0)   # stratified, deterministic

Images are float32 NHWC in [0, 1]; labels int32. Fashion-MNIST is read from the four
gzipped IDX files of the Debian package `dataset-fashion-mnist` (installed at
`/usr/share/datasets/fashion-mnist`) or any folder holding the same files; it is never
downloaded. `available("fashion_mnist", path)` lets an experiment skip it cleanly when the
files are absent (the experiment should say so in its results, not silently substitute).
"""
from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import os
import struct

import numpy as np

FASHION_MNIST_PATH = "/usr/share/datasets/fashion-mnist"
_FASHION_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                   "Sneaker", "Bag", "Ankle boot")
DATASETS = ("digits", "fashion_mnist")


@dataclasses.dataclass(frozen=True)
class ImageSet:
    """images (N, H, W, C) float32 in [0, 1]; labels (N,) int32 in [0, num_classes)."""
    name: str
    images: np.ndarray
    labels: np.ndarray
    class_names: tuple[str, ...]

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def subset(self, index: np.ndarray) -> "ImageSet":
        return ImageSet(self.name, self.images[index], self.labels[index], self.class_names)


def digits_csv() -> str | None:
    """Path of the digits file scikit-learn ships (`sklearn/datasets/data/digits.csv.gz`,
    what `sklearn.datasets.load_digits` reads), found without importing scikit-learn; None
    when scikit-learn is not installed or keeps it elsewhere."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(spec.origin), "datasets", "data", "digits.csv.gz")
    return path if os.path.isfile(path) else None


def load_digits() -> ImageSet:
    """scikit-learn's 8×8 digits: 1,797 images (8, 8, 1) with 17 grey levels scaled to [0, 1].

    Read from scikit-learn's CSV as `sklearn.datasets.load_digits` reads it (`digits_csv`):
    importing `sklearn.datasets` costs a process about 1.5 s of CPU, reading the file 0.05 s.
    """
    path = digits_csv()
    if path is None:
        from sklearn.datasets import load_digits as _load  # noqa: PLC0415  (heavy import)
        d = _load()
        pixels, target = d.images, d.target
    else:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = np.loadtxt(f, delimiter=",")
        pixels, target = data[:, :-1].reshape(-1, 8, 8), data[:, -1]
    images = (pixels.astype(np.float32) / 16.0)[..., None]
    return ImageSet("digits", images, target.astype(np.int32), tuple(str(i) for i in range(10)))


def _read_idx(path: str, expect_dims: int) -> np.ndarray:
    """Parse one gzipped IDX file (unsigned bytes); raises ValueError naming the file."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4:
        raise ValueError(f"{path}: not an IDX file (only {len(raw)} bytes)")
    zero, dtype, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or dtype != 0x08 or ndim != expect_dims:
        raise ValueError(f"{path}: IDX header (type {dtype:#x}, {ndim} dims) is not unsigned "
                         f"bytes with {expect_dims} dims")
    shape = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    body = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header says {shape} ({int(np.prod(shape))} values) but the "
                         f"file holds {body.size}")
    return body.reshape(shape)


def available(name: str, path: str | None = None) -> bool:
    """Whether `load(name, path)` can find its files (digits: always, with scikit-learn)."""
    if name == "digits":
        return True
    if name == "fashion_mnist":
        root = path or FASHION_MNIST_PATH
        return all(os.path.exists(os.path.join(root, f))
                   for pair in _FASHION_FILES.values() for f in pair)
    raise ValueError(f"unknown image set {name!r}; known: {DATASETS}")


def load_fashion_mnist(path: str = FASHION_MNIST_PATH, part: str = "train") -> ImageSet:
    """Fashion-MNIST `part` ('train': 60,000, 'test': 10,000, 'all': 70,000), (28, 28, 1)."""
    if part == "all":
        a, b = load_fashion_mnist(path, "train"), load_fashion_mnist(path, "test")
        return ImageSet("fashion_mnist", np.concatenate([a.images, b.images]),
                        np.concatenate([a.labels, b.labels]), FASHION_CLASSES)
    if part not in _FASHION_FILES:
        raise ValueError(f"part must be 'train', 'test' or 'all', got {part!r}")
    img_file, lab_file = (os.path.join(path, f) for f in _FASHION_FILES[part])
    for f in (img_file, lab_file):
        if not os.path.exists(f):
            raise FileNotFoundError(
                f"Fashion-MNIST file {f} not found; install the Debian package "
                f"dataset-fashion-mnist (files in {FASHION_MNIST_PATH}), or run `python "
                "tools/fetch_data.py fashion_mnist` (verified, into data/fashion_mnist) and "
                f"point the config's path there, or at a folder holding {_FASHION_FILES[part]}")
    images = _read_idx(img_file, 3)
    labels = _read_idx(lab_file, 1)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{img_file} has {images.shape[0]} images but {lab_file} has "
                         f"{labels.shape[0]} labels")
    if labels.max(initial=0) >= len(FASHION_CLASSES):
        raise ValueError(f"{lab_file}: label {labels.max()} outside 0..9")
    return ImageSet("fashion_mnist", (images.astype(np.float32) / 255.0)[..., None],
                    labels.astype(np.int32), FASHION_CLASSES)


def load(name: str, path: str | None = None, part: str = "all") -> ImageSet:
    """Load `name` in DATASETS; `path` is the Fashion-MNIST folder (ignored for digits)."""
    if name == "digits":
        return load_digits()
    if name == "fashion_mnist":
        return load_fashion_mnist(path or FASHION_MNIST_PATH, part)
    raise ValueError(f"unknown image set {name!r}; known: {DATASETS}")


def split(ds: ImageSet, test_fraction: float, seed: int) -> tuple[ImageSet, ImageSet]:
    """Stratified split: each class contributes round(test_fraction · n_c) test rows."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    test = []
    for c in range(ds.num_classes):
        idx = np.flatnonzero(ds.labels == c)
        k = int(round(test_fraction * idx.size))
        test.append(rng.permutation(idx)[:k])
    test_idx = np.sort(np.concatenate(test))
    train_idx = np.setdiff1d(np.arange(len(ds)), test_idx)
    return ds.subset(train_idx), ds.subset(test_idx)
