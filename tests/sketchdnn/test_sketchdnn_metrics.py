"""Metrics: Fréchet distance closed form, k-NN precision/recall, rasters, validity."""
import numpy as np
import pytest

from lib.sketchdnn import metrics
from lib.sketchdnn import sketch as sk
from lib.sketchdnn.sketch import Primitive


def test_frechet_distance_of_gaussian_samples_matches_the_closed_form():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(20000, 3))
    b = rng.normal(size=(20000, 3)) * 2.0 + np.array([1.0, 0.0, -2.0])
    # ‖Δμ‖² + tr(I + 4I − 2·2I) = 5 + 3
    assert metrics.frechet_distance(a, b) == pytest.approx(8.0, rel=0.03)
    assert metrics.frechet_distance(a, a) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="feature sets"):
        metrics.frechet_distance(a, b[:, :2])


def test_knn_precision_recall_on_overlapping_and_disjoint_sets():
    rng = np.random.default_rng(1)
    real = rng.normal(size=(300, 2))
    assert metrics.knn_precision_recall(real, real.copy(), 3) == (1.0, 1.0)
    far = rng.normal(size=(300, 2)) + 50
    assert metrics.knn_precision_recall(real, far, 3) == (0.0, 0.0)
    # samples collapsed onto half of the data: precise, poor recall
    half = real[real[:, 0] > 0] + 1e-3
    p, r = metrics.knn_precision_recall(real, half, 3)
    assert p > 0.95 and r < 0.7


def test_rasterize_draws_the_primitive_where_it_is():
    s = (Primitive("line", (-1.0, 0.0, 1.0, 0.0)), Primitive("circle", (0.0, 0.0, 0.5), True))
    img = metrics.rasterize(sk.encode(s, 3)[None], res=22)[0]
    row = 10                               # y = 0 -> cell 11 from the bottom = row 10
    assert img[row, 2:-2].min() > 0.85 and img[0].max() == 0 and img[-1].max() == 0
    assert img[row - 1, 8:14].max() < 0.5 and img[row + 2, 8:14].max() == 0   # thin: blur only
    # the construction circle (top at y = 0.5, row 6) is drawn at half intensity
    assert 0.35 < img[6, 11] < 0.5 and img[2, 2] == 0
    # vectorised points agree with the per-primitive reference, arcs included
    arc = Primitive("arc", sk.arc_from_center(0.1, 0.2, 0.6, 2.5, 0.3))
    pts, w = metrics.curve_points_batch(sk.encode((arc,), 2)[None], n=30)
    np.testing.assert_allclose(pts[0, 0], sk.curve_points(arc, 30), atol=1e-6)
    assert w[0].tolist() == [1.0, 0.0]


def test_validity_counts_dangling_end_points_and_closed_profiles():
    square = [Primitive("line", p) for p in ((0, 0, 1, 0), (1, 0, 1, 1), (1, 1, 0, 1), (0, 1, 0, 0))]
    open_path = square[:3]
    assert metrics.dangling_endpoints(square) == (0, 8)
    assert metrics.dangling_endpoints(open_path) == (2, 6)
    cons = square[:3] + [Primitive("line", (0, 1, 0, 0), True)]   # construction does not close
    assert metrics.dangling_endpoints(cons) == (2, 6)
    v = metrics.validity([square, open_path, [Primitive("circle", (0, 0, 1))]])
    assert v["closed_rate"] == 0.5 and v["dangling_fraction"] == pytest.approx(2 / 14)
    assert v["type_shares"][:2] == pytest.approx([7 / 8, 1 / 8])
    assert v["count_hist"][4] == pytest.approx(1 / 3)
    assert metrics.total_variation([0.5, 0.5], [1.0, 0.0]) == 0.5
