"""The official code's families (comb `uniform_official`, capped `inhomogeneous_official`),
the fast Hawkes sampler, the χ² and MultiAD-Q± baselines, and the re-stated target."""
import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from lib.cades import baselines, official, report, scenarios
from lib.tpp import hawkes, rescale
from lib.tpp.events import from_lists


@pytest.mark.parametrize("eta", [0.0, 0.05, 0.25, 0.5, 0.95])
def test_comb_event_times_equal_the_closed_form(eta):
    scen = scenarios.make("uniform_official", 100.0, 128)
    ev = scen.sample_ood(jax.random.key(0), 3, eta)
    step = 1.0 + 2.0 * eta
    k_max = int(np.ceil(100.0 / step)) - 1              # k(1 + 2η) < 100, k >= 1
    want = step * np.arange(1, k_max + 1)
    for row in range(3):                                 # deterministic: every row the same
        got = np.asarray(ev.times[row])[np.asarray(ev.mask[row])]
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(want) == (99 if eta == 0.0 else len(want))


def test_comb_that_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="did not fit in 64 slots"):
        scenarios.make("uniform_official", 100.0, 64).sample_ood(jax.random.key(0), 2, 0.0)


def test_capped_intensity_never_exceeds_two_and_equals_the_current_family_up_to_half():
    t = jnp.linspace(0.0, 100.0, 2001)
    for eta in np.linspace(0.0, 1.0, 21):
        capped = np.asarray(scenarios.inhomogeneous_intensity(t, eta, cap=2.0))
        current = np.asarray(scenarios.inhomogeneous_intensity(t, eta))
        assert capped.max() <= 2.0 and capped.min() >= 0.0
        if eta <= 0.5:
            np.testing.assert_array_equal(capped, current)
        else:
            assert current.max() > 2.0 and (capped < current).any()


def test_capped_family_samples_its_capped_intensity():
    """Mean count at η = 1 matches ∫ clip(1 + 2 sin(2πt/50), 0, 2) dt, not the uncapped integral."""
    t = np.linspace(0.0, 100.0, 200001)
    lam = 1 + 2 * np.sin(2 * np.pi * t / 50)
    want, uncapped = np.trapezoid(np.clip(lam, 0, 2), t), np.trapezoid(np.maximum(lam, 0), t)
    ev = scenarios.make("inhomogeneous_official", 100.0, 256).sample_ood(jax.random.key(4), 2000, 1.0)
    counts = np.asarray(ev.mask.sum(-1))
    assert abs(counts.mean() - want) < 3 * counts.std() / np.sqrt(len(counts))
    assert uncapped - want > 10 * counts.std() / np.sqrt(len(counts))


@pytest.mark.parametrize("params,t_max", [
    ({"mu": jnp.array([0.2]), "alpha": jnp.array([[0.8]]), "beta": jnp.ones((1, 1))}, 100.0),
    (dict(scenarios.SERVER_ID), 10.0)])
def test_fast_hawkes_sampler_draws_the_same_sequences(params, t_max):
    keys = jax.random.split(jax.random.key(7), 40)
    a, ok_a = jax.vmap(lambda k: hawkes.simulate(k, params, t_max, 256))(keys)
    b, ok_b = jax.vmap(lambda k: scenarios.hawkes_ogata(k, params, t_max, 256))(keys)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    np.testing.assert_array_equal(np.asarray(ok_a), np.asarray(ok_b))
    assert int(a.mask.sum()) > 100


def _rescaled(seqs, t_max):
    ev = from_lists(seqs, None, t_max)
    return rescale.concatenate_marks(ev.times, ev.t_max[:, None], ev)


def _empty(V):
    """A rescaled batch of one sequence without events on [0, V]."""
    return rescale.Rescaled(jnp.full((1, 8), V), jnp.zeros((1, 8), bool), jnp.array([V]))


def test_chi_squared_matches_scipy_on_a_hand_bucketed_case():
    # 10 buckets of width 2 on (0, 20]: counts (1, 2, 0, ..., 0, 1), N = 4
    r = _rescaled([[1.0, 3.0, 3.5, 19.0], [5.0]], 20.0)
    counts = np.array([1, 2, 0, 0, 0, 0, 0, 0, 0, 1])
    want = stats.chisquare(counts)
    got = np.asarray(baselines.chi_squared(r, count_end=False))
    np.testing.assert_allclose(got[0], want.statistic, rtol=1e-6)
    np.testing.assert_allclose(stats.chi2.sf(got[0], 9), want.pvalue, rtol=1e-5)
    # the official code also counts the window end V in the last bucket
    with_end = counts + np.eye(10, dtype=int)[-1]
    np.testing.assert_allclose(np.asarray(baselines.chi_squared(r))[0],
                               ((with_end - 0.4) ** 2 / 0.4).sum(), rtol=1e-6)
    np.testing.assert_allclose(got[1], 9.0, rtol=1e-6)       # one event: (1 − .1)²/.1 + 9 × .1
    assert float(baselines.chi_squared(_empty(20.0))[0]) == 0.0


