"""Small ModelNet40 / ScanObjectNN files in the releases' layouts, written by the 3D-FLEG tests.

Each labelled cloud is a procedural instance (`lib.fleg3d.shapes`, z up) of a stand-in
class, stored y up (x, z, -y) as in the .h5 releases, so a run on these files has a
learnable signal and the loader's axis rotation is checked by the round trip.
"""
from __future__ import annotations

import os

import numpy as np

from lib.fleg3d import domain, shapes, sources

# ModelNet40 name -> procedural stand-in; "sofa" is present but never requested
MODELNET = {"airplane": "airplane", "bottle": "bottle", "chair": "chair", "cone": "cone",
            "lamp": "lamp", "sofa": "sofa", "table": "table"}
# ScanObjectNN name -> procedural stand-in; "bag" is present but never requested
SCAN = {"bag": "mug", "chair": "chair", "table": "table"}
POINTS = 96


def y_up(points: np.ndarray) -> np.ndarray:
    return np.stack([points[..., 0], points[..., 2], -points[..., 1]], -1)


def _clouds(stand_in: str, n: int, seed: int, real: bool) -> np.ndarray:
    if real:
        return np.stack([domain.make_cloud(stand_in, "real", 0, f"fixture{seed}", i, POINTS,
                                           domain.Shift()) for i in range(n)])
    rng = np.random.default_rng(seed)
    return np.stack([shapes.sample_class(stand_in, rng, POINTS) for _ in range(n)])


def _write_h5(path: str, data: np.ndarray, labels: np.ndarray, mask: bool = False) -> None:
    import h5py
    with h5py.File(path, "w") as f:
        f["data"] = y_up(data).astype(np.float32)
        f["label"] = labels.astype(np.uint8).reshape(-1, 1)
        if mask:
            f["mask"] = np.ones(data.shape[:2], np.int64)


def write_modelnet_h5(root: str, n_train: int = 5, n_test: int = 3) -> str:
    """modelnet40_ply_hdf5_2048-like directory: shape_names.txt, two train files, one test
    file (clouds of each split shuffled across classes, as in the release)."""
    os.makedirs(root, exist_ok=True)
    names = list(MODELNET)
    with open(os.path.join(root, "shape_names.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    for split, n, files in (("train", n_train, 2), ("test", n_test, 1)):
        data = np.concatenate([_clouds(MODELNET[c], n, 10 * i + (split == "test"), False)
                               for i, c in enumerate(names)])
        labels = np.repeat(np.arange(len(names)), n)
        order = np.random.default_rng(len(split)).permutation(len(labels))
        for k, part in enumerate(np.array_split(order, files)):
            _write_h5(os.path.join(root, f"ply_data_{split}{k}.h5"), data[part], labels[part])
    return root


def write_scanobjectnn(root: str, n_train: int = 3, n_test: int = 3) -> str:
    """h5_files/main_split-like directory: training_/test_objectdataset.h5 with `mask`."""
    os.makedirs(root, exist_ok=True)
    for prefix, n in (("training", n_train), ("test", n_test)):
        data = np.concatenate([_clouds(s, n, 100 + 10 * i + (prefix == "test"), True)
                               for i, s in enumerate(SCAN.values())])
        labels = np.repeat([sources.SCANOBJECTNN_CLASSES.index(c) for c in SCAN], n)
        _write_h5(os.path.join(root, f"{prefix}_objectdataset.h5"), data, labels, mask=True)
    return root


def write_modelnet_off(root: str, per_split: int = 2) -> str:
    """ModelNet40 mesh tree <class>/{train,test}/<class>_NNNN.off with boxes of random
    proportions ("box") and square pyramids ("cone"), one header in ModelNet's
    `OFF<V> <F> 0` form."""
    rng = np.random.default_rng(0)
    for cls in ("box", "cone"):
        for split in ("train", "test"):
            os.makedirs(os.path.join(root, cls, split), exist_ok=True)
            for i in range(per_split):
                sx, sy, sz = rng.uniform(0.5, 2.0, 3)
                if cls == "box":
                    v = [(x * sx, y * sy, z * sz) for x in (0, 1) for y in (0, 1) for z in (0, 1)]
                    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6),
                             (0, 2, 6, 4), (1, 5, 7, 3)]
                else:
                    v = [(0, 0, 0), (sx, 0, 0), (sx, sy, 0), (0, sy, 0), (sx / 2, sy / 2, sz)]
                    faces = [(0, 3, 2, 1), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)]
                head = f"OFF{len(v)} {len(faces)} 0" if i == 0 else f"OFF\n{len(v)} {len(faces)} 0"
                body = "\n".join(" ".join(f"{c:.6f}" for c in p) for p in v)
                body += "\n" + "\n".join(f"{len(q)} " + " ".join(map(str, q)) for q in faces)
                with open(os.path.join(root, cls, split, f"{cls}_{i:04d}.off"), "w") as f:
                    f.write(f"{head}\n{body}\n")
    return root
