"""tools/bench/multipdenet_front.py --system=burgers: the tiny front end to end (its HCTs are
`metrics.high_correlation_time` of the same arrays), and a bad --system refused in one line."""
import json
import os
import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import config as config_lib
from lib.multipdenet import data as data_lib, emulators, front, metrics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join("tools", "bench", "multipdenet_front.py")


def _run(*args):
    return subprocess.run([sys.executable, TOOL, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_bad_system_is_one_line_before_any_compute(tmp_path):
    proc = _run("--system=navier-stokes", f"--data_root={tmp_path / 'data'}", f"--out={tmp_path / 'f.json'}")
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        "--system='navier-stokes' is not a system of the front; allowed: navier_stokes, burgers"]
    assert os.listdir(tmp_path) == []  # no dataset, no output


def test_burgers_tiny_front_end_to_end_and_its_hct_is_the_metrics_hct(tmp_path):
    out, data_root = tmp_path / "front.json", str(tmp_path / "data")
    proc = _run("--system=burgers", "--variant=tiny", f"--data_root={data_root}", f"--out={out}",
                f"--cache={tmp_path / 'cache'}", "--repeats=1", "--timing_frames=2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["system"] == "burgers" and result["n_ics"] == 2
    names = [p["name"] for p in result["points"]]
    assert names == ["FD4+RK4 solver 12²", "FD4+RK4 Physics Block 12²", "spectral ETDRK4 12²",
                     "FD4+RK4 solver 16²", "FD4+RK4 Physics Block 16²", "spectral ETDRK4 16²",
                     "fine DNS 32²"]
    assert all(p["cost"] > 0 for p in result["points"]) and result["front"]
    md = (tmp_path / "front.md").read_text()
    assert "HCT velocity (mean ± std over ICs)" in md and "vorticity" not in md
    assert (tmp_path / "front.png").stat().st_size > 0
    # every classical accuracy was cached per dataset, family, grid and step; a second run reads them
    cached = sorted(os.listdir(next((tmp_path / "cache").iterdir())))
    assert cached == sorted(f"{f}_{n}_{p['steps_per_frame']}.json" for p in result["points"][:-1]
                            for f, n in [(p["family"], p["grid"])])

    # The same arrays, rebuilt here: the cached truth, truncated to 12², and the solver's rollout.
    data = data_lib.load_or_generate(config_lib.load_config("configs/pde_data/burgers.py:front_tiny"),
                                     data_root)
    assert data["cached"] and data["metadata"]["seed"] == 1
    meta, truth = data["metadata"], front.resample(data["test"], 12)
    solver = emulators.coarse_solver(dict(meta, coarse_grid=12))
    pred = np.swapaxes(np.asarray(solver.rollout({}, jnp.asarray(truth[:, 0]), truth.shape[1] - 1)), 0, 1)
    want = [float(metrics.high_correlation_time(metrics.correlation_per_step(
        jnp.asarray(pred[i]), jnp.asarray(truth[i, 1:])), meta["frame_dt"], 0.8)) for i in range(2)]
    point = result["points"][0]
    assert point["hct_per_ic"] == pytest.approx(want, abs=1e-9)
    assert point["hct"] == pytest.approx(np.mean(want)) and point["horizon"] == pytest.approx(1.0)
    # The HCT saturates at the horizon here (as on the full front); the RMSE pins the arrays.
    rmse = [float(metrics.rmse(jnp.asarray(pred[i]), jnp.asarray(truth[i, 1:]))) for i in range(2)]
    assert point["rmse_per_ic"] == pytest.approx(rmse, rel=1e-5) and min(rmse) > 0
    # The spectral point: the same truth; at 16² closer to it than the FD4 + RK4 solver at 16²
    # (the 2/3-band truncation against 4th-order stencils on a resolved flow).
    by = {p["name"]: p for p in result["points"]}
    assert by["spectral ETDRK4 16²"]["rmse"] < by["FD4+RK4 solver 16²"]["rmse"]

    # --costs_from: accuracies computed here, costs and round times read from a timed front
    # (a model chosen on one IC set rechecked on another); the cache makes this run cheap.
    common = ("--system=burgers", "--variant=tiny", f"--data_root={data_root}",
              f"--cache={tmp_path / 'cache'}")
    again = _run(*common, f"--out={tmp_path / 'again.json'}", f"--costs_from={out}")
    assert again.returncode == 0, again.stderr[-3000:]
    second = json.loads((tmp_path / "again.json").read_text())
    assert second["costs_from"] == str(out) and f"costs from {out}" in second["note"]
    assert second["points"] == result["points"]      # same ICs: accuracies, costs, headlines
    # a timed file that lacks a point is refused in one line naming it, before any compute
    short = dict(result, points=[p for p in result["points"] if p["name"] != "spectral ETDRK4 16²"])
    (tmp_path / "short.json").write_text(json.dumps(short))
    refused = _run(*common, f"--out={tmp_path / 'x.json'}", f"--costs_from={tmp_path / 'short.json'}")
    assert refused.returncode == 1 and not (tmp_path / "x.json").exists()
    assert refused.stderr.strip().splitlines()[-1] == (
        f"--costs_from={tmp_path / 'short.json'}: no timed point 'spectral ETDRK4 16²' (1 of 7 "
        "missing); time it there first")


def test_rmse_front_is_log_log_and_bounds_a_point_worse_than_its_cheapest():
    import math
    points = [{"name": "a", "cost": 1.0, "rmse": 1e-1}, {"name": "b", "cost": 100.0, "rmse": 1e-3},
              {"name": "c", "cost": 10.0, "rmse": 1e-2}, {"name": "d", "cost": 50.0, "rmse": 2e-2},
              {"name": "e", "cost": 0.5, "rmse": float("nan")}]  # d dominated, e blew up
    f = front.rmse_front(points)
    assert [p["name"] for p in f] == ["a", "c", "b"]
    h = front.rmse_headline({"cost": math.sqrt(10.0), "rmse": 1e-3}, f)
    assert h["front_rmse_at_equal_wall"] == pytest.approx(10 ** -1.5)  # halfway, log-log
    assert h["rmse_over_front_at_equal_wall"] == pytest.approx(10 ** -1.5)
    assert h["wall_ratio_at_equal_rmse"] == pytest.approx(100.0 / math.sqrt(10.0))
    assert h["wall_ratio_at_equal_rmse_bound"] is None
    worse = front.rmse_headline({"cost": 4.0, "rmse": 0.5}, f)  # worse than the cheapest point
    assert worse["wall_ratio_at_equal_rmse"] is None and worse["wall_ratio_at_equal_rmse_bound"] == 0.25


def test_physics_block_steps_keep_the_burgers_step_under_its_stable_step():
    from lib.multipdenet import classical
    from lib.pde import burgers
    meta = {"pde": "burgers", "frame_dt": 0.02, "params": {"viscosity": 0.005}}
    for n in (8, 16, 64):
        steps = classical.default_steps(meta, "fd4_rk4", n)
        stable = 0.95 * burgers.max_stable_dt(n, 0.005, 2.0)
        assert 0.02 / steps <= stable and (steps == 1 or 0.02 / (steps - 1) > stable)  # the fewest
    with pytest.raises(ValueError, match="kdv"):
        classical.default_steps({"pde": "kdv", "frame_dt": 0.1}, "fd4_rk4", 16)
