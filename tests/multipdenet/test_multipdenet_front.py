"""lib/multipdenet/front.py (tools/bench/multipdenet_front.py) and attractor.py: HCT per IC,
the front's interpolation, spectral resampling, the energy spectrum."""
import math

import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import report
from lib.multipdenet import attractor, front, metrics
from lib.pde import navier_stokes


def test_front_hct_equals_the_metrics_hct_per_ic():
    rng = np.random.RandomState(0)
    truth = rng.randn(3, 6, 8, 8, 2).astype(np.float32)
    noise = np.linspace(0.0, 2.0, 6)[None, :, None, None, None] * np.asarray([1, 2, 4])[:, None, None, None, None]
    pred = truth + noise * rng.randn(*truth.shape).astype(np.float32)
    got = front.hcts(pred, truth, 0.1, 0.8)
    for i in range(3):
        corr = metrics.correlation_per_step(jnp.asarray(pred[i]), jnp.asarray(truth[i]))
        assert got[i] == pytest.approx(float(metrics.high_correlation_time(corr, 0.1, 0.8)))
    assert got[0] > got[2]  # more noise, shorter HCT
    w_pred, w_truth = front.vorticity(pred, 2 * math.pi), front.vorticity(truth, 2 * math.pi)
    assert w_pred.shape == (3, 6, 8, 8)
    np.testing.assert_allclose(w_truth[1, 2], navier_stokes.velocity_to_vorticity(
        jnp.moveaxis(jnp.asarray(truth[1, 2]), -1, 0), 2 * math.pi), atol=1e-5)


def test_interpolation_on_a_known_monotone_front():
    points = [{"cost": 1.0, "hct": 1.0}, {"cost": 100.0, "hct": 5.0}, {"cost": 10.0, "hct": 3.0},
              {"cost": 50.0, "hct": 2.0}]  # dominated: cheaper 10.0 has HCT 3
    f = front.pareto(points)
    assert [p["cost"] for p in f] == [1.0, 10.0, 100.0]
    assert front.hct_at(f, math.sqrt(10.0)) == pytest.approx(2.0)  # halfway in log cost
    assert front.hct_at(f, 10.0) == pytest.approx(3.0)
    assert front.hct_at(f, 0.5) is None and front.hct_at(f, 200.0) == 5.0  # affords the last
    assert front.cost_at(f, 4.0) == pytest.approx(math.sqrt(1000.0))
    assert front.cost_at(f, 6.0) is None
    h = front.headline({"cost": 10.0, "hct": 4.5}, f, dns_cost=1000.0)
    assert h["hct_over_front_at_equal_wall"] == pytest.approx(1.5)
    assert h["wall_ratio_at_equal_hct"] == pytest.approx(10 ** 1.75 / 10.0)
    assert h["speedup_vs_fine_dns"] == pytest.approx(100.0)


def test_targets_read_the_best_learned_point_against_the_bounds():
    def pt(name, ratio):     # settled wherever it has a ratio: every round and the interval at it
        settled = {} if ratio is None else {"hct_over_front_rounds": [ratio], "ratio_interval": [ratio, ratio]}
        return {"name": name, "family": "learned", "headline": {"hct_over_front_at_equal_wall": ratio, **settled}}
    t = front.targets([pt("a", 0.8), pt("b", 1.2), pt("c", None), {"name": "spectral 64²"}])
    assert t["floor"]["met"] and not t["moonshot"]["met"]
    assert t["floor"]["best_point"] == "b" and t["floor"]["best_hct_over_front"] == 1.2
    assert [r["bound"] for _, r in report.walk_targets(t)] == [1.5, 1.0]
    assert front.targets([pt("a", 1.5)])["moonshot"]["met"]           # the bound itself meets it
    none = front.targets([pt("c", None)])                              # no point in the front's range
    assert not none["floor"]["met"] and none["floor"]["best_point"] is None


def test_paired_difference_interpolates_the_front_ic_by_ic():
    f = [{"cost": 1.0, "hct_per_ic": [1.0, 2.0, 3.0]}, {"cost": 100.0, "hct_per_ic": [3.0, 2.0, 5.0]}]
    got = front.paired({"cost": 10.0, "hct_per_ic": [2.5, 1.0, 4.0]}, f)   # halfway in log cost
    d = np.asarray([0.5, -1.0, 0.0])                                      # against [2, 2, 4]
    assert got["paired_diff"] == pytest.approx(d.mean())
    assert got["paired_se"] == pytest.approx(d.std(ddof=1) / math.sqrt(3))
    assert got["ics_above"] == 1
    beyond = front.paired({"cost": 500.0, "hct_per_ic": [3.0, 3.0, 5.0]}, f)   # the last point's
    assert beyond["paired_diff"] == pytest.approx(1 / 3) and beyond["ics_above"] == 1
    assert front.paired({"cost": 0.5, "hct_per_ic": [1.0, 1.0, 1.0]}, f) == {}


