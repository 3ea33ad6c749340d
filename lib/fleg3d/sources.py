"""Real point-cloud data sets as 3D-FLEG data sources: ModelNet40 (.h5 or .off) and ScanObjectNN (.h5).

    src = open_source("modelnet40", "data/modelnet40_ply_hdf5_2048")   # index only, no clouds
    require(src, "train", ["chair", "lamp"], need=5, role="base_train")  # ConfigError if short
    pts = clouds(src, "train", "chair", 5, num_points=256, seed=0, up_axis="y")   # (5, 256, 3)

Layouts accepted in the directory `path` (the releases' own file names):

  modelnet40, h5   ply_data_train*.h5, ply_data_test*.h5 and shape_names.txt (line i = the
                   name of label i), as in `modelnet40_ply_hdf5_2048`
  modelnet40, off  <class>/train/*.off and <class>/test/*.off (the ModelNet40 mesh release;
                   clouds are sampled on the mesh surfaces, `pointclouds.sample_mesh`)
  scanobjectnn     training_<stem>.h5 and test_<stem>.h5 (a directory such as
                   h5_files/main_split or main_split_nobg; stem `objectdataset`, or e.g.
                   `objectdataset_augmentedrot_scale75` for the hardest PB_T50_RS variant);
                   labels 0..14 name SCANOBJECTNN_CLASSES in that order (the release has no
                   names file)
The .h5 files hold `data` (B, N, >=3) and `label` (B,) or (B, 1) (`pointclouds.load_h5`).

`open_source` reads only file names, shape_names.txt, the label arrays and the `data`
shapes, and `require` checks the clouds a role needs, so a missing directory, a layout
matching none of the above, clouds with fewer points than asked for, an unknown class or a
class with too few clouds is a `ConfigError` naming the path before anything is computed.

`clouds` returns the first `count` clouds of a class after a permutation seeded by (seed,
data set, split, class), each reduced to `num_points` points (a seeded subset without
replacement of an .h5 cloud's points, or a seeded surface sample of a mesh), rotated so
that `up_axis` becomes +z (the axis the base training rotates about), and normalised to
zero centroid and unit maximum radius like the procedural clouds.
"""
from __future__ import annotations

import glob
import os
import zlib
from typing import NamedTuple

import numpy as np

from lib.common.config import ConfigError
from lib.data import pointclouds
from lib.fleg3d import shapes

KINDS = ("modelnet40", "scanobjectnn")
SPLITS = ("train", "test")
SCANOBJECTNN_CLASSES = ("bag", "bin", "box", "cabinet", "chair", "desk", "display", "door",
                        "shelf", "table", "bed", "pillow", "sink", "sofa", "toilet")
SCANOBJECTNN_STEMS = ("objectdataset", "objectdataset_augmented25_norot",
                      "objectdataset_augmented25rot", "objectdataset_augmentedrot",
                      "objectdataset_augmentedrot_scale75")
_LAYOUTS = {
    "modelnet40": "either ply_data_train*.h5 + ply_data_test*.h5 + shape_names.txt "
                  "(modelnet40_ply_hdf5_2048) or <class>/train/*.off + <class>/test/*.off",
    "scanobjectnn": "training_{stem}.h5 + test_{stem}.h5 (e.g. h5_files/main_split)",
}


class Source(NamedTuple):
    kind: str                              # "modelnet40" | "scanobjectnn"
    path: str
    layout: str                            # "h5" | "off"
    classes: tuple[str, ...]               # label id -> class name
    files: dict                            # split -> tuple of files (h5: data files; off: meshes)
    labels: dict                           # split -> (M,) label of every cloud, in file order
    points_per_cloud: int | None           # h5: N of `data`; off: None (sampled)


def _error(kind: str, path: str, problem: str) -> ConfigError:
    return ConfigError(f"{kind} data at {path!r}: {problem}; expected {_LAYOUTS[kind]}")


