"""Bounded learning rates, and the divergence guard: a fit whose loss rises far above its
start stops with an error naming the step and the loss, and no results are written."""
import math
import os
import re

import jax
import numpy as np
import pytest

from experiments.cades import train
from lib.cades import divergence, scenarios, training
from lib.common import config as config_lib, mesh as mesh_lib, train_loop
from lib.common.config import ConfigError
from lib.tpp import hawkes, neural
from lib.tpp.events import trim

CONFIG = "configs/cades/cades.py:tiny"


def test_threshold_is_start_plus_factor_times_its_magnitude():
    assert divergence.threshold(0.93) == pytest.approx(0.93 + 1e3)          # |start| < 1
    assert divergence.threshold(-5.0) == pytest.approx(-5.0 + 5e3)          # negative NLL/time
    assert divergence.threshold(20.0, factor=10.0) == pytest.approx(220.0)
    divergence.check_loss("fit", 7, 1000.9, 0.93)                          # just below: fine
    with pytest.raises(divergence.DivergenceError,
                       match=r"^fit diverged: training loss 1001 at step 7, started at 0.93 "
                             r"\(limit 1001 = start \+ 1000 x max\(\|start\|, 1\)\); nothing was "
                             r"written; lower it$"):
        divergence.check_loss("fit", 7, 1001.0, 0.93, "lower it")
    with pytest.raises(divergence.DivergenceError, match="training loss nan at step 3"):
        divergence.check_loss("fit", 3, math.nan, 0.93)


def test_hawkes_history_at_a_huge_learning_rate_names_its_first_bad_step():
    mv = config_lib.load_config(CONFIG).multivariate
    scen = scenarios.make("server_stop", mv.t_max, mv.max_len)
    ev = trim(scen.sample_id(jax.random.key(0), 8))
    _, bad = hawkes.fit_mle(ev, scen.num_marks, num_steps=20, lr=1e6)
    bad = np.asarray(bad)
    first = int(np.argmax(bad > divergence.threshold(bad[0])))
    assert first >= 1
    with pytest.raises(divergence.DivergenceError,
                       match=re.escape(f"training loss {bad[first]:.4g} at step {first},")):
        divergence.check_history("hawkes", bad)
    with pytest.raises(divergence.DivergenceError, match=r"training loss inf at step 2,"):
        divergence.check_history("hawkes", [1.0, 0.5, math.inf, 0.1])
    divergence.check_history("hawkes", [-0.6, 900.0, -1.3])     # a bump below the limit (999.4): fine


@pytest.mark.parametrize("key", ["neural.lr", "hawkes.lr"])
def test_learning_rates_are_bounded_by_one(key):
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), {key: 1e6})
    with pytest.raises(ConfigError, match=rf"'{key}' = 1000000.0 is not allowed"):
        train.validate(config)
    train.validate(config_lib.apply_overrides(config_lib.load_config(CONFIG), {key: 1.0}))


def test_the_log_guard_stops_the_loop_before_a_diverged_checkpoint(tmp_path):
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG),
                                        {"neural.lr": 1.0})
    scen = scenarios.make("server_stop", config.multivariate.t_max, config.multivariate.max_len)
    ev = trim(scen.sample_id(jax.random.key(0), config.multivariate.n_train))
    norm = neural.gap_normaliser(ev)
    task = training.make_task(config, ev, scen.num_marks, norm)
    guard = divergence.LogGuard("neural", str(tmp_path / "metrics.jsonl"), "nll_per_time", 0.93)
    cfg = train_loop.LoopConfig(num_steps=20, log_every=5, checkpoint_every=5)
    with pytest.raises(divergence.DivergenceError, match=r"^neural diverged: training loss \S+ at step 5,"):
        train_loop.train(task, cfg, workdir=str(tmp_path), mesh=mesh_lib.make_mesh(), on_log=guard)
    checkpoints = tmp_path / "checkpoints"
    assert not checkpoints.exists() or not [p for p in os.listdir(checkpoints) if p.isdigit()]


def test_a_diverging_neural_fit_writes_no_results(tmp_path, monkeypatch):
    """The guard is wired into the experiment: a learning rate of 1 takes the tiny run's
    neural TPP from about 1 to 40 in 10 steps, divergence once the factor is 1 (it is 1e3
    in earnest, where the same wiring stops the 8e11 run)."""
    monkeypatch.setattr(divergence, "RISE_FACTOR", 1.0)
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), {
        "neural.lr": 1.0, "parts": ("multivariate",), "multivariate.models": ("neural",)})
    with pytest.raises(divergence.DivergenceError,
                       match=r"^neural TPP \(server\) diverged: training loss \S+ at step 10, "
                             r"started at .*; lower neural.lr \(now 1\)$"):
        train.train_and_evaluate(config, str(tmp_path))
    assert not os.path.exists(tmp_path / "results.json")
    assert not os.path.exists(tmp_path / "results.md")


def test_a_divergence_stops_like_every_other_divergence():
    """cli.run turns every guards.Diverged into one line and exit 2 (tests/common/test_nan_guard.py)."""
    from lib.common import guards
    assert issubclass(divergence.DivergenceError, guards.Diverged)