def test_points_of_two_fronts_are_paired_ic_by_ic_and_refused_on_other_ics():
    def result(datasets, *points):
        return {"dataset": datasets, "n_ics": 3, "points": [
            {"name": f"multipdenet ({run})", "workdir": f"/x/{run}/", "hct": float(np.mean(h)), "hct_per_ic": h}
            for run, h in points]}
    ds = ["/a/data/navier_stokes_1", "/a/data/navier_stokes_2"]
    new = result(ds, ("m_large", [3.0, 2.0, 5.0]))
    old = result([d.replace("/a/", "/b/") for d in ds], ("m", [2.0, 2.0, 4.0]))   # same ICs elsewhere
    row, = front.paired_points(new, old, [("m_large", "multipdenet (m)")])   # basename or name
    d = np.asarray([1.0, 0.0, 1.0])
    assert row["paired_diff"] == pytest.approx(d.mean()) and row["ics_above"] == 2 and row["n_ics"] == 3
    assert row["paired_se"] == pytest.approx(d.std(ddof=1) / math.sqrt(3))
    assert row["ratio_interval"][0] <= 10 / 8 <= row["ratio_interval"][1]
    assert "| multipdenet (m_large) | 3.33 | multipdenet (m) | 2.67 | +0.67 ± 0.33 (2 of 3) | 1.250 [" in (
        front.paired_table([row], "old.json"))
    with pytest.raises(ValueError, match="different test ICs"):
        front.paired_points(new, result(ds[:1], ("m", [2.0, 2.0, 4.0])), [("m_large", "m")])
    with pytest.raises(ValueError, match=r"no point 'm_lrage'; the learned points are \['m_large'\]"):
        front.paired_points(new, old, [("m_lrage", "m")])


def test_round_ratios_price_each_round_by_its_own_calls():
    def pt(name, family, cost, hct, times):
        return {"name": name, "family": family, "cost": cost, "hct": hct, "times": times}
    a, b = pt("s32", "spectral", 1.0, 2.0, [1, 1, 2]), pt("s64", "spectral", 100.0, 6.0, [5, 5, 10])
    m = pt("m", "learned", 10.0, 4.8, [2, 4, 4])                         # median call 4 s
    dns = pt("dns", "dns", 1e4, float("nan"), [1, 1, 1])                 # never on the front
    r = front.round_ratios([a, b, m, dns])["m"]
    # round 0: the model's call is half its median (cost 5), the front's points at their medians
    assert r[0] == pytest.approx(4.8 / front.hct_at([a, b], 5.0))
    assert r[1] == pytest.approx(4.8 / 4.0)                              # all at their medians
    # round 2: the whole machine twice as slow for the classical points, the model at its
    # median: the same as pricing it at half its cost against the medians
    assert r[2] == pytest.approx(4.8 / front.hct_at([a, b], 5.0))
    slow = [dict(p, times=[t * 3 for t in p["times"]]) for p in (a, b, m)]   # a uniform slowdown
    assert front.round_ratios(slow)["m"] == pytest.approx(r)
    cheap = pt("cheap", "learned", 0.5, 1.0, [1, 1, 1])                  # below the front: no ratio
    assert front.round_ratios([a, b, cheap])["cheap"] == []


def test_round_intervals_cover_every_rounds_front_near_a_steep_segment():
    """Two classical points a hair apart in cost with very different HCTs: a learned point
    priced between them in one round and above both in another. Its interval at each round's
    prices is the paired bootstrap interval against that round's front; the union spans both."""
    def pt(name, family, cost, hcts, times):
        return {"name": name, "family": family, "cost": cost, "hct": float(np.mean(hcts)),
                "hct_per_ic": hcts, "times": times}
    low = pt("low", "spectral", 1.00, [4.0, 4.2, 3.8, 4.0], [1, 1, 1])
    high = pt("high", "fd4_tuned", 1.02, [5.0, 5.3, 4.9, 5.2], [1, 1, 1])
    times = [1.03 / 1.01, 1, 1.005 / 1.01]          # priced above high, between, just above low
    m = pt("m", "learned", 1.01, [5.1, 5.2, 5.0, 5.3], times)
    iv = front.round_intervals([low, high, m])["m"]
    per_round = [front.paired(dict(m, cost=1.01 * t), front.pareto([low, high]))["ratio_interval"]
                 for t in times]
    assert iv == pytest.approx([min(r[0] for r in per_round), max(r[1] for r in per_round)])
    assert iv[0] < 1.05 and iv[1] > 1.2      # against high alone ~1.02; against low alone ~1.29


