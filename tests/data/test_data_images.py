"""lib/data/images.py: digits, the IDX reader (on fixture files), stratified splits."""
import gzip
import struct

import numpy as np
import pytest

from lib.data import images


def _write_idx(path, array):
    header = struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(">" + "I" * array.ndim,
                                                                     *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def _fixture(tmp_path, n=12):
    rng = np.random.default_rng(0)
    for part, (img, lab) in images._FASHION_FILES.items():
        _write_idx(tmp_path / img, rng.integers(0, 256, (n, 28, 28)))
        _write_idx(tmp_path / lab, np.arange(n) % 10)
    return tmp_path


def test_digits_shape_range_and_classes():
    ds = images.load("digits")
    assert ds.images.shape == (1797, 8, 8, 1) and ds.images.dtype == np.float32
    assert ds.images.min() == 0.0 and ds.images.max() == 1.0
    assert set(np.unique(ds.labels)) == set(range(10))


def test_idx_round_trip_and_all_part(tmp_path):
    root = _fixture(tmp_path)
    assert images.available("fashion_mnist", str(root))
    ds = images.load("fashion_mnist", str(root), part="train")
    raw = gzip.open(root / "train-images-idx3-ubyte.gz").read()
    assert ds.images.shape == (12, 28, 28, 1)
    assert np.allclose(ds.images[3, ..., 0] * 255, np.frombuffer(raw[16:], np.uint8)
                       .reshape(12, 28, 28)[3])
    assert len(images.load("fashion_mnist", str(root), part="all")) == 24


def test_missing_and_malformed_files_name_the_problem(tmp_path):
    assert not images.available("fashion_mnist", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist"):
        images.load("fashion_mnist", str(tmp_path))
    root = _fixture(tmp_path)
    _write_idx(root / "train-labels-idx1-ubyte.gz", np.arange(5))
    with pytest.raises(ValueError, match="12 images but .* 5 labels"):
        images.load("fashion_mnist", str(root), part="train")
    with gzip.open(root / "t10k-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">HBB", 0, 0x08, 3) + struct.pack(">III", 4, 28, 28) + b"\0" * 10)
    with pytest.raises(ValueError, match="header says"):
        images.load("fashion_mnist", str(root), part="test")
    with pytest.raises(ValueError, match="unknown image set"):
        images.load("cifar")


def test_split_is_stratified_disjoint_and_deterministic():
    ds = images.load("digits")
    tr, te = images.split(ds, 0.25, seed=3)
    tr2, te2 = images.split(ds, 0.25, seed=3)
    assert np.array_equal(te.labels, te2.labels) and len(tr) + len(te) == len(ds)
    for c in range(10):
        n_c = int((ds.labels == c).sum())
        assert int((te.labels == c).sum()) == round(0.25 * n_c)
    with pytest.raises(ValueError, match="test_fraction"):
        images.split(ds, 1.0, 0)