def _read_h5_index(kind: str, path: str, files: list[str]) -> tuple[np.ndarray, int]:
    """(labels of all clouds in file order, points per cloud) without reading the clouds."""
    try:
        import h5py
    except ImportError as e:
        raise ImportError("reading .h5 point clouds needs the optional package h5py "
                          "(pip install h5py)") from e
    labels, counts = [], set()
    for f in files:
        with h5py.File(f, "r") as h:
            missing = [k for k in ("data", "label") if k not in h]
            if missing:
                raise _error(kind, path, f"{os.path.basename(f)} has no dataset(s) {missing} "
                                         f"(found {sorted(h.keys())})")
            shape = h["data"].shape
            label = np.asarray(h["label"]).reshape(-1)
        if len(shape) != 3 or shape[-1] < 3 or len(label) != shape[0]:
            raise _error(kind, path, f"{os.path.basename(f)}: 'data' {shape} and 'label' "
                                     f"({len(label)},) are not (B, N, >=3) and (B,)")
        labels.append(label.astype(np.int64))
        counts.add(shape[1])
    return np.concatenate(labels), min(counts)


def _open_modelnet_h5(path: str) -> Source:
    names_file = os.path.join(path, "shape_names.txt")
    if not os.path.exists(names_file):
        raise _error("modelnet40", path, "ply_data_*.h5 found but no shape_names.txt")
    with open(names_file) as f:
        classes = tuple(ln.strip() for ln in f if ln.strip())
    files, labels, npts = {}, {}, []
    for split in SPLITS:
        files[split] = tuple(sorted(glob.glob(os.path.join(path, f"ply_data_{split}*.h5"))))
        if not files[split]:
            raise _error("modelnet40", path, f"no ply_data_{split}*.h5")
        labels[split], n = _read_h5_index("modelnet40", path, list(files[split]))
        npts.append(n)
        if labels[split].min() < 0 or labels[split].max() >= len(classes):
            raise _error("modelnet40", path, f"{split} labels span {labels[split].min()}.."
                                             f"{labels[split].max()} but shape_names.txt "
                                             f"names {len(classes)} classes")
    return Source("modelnet40", path, "h5", classes, files, labels, min(npts))


def _open_modelnet_off(path: str) -> Source:
    classes = tuple(sorted(c for c in os.listdir(path)
                           if os.path.isdir(os.path.join(path, c, "train"))))
    files, labels = {}, {}
    for split in SPLITS:
        paths, labs = [], []
        for i, c in enumerate(classes):
            found = sorted(glob.glob(os.path.join(path, c, split, "*.off")))
            paths += found
            labs += [i] * len(found)
        if not paths:
            raise _error("modelnet40", path, f"no <class>/{split}/*.off meshes")
        files[split], labels[split] = tuple(paths), np.asarray(labs, np.int64)
    return Source("modelnet40", path, "off", classes, files, labels, None)


def _open_scanobjectnn(path: str, stem: str) -> Source:
    files, labels, npts = {}, {}, []
    for split, prefix in (("train", "training"), ("test", "test")):
        f = os.path.join(path, f"{prefix}_{stem}.h5")
        if not os.path.exists(f):
            raise _error("scanobjectnn", path, f"no {prefix}_{stem}.h5")
        files[split] = (f,)
        labels[split], n = _read_h5_index("scanobjectnn", path, [f])
        npts.append(n)
        if labels[split].min() < 0 or labels[split].max() >= len(SCANOBJECTNN_CLASSES):
            raise _error("scanobjectnn", path, f"{split} labels span {labels[split].min()}.."
                                               f"{labels[split].max()}; ScanObjectNN has 15")
    return Source("scanobjectnn", path, "h5", SCANOBJECTNN_CLASSES, files, labels, min(npts))


