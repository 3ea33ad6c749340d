"""The moons toy: samples lie on the two noisy arcs, half on each."""
import numpy as np

from lib.gmflow import toys


def test_moons_lie_on_their_arcs():
    x = toys.moons(np.random.default_rng(0), 20000)
    assert x.shape == (20000, 2) and x.dtype == np.float32
    d = toys.moons_arc_distance(x)
    noise = toys.MOONS_SCALE * toys.MOONS_NOISE
    assert np.mean(d < 3 * noise) > 0.98 and d.max() < 6 * noise
    # the noise-free arcs have distance 0; (0, 2) before centring and scaling is 1 above the
    # upper arc's top (0, 1) and 1.5 from the lower arc's nearer end (0, ½)
    theta = np.linspace(0, np.pi, 7)
    arc = toys.MOONS_SCALE * (np.stack([np.cos(theta), np.sin(theta)], -1) - [0.5, 0.25])
    np.testing.assert_allclose(toys.moons_arc_distance(arc), 0.0, atol=1e-12)
    far = toys.MOONS_SCALE * (np.array([[0.0, 2.0]]) - [0.5, 0.25])
    np.testing.assert_allclose(toys.moons_arc_distance(far), toys.MOONS_SCALE, rtol=1e-12)
    # half the points on each moon: the upper arc has mean x −½·scale, the lower +½·scale, and
    # both together have mean y 0 (E sin θ = 2/π on the upper arc, ½ − 2/π on the lower)
    np.testing.assert_allclose(x.mean(0), [0.0, 0.0], atol=0.03)
    np.testing.assert_array_equal(toys.sample_toy("moons", np.random.default_rng(1), 5),
                                  toys.moons(np.random.default_rng(1), 5))
