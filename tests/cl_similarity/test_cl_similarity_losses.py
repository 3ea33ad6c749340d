"""The unified losses against direct per-pair sums, invariances, sharding and bad input."""
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.cl_similarity import losses as L
from lib.common import mesh as mesh_lib

T = 0.3
SIG_T, SIG_B = 4.0, 1.0


def _views(m=5, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, d)), rng.normal(size=(m, d))


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _direct(name, negatives, u, v):
    """The losses written out pair by pair from their textbook definitions (float64)."""
    u, v = _unit(u), _unit(v)
    m = len(u)
    c1, c2 = L.NEGATIVES[negatives]
    if name in ("infonce", "simclr", "dcl", "dhel"):
        total = 0.0
        for a, b in ((u, v), (v, u)):                       # both directions (symmetric form)
            for i in range(m):
                pos = math.exp(a[i] @ b[i] / T)
                negs = sum(c1 * math.exp(a[i] @ b[j] / T) + c2 * math.exp(a[i] @ a[j] / T)
                           for j in range(m) if j != i)
                if name in ("infonce", "simclr"):           # −log(pos / (pos + negatives))
                    total += -math.log(pos / (pos + negs))
                else:                                       # decoupled: −log(pos / negatives)
                    total += -math.log(pos / negs)
        return total / (2 * m)
    if name == "siglip":                                    # σ-loss with labels ±1
        def pos_f(x):
            return -math.log1p(math.exp(-SIG_T * x + SIG_B))

        def neg_f(x):
            return (m - 1) * math.log1p(math.exp(SIG_T * x - SIG_B))
    else:                                                   # spectral: −2 s_pos + s_neg²
        def pos_f(x):
            return 2 * x

        def neg_f(x):
            return x * x
    value = -sum(pos_f(u[i] @ v[i]) for i in range(m)) / m
    pairs = [(i, j) for i, j in itertools.product(range(m), repeat=2) if i != j]
    value += c1 * sum(neg_f(u[i] @ v[j]) for i, j in pairs) / (m * (m - 1))
    value += c2 * sum(neg_f(u[i] @ u[j]) + neg_f(v[i] @ v[j]) for i, j in pairs) / (2 * m * (m - 1))
    return value


CASES = [(name, neg) for name in L.LOSSES for neg in L.NEGATIVES]


def _loss(name, neg):
    return L.make_loss(name, temperature=T, negatives=neg, siglip_t=SIG_T, siglip_b=SIG_B)


@pytest.mark.parametrize("name,neg", CASES)
def test_loss_equals_direct_per_pair_computation(name, neg):
    u, v = _views()
    got = float(L.contrastive_loss(_loss(name, neg), jnp.asarray(u), jnp.asarray(v)))
    assert got == pytest.approx(_direct(name, neg, u, v), rel=2e-5, abs=2e-6)


def test_default_negatives_are_the_papers():
    u, v = _views()
    for name, neg in (("infonce", "cross"), ("simclr", "both"), ("dcl", "both"),
                      ("dhel", "within"), ("siglip", "cross"), ("spectral", "cross")):
        a = L.contrastive_loss(L.make_loss(name, temperature=T, siglip_t=SIG_T, siglip_b=SIG_B), u, v)
        assert float(a) == pytest.approx(_direct(name, neg, u, v), rel=2e-5, abs=2e-6)


def test_vrns_equals_direct_per_pair_computation_and_adds_with_its_weight():
    u, v = _views(m=6, d=4, seed=3)
    n_data = 50
    uu, vv = _unit(u), _unit(v)
    direct = sum((uu[i] @ vv[j] + 1 / (n_data - 1)) ** 2
                 for i in range(6) for j in range(6) if i != j) / 30
    assert float(L.vrns_loss(u, v, n_data)) == pytest.approx(direct, rel=1e-5)
    loss = _loss("simclr", "both")
    both = L.contrastive_loss(loss, u, v, aux_weight=2.5, num_data=n_data)
    assert float(both) == pytest.approx(_direct("simclr", "both", u, v) + 2.5 * direct, rel=2e-5)


@pytest.mark.parametrize("name,neg", [("infonce", "cross"), ("simclr", "both"), ("dcl", "both"),
                                      ("dhel", "within"), ("siglip", "both"), ("spectral", "cross")])
def test_losses_are_invariant_to_permuting_the_batch(name, neg):
    u, v = _views(m=7, d=4, seed=1)
    perm = np.random.default_rng(5).permutation(7)
    loss = _loss(name, neg)
    a = L.contrastive_loss(loss, u, v, aux_weight=1.0, num_data=100)
    b = L.contrastive_loss(loss, u[perm], v[perm], aux_weight=1.0, num_data=100)
    assert float(a) == pytest.approx(float(b), rel=1e-6)
    # ... but not to permuting one view only (that breaks the positive pairs)
    c = L.contrastive_loss(loss, u, v[perm], aux_weight=1.0, num_data=100)
    assert abs(float(c) - float(a)) > 1e-4


