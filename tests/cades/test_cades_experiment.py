"""The CADES experiment end to end on the tiny config, the neural TPP on the train loop
(resume), the scenarios, config errors, the API."""
import json
import os

import jax
import numpy as np
import pytest

from experiments.cades import train
from lib.cades import baselines, conformal, scenarios, training
from lib.common import config as config_lib, mesh as mesh_lib, train_loop
from lib.common.config import ConfigError
from lib.tpp import neural, poisson
from tests import experiment_runs

CONFIG = "configs/cades/cades.py:tiny"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG)


def test_tiny_run_writes_results_tables_and_plots(tiny_run):
    workdir, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    assert on_disk["targets"].keys() == results["targets"].keys()
    spp = on_disk["parts"]["spp"]["families"]
    assert set(spp) == {"self_correcting"}
    for fam in spp.values():
        a = np.asarray(fam["auroc"]["cades"])
        assert a.shape == (2, 2) and np.all((a >= 0) & (a <= 1))
    # at η = 0.8 a self-correcting process is far from Poisson: CADES sees it
    assert np.mean(np.asarray(spp["self_correcting"]["auroc"]["cades"])[:, 1]) > 0.8
    mv = on_disk["parts"]["multivariate"]["scenarios"]
    assert set(mv) == {"server_stop/hawkes", "server_stop/neural"}
    fpr = on_disk["parts"]["fpr"]["settings"]
    assert set(fpr) == {"server/hawkes", "server/neural"}
    for r in fpr.values():
        assert r["repetitions"] == 20
        assert all(0 <= f <= 1 for f in r["methods"]["cades"]["fpr"])
    assert on_disk["models"]["server"]["neural"]["steps"] == 10
    assert os.path.exists(os.path.join(workdir, "neural_server", "checkpoints"))
    text = open(os.path.join(workdir, "results.md")).read()
    assert "| self_correcting |" in text and "Empirical FPR" in text and "Targets" in text
    for name in ("auroc_self_correcting.png", "auroc_server_stop_neural.png", "fpr_server_hawkes.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 5000


def test_results_json_is_published_last(tiny_run):
    workdir, results = tiny_run
    last = os.stat(os.path.join(workdir, "results.json")).st_mtime_ns
    for path in [os.path.join(workdir, "results.md")] + results["plots"]:
        assert os.stat(path).st_mtime_ns <= last, path


def test_neural_tpp_trains_on_the_train_loop_and_resumes(tmp_path):
    config = config_lib.load_config(CONFIG)
    scen = scenarios.make("latency", 10.0, 96)
    data = scen.sample_id(jax.random.key(0), 16)
    norm = neural.gap_normaliser(data)
    task = training.make_task(config, data, 2, norm)
    mesh = mesh_lib.make_mesh()
    cfg = train_loop.LoopConfig(num_steps=4, log_every=2, checkpoint_every=2)
    first = train_loop.train(task, cfg, workdir=str(tmp_path), mesh=mesh)
    cfg = train_loop.LoopConfig(num_steps=16, log_every=4, checkpoint_every=8)
    second = train_loop.train(task, cfg, workdir=str(tmp_path), mesh=mesh)
    assert first.step == 4 and second.resumed_from == 4 and second.step == 16
    nll = lambda s: -float(neural.log_likelihood(s["params"], data, norm, 2).sum())
    assert nll(jax.device_get(second.state)) < nll(jax.device_get(first.state))


def test_scenarios_at_zero_detectability_match_the_in_distribution_law():
    scen = scenarios.make("stopping", 100.0, 256)
    ood = scen.sample_ood(jax.random.key(1), 32, 1.0)
    assert float(np.asarray(ood.times)[np.asarray(ood.mask)].max()) <= 70.0
    ida = scen.sample_id(jax.random.key(2), 32)
    assert abs(float(ida.counts.mean()) - 100) < 6
    srv = scenarios.make("server_overload", 20.0, 384)
    id_ev = srv.sample_id(jax.random.key(3), 48)
    same = srv.sample_ood(jax.random.key(4), 48, 0.0)
    hot = srv.sample_ood(jax.random.key(5), 48, 1.0)
    count = lambda ev, k: float((np.asarray(ev.marks == k) & np.asarray(ev.mask)).sum(1).mean())
    assert abs(count(same, 1) - count(id_ev, 1)) < 6         # ≈ 60 each
    assert count(hot, 2) < 0.75 * count(id_ev, 2)             # edge 0 -> 2 removed halfway
    assert count(hot, 1) > 1.25 * count(id_ev, 1)             # edge 0 -> 1 doubled
    with pytest.raises(ValueError, match="detectability"):
        srv.sample_ood(jax.random.key(6), 4, 1.5)


def test_cades_api_fit_calibrate_detect():
    scen = scenarios.make("self_correcting", 50.0, 128)
    fit = lambda ev: (lambda e, p=poisson.fit_homogeneous(ev, 1): poisson.compensator(
        "homogeneous", p, e))
    det = conformal.CADES(fit, baselines.statistic_fns(("kl_arr", "kl_int"), 0.1, 1.0))
    with pytest.raises(ValueError, match="call fit"):
        det.p_values(scen.sample_id(jax.random.key(0), 4))
    det.fit(scen.sample_id(jax.random.key(1), 32)).calibrate(scen.sample_id(jax.random.key(2), 99))
    p = det.p_values(scen.sample_id(jax.random.key(3), 50))
    assert p.shape == (50,) and np.all((p > 0) & (p <= 1))
    assert np.all(det.detect(scen.sample_id(jax.random.key(3), 50), 0.2) == (p <= 0.2))
    with pytest.raises(ValueError, match="alpha"):
        det.detect(scen.sample_id(jax.random.key(3), 5), 0.0)
    # a clearly self-correcting (too regular) process is flagged far more often than ID data
    fast = det.detect(scen.sample_ood(jax.random.key(4), 50, 1.0), 0.2)
    assert fast.mean() > 0.5


@pytest.mark.parametrize("overrides,message", [
    ({"spp.families": ("increasing_rate", "nope")}, r"'spp.families' = .* is not allowed"),
    ({"fpr.block_size": 20}, r"'fpr.block_size' = 20 is not allowed; it must be >= fpr.n_cal"),
    ({"fpr.alphas": (0.1, 0.05)}, r"'fpr.alphas' = \(0.1, 0.05\) is not allowed"),
    ({"neural.batch_size": 64}, r"'neural.batch_size' = 64 is not allowed"),
    ({"spp.etas": (0.0, 0.99)}, r"'spp.etas' = \(0.0, 0.99\) is not allowed"),
    ({"multivariate.max_len": 100}, r"'multivariate.max_len' = 100 is not allowed; expected a multiple of 8"),
])
def test_bad_configs_are_named_before_any_compute(tmp_path, overrides, message):
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), overrides)
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(config, str(tmp_path / "never"))
    assert not os.path.exists(tmp_path / "never")
