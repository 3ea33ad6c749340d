"""Real data sources of 3D-FLEG: ModelNet40 .h5 / .off and ScanObjectNN .h5 directories
indexed, read back exactly, and refused with clear errors (fixture files the tests write)."""
import os

import numpy as np
import pytest

from lib.common import config as config_lib
from lib.common.config import ConfigError
from lib.fleg3d import bank as bank_lib, shapes, sources
from tests.fleg3d import fleg3d_fixtures as fx

h5py = pytest.importorskip("h5py")


def _file_clouds(paths, label):
    """Every cloud of `label` in the .h5 files, in file order (the reference)."""
    out = []
    for p in paths:
        with h5py.File(p, "r") as f:
            out += list(np.asarray(f["data"])[np.asarray(f["label"]).reshape(-1) == label])
    return out


def _sorted_rows(a):
    return a[np.lexsort(a.T[::-1])]


def test_modelnet_h5_index_and_clouds_round_trip(tmp_path):
    root = fx.write_modelnet_h5(str(tmp_path / "mn"))
    src = sources.open_source("modelnet40", root)
    assert src.layout == "h5" and src.classes == tuple(fx.MODELNET)
    assert src.points_per_cloud == fx.POINTS and len(src.files["train"]) == 2
    assert len(sources.rows(src, "train", "lamp")) == 5 and len(sources.rows(src, "test", "lamp")) == 3
    # all points of a cloud: a permutation of the file's cloud turned back z up (the fixture
    # stored (x, z, -y)), i.e. the original procedural lamp, normalised
    got = sources.clouds(src, "train", "lamp", 5, num_points=fx.POINTS, seed=0, up_axis="y")
    ref = [shapes.normalise(np.stack([c[:, 0], -c[:, 2], c[:, 1]], 1))
           for c in _file_clouds(src.files["train"], src.classes.index("lamp"))]
    assert got.shape == (5, fx.POINTS, 3) and got.dtype == np.float32
    matched = {j for g in got for j, r in enumerate(ref)
               if np.allclose(_sorted_rows(g), _sorted_rows(r), atol=1e-6)}
    assert matched == set(range(5))                      # every file cloud, each once
    # a subset of points, reproducible per seed
    again = sources.clouds(src, "train", "lamp", 3, num_points=32, seed=0, up_axis="y")
    np.testing.assert_array_equal(again, sources.clouds(src, "train", "lamp", 3,
                                                        num_points=32, seed=0, up_axis="y"))
    assert not np.array_equal(again, sources.clouds(src, "train", "lamp", 3, num_points=32,
                                                    seed=1, up_axis="y"))


def test_scanobjectnn_labels_name_its_fifteen_classes(tmp_path):
    root = fx.write_scanobjectnn(str(tmp_path / "scan"), n_train=2, n_test=1)
    src = sources.open_source("scanobjectnn", root)
    assert src.classes == sources.SCANOBJECTNN_CLASSES and src.classes[4] == "chair"
    assert {c: len(sources.rows(src, "train", c)) for c in fx.SCAN} == dict.fromkeys(fx.SCAN, 2)
    assert len(sources.rows(src, "train", "toilet")) == 0
    with pytest.raises(ConfigError, match=r"class 'toilet' has 0 train clouds; pool_cross_domain "
                                          r"needs at least 2"):
        sources.require(src, "train", ["chair", "toilet"], 2, "pool_cross_domain")
    with pytest.raises(ConfigError, match=r"scanobjectnn data at .*: no training_objectdataset_"
                                          r"augmentedrot_scale75.h5; expected training_"):
        sources.open_source("scanobjectnn", root, "objectdataset_augmentedrot_scale75")


def test_modelnet_off_tree_is_sampled_on_the_meshes(tmp_path):
    root = fx.write_modelnet_off(str(tmp_path / "off"))
    src = sources.open_source("modelnet40", root)
    assert src.layout == "off" and src.classes == ("box", "cone") and src.points_per_cloud is None
    assert len(src.files["test"]) == 4 and list(src.labels["test"]) == [0, 0, 1, 1]
    pts = sources.clouds(src, "train", "box", 2, num_points=500, seed=0, up_axis="z")
    assert pts.shape == (2, 500, 3)
    np.testing.assert_allclose(pts.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(pts, axis=2).max(1), 1, atol=1e-5)
    # a normalised box: every point on one of its 6 faces (an extreme of some coordinate)
    lo, hi = pts.min(1, keepdims=True), pts.max(1, keepdims=True)
    assert (np.isclose(pts, lo, atol=1e-5) | np.isclose(pts, hi, atol=1e-5)).any(2).all()


