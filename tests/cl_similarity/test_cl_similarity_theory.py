"""Closed forms of §5 against constructions, brute force and freely optimised embeddings."""
import jax
import numpy as np
import pytest

from lib.cl_similarity import free_embeddings as F
from lib.cl_similarity import losses as L
from lib.cl_similarity import theory as T


def _etf(n, dim):
    """n unit vectors in R^dim with pairwise cosine −1/(n−1) (centred basis vectors)."""
    x = np.eye(n) - 1.0 / n
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    return np.pad(x, ((0, 0), (0, dim - n)))


def _stats(u, v):
    """(mean positive, mean negative, variance of the negative cosines), numpy float64."""
    u = u / np.linalg.norm(u, axis=1, keepdims=True)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    s = u @ v.T
    neg = s[~np.eye(len(u), dtype=bool)]
    return float(np.mean(np.diag(s))), float(neg.mean()), float(neg.var())


def test_tight_bound_is_attained_by_the_construction_and_implies_the_papers():
    n = 9
    x, z = _etf(n, n + 1), np.eye(n + 1)[n]
    for beta2 in (0.0, 0.1, 0.5, 0.9):
        a, b = np.sqrt(1 - beta2), np.sqrt(beta2)
        p, q, _ = _stats(a * x + b * z, a * x - b * z)
        assert q == pytest.approx(float(T.negative_lower_bound(p, n)), abs=2e-6)
        assert p <= T.paper_alignment_bound(q, n) + 1e-6
    rng = np.random.default_rng(0)
    for _ in range(20):                                     # random embeddings obey both bounds
        u, v = rng.normal(size=(n, 4)), rng.normal(size=(n, 4))
        p, q, _ = _stats(u, v)
        assert q >= T.negative_lower_bound(p, n) - 1e-6
        assert p <= T.paper_alignment_bound(q, n) + 1e-6


def test_cross_only_optimum_minimises_h_on_a_grid_and_matches_eq_10():
    n, t = 16, 10.0
    for b in (-1.0, 0.0, 3.0, 5.0, 9.0):
        opt = T.cross_only_optimum(*T.siglip_derivatives(t, b, n), n)
        grid = np.linspace(-1, 1, 200001)
        h = np.logaddexp(0, -t * grid + b) + (n - 1) * np.logaddexp(
            0, t * T.negative_lower_bound(grid, n) - b)         # h(p) = −ϕ(p) + ψ(B(p))
        assert opt.pos == pytest.approx(grid[np.argmin(h)], abs=2e-5)
        assert (opt.pos < 1.0) == T.siglip_excessive(t, b, n)
        if opt.pos < 1.0:
            assert opt.neg < -1 / (n - 1)                       # Thm 5.3: excessive separation


def test_minibatch_variance_bounds_are_attained_by_their_extreme_optima():
    n, m = 12, 4
    b = n // m
    lo, hi = T.minibatch_variance_bounds(n, m)
    # lower: each batch its own (m−1)-dim ETF, batches in orthogonal subspaces (d ≥ b(m−1))
    blocks = np.zeros((n, b * m))
    for k in range(b):
        blocks[k * m:(k + 1) * m, k * m:(k + 1) * m] = _etf(m, m)
    _, q, var = _stats(blocks, blocks)
    assert q == pytest.approx(-1 / (n - 1), abs=1e-6) and var == pytest.approx(lo, rel=1e-4)
    shared = np.tile(_etf(m, m), (b, 1))                    # upper: every batch the same ETF
    _, q, var = _stats(shared, shared)
    assert q == pytest.approx(-1 / (n - 1), abs=1e-6) and var == pytest.approx(hi, rel=1e-4)


def test_closed_form_argument_errors():
    with pytest.raises(ValueError, match="must be ≥ 2 and divide n"):
        T.minibatch_variance_bounds(10, 3)
    with pytest.raises(ValueError, match="needs d ≥ n"):
        T.spectral_optimum(8, 4)
    with pytest.raises(ValueError, match="n must be ≥ 2"):
        T.etf(1)


@pytest.mark.parametrize("name,neg,kw", [
    ("simclr", "both", {}),
    ("siglip", "cross", dict(siglip_t=10.0, siglip_b=0.0)),    # excessive separation
    ("siglip", "both", dict(siglip_t=10.0, siglip_b=0.0)),     # ... removed by within-view negatives
    ("spectral", "cross", {}),
])
def test_free_embeddings_reach_the_closed_form_optimum(name, neg, kw):
    n, d = 6, 8
    loss = L.make_loss(name, temperature=0.2, negatives=neg, **kw)
    run = F.optimise(F.full_batch_objective(loss), F.init_embeddings(jax.random.key(1), n, d),
                     steps=800, lr=0.05, record_every=50)
    opt = T.optimum(name, neg, n, d, **kw)
    assert float(run.final.pos_mean) == pytest.approx(opt.pos, abs=1e-3)
    assert float(run.final.neg_mean) == pytest.approx(opt.neg, abs=1e-3)
    assert np.all(np.asarray(run.trace_pos)
                  <= T.paper_alignment_bound(np.asarray(run.trace_neg), n) + 1e-5)
