"""The main job's report: the classical baseline's scores with diverged trajectories, the
plots' content (every model's correlation curve, the threshold, the validation error) and
the headline line."""
import json
import os

import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import config as config_lib
from lib.multipdenet import emulators, evaluation, metrics as mpn_metrics
from lib.toolbox import plotting

CONFIG = "configs/multipdenet/burgers.py:tiny"
META = {"pde": "burgers", "coarse_grid": 4, "frame_dt": 0.1, "fields": ["u", "v"], "length": 1.0,
        "n_frames": 11}


def _scores(rmse, hct, horizon=1.0, diverged=0, finite=None, per_ic=None):
    t = np.arange(1, 11) * 0.1
    return {"rmse": [rmse, 0.1 * rmse], "hct": [hct, 0.0], "horizon": horizon,
            "correlation_mean": list(1 - t * (1 - hct)), "correlation_std": [0.01] * 10,
            "n_diverged": diverged, "n_trajectories": 10, "rmse_finite": finite or [rmse, 0.1 * rmse],
            "rmse_per_ic": per_ic or [rmse] * 10, "nonfinite_step": 7 if diverged else None}


def test_evaluate_counts_diverged_trajectories_and_scores_the_finite_ones():
    """A rollout that keeps u0 on trajectory 0 and turns trajectory 1 into NaN from step 3."""
    config = config_lib.load_config(CONFIG)
    test = np.random.default_rng(0).normal(size=(2, 6, 4, 4, 2)).astype(np.float32)

    def rollout(params, u0, n):
        frames = jnp.broadcast_to(u0, (n,) + u0.shape)
        bad = (jnp.arange(n)[:, None] >= 2) & (jnp.arange(u0.shape[0])[None, :] == 1)
        return jnp.where(bad[..., None, None, None], jnp.nan, frames)

    out, _ = evaluation.evaluate(config, emulators.Emulator(lambda k, u: {}, rollout, False), {},
                                 test, META)
    truth0 = jnp.asarray(test[:1, 1:])
    kept = jnp.asarray(test[:1, :1]).repeat(5, 1)                # trajectory 0: u0 five times
    alone = float(mpn_metrics.evaluate_rollouts(kept, truth0, 0.1)["rmse"][0])
    assert out["n_diverged"] == 1 and out["n_trajectories"] == 2 and out["nonfinite_step"] == 3
    assert np.isnan(out["rmse"][0])
    np.testing.assert_allclose(out["rmse_finite"], [alone, 0.0], rtol=1e-6)
    assert out["rmse_per_ic"][0] == pytest.approx(alone) and np.isnan(out["rmse_per_ic"][1])
    assert evaluation.rmse_text(out).endswith("over the 1 of 2 ICs it kept finite")


def test_hct_and_rmse_text_state_the_cap_and_divergence():
    assert evaluation.hct_text(_scores(0.01, 1.0)) == "≥ 1 (capped at the horizon)"
    assert evaluation.hct_text(_scores(0.01, 0.5)) == "0.5 ± 0"
    assert evaluation.rmse_text(_scores(0.0123, 1.0)) == "0.0123 ± 0.0012"
    everything = dict(_scores(float("nan"), 1.0, diverged=10), rmse_finite=None)
    assert evaluation.rmse_text(everything) == "diverged on every test IC"


def test_headline_names_files_and_every_model():
    nan = float("nan")
    results = dict(_scores(0.009, 1.0, per_ic=[0.01] * 5 + [0.008] * 4 + [0.5]),
                   model="multipdenet",
                   baselines={"coarse_solver": _scores(nan, 0.8, diverged=1, finite=[0.02, 0.01],
                                                       per_ic=[0.02] * 9 + [nan])})
    line = evaluation.headline(results, "wd")
    # the model on the baseline's 9 finite ICs: 5 × 0.01 and 4 × 0.008, not its 0.5
    assert line == ("results: wd/results.json | plots: wd/plots | RMSE over t ≤ 1: MultiPDENet "
                    "0.009 ± 0.0009, classical solver 0.02 ± 0.01 over the 9 of 10 ICs it kept "
                    "finite (MultiPDENet on those: 0.00911 ± 0.00099) | HCT: MultiPDENet ≥ 1 "
                    "(capped at the horizon), classical solver 0.8 ± 0")
    assert "plots: none" in evaluation.headline(results, "wd", plots=False)


@pytest.fixture
def figures(monkeypatch):
    """The figures write_plots makes, by file name, instead of PNGs."""
    made = {}

    def keep(fig, path, dpi=110):
        made[os.path.basename(path)] = fig
        return path

    monkeypatch.setattr(plotting, "save", keep)
    return made


def test_plots_show_every_model_the_threshold_and_the_validation_error(tmp_path, figures):
    config = config_lib.load_config(CONFIG)
    workdir = str(tmp_path)
    with open(os.path.join(workdir, "metrics.jsonl"), "w") as f:
        for row in ([{"step": 0, "val_rollout_mse": 4e-5}]
                    + [{"step": s, "loss": 1e-5 / s} for s in range(1, 9)]
                    + [{"step": 8, "val_rollout_mse": 1e-5}]):
            f.write(json.dumps(row) + "\n")
    test = np.random.default_rng(0).normal(size=(2, 11, 4, 4, 2)).astype(np.float32)
    results = dict(_scores(0.01, 1.0), baselines={"coarse_solver": _scores(0.05, 0.5, diverged=1)})
    paths = evaluation.write_plots(workdir, config, META, test, test[:, 1:], results)
    assert [os.path.basename(p) for p in paths] == ["snapshots.png", "correlation.png", "train_loss.png"]

    ax = figures["correlation.png"].axes[0]
    curves = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    classical = "classical solver: HCT 0.5 ± 0 (1/10 ICs diverged, first at t = 0.7)"
    assert sorted(curves) == ["MultiPDENet: HCT ≥ 1 (capped at the horizon)", classical]
    np.testing.assert_allclose(curves[classical].get_ydata(),
                               results["baselines"]["coarse_solver"]["correlation_mean"])
    assert [list(line.get_ydata()) for line in ax.get_lines()
            if line.get_label().startswith("_")] == [[0.8, 0.8]]      # the threshold line
    assert ax.get_ylim()[0] < 0.8 and ax.get_ylim()[1] == pytest.approx(1.01)

    ax = figures["train_loss.png"].axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert ax.get_yscale() == "log"
    assert list(lines["training loss: 2-step window MSE, mean of each 2 steps"].get_xdata()) \
        == list(range(1, 9))
    val = lines["validation: 8-step rollout MSE, fixed training batch"]
    assert list(val.get_xdata()) == [0, 8] and list(val.get_ydata()) == [4e-5, 1e-5]
    np.testing.assert_allclose(lines["moving median (3 rows)"].get_ydata(),
                               plotting.smooth([1e-5 / s for s in range(1, 9)], 3))
