"""The synthetic-to-"real" shift (a stand-in for ModelNet -> ScanObjectNN) and data-set builders.

A "real" cloud is made from a clean instance with 4x the points by, in order:
1. partial view: a random viewing direction v (azimuth uniform, elevation in [0°, 40°]);
   the fraction `crop` ~ U[crop_min, crop_max] of points farthest from the viewer
   (smallest p·v) is removed, as a single depth scan misses the back of an object;
2. non-uniform density: the remaining points are subsampled without replacement with
   probability proportional to exp(-density_strength · |p - a|² / 2) + 0.05 for a random
   anchor point a of the cloud (scanner density falls off from where it points);
3. clutter: a fraction `clutter_fraction` of the points is replaced by a floor patch under
   the object (z = min z, 1.5x the object's footprint) and `outlier_fraction` by uniform
   outliers in the bounding box (background and sensor noise);
4. jitter: Gaussian noise of std `jitter` on every coordinate, then re-normalisation.

`make_split` builds a labelled set of clouds of given classes for one domain; every cloud
is a pure function of (seed, domain, split name, class, index), so sets are reproducible
and the train / support / test splits never share an instance.
"""
from __future__ import annotations

import zlib
from typing import NamedTuple

import numpy as np

from lib.fleg3d import shapes

DOMAINS = ("synthetic", "real")


class Shift(NamedTuple):
    crop_min: float = 0.2
    crop_max: float = 0.45
    density_strength: float = 2.0
    clutter_fraction: float = 0.1
    outlier_fraction: float = 0.03
    jitter: float = 0.01


def shift_cloud(dense: np.ndarray, rng: np.random.Generator, num_points: int,
                shift: Shift) -> np.ndarray:
    """(num_points, 3) "real" cloud from a clean dense cloud (M, 3), M ≥ 2·num_points."""
    m = len(dense)
    az, el = rng.uniform(0, 2 * np.pi), np.deg2rad(rng.uniform(0, 40))
    view = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    crop = rng.uniform(shift.crop_min, shift.crop_max)
    keep = np.argsort(dense @ view)[int(crop * m):]
    pts = dense[keep]
    anchor = pts[rng.integers(len(pts))]
    w = np.exp(-shift.density_strength * np.sum((pts - anchor) ** 2, 1) / 2) + 0.05
    n_obj = num_points - int(round((shift.clutter_fraction + shift.outlier_fraction) * num_points))
    pts = pts[rng.choice(len(pts), size=n_obj, replace=False, p=w / w.sum())]
    lo, hi = pts.min(0), pts.max(0)
    n_floor = int(round(shift.clutter_fraction * num_points))
    mid, half = (lo + hi) / 2, 0.75 * (hi - lo)
    floor = np.stack([rng.uniform(mid[0] - half[0], mid[0] + half[0], n_floor),
                      rng.uniform(mid[1] - half[1], mid[1] + half[1], n_floor),
                      np.full(n_floor, lo[2])], 1)
    outliers = rng.uniform(lo, hi, size=(num_points - n_obj - n_floor, 3))
    out = np.concatenate([pts, floor, outliers])[rng.permutation(num_points)]
    out = out + rng.normal(0, shift.jitter, out.shape)
    return shapes.normalise(out).astype(np.float32)


def _rng(seed: int, *names) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(":".join(map(str, names)).encode())])


def make_cloud(name: str, domain: str, seed: int, split: str, index: int, num_points: int,
               shift: Shift, tilt_deg: float = 10.0) -> np.ndarray:
    """(num_points, 3) float32: instance `index` of class `name` in `domain`'s `split`."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; expected one of {DOMAINS}")
    rng = _rng(seed, domain, split, name, index)
    if domain == "synthetic":
        return shapes.sample_class(name, rng, num_points, tilt_deg=tilt_deg)
    dense = shapes.sample_class(name, rng, 4 * num_points, tilt_deg=tilt_deg)
    return shift_cloud(dense, rng, num_points, shift)


def make_split(class_names, labels, per_class: int, *, domain: str, split: str, seed: int,
               num_points: int, shift: Shift, tilt_deg: float = 10.0):
    """(points (C·per_class, N, 3) float32, labels (C·per_class,) int32) for the given
    class names and their global label ids."""
    for name in class_names:
        shapes.check_class(name)
    pts = [make_cloud(name, domain, seed, split, i, num_points, shift, tilt_deg)
           for name in class_names for i in range(per_class)]
    lab = np.repeat(np.asarray(labels, np.int32), per_class)
    return np.stack(pts), lab
