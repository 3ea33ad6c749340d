"""The README block (lib/maxentdp/report.py) of a small stored results.json and a
diagnosis.json in the workdir, byte for byte, and `tools/results.py --paper=maxentdp`'s merge."""
import copy
import json
import os

from lib.maxentdp import report


def _entry(algo, evals, **extra):
    """A results.json entry: evals (chunks, seeds) on the grid 1000, 2000, ..."""
    import numpy as np
    e = np.asarray(evals, float)
    return {"env": "pendulum", "algo": algo, "num_seeds": 2, "planned_env_steps": 3000,
            "env_steps": [1000 * (i + 1) for i in range(len(evals))],
            "eval_return": e.T.tolist(), "eval_return_mean": e.mean(1).tolist(),
            "eval_return_std": e.std(1, ddof=1).tolist(),
            "final_return_mean": float(e[-1].mean()), "final_return_std": float(e[-1].std(ddof=1)),
            "final_alpha": [0.2, 0.3], "wall_s": 61.4, "resumed_from": 0,
            "env_steps_per_sec": 88.2, **extra}


RESULTS = {"tag": "quick", "complete": False,
           "runs": {"pendulum_maxentdp": _entry("maxentdp", [[-900, -1100], [-400, -300]],
                                                budget_stopped=True),
                    "pendulum_sac": _entry("sac", [[-800, -1000], [-350, -250], [-200, -180]],
                                           budget_stopped=False)},
           "targets": {}, "machine": "x86_64, 2 CPU cores", "wall_s": 130.6,
           "time_budget_s": 120.0, "budget_stopped": ["pendulum_maxentdp"]}
CONFIG = {"tag": "maxentdp_quick"}
DIAGNOSIS = {"fixed_q": [{"num_candidates": 16, "curvature": 20.0, "heights": [0.0, 0.0, 0.0, 0.0],
                          "expected_mass": [0.25, 0.25, 0.25, 0.25],
                          "sector_mass": [0.4, 0.2, 0.2, 0.2]}]}

EXPECTED = """\
| env | agent | seeds | env steps | final eval return (mean ± sd) | α (final, mean) | env steps/s (all seeds) | wall s |
|---|---|---|---|---|---|---|---|
| pendulum | maxentdp | 2 | 2000 of 3000 (time budget) | -350.0 ± 70.7 | 0.25 | 88 | 61 |
| pendulum | sac | 2 | 3000 | -190.0 ± 14.1 | 0.25 | 88 | 61 |

| target | measured | met |
|---|---|---|
| pendulum_final_return: MaxEntDP mean >= SAC mean - max(seed std of either), at the last evaluation both reached | env_steps = 2000, maxentdp = -350, sac = -300, spread = 70.71 | MET within the spread only (MaxEntDP's mean below SAC's) |

Return curves (environment steps: mean ± sd over seeds):

- pendulum / maxentdp: 1000: -1000 ± 141, 2000: -350 ± 71
- pendulum / sac: 1000: -900 ± 141, 2000: -300 ± 71, 3000: -190 ± 14


QNE with a FIXED 4-mode Q(a) = max_k [h_k − c‖a − 0.6 d_k‖²], α = 1, T = 10, (64, 64) ε-network, 1,500 updates on uniform replay actions unless stated, 2,000 samples: sector masses (+x, −x, +y, −y) of the policy against those of exp(Q/α).

| K | c | h | replay actions | target masses | policy masses |
|---|---|---|---|---|---|
| 16 | 20 | (0.00, 0.00, 0.00, 0.00) | uniform | (0.25, 0.25, 0.25, 0.25) | (0.40, 0.20, 0.20, 0.20) |

Wall-clock budget 120 s for the process (runs stopped by it: pendulum_maxentdp); INCOMPLETE (killed) results.json.

Plots in the workdir: `plots/returns_pendulum.png`.

Config `maxentdp_quick`; measured on x86_64, 2 CPU cores (load average not recorded) in 131 s (env steps/s: after compilation, all seeds together)."""


def _stored(workdir):
    results = copy.deepcopy(RESULTS)
    results["targets"] = report.targets(results["runs"])
    results["plots"] = [os.path.join(workdir, "plots", "returns_pendulum.png")]
    return results


