"""lib/tpp: time rescaling with the true compensator, Hawkes likelihood and MLE, Poisson
compensators, the neural TPP's sampler against its own compensator."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, stats

from lib.tpp import hawkes, neural, poisson, rescale
from lib.tpp import simulate as sim
from lib.tpp.events import from_lists, trim

HAWKES_2D = {"mu": jnp.array([0.6, 0.3]), "alpha": jnp.array([[0.3, 0.2], [0.4, 0.1]]),
             "beta": jnp.array([[1.5, 1.0], [2.0, 1.2]])}


def _gaps(r):
    w, m = rescale.gaps(r)
    return np.asarray(w)[np.asarray(m)]


def test_rescaled_hawkes_with_true_compensator_gives_exp1_gaps():
    ev = sim.batch(lambda k: hawkes.simulate(k, HAWKES_2D, 50.0, 256), jax.random.key(0), 64)
    r = rescale.rescale(lambda e: hawkes.compensator(HAWKES_2D, e), ev)
    g = _gaps(r)
    assert g.size > 2000
    assert stats.kstest(g, "expon").pvalue > 0.01
    # a wrong compensator (twice the excitation) is rejected by the same test
    wrong = dict(HAWKES_2D, alpha=2 * HAWKES_2D["alpha"])
    assert stats.kstest(_gaps(rescale.rescale(lambda e: hawkes.compensator(wrong, e), ev)),
                        "expon").pvalue < 1e-6


def test_hawkes_likelihood_and_compensator_match_the_direct_sums():
    times = np.array([0.2, 0.9, 1.0, 2.5, 3.1]); marks = np.array([0, 1, 0, 0, 1]); T = 4.0
    ev = from_lists([times], [marks], T, num_marks=2, max_len=8)
    mu, a, b = (np.asarray(HAWKES_2D[k], np.float64) for k in ("mu", "alpha", "beta"))

    def lam(k, t):
        past = times < t
        return mu[k] + np.sum(a[k, marks[past]] * b[k, marks[past]] *
                              np.exp(-b[k, marks[past]] * (t - times[past])))

    def cum(k, t):
        past = times < t
        return mu[k] * t + np.sum(a[k, marks[past]] * (1 - np.exp(-b[k, marks[past]] * (t - times[past]))))

    ll = sum(np.log(lam(m, t)) for t, m in zip(times, marks)) - cum(0, T) - cum(1, T)
    np.testing.assert_allclose(float(hawkes.log_likelihood(HAWKES_2D, ev)[0]), ll, rtol=1e-5)
    at, total = hawkes.compensator(HAWKES_2D, ev)
    np.testing.assert_allclose(np.asarray(at[0, :5]), [cum(m, t) for t, m in zip(times, marks)],
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(total[0]), [cum(0, T), cum(1, T)], rtol=1e-5)


def test_hawkes_mle_recovers_known_parameters():
    true = {"mu": jnp.array([0.5]), "alpha": jnp.array([[0.6]]), "beta": jnp.array([[2.0]])}
    ev = trim(sim.batch(lambda k: hawkes.simulate(k, true, 100.0, 512), jax.random.key(1), 120))
    fit, losses = hawkes.fit_mle(ev, 1, num_steps=250, lr=0.05)
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(float(fit["mu"][0]), 0.5, rtol=0.12)
    np.testing.assert_allclose(float(fit["alpha"][0, 0]), 0.6, rtol=0.12)
    np.testing.assert_allclose(float(fit["beta"][0, 0]), 2.0, rtol=0.25)


@pytest.mark.parametrize("family,params", [
    ("sinusoidal", {"base": jnp.array([1.0, 0.5]), "amplitude": jnp.array([0.8, 0.2]),
                    "period": jnp.float32(7.0)}),
    ("piecewise", {"breaks": jnp.array([2.0, 5.0]), "rates": jnp.array([[1.0, 0.1], [0.0, 2.0],
                                                                         [3.0, 0.5]])}),
])
def test_poisson_compensator_is_the_integral_of_the_intensity(family, params):
    for t in (0.7, 3.3, 9.1):
        num = [integrate.quad(lambda s: float(poisson.intensity(family, params, s)[k]), 0, t,
                              limit=200, points=[2.0, 5.0])[0] for k in range(2)]
        np.testing.assert_allclose(np.asarray(poisson.cumulative(family, params, t)), num,
                                   rtol=1e-4, atol=1e-5)


def test_inhomogeneous_poisson_thinning_rescales_to_exp1():
    p = {"base": jnp.array([1.0]), "amplitude": jnp.array([0.9]), "period": jnp.float32(10.0)}
    ev = sim.batch(lambda k: poisson.simulate(k, "sinusoidal", p, 40.0, 128), jax.random.key(2), 100)
    g = _gaps(rescale.rescale(lambda e: poisson.compensator("sinusoidal", p, e), ev))
    assert stats.kstest(g, "expon").pvalue > 0.01
    mean_rate = 1.0 + 0.9 * 10 / (2 * np.pi * 40) * (1 - np.cos(2 * np.pi * 4))   # Λ(40) / 40
    np.testing.assert_allclose(poisson.fit_homogeneous(ev, 1)["rate"], mean_rate, rtol=0.05)


def test_neural_tpp_samples_rescale_to_exp1_under_its_own_compensator():
    params = neural.init_params(jax.random.key(3), num_marks=2, hidden=8, mark_dim=4,
                                num_components=3)
    params = jax.tree.map(lambda x: x * 3.0, params)      # a non-trivial history dependence
    norm = (0.0, 1.0)
    ev = sim.batch(lambda k: neural.simulate(k, params, norm, 2, 20.0, 128), jax.random.key(4), 48)
    assert int(ev.counts.sum()) > 300
    r = rescale.rescale(lambda e: neural.compensator(params, e, norm, 2), ev)
    assert stats.kstest(_gaps(r), "expon").pvalue > 0.01
    # the log-likelihood is a proper density: log f + log S terms, finite, and the
    # compensator total equals the sum of the per-interval −log S terms (no negative mass)
    ll = neural.log_likelihood(params, ev, norm, 2)
    assert np.all(np.isfinite(np.asarray(ll)))
    at, total = neural.compensator(params, ev, norm, 2)
    assert np.all(np.asarray(total.sum(-1)) >= np.asarray(at.max(-1)) - 1e-4)
