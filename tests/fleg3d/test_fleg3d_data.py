"""Procedural classes, the synthetic -> real shift, and the ModelNet / ScanObjectNN loaders."""
import numpy as np
import pytest

from lib.data import pointclouds
from lib.fleg3d import domain, shapes


def test_every_class_samples_a_normalised_cloud():
    rng = np.random.default_rng(0)
    for name in shapes.CLASSES:
        p = shapes.sample_class(name, rng, 128)
        assert p.shape == (128, 3) and p.dtype == np.float32 and np.all(np.isfinite(p))
        np.testing.assert_allclose(p.mean(0), 0, atol=1e-5)
        assert abs(np.linalg.norm(p, axis=1).max() - 1) < 1e-5


def test_unknown_class_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown point-cloud class 'unicorn'; known classes: sphere"):
        shapes.sample_class("unicorn", np.random.default_rng(0), 64)
    with pytest.raises(ValueError, match="unknown point-cloud class 'spaceship'"):
        domain.make_split(["chair", "spaceship"], [0, 1], 1, domain="synthetic", split="train",
                          seed=0, num_points=32, shift=domain.Shift())


def test_surface_sampling_is_uniform_over_area():
    # a 2 x 1 x 1 box: the two 1 x 1 end faces hold 2 / 10 of the area
    pts = shapes.sample_surface([shapes.box((0, 0, 0), (2, 1, 1))], np.random.default_rng(1), 20000)
    ends = np.mean(np.isclose(np.abs(pts[:, 0]), 1.0))
    assert abs(ends - 0.2) < 0.015
    cyl = shapes.frustum((0, 0, 0), 0.5, 0.5, 1.0).sample(np.random.default_rng(2), 5000)
    np.testing.assert_allclose(np.hypot(cyl[:, 0], cyl[:, 1]), 0.5, atol=1e-6)
    assert abs(np.mean(cyl[:, 2] > 0) - 0.5) < 0.03


def test_clouds_are_reproducible_and_splits_differ():
    kw = dict(num_points=64, shift=domain.Shift())
    a = domain.make_cloud("mug", "real", 0, "test", 3, **kw)
    np.testing.assert_array_equal(a, domain.make_cloud("mug", "real", 0, "test", 3, **kw))
    assert not np.allclose(a, domain.make_cloud("mug", "real", 0, "support", 3, **kw))
    with pytest.raises(ValueError, match="unknown domain 'scan'"):
        domain.make_cloud("mug", "scan", 0, "test", 3, **kw)


def test_real_shift_crops_and_adds_a_floor():
    rng = np.random.default_rng(4)
    dense = shapes.sample_surface([shapes.ellipsoid((0, 0, 0), (1, 1, 1))], rng, 2048)
    plain = dict(density_strength=0.0, outlier_fraction=0.0, jitter=0.0)
    full = domain.shift_cloud(dense, rng, 512, domain.Shift(0.0, 0.0, clutter_fraction=0.0, **plain))
    cut = domain.shift_cloud(dense, rng, 512, domain.Shift(0.4, 0.4, clutter_fraction=0.0, **plain))
    # a whole sphere, re-centred, has every point near radius 1; a cropped one does not
    assert np.std(np.linalg.norm(full, axis=1)) < 0.06 < 0.1 < np.std(np.linalg.norm(cut, axis=1))
    floor = domain.shift_cloud(dense, rng, 512, domain.Shift(0.4, 0.4, clutter_fraction=0.2, **plain))
    z = floor[:, 2]
    assert np.sum(np.isclose(z, z.min(), atol=1e-6)) >= round(0.2 * 512)   # the floor patch


def test_read_off_and_sample_a_mesh(tmp_path):
    path = tmp_path / "cube.off"
    v = [(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)]
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    body = "\n".join(" ".join(map(str, p)) for p in v) + "\n" + "\n".join(
        "4 " + " ".join(map(str, q)) for q in quads)
    path.write_text(f"OFF8 6 0\n{body}\n")                  # ModelNet's header-on-one-line quirk
    verts, faces = pointclouds.read_off(str(path))
    assert verts.shape == (8, 3) and faces.shape == (12, 3)
    pts = pointclouds.sample_mesh(verts, faces, 3000, np.random.default_rng(0), normalise=False)
    on_face = np.isclose(pts, 0) | np.isclose(pts, 1)
    assert on_face.any(1).all()                              # every point on the cube's surface
    np.testing.assert_allclose(pts.mean(0), 0.5, atol=0.03)
    (tmp_path / "bad.off").write_text("OFF\n8 6 0\n0 0 0\n")
    with pytest.raises(ValueError, match="promises 8 vertices and 6 faces"):
        pointclouds.read_off(str(tmp_path / "bad.off"))


@pytest.mark.parametrize("label_shape", [(5,), (5, 1)])
def test_h5_loader_modelnet_and_scanobjectnn_layouts(tmp_path, label_shape):
    h5py = pytest.importorskip("h5py")
    data = np.random.default_rng(0).normal(size=(5, 32, 6)).astype(np.float32)
    labels = np.arange(5).reshape(label_shape)
    path = str(tmp_path / "set.h5")
    with h5py.File(path, "w") as f:
        f["data"], f["label"] = data, labels
        f["mask"] = np.zeros((5, 32))                       # ScanObjectNN's extra dataset
    pts, lab = pointclouds.load_h5(path)
    np.testing.assert_array_equal(pts, data[..., :3])
    np.testing.assert_array_equal(lab, np.arange(5))
    with h5py.File(str(tmp_path / "nolabel.h5"), "w") as f:
        f["data"] = data
    with pytest.raises(ValueError, match=r"no dataset\(s\) \['label'\]"):
        pointclouds.load_h5(str(tmp_path / "nolabel.h5"))
