"""The CADES scores against scipy's KDE, the baselines against scipy's KS, rescaling of
marked sequences."""
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from lib.cades import baselines, evaluation, scores
from lib.tpp import rescale
from lib.tpp.events import from_lists, trim

RNG = np.random.default_rng(0)
SEQS = [np.sort(RNG.uniform(0, 20, size=n)) for n in (1, 2, 7, 30)] + [np.array([3.0, 3.0, 3.0])]


def _rescaled(seqs, t_max=20.0):
    ev = from_lists(seqs, None, t_max)
    return rescale.concatenate_marks(ev.times, ev.t_max[:, None], ev), ev


def _scipy_kl_arr(u, h):
    g = np.linspace(0, 1, 100)
    if len(u) < 2 or np.std(u) == 0:
        p = stats.norm.pdf(g[:, None], u[None], h).mean(1)
    else:
        p = stats.gaussian_kde(u, bw_method=h)(g)
    return np.trapezoid(-np.log(np.maximum(p, 1e-10)), g)


def _scipy_kl_int(w, h):
    g = np.linspace(0, 2 * w.max(), 100)
    p = stats.gaussian_kde(w, bw_method=h)(g)
    return -1 - np.trapezoid(np.exp(-g) * np.log(np.maximum(p, 1e-10)), g)


@pytest.mark.parametrize("h_arr,h_int", [(0.1, 1.0), (0.005, 0.05)])
def test_kl_scores_match_scipy_gaussian_kde(h_arr, h_int):
    r, _ = _rescaled(SEQS)
    got_arr = np.asarray(scores.kl_arr(r, h_arr))
    got_int = np.asarray(scores.kl_int(r, h_int))
    for i, t in enumerate(SEQS):
        np.testing.assert_allclose(got_arr[i], _scipy_kl_arr(t / 20.0, h_arr), rtol=2e-4, atol=2e-4)
        w = np.diff(np.concatenate([[0.0], t, [20.0]]))
        if np.std(w) > 0:
            np.testing.assert_allclose(got_int[i], _scipy_kl_int(w, h_int), rtol=2e-4, atol=2e-4)


def _closed_kl_int_equal_gaps(g, h, extra=10.0):
    """−1 − ∫_0^{2g+extra} e^{−x} log N(x; g, h²) dx in closed form (no floor)."""
    b = 2 * g + extra
    e = np.exp(-b)
    i0, i1, i2 = 1 - e, 1 - e * (1 + b), 2 - e * (b * b + 2 * b + 2)   # ∫ x^k e^{−x}, k = 0, 1, 2
    c = -np.log(h * np.sqrt(2 * np.pi))
    return -1 - (c * i0 - (i2 - 2 * g * i1 + g * g * i0) / (2 * h * h))


@pytest.mark.parametrize("g,n", [(1.0, 1), (0.5, 2), (1.5, 4)])
def test_kl_int_of_equal_gaps_integrates_to_2_max_plus_10(g, n):
    # n equal gaps (n = 1: an empty sequence): a fixed-width KDE N(g, h²), range [0, 2g + 10];
    # h large enough that the 1e-10 floor never bites, so the integral has a closed form
    h, L = 8.0, 6
    w = jnp.concatenate([jnp.full((n,), g), jnp.zeros((L - n,))])     # zero padding
    m = jnp.arange(L) < n
    got = float(scores.kl_int_single(w, m, h))
    np.testing.assert_allclose(got, _closed_kl_int_equal_gaps(g, h), atol=1e-2)
    # the range [0, 2g] alone would miss it
    assert abs(got - _closed_kl_int_equal_gaps(g, h, extra=0.0)) > 0.1


def test_kl_int_of_unit_comb_is_the_official_number():
    # 100 unit gaps at h = 0.1: the official code gives 13.26 (10.13 over [0, 2] alone)
    w = jnp.ones(100)
    assert float(scores.kl_int_single(w, jnp.ones(100, bool), 0.1)) == pytest.approx(13.256, abs=2e-3)
    # one gap off by 1e-3 is not degenerate: scipy's KDE over [0, 2 max w]
    w2 = np.ones(100)
    w2[0] = 1.001
    got = float(scores.kl_int_single(jnp.asarray(w2), jnp.ones(100, bool), 0.1))
    np.testing.assert_allclose(got, _scipy_kl_int(w2, 0.1), rtol=2e-4, atol=2e-4)


