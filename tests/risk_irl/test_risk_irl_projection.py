"""The QP projection onto monotone / bounded / Lipschitz utilities with U(0) = 0, U(H) = H."""
import itertools

import jax.numpy as jnp
import numpy as np
import pytest

from lib.risk_irl import projection
from lib.risk_irl import utilities as ut


def brute_force(v: np.ndarray, c: float, horizon: float) -> np.ndarray:
    """Exact projection by enumerating active sets: each difference U_{i+1} − U_i is pinned
    at 0, pinned at c, or free; solve the equality-constrained least squares (KKT system) for
    each pattern and keep the feasible solution of least distance."""
    d = v.size
    best, best_obj = None, np.inf
    for pattern in itertools.product((0, 1, 2), repeat=d - 1):
        rows, rhs = [np.eye(d)[0], np.eye(d)[-1]], [0.0, horizon]
        for i, p in enumerate(pattern):
            if p < 2:
                row = np.zeros(d)
                row[i], row[i + 1] = -1.0, 1.0
                rows.append(row)
                rhs.append(0.0 if p == 0 else c)
        a, b = np.array(rows), np.array(rhs)
        kkt = np.block([[np.eye(d), a.T], [a, np.zeros((len(b), len(b)))]])
        try:
            sol = np.linalg.solve(kkt, np.concatenate([v, b]))
        except np.linalg.LinAlgError:
            continue
        u = sol[:d]
        diff = np.diff(u)
        if np.all(diff >= -1e-9) and np.all(diff <= c + 1e-9) and np.allclose(a @ u, b):
            obj = np.sum((u - v) ** 2)
            if obj < best_obj:
                best, best_obj = u, obj
    return best


@pytest.mark.parametrize("d,c,scale,seed", [(5, 0.6, 1.0, 0), (6, 0.5, 2.0, 1), (7, 0.4, 3.0, 2),
                                            (7, 2.0, 3.0, 3), (6, 2.0, 0.3, 4)])
def test_projection_is_the_closest_feasible_point_by_brute_force(d, c, scale, seed):
    horizon = 2.0
    rng = np.random.default_rng(seed)
    v = np.sort(rng.uniform(0, horizon, d)) + scale * rng.normal(size=d)
    exact = brute_force(v, c, horizon)
    got = projection.project(jnp.asarray(v, jnp.float32), c, horizon, 3000)
    np.testing.assert_allclose(np.asarray(got.utility), exact, atol=2e-4)
    assert float(projection.violation(got.utility, c, horizon)) < 1e-5


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_projection_satisfies_every_constraint_and_certifies_its_accuracy(scale):
    horizon, n = 5, 100
    c = projection.slope_bound(horizon, n, 10.0)
    grid = ut.returns_grid(horizon, n)
    v = grid + scale * np.random.default_rng(0).normal(size=grid.size)
    res = projection.project(jnp.asarray(v, jnp.float32), c, float(horizon), 3000)
    u = np.asarray(res.utility, np.float64)
    assert u[0] == 0.0 and u[-1] == horizon
    assert np.all(np.diff(u) >= -1e-6) and np.all(np.diff(u) <= c + 1e-6)
    assert np.all(u >= 0) and np.all(u <= horizon)
    # |U_j − U_i| ≤ L ε₀ (j − i) for all pairs (the paper's form of the constraint)
    assert np.all(np.abs(u[None, :] - u[:, None]) <= c * np.abs(np.subtract.outer(
        np.arange(u.size), np.arange(u.size))) + 1e-4)
    assert float(res.gap) <= 1e-5 * max(float(res.objective), 1.0)


def test_feasible_points_are_fixed_points():
    horizon, n = 5, 100
    c = projection.slope_bound(horizon, n, 10.0)
    for name in ("linear", "square", "convex_concave"):
        u = ut.family(name, horizon, n)
        np.testing.assert_allclose(np.asarray(projection.project(u, c, 5.0, 500).utility),
                                   np.asarray(u), atol=1e-5)


def test_warm_start_and_no_lipschitz_bound():
    horizon, n = 5, 20
    c = projection.slope_bound(horizon, n, None)
    assert c == horizon
    v = jnp.asarray(np.random.default_rng(1).normal(size=horizon * n + 1) * 3, jnp.float32)
    cold = projection.project(v, c, 5.0, 3000)
    warm = projection.project(v, c, 5.0, 5, cold.dual)
    np.testing.assert_allclose(np.asarray(warm.utility), np.asarray(cold.utility), atol=1e-4)
    assert np.all(np.diff(np.asarray(cold.utility)) >= -1e-6)


def test_an_empty_set_is_refused():
    with pytest.raises(ValueError, match="need L >= 1"):
        projection.slope_bound(5, 100, 0.5)


def test_random_utilities_are_feasible():
    import jax
    c = projection.slope_bound(5, 20, 10.0)
    us = np.asarray(ut.random_utilities(jax.random.PRNGKey(0), 8, 5, 20, c, 4))
    assert us.shape == (8, 101)
    assert all(float(projection.violation(jnp.asarray(u), c, 5.0)) < 1e-5 for u in us)
    assert np.std(us[:, 50]) > 0.1                               # they differ