def test_losses_are_invariant_to_the_embedding_scale():
    u, v = _views()
    loss = _loss("simclr", "both")
    assert float(L.contrastive_loss(loss, 3 * u, 0.5 * v)) == pytest.approx(
        float(L.contrastive_loss(loss, u, v)), rel=1e-6)


@pytest.mark.parametrize("name,neg", [("simclr", "both"), ("dhel", "within"), ("siglip", "both")])
def test_sharded_loss_and_gradient_equal_single_device(name, neg):
    assert jax.device_count() == 8, "tests/conftest.py sets 8 fake CPU devices"
    mesh = mesh_lib.make_mesh()
    rng = np.random.default_rng(2)
    u = jnp.asarray(rng.normal(size=(16, 6)), jnp.float32)
    v = jnp.asarray(rng.normal(size=(16, 6)), jnp.float32)
    loss = _loss(name, neg)
    f = L.sharded_loss_fn(loss, mesh, aux_weight=3.0, num_data=200)
    u_s = jax.device_put(u, mesh_lib.batch_sharding(mesh))
    v_s = jax.device_put(v, mesh_lib.batch_sharding(mesh))
    single = L.contrastive_loss(loss, u, v, aux_weight=3.0, num_data=200)
    sharded = jax.jit(f)(u_s, v_s)
    assert float(sharded) == pytest.approx(float(single), rel=1e-5)
    g1 = jax.grad(lambda a, b: L.contrastive_loss(loss, a, b, aux_weight=3.0, num_data=200),
                  argnums=(0, 1))(u, v)
    g2 = jax.jit(jax.grad(f, argnums=(0, 1)))(u_s, v_s)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=2e-4, atol=1e-6)


def test_sharded_loss_rejects_a_batch_that_does_not_split():
    f = L.sharded_loss_fn(_loss("simclr", "both"), mesh_lib.make_mesh())
    with pytest.raises(ValueError, match="does not split over the 8 devices"):
        f(jnp.ones((12, 3)), jnp.ones((12, 3)))


def test_similarity_stats_direct():
    u, v = _views(m=4, d=3, seed=7)
    uu, vv = _unit(u), _unit(v)
    st = L.similarity_stats(u, v)
    neg = np.array([uu[i] @ vv[j] for i in range(4) for j in range(4) if i != j])
    within = np.array([a[i] @ a[j] for a in (uu, vv) for i in range(4) for j in range(4) if i != j])
    assert float(st.pos_mean) == pytest.approx(np.mean(np.sum(uu * vv, 1)), rel=1e-5)
    assert float(st.neg_mean) == pytest.approx(neg.mean(), rel=1e-5, abs=1e-7)
    assert float(st.neg_var) == pytest.approx(neg.var(), rel=1e-5)
    assert float(st.within_var) == pytest.approx(within.var(), rel=1e-5)


@pytest.mark.parametrize("u,v,message", [
    (np.ones((1, 3)), np.ones((1, 3)), "at least 2 instances"),
    (np.ones((4, 3)), np.ones((4, 2)), "same shape"),
    (np.ones((4, 3)), np.ones((5, 3)), "same shape"),
    (np.ones(3), np.ones(3), r"\(batch, dim\)"),
    (np.array([[1.0, np.nan], [0.0, 1.0]]), np.ones((2, 2)), "view u contain 1 NaN/Inf"),
    (np.ones((2, 2)), np.array([[np.inf, 0.0], [0.0, 1.0]]), "view v contain 1 NaN/Inf"),
])
def test_bad_input_gets_a_clear_error(u, v, message):
    with pytest.raises(ValueError, match=message):
        L.contrastive_loss(_loss("simclr", "both"), u, v)


def test_bad_loss_settings_get_a_clear_error():
    with pytest.raises(ValueError, match="unknown loss 'nce'"):
        L.make_loss("nce")
    with pytest.raises(ValueError, match="negatives must be one of"):
        L.make_loss("simclr", negatives="all")
    with pytest.raises(ValueError, match="temperature must be > 0"):
        L.make_loss("simclr", temperature=0.0)
    with pytest.raises(ValueError, match="data-set size n"):
        L.contrastive_loss(_loss("simclr", "both"), np.ones((4, 2)), np.ones((4, 2)), aux_weight=1.0)


def test_a_zero_embedding_has_a_finite_gradient():
    # an all-black augmented view gives a zero projection at initialisation (zero biases)
    u = jnp.asarray(np.vstack([np.zeros((1, 3)), _views(m=3)[0]]), jnp.float32)
    v = jnp.asarray(_views(m=4, seed=4)[1], jnp.float32)
    g = jax.grad(lambda a: L.contrastive_loss(_loss("simclr", "both"), a, v))(u)
    assert np.all(np.isfinite(np.asarray(g)))