def open_source(kind: str, path: str, scanobjectnn_file: str = "objectdataset") -> Source:
    """Index of the data set `kind` in directory `path` (see the module docstring)."""
    if kind not in KINDS:
        raise ConfigError(f"unknown real data source {kind!r}; expected one of {KINDS}")
    if not os.path.isdir(path):
        raise _error(kind, path, "no such directory")
    if kind == "scanobjectnn":
        return _open_scanobjectnn(path, scanobjectnn_file)
    if glob.glob(os.path.join(path, "ply_data_*.h5")):
        return _open_modelnet_h5(path)
    if glob.glob(os.path.join(path, "*", "train", "*.off")):
        return _open_modelnet_off(path)
    raise _error(kind, path, "neither layout found")


def rows(src: Source, split: str, name: str) -> np.ndarray:
    """Positions (file order) of the clouds of class `name` in `split`."""
    return np.flatnonzero(src.labels[split] == src.classes.index(name))


def require(src: Source, split: str, names, need: int, role: str,
            num_points: int | None = None) -> None:
    """ConfigError unless every class in `names` has >= `need` clouds in `split` (and the
    .h5 clouds have >= `num_points` points); `role` says what the clouds are for."""
    if num_points is not None and src.points_per_cloud is not None \
            and src.points_per_cloud < num_points:
        raise ConfigError(f"config key 'data.num_points' = {num_points} is not allowed; the "
                          f"{src.kind} clouds at {src.path!r} have {src.points_per_cloud} points")
    for name in names:
        if name not in src.classes:
            raise ConfigError(f"config key 'data.classes': class {name!r} ({role}) is not in "
                              f"the {src.kind} data at {src.path!r}; its classes: "
                              f"{', '.join(src.classes)}")
        have = len(rows(src, split, name))
        if have < need:
            raise ConfigError(f"{src.kind} data at {src.path!r}: class {name!r} has {have} "
                              f"{split} clouds; {role} needs at least {need}")


def _rng(seed: int, *names) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(":".join(map(str, names)).encode())])


def _to_z_up(points: np.ndarray, up_axis: str) -> np.ndarray:
    """Rotate (…, 3) points by +90° about x when y is up, so that +y becomes +z."""
    if up_axis == "z":
        return points
    if up_axis == "y":
        return np.stack([points[..., 0], -points[..., 2], points[..., 1]], -1)
    raise ValueError(f"unknown up axis {up_axis!r}; expected 'y' or 'z'")


def clouds(src: Source, split: str, name: str, count: int, *, num_points: int, seed: int,
           up_axis: str, cache: dict | None = None) -> np.ndarray:
    """(count, num_points, 3) float32 clouds of class `name` (see the module docstring).
    `cache` (a dict kept by the caller) holds .h5 files already read."""
    idx = rows(src, split, name)
    idx = idx[_rng(seed, src.kind, split, name).permutation(len(idx))[:count]]
    if len(idx) < count:
        raise ValueError(f"{src.kind} class {name!r} has {len(idx)} {split} clouds, not {count}")
    if src.layout == "off":
        raw = []
        for i in idx:
            v, f = pointclouds.read_off(src.files[split][i])
            raw.append(pointclouds.sample_mesh(v, f, num_points, _rng(seed, src.kind, split, i)))
    else:
        data = _h5_split(src, split, {} if cache is None else cache)
        raw = [data[i][_rng(seed, src.kind, split, i).choice(len(data[i]), num_points,
                                                             replace=False)] for i in idx]
    out = [shapes.normalise(_to_z_up(np.asarray(p, np.float64), up_axis)) for p in raw]
    return np.stack(out).astype(np.float32).reshape(count, num_points, 3)


def _h5_split(src: Source, split: str, cache: dict) -> np.ndarray:
    """All clouds (M, N, 3) of an .h5 split, in file order (read once per cache)."""
    key = (src.path, split)
    if key not in cache:
        parts = [pointclouds.load_h5(f)[0] for f in src.files[split]]
        n = min(p.shape[1] for p in parts)
        cache[key] = np.concatenate([p[:, :n] for p in parts])
    return cache[key]