def test_chi_squared_p_values_are_uniform_under_the_null():
    key = jax.random.key(11)
    ev = scenarios.make("hawkes", 100.0, 256).sample_id(key, 3000)
    r = rescale.concatenate_marks(*scenarios.standard_poisson_compensator(ev), ev)
    p = stats.chi2.sf(np.asarray(baselines.chi_squared(r, count_end=False)), 9)
    for q in (0.05, 0.25, 0.5, 0.75):
        assert abs((p <= q).mean() - q) < 3 * np.sqrt(q * (1 - q) / len(p)) + 0.01


def test_q_plus_and_minus_combine_squares_and_adjacent_products():
    # gaps of [0, 1, 3, 6]: (1, 2, 3); Σw² = 14, Σ w_i w_{i+1} = 1·2 + 2·3 = 8, V = 6
    r = _rescaled([[1.0, 3.0], [2.0]], 6.0)
    qp, qm, s3 = (np.asarray(f(r)) for f in (baselines.q_plus, baselines.q_minus, baselines.sss))
    np.testing.assert_allclose([qp[0], qm[0]], [22 / 6, 6 / 6], rtol=1e-6)
    np.testing.assert_allclose([qp[1], qm[1]], [(20 + 8) / 6, (20 - 8) / 6], rtol=1e-6)  # (2, 4)
    np.testing.assert_allclose(qp + qm, 2 * s3, rtol=1e-6)
    e = _empty(6.0)                                                     # one gap V: V² / V
    np.testing.assert_allclose([float(baselines.q_plus(e)[0]), float(baselines.q_minus(e)[0])],
                               [6.0, 6.0], rtol=1e-6)


def _family(cades_gap, best="q_plus"):
    base = np.array([[0.5, 0.8, 0.9], [0.5, 0.82, 0.92]])
    auroc = {m: (base - 0.05).tolist() for m in report.METHODS}
    auroc[best] = base.tolist()
    auroc["cades"] = (base + cades_gap).tolist()
    return {"etas": [0.0, 0.5, 0.9], "auroc": auroc}


def test_restated_target_follows_the_official_plots():
    results = {"parts": {"spp": {"families": {
        "increasing_rate": _family(-0.02),                 # official: Q+ above CADES
        "hawkes": _family(-0.005),                         # official: CADES on top; within 0.01
        "stopping": _family(-0.03, best="sss"),            # official: CADES on top; missed
        "self_correcting": _family(-0.02, best="sss")}}}}  # official: KS arr above, not 3S
    t = report.resummarise(copy.deepcopy(results))["targets"]["official_restated"]
    assert {k: v["met"] for k, v in t["per_family"].items()} == {
        "increasing_rate": True, "hawkes": True, "stopping": False, "self_correcting": False}
    assert t["missed"] == ["self_correcting", "stopping"] and not t["met"]
    text = report.tables(report.resummarise(copy.deepcopy(results)))
    assert "| increasing_rate | below | Q+ | Q+ | -0.020 ± 0.000 | met" in text
    assert "| χ² | Q+ | Q− |" in text
    assert official.restated({"baselines": {}}, "uniform") is None


def test_merge_joins_families_of_parallel_runs_and_refuses_overlap():
    a = {"wall_s": 10.0, "parts": {"spp": {"families": {"hawkes": _family(0.0)}, "wall_s": 9.0}}}
    b = {"wall_s": 5.0, "parts": {"spp": {"families": {"stopping": _family(0.0)}, "wall_s": 4.0}}}
    m = report.merge(a, [b], order=("stopping", "hawkes"))
    assert list(m["parts"]["spp"]["families"]) == ["stopping", "hawkes"]
    assert m["wall_s"] == 15.0 and m["parts"]["spp"]["wall_s"] == 13.0
    assert list(a["parts"]["spp"]["families"]) == ["hawkes"]            # inputs untouched
    with pytest.raises(ValueError, match=r"SPP families \['hawkes'\] are in more than one"):
        report.merge(a, [a])
