"""One bank of clouds for both protocols, and the two protocols over it.

Rows (class ids = positions in `data.classes`; B base classes, new classes after them):
  base train   synthetic, split "train",   train_per_class per base class
  base test    synthetic, split "test",    test_per_class per base class
  pools        synthetic and real, split "support", pool_per_class per new class
  new tests    synthetic and real, split "test",    test_per_class per new class
`same_domain`: new-class shots and tests synthetic. `cross_domain` (ModelNet ->
ScanObjectNN style, as in Microshapes / 3D-FLEG's cross-dataset task): the base session is
synthetic, every new class comes with "real" shots and "real" test clouds. The global
descriptor of every row is computed once here.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lib.fleg3d import domain, geometry
from lib.fleg3d.protocol import Protocol, check_disjoint, session_classes


class Bank(NamedTuple):
    points: np.ndarray      # (M, N, 3) float32
    desc: np.ndarray        # (M, DIM) float32 global geometric descriptors
    labels: np.ndarray      # (M,) int32
    protocols: dict         # name -> Protocol


def shift_of(config) -> domain.Shift:
    return domain.Shift(**dict(config.shift))


def build(config) -> Bank:
    d = config.data
    names, b = list(d.classes), d.base_classes
    common = dict(seed=config.seed, num_points=d.num_points, shift=shift_of(config),
                  tilt_deg=d.tilt_deg)
    chunks, rows = [], {}

    def add(key, class_ids, per_class, dom, split):
        pts, lab = domain.make_split([names[i] for i in class_ids], class_ids, per_class,
                                     domain=dom, split=split, **common)
        start = sum(len(c[1]) for c in chunks)
        chunks.append((pts, lab))
        rows[key] = np.arange(start, start + len(lab))

    new = list(range(b, len(names)))
    add("base_train", list(range(b)), d.train_per_class, "synthetic", "train")
    add("base_test", list(range(b)), d.test_per_class, "synthetic", "test")
    for dom in domain.DOMAINS:
        add(f"pool_{dom}", new, d.pool_per_class, dom, "support")
        add(f"test_{dom}", new, d.test_per_class, dom, "test")
    points = np.concatenate([c[0] for c in chunks])
    labels = np.concatenate([c[1] for c in chunks])
    g = config.geometry
    _, desc = geometry.describe(points, k=g.k, bins=g.bins, d2_bins=g.d2_bins,
                                radial_bins=g.radial_bins)
    plan = session_classes(len(names), b, d.ways)
    protocols = {}
    for name, dom in (("same_domain", "synthetic"), ("cross_domain", "real")):
        pool, test = rows[f"pool_{dom}"], rows[f"test_{dom}"]
        p = Protocol(
            name=name, labels=labels, session_classes=plan, base_train=rows["base_train"],
            pools={c: pool[labels[pool] == c] for c in new},
            tests=(rows["base_test"],) + tuple(test[np.isin(labels[test], s)] for s in plan[1:]))
        check_disjoint(p)
        protocols[name] = p
    return Bank(points, desc.astype(np.float32), labels, protocols)
