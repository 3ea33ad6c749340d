"""EARTH model pieces: permutation equivariance of the attention, GLTG and the full model."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.earth import baselines, fusion, gltg, model


PERM = np.array([3, 0, 4, 1, 2])


def _graph(rng, n=5):
    a = (rng.uniform(size=(n, n)) < 0.5).astype(float)
    return gltg.geo_graph(np.maximum(a, a.T))


def test_cross_attention_is_permutation_equivariant_with_the_graph():
    rng = np.random.default_rng(0)
    q, tok = rng.normal(size=(5, 8)), rng.normal(size=(5, 6))
    g = _graph(rng)
    att = fusion.CrossAttentionFusion(8, heads=2)
    p = jax.jit(att.init)(jax.random.key(0), q, tok, g)
    p = jax.tree.map(lambda a: a * 3.0, p)  # make the graph bias and logits matter
    apply = jax.jit(att.apply)                  # the graph is an argument: one compile
    out = np.asarray(apply(p, q, tok, g))
    perm = np.asarray(apply(p, q[PERM], tok[PERM], g[np.ix_(PERM, PERM)]))
    np.testing.assert_allclose(perm, out[PERM], atol=1e-5)
    # the graph is an input that matters: permuting the regions but not the graph changes the output
    unperm = np.asarray(apply(p, q[PERM], tok[PERM], g))
    assert np.abs(unperm - out[PERM]).max() > 1e-3


def test_graph_learner_rows_are_stochastic_and_equivariant():
    rng = np.random.default_rng(1)
    z, g = rng.normal(size=(5, 4)), _graph(rng)
    gl = gltg.GraphLearner(4)
    p = jax.jit(gl.init)(jax.random.key(1), z, g)
    apply = jax.jit(gl.apply)
    a = np.asarray(apply(p, z, g))
    np.testing.assert_allclose(a.sum(1), 1.0, atol=1e-5)
    assert np.all(a >= 0)
    ap = np.asarray(apply(p, z[PERM], g[np.ix_(PERM, PERM)]))
    np.testing.assert_allclose(ap, a[np.ix_(PERM, PERM)], atol=1e-5)


def _graphs(adj, sem):
    return gltg.geo_graph(adj), gltg.fused_graph(adj, sem)


@pytest.fixture(scope="module", params=["official", "sirs"])
def earth_case(request):
    """A small EARTH (each form of the dynamics) in float64 and ONE compiled function, shared
    by the tests below:
    (c, x, geo, sem) -> (loss, d loss / dc), forecast, at params + c * direction, with the
    graphs as arguments (so relabelled regions reuse the compilation)."""
    rng = np.random.default_rng(2)
    adj = np.maximum(np.eye(5), rng.uniform(size=(5, 5)) < 0.4)
    adj = np.maximum(adj, adj.T).astype(float)
    sem = gltg.semantic_graph(rng.uniform(size=(12, 5)), 2)
    with jax.enable_x64(True):
        x = jnp.asarray(rng.uniform(size=(4, 5)))
        params = jax.jit(model.Earth(*_graphs(adj, sem), hidden=4, heads=2, ar_lags=2,
                                     dynamics=request.param).init)(jax.random.key(0), x)
        # move off the init (EARTH's read-out starts at zero) and pick a random direction
        params = jax.tree.map(lambda p: p + 0.5 * rng.normal(size=p.shape), params)
        direction = jax.tree.map(lambda p: jnp.asarray(rng.normal(size=p.shape)), params)

        def loss(c, x, geo, sem_):
            m = model.Earth(geo, sem_, hidden=4, heads=2, ar_lags=2, solver="midpoint",
                            dynamics=request.param)
            out = m.apply(jax.tree.map(lambda p, d: p + c * d, params, direction), x)
            return jnp.sum(out ** 2), out

        fn = jax.jit(jax.value_and_grad(loss, has_aux=True))
        yield fn, x, adj, sem


def test_gradient_of_full_earth_through_diffrax_matches_finite_differences(earth_case):
    fn, x, adj, sem = earth_case
    with jax.enable_x64(True):
        geo, fused = _graphs(adj, sem)
        analytic = float(fn(0.0, x, geo, fused)[1])
        eps = 1e-6
        fd = float(fn(eps, x, geo, fused)[0][0] - fn(-eps, x, geo, fused)[0][0]) / (2 * eps)
    assert abs(analytic) > 1e-6
    np.testing.assert_allclose(analytic, fd, rtol=1e-6)


def test_earth_is_equivariant_to_relabelling_regions(earth_case):
    fn, x, adj, sem = earth_case
    pa, ps = adj[np.ix_(PERM, PERM)], sem[np.ix_(PERM, PERM)]
    with jax.enable_x64(True):
        out = np.asarray(fn(0.0, x, *_graphs(adj, sem))[0][1])
        outp = np.asarray(fn(0.0, x[:, PERM], *_graphs(pa, ps))[0][1])
    np.testing.assert_allclose(outp, out[PERM], atol=1e-9)


def test_gcn_gru_is_equivariant_to_relabelling_regions():
    rng = np.random.default_rng(2)
    adj = np.maximum(np.eye(5), rng.uniform(size=(5, 5)) < 0.4)
    adj = np.maximum(adj, adj.T).astype(float)
    x = jnp.asarray(rng.uniform(size=(4, 5)), jnp.float32)
    params = jax.jit(baselines.Baseline("gcn_gru", gltg.geo_graph(adj), hidden=4).init)(
        jax.random.key(0), x)
    fn = jax.jit(lambda p, x, g: baselines.Baseline("gcn_gru", g, hidden=4).apply(p, x))
    out = np.asarray(fn(params, x, gltg.geo_graph(adj)))
    outp = np.asarray(fn(params, x[:, PERM], gltg.geo_graph(adj[np.ix_(PERM, PERM)])))
    np.testing.assert_allclose(outp, out[PERM], atol=1e-5)


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown EARTH variant"):
        model.Earth(np.eye(2), np.eye(2), variant="nope")
    with pytest.raises(ValueError, match="unknown EANO dynamics 'sir'"):
        model.Earth(np.eye(2), np.eye(2), dynamics="sir")
    with pytest.raises(ValueError, match="unknown baseline"):
        baselines.Baseline("arima", np.eye(2))
    with pytest.raises(ValueError, match="divisible"):
        fusion.CrossAttentionFusion(6, heads=4).init(jax.random.key(0), jnp.ones((2, 6)),
                                                     jnp.ones((2, 3)), jnp.eye(2))