def test_targets_settle_only_when_the_rounds_and_the_ic_interval_agree():
    def pt(ratio, rounds, interval=None):
        return {"name": "m", "family": "learned",
                "headline": {"hct_over_front_at_equal_wall": ratio, "hct_over_front_rounds": rounds,
                             **({"ratio_interval": interval} if interval else {})}}
    t = front.targets([pt(1.02, [0.95, 1.02, 1.01], [0.97, 1.08])])
    assert not t["floor"]["met"] and not t["floor"]["settled"]         # above at the medians, not settled
    assert (t["floor"]["rounds_min"], t["floor"]["rounds_max"]) == (0.95, 1.02)
    assert t["moonshot"]["settled"] and not t["moonshot"]["met"]          # all under 1.5
    assert front.targets([pt(1.1, [1.05, 1.2], [1.02, 1.2])])["floor"]["settled"]
    assert front.targets([pt(1.1, [1.05, 1.2], [1.02, 1.2])])["floor"]["met"]
    with_rounds = pt(1.1, [1.05, 1.2], [1.02, 1.2])
    with_rounds["headline"]["ratio_interval_rounds"] = [0.99, 1.25]    # one round's prices reach below
    assert not front.targets([with_rounds])["floor"]["settled"] and not front.targets([with_rounds])["floor"]["met"]
    assert not front.targets([pt(1.1, [1.05, 1.2], [0.98, 1.2])])["floor"]["settled"]   # interval straddles
    assert not front.targets([pt(1.1, [1.05, 1.2])])["floor"]["settled"]   # no interval: never settled
    assert "settled" not in front.targets([pt(1.1, [])])["floor"]          # no rounds stored


def test_bootstrap_ratio_is_exact_for_proportional_hcts_and_pairs_the_ics():
    b = np.array([2.0, 4.0, 6.0, 8.0])
    assert front.bootstrap_ratio(2 * b, b) == pytest.approx([2.0, 2.0])
    # paired: IC difficulty varies a lot but the ratio per IC is 1.1 ± 0.01, so the interval is
    # narrow; unpaired resampling would spread it over the difficulty
    rng = np.random.default_rng(1)
    b = rng.uniform(2, 9, 30)
    a = b * rng.normal(1.1, 0.01, 30)
    lo, hi = front.bootstrap_ratio(a, b)
    assert 1.09 < lo < a.mean() / b.mean() < hi < 1.11
    p = front.paired({"cost": 2.0, "hct_per_ic": list(a)}, [{"cost": 1.0, "hct_per_ic": list(b)},
                                                             {"cost": 4.0, "hct_per_ic": list(b)}])
    assert p["ratio_interval"] == pytest.approx([lo, hi])