def test_render_of_a_stored_run_with_its_diagnosis_is_unchanged(tmp_path):
    with open(tmp_path / "diagnosis.json", "w") as f:
        json.dump(DIAGNOSIS, f)
    assert report.render(_stored(str(tmp_path)), CONFIG, str(tmp_path)) == EXPECTED


def test_render_without_a_diagnosis_leaves_its_tables_out(tmp_path):
    text = report.render(_stored(str(tmp_path)), CONFIG, str(tmp_path))
    assert "FIXED 4-mode" not in text
    assert text == EXPECTED.replace(report.diagnosis_tables(DIAGNOSIS) + "\n\n", "")


def test_results_tool_merges_the_runs_of_more_workdirs(tmp_path):
    """`tools/results.py --paper=maxentdp --merge`: the runs of both workdirs in one table
    (`report.collect`; without --from_metrics no agent is imported)."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    other = copy.deepcopy(RESULTS)
    other["runs"] = {"pendulum_sac2": other["runs"]["pendulum_sac"]}
    for name, res in (("a", RESULTS), ("b", other)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(res))
        (tmp_path / name / "config.json").write_text(json.dumps(CONFIG))
    proc = subprocess.run([sys.executable, os.path.join(root, "tools", "results.py"),
                           "--paper=maxentdp", f"--workdir={tmp_path / 'a'}",
                           f"--merge={tmp_path / 'b'}"],
                          capture_output=True, text=True, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| pendulum | ")]
    assert [r.split(" | ")[1] for r in rows] == ["maxentdp", "sac", "sac"]


def _split_runs(tmp_path, sac_changes=None):
    """Two finished workdirs, one agent each (neither alone has a target), and a README
    with an `official` block."""
    runs = RESULTS["runs"]
    for name, run in (("a", "pendulum_maxentdp"), ("b", "pendulum_sac")):
        res = {**RESULTS, "complete": True, "runs": {run: runs[run]},
               "targets": report.targets({run: runs[run]}), "budget_stopped": []}
        if name == "b":
            res.update(sac_changes or {})
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(res))
        (tmp_path / name / "config.json").write_text(json.dumps(CONFIG))
    readme = tmp_path / "exp" / "README.md"
    readme.parent.mkdir()
    readme.write_text("<!-- results:official:begin -->\nold\n<!-- results:official:end -->\n")
    return readme


def _publish(tmp_path, readme):
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, os.path.join(root, "tools", "results.py"),
                           "--paper=maxentdp", f"--workdir={tmp_path / 'a'}",
                           f"--merge={tmp_path / 'b'}", f"--readme={readme}",
                           "--tag=official", "--publish"],
                          capture_output=True, text=True, cwd=root)


def test_publish_writes_the_targets_of_the_merged_runs(tmp_path):
    """Each workdir alone has no target; the published file holds the merged runs' target,
    the one the spliced block shows."""
    readme = _split_runs(tmp_path)
    proc = _publish(tmp_path, readme)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads((readme.parent / "results_official.json").read_text())
    assert list(out["targets"]) == ["pendulum_final_return"]
    assert out["targets"] == report.targets(RESULTS["runs"])
    assert out["targets"]["pendulum_final_return"]["sac"] == -300.0      # at step 2000
    assert (out["complete"], out["merged"], out["workdir"]) == (
        True, str(tmp_path / "b"), str(tmp_path / "a"))
    assert "| pendulum_final_return: MaxEntDP mean" in readme.read_text()


def test_publish_refuses_when_a_merged_run_is_unfinished_or_missing(tmp_path):
    readme = _split_runs(tmp_path, {"complete": False})
    proc = _publish(tmp_path, readme)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        f"--publish refused: {tmp_path / 'b' / 'results.json'} says the run is not complete "
        "(\"complete\": false); rerun it to the end")
    (tmp_path / "b" / "results.json").unlink()
    proc = _publish(tmp_path, readme)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        f"--publish refused: no {tmp_path / 'b' / 'results.json'}; run "
        "experiments/maxentdp/main.py first")
    assert "old" in readme.read_text() and not (readme.parent / "results_official.json").exists()
