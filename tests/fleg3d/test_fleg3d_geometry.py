"""Geometric descriptors: closed forms, rotation / translation / point-order invariance, bad input."""
import numpy as np
import pytest

from lib.fleg3d import geometry, shapes

K = 8


@pytest.fixture(scope="module")
def clouds():
    rng = np.random.default_rng(0)
    return np.stack([shapes.sample_class(c, rng, 96) for c in ("chair", "torus", "lamp")])


def test_line_and_plane_closed_forms():
    rng = np.random.default_rng(1)
    line = np.zeros((64, 3), np.float32)
    line[:, 0] = rng.uniform(-1, 1, 64)
    plane = np.zeros((64, 3), np.float32)
    plane[:, :2] = rng.uniform(-1, 1, (64, 2))
    loc_l, _ = geometry.describe(line, k=K)
    loc_p, glob_p = geometry.describe(plane, k=K)
    np.testing.assert_allclose(loc_l[:, 0], 1.0, atol=1e-4)           # linearity
    np.testing.assert_allclose(loc_l[:, 2:4], 0.0, atol=1e-4)         # sphericity, curvature
    np.testing.assert_allclose(loc_p[:, 2:5], 0.0, atol=1e-3)         # flat: no curvature, V = 0
    assert np.all(loc_p[:, 0] + loc_p[:, 1] > 0.99)                   # L + P + S = 1 when S = 0
    dim = geometry.descriptor_dim(8, 16, 8)
    assert glob_p.shape == (dim,)
    for j in range(geometry.NUM_LOCAL + 2):                           # histograms sum to one
        lo = 8 * j if j < 5 else (40 if j == 5 else 56)
        hi = lo + (8 if j != 5 else 16)
        assert abs(glob_p[lo:hi].sum() - 1) < 1e-5
    np.testing.assert_allclose(glob_p[-1], 0.0, atol=1e-6)            # planar global spectrum


def test_rotation_translation_and_order_invariance(clouds):
    rng = np.random.default_rng(2)
    loc, glob = geometry.describe(clouds, k=K)
    rot = shapes.rotation(rng, tilt_deg=90.0)
    moved = clouds @ rot.T + np.array([0.3, -2.0, 1.0], np.float32)
    loc_r, glob_r = geometry.describe(moved.astype(np.float32), k=K)
    np.testing.assert_allclose(loc_r, loc, atol=2e-3)
    # a histogram bin may gain or lose a point at a bin edge under rounding: 2 points at most
    assert np.abs(glob_r - glob).max() <= 2.0 / clouds.shape[1] + 1e-5
    perm = rng.permutation(clouds.shape[1])
    loc_p, glob_p = geometry.describe(clouds[:, perm], k=K)
    np.testing.assert_allclose(loc_p, loc[:, perm], atol=1e-5)         # equivariant
    np.testing.assert_allclose(glob_p, glob, atol=1e-5)                # invariant


def test_descriptors_separate_classes_more_than_instances():
    rng = np.random.default_rng(3)
    g = {c: geometry.describe(np.stack([shapes.sample_class(c, rng, 128) for _ in range(4)]),
                              k=K)[1] for c in ("sphere", "table")}
    within = np.mean([np.linalg.norm(g[c][0] - g[c][1]) for c in g])
    between = np.linalg.norm(g["sphere"].mean(0) - g["table"].mean(0))
    assert between > 2 * within


@pytest.mark.parametrize("points,message", [
    (np.zeros((8, 3)), r"8 points, fewer than the neighbourhood size k \+ 1 = 9"),
    (np.where(np.arange(60)[:, None] == 5, np.nan, 1.0) * np.ones((60, 3)), "1 point"),
    (np.zeros((60, 2)), r"shape \(\.\.\., N, 3\)"),
])
def test_bad_clouds_are_rejected_with_a_message(points, message):
    with pytest.raises(ValueError, match=message):
        geometry.describe(points, k=K)
