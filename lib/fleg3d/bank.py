"""One bank of clouds for the protocols of a run, from procedural classes or real data files.

Rows (class ids = positions in `data.classes`; B base classes, new classes after them):
  base_train   train_per_class clouds per base class
  base_test    test_per_class clouds per base class
  pool_<p>     pool_per_class candidate shots per new class, for protocol p
  test_<p>     test_per_class test clouds per new class, for protocol p
for each protocol p of `eval.protocols`. Where the clouds come from (`data.source`):

  role         procedural              modelnet40 (data.path)      scanobjectnn (data.path)
  base_train   synthetic, split train  ModelNet40 train            ScanObjectNN training
  base_test    synthetic, split test   ModelNet40 test             ScanObjectNN test
  pool_same    synthetic, support      ModelNet40 train            ScanObjectNN training
  test_same    synthetic, test         ModelNet40 test             ScanObjectNN test
  pool_cross   "real", support         ScanObjectNN training (data.cross_path)
  test_cross   "real", test            ScanObjectNN test (data.cross_path)

`same_domain`: new-class shots and tests from the base session's source. `cross_domain`
(ModelNet -> ScanObjectNN, as in Microshapes / 3D-FLEG's cross-dataset task): the base
session from the source, every new class with shots and test clouds of the other domain
(the simulated scan of `domain.py`, or real ScanObjectNN files). For real files the
per-class counts are caps (a class with fewer clouds gives what it has, at least the
minimum each role needs, checked by `check_sources` before anything is computed: a
capped test set is then not class-balanced and accuracy is per cloud). Pools come from
the train split and tests from the test split, so shots and tests never share a cloud;
the global descriptor of every row is computed once here.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lib.fleg3d import domain, geometry, sources
from lib.fleg3d.protocol import Protocol, check_disjoint, session_classes

PROTOCOLS = ("same_domain", "cross_domain")           # row order of the bank
PROCEDURAL_DOMAIN = {"same_domain": "synthetic", "cross_domain": "real"}


class Bank(NamedTuple):
    points: np.ndarray      # (M, N, 3) float32
    desc: np.ndarray        # (M, DIM) float32 global geometric descriptors
    labels: np.ndarray      # (M,) int32
    protocols: dict         # name -> Protocol
    counts: dict            # role -> {class name: clouds}


def shift_of(config) -> domain.Shift:
    return domain.Shift(**dict(config.shift))


def _roles(config) -> list[tuple[str, list[int], str, str]]:
    """(role, class ids, protocol or "" for the base session, "train" | "test" | "pool")."""
    d = config.data
    base, new = list(range(d.base_classes)), list(range(d.base_classes, len(d.classes)))
    out = [("base_train", base, "", "train"), ("base_test", base, "", "test")]
    for p in PROTOCOLS:
        if p in config.eval.protocols:
            out += [(f"pool_{p}", new, p, "pool"), (f"test_{p}", new, p, "test")]
    return out


def _cap(config, kind: str) -> int:
    d = config.data
    return {"train": d.train_per_class, "test": d.test_per_class, "pool": d.pool_per_class}[kind]


def _need(config, kind: str) -> int:
    return {"train": config.per_class_batch, "test": 1, "pool": config.data.shots}[kind]


def _real_source(config, srcs: dict, protocol: str, kind: str) -> tuple[sources.Source, str, str]:
    """(data set, split, up axis) of a role of a real-data run."""
    cross = protocol == "cross_domain"
    src = srcs["cross" if cross else "source"]
    return src, "test" if kind == "test" else "train", (
        config.data.cross_up_axis if cross else config.data.up_axis)


def check_sources(config) -> dict:
    """Open the real data sets of `config` and check every role's classes and counts
    (ConfigError naming the path and the problem); {} for procedural data."""
    d = config.data
    if d.source == "procedural":
        return {}
    srcs = {"source": sources.open_source(d.source, d.path, d.scanobjectnn_file)}
    if "cross_domain" in config.eval.protocols:
        srcs["cross"] = sources.open_source("scanobjectnn", d.cross_path, d.scanobjectnn_file)
    for role, ids, protocol, kind in _roles(config):
        src, split, _ = _real_source(config, srcs, protocol, kind)
        sources.require(src, split, [d.classes[i] for i in ids], _need(config, kind), role,
                        num_points=d.num_points)
    return srcs


def build(config, srcs: dict | None = None) -> Bank:
    """The bank of `config` (`srcs` from `check_sources`, opened here when not given)."""
    d = config.data
    names, b = list(d.classes), d.base_classes
    if d.source != "procedural" and srcs is None:
        srcs = check_sources(config)
    common = dict(seed=config.seed, num_points=d.num_points, shift=shift_of(config),
                  tilt_deg=d.tilt_deg)
    h5_cache: dict = {}
    chunks, rows, counts = [], {}, {}
    for role, ids, protocol, kind in _roles(config):
        if d.source == "procedural":
            dom = PROCEDURAL_DOMAIN.get(protocol, "synthetic")
            split = {"train": "train", "test": "test", "pool": "support"}[kind]
            pts, lab = domain.make_split([names[i] for i in ids], ids, _cap(config, kind),
                                         domain=dom, split=split, **common)
        else:
            src, split, up = _real_source(config, srcs, protocol, kind)
            per = [min(_cap(config, kind), len(sources.rows(src, split, names[i]))) for i in ids]
            pts = np.concatenate([
                sources.clouds(src, split, names[i], n, num_points=d.num_points,
                               seed=config.seed, up_axis=up, cache=h5_cache)
                for i, n in zip(ids, per)])
            lab = np.repeat(np.asarray(ids, np.int32), per)
        start = sum(len(c[1]) for c in chunks)
        chunks.append((pts, lab))
        rows[role] = np.arange(start, start + len(lab))
        counts[role] = {names[i]: int(np.sum(lab == i)) for i in ids}
    points = np.concatenate([c[0] for c in chunks])
    labels = np.concatenate([c[1] for c in chunks])
    g = config.geometry
    _, desc = geometry.describe(points, k=g.k, bins=g.bins, d2_bins=g.d2_bins,
                                radial_bins=g.radial_bins)
    plan = session_classes(len(names), b, d.ways)
    new = list(range(b, len(names)))
    protocols = {}
    for name in PROTOCOLS:
        if name not in config.eval.protocols:
            continue
        pool, test = rows[f"pool_{name}"], rows[f"test_{name}"]
        p = Protocol(
            name=name, labels=labels, session_classes=plan, base_train=rows["base_train"],
            pools={c: pool[labels[pool] == c] for c in new},
            tests=(rows["base_test"],) + tuple(test[np.isin(labels[test], s)] for s in plan[1:]))
        check_disjoint(p)
        protocols[name] = p
    return Bank(points, desc.astype(np.float32), labels, protocols, counts)