def test_a_model_with_a_coarser_step_is_compared_at_its_own_frames():
    """A learned point whose ΔT is 2 truth frames: its k // 2 steps are compared with truth
    frames 2, 4, ... (a rollout equal to those frames holds its correlation to the horizon;
    one a frame early does not), and the HCT is counted in its ΔT."""
    rng = np.random.RandomState(1)
    truth = rng.randn(2, 9, 8, 8, 2).astype(np.float32)   # independent frames
    meta = {"frame_dt": 0.1, "length": 2 * math.pi}
    exact = lambda p, u0, k: jnp.swapaxes(jnp.asarray(truth[:, 2:2 * (k // 2) + 1:2]), 0, 1)  # noqa: E731
    early = lambda p, u0, k: jnp.swapaxes(jnp.asarray(truth[:, 1:2 * (k // 2):2]), 0, 1)  # noqa: E731
    got = front.rollout_accuracy(exact, {}, truth[:, 0], truth[:, 1:], meta, "velocity", every=2)
    assert got["hct_per_ic"] == pytest.approx([0.8, 0.8]) and got["horizon"] == pytest.approx(0.8)
    want = front.hcts(np.asarray(truth[:, 1:8:2]), truth[:, 2::2], 0.2, 0.8)
    lag = front.rollout_accuracy(early, {}, truth[:, 0], truth[:, 1:], meta, "velocity", every=2)
    assert lag["hct_per_ic"] == pytest.approx(want.tolist()) and max(want) < 0.8


def test_learned_rollout_maps_truth_frames_to_model_steps_both_ways():
    from types import SimpleNamespace
    steps = lambda p, u0, k: jnp.arange(1.0, k + 1)          # noqa: E731  (step i -> value i)
    run = lambda dt, pde="navier_stokes": SimpleNamespace(    # noqa: E731
        data={"metadata": {"frame_dt": dt, "pde": pde}}, emulator=SimpleNamespace(rollout=steps))
    meta = {"frame_dt": 0.1, "pde": "navier_stokes"}
    fn, every = front.learned_rollout(run(0.2), meta)          # ΔT = 2 truth frames
    assert every == 2 and fn({}, None, 8).tolist() == [1, 2, 3, 4]
    fn, every = front.learned_rollout(run(0.05), meta)         # 2 model steps per truth frame
    assert every == 1 and fn({}, None, 3).tolist() == [2, 4, 6]
    fn, every = front.learned_rollout(run(0.04), meta)         # 5 model steps = 2 truth frames
    assert every == 2 and fn({}, None, 4).tolist() == [5, 10]
    fn, every = front.learned_rollout(run(0.15), meta)         # 2 model steps = 3 truth frames
    assert every == 3 and fn({}, None, 6).tolist() == [2, 4]
    with pytest.raises(ValueError, match="ΔT = 0.07 cannot be compared"):
        front.learned_rollout(run(0.07), meta)
    with pytest.raises(ValueError, match="a burgers model"):
        front.learned_rollout(run(0.1, "burgers"), meta)


def test_resample_is_exact_on_band_limited_fields_and_refuses_upsampling():
    n, m = 32, 12
    x = np.arange(n) * 2 * np.pi / n
    xm = np.arange(m) * 2 * np.pi / m
    field = lambda g: np.stack([np.sin(g[0]) + np.cos(3 * g[1]), np.sin(2 * g[0] + g[1])], -1)  # noqa: E731
    got = front.resample(field(np.meshgrid(x, x, indexing="ij")), m)
    np.testing.assert_allclose(got, field(np.meshgrid(xm, xm, indexing="ij")), atol=1e-12)
    with pytest.raises(ValueError, match="finer"):
        front.resample(got, 16)


def test_energy_spectrum_sums_to_the_kinetic_energy_and_stationarity():
    import jax
    omega = np.asarray(navier_stokes.random_initial_state(jax.random.key(1), 32))[0]
    u = np.asarray(navier_stokes.vorticity_to_velocity(omega, 2 * math.pi))
    e = attractor.energy_spectrum(omega, 2 * math.pi)
    assert e.shape == (16,) and e.sum() == pytest.approx(0.5 * (u**2).sum(0).mean(), rel=1e-5)
    assert e[0] == pytest.approx(0.0, abs=1e-12) and np.argmax(e) == 4  # peak wavenumber 4
    decay = np.exp(-np.arange(20.0))[:, None, None] + np.ones((20, 2, 5))
    d = attractor.stationarity(decay, window=1)
    assert d[0] > d[5] > d[15] >= 0
    assert attractor.settled_time(np.arange(20.0), d, 0.01) == pytest.approx(5.0)


def test_error_ratio_rounds_price_the_statistics_front_by_each_round():
    """Spectrum errors 0.2 (cheap) and 0.05 (a hair dearer): a learned row at 0.04 priced
    between them in one round reads against the cheap point's side of the segment, priced above
    both in another against 0.05; a uniform slowdown of every row changes nothing."""
    def row(name, family, cost, err):
        return {"name": name, "family": family, "cost": cost, "spectrum_error": err}
    rows = [row("cheap", "spectral", 1.00, 0.2), row("dear", "fd4_tuned", 1.02, 0.05),
            row("blown", "fd4_rk4", 0.5, math.inf), row("m", "learned", 1.01, 0.04),
            row("nan", "learned", 1.01, math.inf)]
    times = {"cheap": [1, 1, 1], "dear": [1, 1, 1], "m": [1.03 / 1.01, 1, 1.005 / 1.01]}
    r = front.error_ratio_rounds(rows, times)
    assert r["nan"] == [] and r["m"][0] == pytest.approx(0.04 / 0.05)      # priced above both
    fr = front.error_front(rows)
    assert [p["name"] for p in fr] == ["cheap", "dear"]                      # the infinite one is off
    for k, cost in ((1, 1.01), (2, 1.005)):
        assert r["m"][k] == pytest.approx(0.04 / math.exp(-front.hct_at(fr, cost, "score")))
    assert r["m"][0] > r["m"][1] > r["m"][2]                                # the cheaper, the steeper
    slow = {n: [t * 2 for t in ts] for n, ts in times.items()}
    assert front.error_ratio_rounds(rows, slow)["m"] == pytest.approx(r["m"])