def test_kl_arr_shrinks_for_uniform_samples_and_grows_for_clustered_ones():
    u = [np.sort(RNG.uniform(0, 1, size=n)) for n in (50, 2000)]
    r, _ = _rescaled([x * 20 for x in u])
    small = np.asarray(scores.kl_arr(r, 0.1))
    # what remains at large n is the Gaussian kernel's mass lost over the edges of [0, 1]
    assert small[1] < small[0] and small[1] < 0.04
    assert float(scores.kl_arr(r, 0.02)[1]) < small[1]          # less edge loss
    clustered = np.sort(RNG.uniform(0, 0.3, size=2000)) * 20
    r2, _ = _rescaled([clustered])
    assert float(scores.kl_arr(r2, 0.1)[0]) > 0.5


def test_ks_and_3s_match_their_definitions():
    r, _ = _rescaled(SEQS[:4])
    ks_a = np.asarray(baselines.ks_arrival(r))
    ks_i = np.asarray(baselines.ks_interevent(r))
    s3 = np.asarray(baselines.sss(r))
    for i, t in enumerate(SEQS[:4]):
        u = t / 20.0
        np.testing.assert_allclose(ks_a[i], stats.kstest(u, "uniform").statistic * np.sqrt(len(u)),
                                   rtol=1e-5)
        w = np.diff(np.concatenate([[0.0], t, [20.0]]))
        np.testing.assert_allclose(ks_i[i], stats.kstest(w, "expon").statistic * np.sqrt(len(w)),
                                   rtol=1e-4)
        np.testing.assert_allclose(s3[i], np.sum(w ** 2) / 20.0, rtol=1e-5)


def test_marked_rescaling_concatenates_per_mark_compensators():
    ev = from_lists([[1.0, 2.0, 4.0, 5.0]], [[1, 0, 1, 0]], 6.0, num_marks=2)
    at = jnp.array([[0.5, 2.0, 2.0, 5.0]])                 # Λ_{m_i}(t_i)
    total = jnp.array([[6.0, 3.0]])                         # Λ_0(T), Λ_1(T)
    r = rescale.concatenate_marks(at, total, ev)
    # mark 0 keeps its values (2, 5); mark 1 is shifted by Λ_0(T) = 6 -> (6.5, 8)
    np.testing.assert_allclose(np.asarray(r.tau[0]), [2.0, 5.0, 6.5, 8.0])
    assert float(r.V[0]) == 9.0
    w, m = rescale.gaps(r)
    np.testing.assert_allclose(np.asarray(w[0])[np.asarray(m[0])], [2.0, 3.0, 1.5, 1.5, 1.0])


def test_make_scorer_is_chunk_invariant():
    ev = from_lists(SEQS[:4] * 3, None, 20.0)
    comp = lambda e: (e.times * jnp.where(e.mask, 1.0, 0.0), e.t_max[:, None])
    stats_ = baselines.statistic_fns(baselines.STATISTICS, 0.1, 1.0)
    a = baselines.make_scorer(comp, stats_, chunk=5)(ev)
    b = baselines.make_scorer(comp, stats_, chunk=12)(ev)
    for k in baselines.STATISTICS:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-6)
    with pytest.raises(ValueError, match="unknown statistic"):
        baselines.statistic_fns(("kl_arr", "energy"), 0.1, 1.0)   # chi2 is known since issue 35


def test_scorer_gives_the_same_statistics_from_host_arrays_and_with_more_padding_slots():
    """The evaluation hands the scorer NumPy events (`evaluation.on_host`) trimmed to a
    multiple of 64 slots: the same statistics as the JAX arrays with every slot kept."""
    ev = from_lists(SEQS, None, 20.0)                                   # 5 sequences, 30 slots
    comp = lambda e: (e.times * jnp.where(e.mask, 1.0, 0.0), e.t_max[:, None])
    score = baselines.make_scorer(comp, baselines.statistic_fns(baselines.STATISTICS, 0.1, 1.0),
                                  chunk=4)                               # 2 chunks, one padded
    host = evaluation.on_host(ev)
    assert all(isinstance(a, np.ndarray) for a in host)
    wide = type(ev)(*(np.pad(a, [(0, 0), (0, 98)]) for a in host[:3]), host.t_max)  # 128 slots
    trimmed = trim(wide)
    assert trimmed.times.shape == (5, 64) and isinstance(trimmed.times, np.ndarray)
    want = score(ev)
    for got in (score(host), score(trimmed), score(wide)):
        for k in baselines.STATISTICS:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6, err_msg=k)
