"""Conformal p-values: uniform under the null, Bonferroni level under dependent scores,
the calibration-conditional ε, and the many-splits FPR routine."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from lib.cades import conformal


def _null_pvals(key, reps, n, m, transform=lambda s: [s]):
    s = jax.random.normal(key, (reps, n + m))
    return s[:, :n], s[:, n:]


def test_one_sided_p_values_are_uniform_over_many_seeds():
    n, m, reps = 19, 1, 20000
    cal, test = _null_pvals(jax.random.key(0), reps, n, m)
    p = np.asarray(jax.vmap(conformal.one_sided_p)(cal, test)).ravel()
    # exactly uniform on {1/20, ..., 20/20}
    counts = np.bincount(np.round(p * (n + 1)).astype(int), minlength=n + 2)[1:]
    assert stats.chisquare(counts).pvalue > 0.001


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_two_sided_p_values_hold_the_level(alpha):
    n, m, reps = 499, 50, 2000
    cal, test = _null_pvals(jax.random.key(1), reps, n, m)
    p = np.asarray(jax.vmap(conformal.two_sided_p)(cal, test))
    per_rep = (p <= alpha).mean(1)
    se = per_rep.std() / np.sqrt(reps)
    assert per_rep.mean() <= alpha + 3 * se
    assert per_rep.mean() >= alpha - 0.012         # not trivially conservative either


@pytest.mark.parametrize("dependence", ["identical", "opposite", "noisy"])
def test_bonferroni_holds_the_level_for_strongly_dependent_scores(dependence):
    n, m, reps, alpha = 399, 40, 2000, 0.1
    k1, k2 = jax.random.split(jax.random.key(2))
    s1 = jax.random.normal(k1, (reps, n + m))
    s2 = {"identical": s1, "opposite": -s1,
          "noisy": s1 + 0.05 * jax.random.normal(k2, s1.shape)}[dependence]
    perms = jnp.tile(jnp.arange(n + m), (1, 1))
    scores = jnp.stack([s1, s2], axis=1)                                # (reps, 2, P)
    fprs = np.asarray(jax.jit(jax.vmap(
        lambda sc: conformal.split_fpr(sc, perms, n, m, [alpha], [0.0])))(scores)).ravel()
    assert fprs.mean() <= alpha + 3 * fprs.std() / np.sqrt(reps)


def _two_sided_reference(cal, test):
    cal, test = np.asarray(cal), np.asarray(test)
    n = len(cal)
    right = ((cal[None, :] >= test[:, None]).sum(1) + 1) / (n + 1)
    left = ((cal[None, :] <= test[:, None]).sum(1) + 1) / (n + 1)
    return np.minimum(np.minimum(2 * right, 2 * left), 1)


def test_split_fpr_and_p_values_match_a_direct_computation():
    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=(2, 60)), 1)              # with ties
    perms = np.stack([rng.permutation(60) for _ in range(4)])
    got = np.asarray(conformal.split_fpr(jnp.asarray(scores), jnp.asarray(perms), 40, 20,
                                         [0.1, 0.3], [0.0, 0.5]))
    for r in range(4):
        cal, test = scores[:, perms[r, :40]], scores[:, perms[r, 40:]]
        p0 = _two_sided_reference(cal[0], test[0])
        np.testing.assert_allclose(np.asarray(conformal.two_sided_p(jnp.asarray(cal[0]),
                                                                    jnp.asarray(test[0]))), p0)
        p = np.minimum(2 * np.minimum(p0, _two_sided_reference(cal[1], test[1])), 1)
        for e, eps in enumerate([0.0, 0.5]):
            for a, alpha in enumerate([0.1, 0.3]):
                assert got[r, e, a] == pytest.approx(np.mean(np.minimum(p * (1 + eps), 1) <= alpha))


def test_calibration_conditional_epsilon_bounds_the_conditional_fpr():
    """Uniform scores: FPR | D_cal of each two-sided test is an exact function of the order
    statistics; with ε from `conditional_epsilon`, P(FPR | D_cal > α) <= δ."""
    n, alpha, delta, reps = 1000, 0.1, 0.1, 4000
    eps = conformal.conditional_epsilon(n, alpha, delta)
    assert eps > 0
    k = int(np.floor(alpha * (n + 1) / (4 * (1 + eps))))
    cal = np.sort(np.asarray(jax.random.uniform(jax.random.key(4), (reps, 2, n))), axis=-1)
    # test rejects score s iff it is below the k-th smallest or above the k-th largest
    cond = cal[..., k - 1] + (1 - cal[..., n - k])                      # (reps, 2)
    union_bound = cond.sum(-1)
    assert np.mean(union_bound > alpha) <= delta
    # without the correction the conditional FPR exceeds α far more often
    k0 = int(np.floor(alpha * (n + 1) / 4))
    cond0 = (cal[..., k0 - 1] + (1 - cal[..., n - k0])).sum(-1)
    assert np.mean(cond0 > alpha) > 2 * delta
    with pytest.raises(ValueError, match="too few"):
        conformal.conditional_epsilon(50, 0.01, 0.1)
    assert conformal.conditional_epsilon(50, 0.01, 0.1, strict=False) == float("inf")
