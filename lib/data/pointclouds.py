"""Point-cloud files a user may have: ModelNet meshes (.off), ModelNet40 and ScanObjectNN
HDF5 (.h5) sets.

    v, f = read_off("ModelNet40/chair/train/chair_0001.off")     # (V, 3), (F, 3) triangles
    pts = sample_mesh(v, f, 1024, np.random.default_rng(0))      # (1024, 3), unit sphere
    pts, labels = load_h5("ply_data_train0.h5")                   # ModelNet40 (modelnet40_ply_hdf5_2048)
    pts, labels = load_h5("training_objectdataset.h5")            # ScanObjectNN (main_split)

Formats:
* OFF: an optional comment/blank lines, the keyword `OFF` (ModelNet has files where the
  counts follow it on the same line, "OFF490 518 0"), then `V F E`, V vertex lines
  `x y z`, F face lines `n i1 ... in` (polygons are fan-triangulated).
* HDF5 (both ModelNet40's and ScanObjectNN's releases): dataset `data` (B, N, ≥3) float
  (only xyz is kept) and `label` (B,) or (B, 1) integer; ScanObjectNN files also hold
  `mask` (ignored). Needs the optional `h5py` package.
"""
from __future__ import annotations

import numpy as np


def read_off(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3) float64, faces (F', 3) int64 after fan triangulation)."""
    with open(path) as f:
        tokens_lines = [ln.split("#")[0].strip() for ln in f]
    lines = [ln for ln in tokens_lines if ln]
    if not lines or not lines[0].startswith("OFF"):
        raise ValueError(f"{path}: not an OFF file (first line must start with 'OFF')")
    head = lines[0][3:].split()
    body = lines[1:]
    if not head:
        head, body = body[0].split(), body[1:]
    try:
        nv, nf = int(head[0]), int(head[1])
    except (IndexError, ValueError):
        raise ValueError(f"{path}: bad OFF counts line {head!r}; expected 'V F E'") from None
    if len(body) < nv + nf:
        raise ValueError(f"{path}: OFF header promises {nv} vertices and {nf} faces, file has "
                         f"{len(body)} data lines")
    verts = np.array([[float(x) for x in ln.split()[:3]] for ln in body[:nv]])
    tris = []
    for ln in body[nv:nv + nf]:
        vals = [int(x) for x in ln.split()]
        n, idx = vals[0], vals[1:1 + vals[0]]
        if n < 3 or len(idx) != n or min(idx) < 0 or max(idx) >= nv:
            raise ValueError(f"{path}: bad face line {ln!r}")
        tris += [(idx[0], idx[i], idx[i + 1]) for i in range(1, n - 1)]
    return verts, np.array(tris, np.int64).reshape(-1, 3)


def sample_mesh(vertices: np.ndarray, faces: np.ndarray, num_points: int,
                rng: np.random.Generator, normalise: bool = True) -> np.ndarray:
    """(num_points, 3) float32 uniform on the surface (triangles by area, square-root rule
    inside), centred and scaled to the unit sphere when `normalise`."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    if area.sum() <= 0:
        raise ValueError("mesh has zero surface area")
    t = rng.choice(len(faces), size=num_points, p=area / area.sum())
    r1, r2 = np.sqrt(rng.uniform(size=(num_points, 1))), rng.uniform(size=(num_points, 1))
    pts = (1 - r1) * a[t] + r1 * (1 - r2) * b[t] + r1 * r2 * c[t]
    if normalise:
        pts = pts - pts.mean(0)
        pts = pts / max(float(np.linalg.norm(pts, axis=1).max()), 1e-12)
    return pts.astype(np.float32)


def load_h5(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(points (B, N, 3) float32, labels (B,) int64) from a ModelNet40 / ScanObjectNN .h5."""
    try:
        import h5py
    except ImportError as e:
        raise ImportError("reading .h5 point clouds needs the optional package h5py "
                          "(pip install h5py)") from e
    with h5py.File(path, "r") as f:
        missing = [k for k in ("data", "label") if k not in f]
        if missing:
            raise ValueError(f"{path}: no dataset(s) {missing}; found {sorted(f.keys())}")
        data, label = np.asarray(f["data"]), np.asarray(f["label"])
    if data.ndim != 3 or data.shape[-1] < 3:
        raise ValueError(f"{path}: 'data' has shape {data.shape}; expected (B, N, >=3)")
    label = label.reshape(len(label), -1)
    if label.shape != (len(data), 1):
        raise ValueError(f"{path}: 'label' has shape {label.shape}; expected ({len(data)},) "
                         "or (B, 1)")
    return data[..., :3].astype(np.float32), label[:, 0].astype(np.int64)
