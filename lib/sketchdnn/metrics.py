"""Sample-quality metrics (notes A.7, A.10): raster features, Fréchet distance, k-NN
precision/recall, validity statistics.

Inception weights are not available offline, so the Fréchet distance uses the features of a
small sketch encoder trained here (`SketchEncoder`: an MLP on 32×32 rasterisations that
classifies the generator's family; penultimate layer = features).

    rasterize(x)              (N, S, 21) slot tensors -> (N, R, R) images in [0, 1]
    frechet_distance, knn_precision_recall   from lib/toolbox/sample_metrics.py
    validity(sketches)        dangling end points, closed profiles, type / count histograms
"""
from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import numpy as np

from lib.toolbox.sample_metrics import frechet_distance, knn_precision_recall  # noqa: F401
from lib.sketchdnn import sketch as sk

EXTENT = 1.1    # rasters cover [-EXTENT, EXTENT]²


def curve_points_batch(x: np.ndarray, n: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """(N, S, 21) -> points (N, S, n, 2) along each slot's primitive and weights (N, S):
    1 regular, 0.5 construction, 0 none. Arcs with |r_s| below half the chord use half the
    chord (a semicircle); vectorised version of `sketch.curve_points`."""
    x = np.asarray(x, np.float64)
    typ = np.argmax(x[..., sk.TYPE_SLICE], -1)
    cons = x[..., 1] > x[..., 0]
    p = x[..., sk.PARAM_SLICE]
    s = np.linspace(0, 1, n)[None, None, :, None]
    off = sk.PARAM_OFFSETS
    lp = p[..., slice(*off["line"])]
    line = lp[..., None, :2] + s * (lp[..., None, 2:] - lp[..., None, :2])
    cp = p[..., slice(*off["circle"])]
    ang = 2 * np.pi * s[..., 0]
    ring = np.stack([np.cos(ang), np.sin(ang)], -1)
    circle = cp[..., None, :2] + np.abs(cp[..., None, 2:3]) * ring
    ap = p[..., slice(*off["arc"])]
    a, b, rs = ap[..., :2], ap[..., 2:4], ap[..., 4]
    d = b - a
    half = np.maximum(np.linalg.norm(d, axis=-1) / 2, 1e-9)
    r = np.maximum(np.abs(rs), half)
    h = np.sqrt(np.maximum(r ** 2 - half ** 2, 0))
    left = np.stack([-d[..., 1], d[..., 0]], -1) / (2 * half[..., None])
    c = (a + b) / 2 + (np.where(rs >= 0, 1.0, -1.0) * h)[..., None] * left
    t0 = np.arctan2(a[..., 1] - c[..., 1], a[..., 0] - c[..., 0])
    t1 = np.arctan2(b[..., 1] - c[..., 1], b[..., 0] - c[..., 0])
    sweep = np.mod(t1 - t0, 2 * np.pi)
    th = t0[..., None] + sweep[..., None] * s[..., 0]
    arc = c[..., None, :] + r[..., None, None] * np.stack([np.cos(th), np.sin(th)], -1)
    point = np.broadcast_to(p[..., None, slice(*off["point"])], line.shape)
    pts = np.select([typ[..., None, None] == i for i in range(4)],
                    [line, circle, arc, point], 0.0)
    w = np.where(typ == sk.NONE, 0.0, np.where(cons, 0.5, 1.0))
    return pts, w


def rasterize(x: np.ndarray, res: int = 32, n: int = 48) -> np.ndarray:
    """(N, S, 21) -> (N, res, res) float32 line drawings (lightly blurred), in [0, 1]."""
    pts, w = curve_points_batch(x, n)
    num = pts.shape[0]
    ij = np.floor((pts + EXTENT) / (2 * EXTENT) * res).astype(np.int64)
    inside = np.all((ij >= 0) & (ij < res), -1) & np.isfinite(pts).all(-1)
    img = np.zeros((num, res, res), np.float64)
    nidx = np.broadcast_to(np.arange(num)[:, None, None], inside.shape)
    wt = np.broadcast_to(w[..., None], inside.shape)
    np.maximum.at(img, (nidx[inside], res - 1 - ij[..., 1][inside], ij[..., 0][inside]),
                  wt[inside])
    k = np.array([0.25, 0.5, 0.25])
    pad = np.pad(img, ((0, 0), (1, 1), (1, 1)))
    img = sum(k[i] * pad[:, i:i + res, 1:-1] for i in range(3))
    pad = np.pad(img, ((0, 0), (0, 0), (1, 1)))
    img = sum(k[i] * pad[:, :, i:i + res] for i in range(3))
    return np.clip(img / 0.5625, 0, 1).astype(np.float32)   # a pixel's blurred peak -> 1


class SketchEncoder(nn.Module):
    """(N, R, R) rasters -> family logits; `features` gives the penultimate activations."""
    num_classes: int
    hidden: int = 256
    feature_dim: int = 64

    def setup(self):
        self.h1 = nn.Dense(self.hidden)
        self.h2 = nn.Dense(self.feature_dim)
        self.out = nn.Dense(self.num_classes)

    def features(self, img):
        z = img.reshape(img.shape[0], -1)
        return nn.relu(self.h2(nn.relu(self.h1(z))))

    def __call__(self, img):
        return self.out(self.features(img))


def dangling_endpoints(sketch, eps: float = 0.02) -> tuple[int, int]:
    """(dangling, total) end points of regular lines/arcs; an end point dangles when no end
    point of another regular line/arc lies within eps."""
    ends, owner = [], []
    for i, q in enumerate(sketch):
        if not q.construction:
            for e in sk.endpoints(q):
                ends.append(e)
                owner.append(i)
    if not ends:
        return 0, 0
    e = np.asarray(ends)
    o = np.asarray(owner)
    d = np.linalg.norm(e[:, None] - e[None], axis=-1)
    near = (d <= eps) & (o[:, None] != o[None])
    return int(np.sum(~near.any(1))), len(ends)


def validity(sketches: Sequence, eps: float = 0.02) -> dict:
    """Dangling-end-point share, closed-profile rate (sketches with lines/arcs and no
    dangling end), type shares (line/circle/arc/point), construction share, count histogram."""
    dangling = total = closed = with_curves = 0
    types = np.zeros(4)
    cons = 0
    counts = np.zeros(64)
    for s in sketches:
        d, n = dangling_endpoints(s, eps)
        dangling += d
        total += n
        if n:
            with_curves += 1
            closed += d == 0
        for q in s:
            types[sk.TYPES.index(q.kind)] += 1
            cons += q.construction
        counts[min(len(s), 63)] += 1
    nprim = max(types.sum(), 1)
    return {"dangling_fraction": dangling / total if total else 0.0,
            "closed_rate": closed / with_curves if with_curves else 0.0,
            "type_shares": (types / nprim).tolist(),
            "construction_share": cons / nprim,
            "mean_primitives": float(types.sum() / max(len(sketches), 1)),
            "count_hist": (counts / max(len(sketches), 1)).tolist()}


def total_variation(p: Sequence[float], q: Sequence[float]) -> float:
    return 0.5 * float(np.sum(np.abs(np.asarray(p) - np.asarray(q))))


def feature_fn(encoder: SketchEncoder):
    """A jitted (params, images (N, R, R)) -> features (N, F) of `encoder`."""
    return jax.jit(lambda params, im: encoder.apply(params, im, method=SketchEncoder.features))


def features(fn, params, x: np.ndarray, res: int, batch: int = 1024) -> np.ndarray:
    """Features (N, F) of slot tensors x (N, S, 21) by fn = `feature_fn(encoder)`."""
    return np.concatenate([np.asarray(fn(params, rasterize(x[i:i + batch], res)))
                           for i in range(0, len(x), batch)], 0)
