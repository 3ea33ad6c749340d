"""End to end: experiments/dynamic_detr/main.py as a user runs it, on the tiny config.

The binary pre-trains, fine-tunes the dense and the dynamic encoder, evaluates them and
writes the table, the plot and every stage's record; the same command again restores every
stage from its checkpoint without training and reproduces the rows. It runs with the in-graph
matcher and `run.precompile` (fine-tune steps compiled ahead into `<workdir>/xla_cache`). (The wall-clock
budget's stop, record and resume are tested in test_dynamic_detr_budget.py.) Subprocesses
run with XLA's backend optimisation off and its faster CPU emitters (`tests.fast_compile`:
compiles dominate this test; the numbers computed are the same).
"""
import json
import math
import os
import subprocess
import sys

import pytest

from tests.fast_compile import FAST_XLA_FLAGS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# with the in-graph matcher and run.precompile: the fine-tune steps are compiled in a
# background thread during pre-training and each stage's own compile is a cache read
MICRO = ["--config=configs/dynamic_detr/dynamic_detr.py:tiny", "--config.sparse.methods=('dynamic',)",
         "--config.sparse.ablations=()", "--config.loss.matcher=jax", "--config.run.precompile=True"]


def _main(workdir):
    # a compilation cache shared by the two runs: the second loads what the first compiled
    cache = os.path.join(os.path.dirname(workdir), "xla_cache")
    env = {**os.environ, "XLA_FLAGS": f"--xla_backend_optimization_level=0 {FAST_XLA_FLAGS}",
           "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": ROOT, "JAX_COMPILATION_CACHE_DIR": cache,
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
           "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    out = subprocess.run([sys.executable, "experiments/dynamic_detr/main.py", f"--workdir={workdir}",
                          *MICRO], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    with open(os.path.join(workdir, "results.json")) as f:
        return json.load(f), out.stdout


@pytest.mark.slow
def test_binary_trains_evaluates_and_a_rerun_resumes_without_retraining(tmp_path):
    wd = str(tmp_path / "run")
    res, stdout = _main(wd)
    assert res["complete"] and [r["name"] for r in res["rows"]] == ["dense", "dynamic_0.5"]
    assert res["budget"]["time_budget_s"] is None and res["budget"]["stopped_by_budget"] == []
    assert {k: (v["resumed_from"], v["steps"]) for k, v in res["stages"].items()} == {
        "pretrain": (0, 2), "dense": (0, 1), "dynamic_0.5": (0, 1)}
    assert all(res["stages"][k]["precompile_s"] > 0 for k in ("dense", "dynamic_0.5"))
    assert os.listdir(os.path.join(wd, "xla_cache"))
    for r in res["rows"]:
        assert r["finetune_steps"] == 1 and 0.0 <= r["AP"] <= 1.0
        assert r["encoder_gflops"] > 0 and r["images_per_s"] > 0
    dense, dyn = res["rows"]
    # half the tokens through the one block, plus the scoring and aggregation overhead
    assert 0.3 < dyn["encoder_gflops"] / dense["encoder_gflops"] < 0.8 and dyn["mean_keep"] == 0.5
    # the dynamic fine-tune trained against the frozen dense teacher: the centre-distance
    # term is on and nonzero (merged tokens are not the teacher's centroids), all finite
    with open(os.path.join(wd, "runs", "dynamic_0.5", "metrics.jsonl")) as f:
        logged = [json.loads(line) for line in f]
    assert logged and all(math.isfinite(v) for m in logged for v in m.values())
    assert all(m["cd"] > 0 for m in logged)
    assert "dynamic_0.5: 1 steps" in stdout
    with open(os.path.join(wd, "results.md")) as f:
        assert "| dynamic_0.5 | 0.50 |" in f.read()
    assert os.path.getsize(os.path.join(wd, "plots", "ap_vs_flops.png")) > 0

    again, _ = _main(wd)                    # the same command: every stage restored, not retrained
    assert {k: (v["resumed_from"], v["steps"]) for k, v in again["stages"].items()} == {
        "pretrain": (2, 2), "dense": (1, 1), "dynamic_0.5": (1, 1)}
    for a, b in zip(again["rows"], res["rows"]):
        assert {k: a[k] for k in ("name", "AP", "AP50", "encoder_gflops")} == \
               {k: b[k] for k in ("name", "AP", "AP50", "encoder_gflops")}