def test_wrong_layouts_and_requests_are_named(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README").write_text("not a data set")
    with pytest.raises(ConfigError, match=r"modelnet40 data at .*empty': neither layout found; "
                                          r"expected either ply_data_train"):
        sources.open_source("modelnet40", str(empty))
    root = fx.write_modelnet_h5(str(tmp_path / "mn"))
    os.remove(os.path.join(root, "shape_names.txt"))
    with pytest.raises(ConfigError, match="ply_data_\\*.h5 found but no shape_names.txt"):
        sources.open_source("modelnet40", root)
    with open(os.path.join(root, "shape_names.txt"), "w") as f:
        f.write("airplane\nbottle\n")                          # fewer names than labels
    with pytest.raises(ConfigError, match=r"train labels span 0..6 but shape_names.txt names 2"):
        sources.open_source("modelnet40", root)
    fx.write_modelnet_h5(root)                                 # a good set again
    with h5py.File(os.path.join(root, "ply_data_test0.h5"), "a") as f:
        del f["label"]
    with pytest.raises(ConfigError, match=r"ply_data_test0.h5 has no dataset\(s\) \['label'\]"):
        sources.open_source("modelnet40", root)
    fx.write_modelnet_h5(root)
    src = sources.open_source("modelnet40", root)
    with pytest.raises(ConfigError, match=r"'data.classes': class 'sphere' \(base_train\) is not "
                                          r"in the modelnet40 data at .*; its classes: airplane"):
        sources.require(src, "train", ["chair", "sphere"], 1, "base_train")
    with pytest.raises(ConfigError, match=r"'data.num_points' = 128 is not allowed; the "
                                          r"modelnet40 clouds at .* have 96 points"):
        sources.require(src, "train", ["chair"], 1, "base_train", num_points=128)


def _no_descriptors(monkeypatch):
    """The bank tests below check which clouds land in which rows; the descriptors (tested
    in test_fleg3d_geometry.py, and by the end-to-end run) are stubbed to save compiles."""
    monkeypatch.setattr(bank_lib.geometry, "describe",
                        lambda points, **_: (None, np.asarray(points).reshape(len(points), -1)[:, :4]))


def test_real_run_is_checked_before_compute(tmp_path, monkeypatch):
    """check_sources (called by train_and_evaluate before the workdir is touched) names a
    class the cross-domain files hold no clouds of, and per_class_batch above a class's
    clouds."""
    fx.write_modelnet_h5(str(tmp_path / "mn"))
    fx.write_scanobjectnn(str(tmp_path / "scan"))
    config = config_lib.apply_overrides(config_lib.load_config("configs/fleg3d/fleg3d.py:tiny"), {
        "data.source": "modelnet40", "data.path": str(tmp_path / "mn"),
        "data.cross_path": str(tmp_path / "scan"),
        "data.classes": ("airplane", "lamp", "cone", "bottle", "chair", "sofa")})
    _no_descriptors(monkeypatch)
    with pytest.raises(ConfigError, match=r"scanobjectnn data at .*scan': class 'sofa' has 0 "
                                          r"train clouds; pool_cross_domain needs at least 2"):
        bank_lib.check_sources(config)
    config.eval.protocols = ("same_domain",)
    config.data.cross_path = ""
    bank = bank_lib.build(config)                       # sofa exists in "ModelNet40"
    assert set(bank.protocols) == {"same_domain"}
    assert bank.counts["pool_same_domain"] == {"chair": 3, "sofa": 3}
    config.per_class_batch = config.data.train_per_class = 6
    with pytest.raises(ConfigError, match=r"class 'airplane' has 5 train clouds; base_train "
                                          r"needs at least 6"):
        bank_lib.check_sources(config)


def test_procedural_bank_builds_only_the_protocols_asked_for(monkeypatch):
    _no_descriptors(monkeypatch)
    config = config_lib.load_config("configs/fleg3d/fleg3d.py:tiny")
    both = bank_lib.build(config)
    config.eval.protocols = ("cross_domain",)
    cross = bank_lib.build(config)
    assert set(both.protocols) == {"same_domain", "cross_domain"} and set(cross.protocols) == {
        "cross_domain"}
    # the base rows come first and are the same clouds; the cross-domain rows are the
    # last ones of the two-protocol bank
    n_base = len(both.protocols["same_domain"].base_train) + len(both.protocols[
        "same_domain"].tests[0])
    np.testing.assert_array_equal(cross.points[:n_base], both.points[:n_base])
    np.testing.assert_array_equal(cross.points[n_base:], both.points[-(len(cross.points) - n_base):])
    np.testing.assert_array_equal(cross.desc, np.concatenate(
        [both.desc[:n_base], both.desc[-(len(cross.points) - n_base):]]))
    assert not bank_lib.check_sources(config)          # nothing to open for procedural data
