"""The sweep definitions and the results table builder."""
import json
import os

import pytest

from lib.multipdenet import sweeps as sweep
from lib.common import report as common_report
from lib.multipdenet import report as results_tool


def _fake(root, system, run, hct, rmse=0.1):
    d = os.path.join(root, f"{system}_quick", run)
    os.makedirs(d)
    r = {"rmse": [rmse, 0.01], "mae": [0.05, 0.0], "mnad": [0.01, 0.0], "hct": [hct, 0.1],
         "horizon": 2.0, "n_params": 10, "train_steps": 5, "train_wall_s": 1.0, "frame_dt": 0.5,
         "correlation_mean": [0.99, 0.9, 0.7, 0.5], "device": "cpu"}
    json.dump(r, open(os.path.join(d, "results.json"), "w"))


def test_table_ratios_and_splice(tmp_path):
    root = str(tmp_path / "runs")
    _fake(root, "burgers", "multipdenet", 1.5)
    _fake(root, "burgers", "fno", 0.5)
    _fake(root, "burgers", "coarse_solver", 1.0, rmse=float("nan"))
    collected = results_tool.collect(root, "quick")
    assert sorted(collected["burgers"]) == ["coarse_solver", "fno", "multipdenet"]
    md = results_tool.table(collected)
    rows = [line for line in md.splitlines() if line.startswith("| burgers")]
    assert [r.split("|")[2].strip() for r in rows] == ["multipdenet", "coarse_solver", "fno"]
    assert "| 1.50 |" in rows[0]  # 1.5 / best baseline 1.0
    assert "diverged" in rows[1]
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- results:quick:begin -->\nold\n<!-- results:quick:end -->\nb\n")
    common_report.splice(str(readme), "quick", "NEW")
    assert readme.read_text() == "a\n<!-- results:quick:begin -->\nNEW\n<!-- results:quick:end -->\nb\n"
    with pytest.raises(ValueError, match="results:paper:begin"):
        common_report.splice(str(readme), "paper", "x")


def test_sweeps_name_valid_overrides():
    from lib.common import config as config_lib
    from lib.multipdenet.config_schema import validate
    for system in ("burgers", "navier_stokes", "gray_scott", "kdv"):
        base = config_lib.load_config(f"configs/multipdenet/{system}.py:tiny")
        names = []
        for name, overrides in sweep.runs(system, "all"):
            validate(config_lib.apply_overrides(base, overrides))
            names.append(name)
        assert len(names) == len(set(names)) >= 9


def test_collection_renders_the_stored_table(tmp_path):
    root = str(tmp_path / "runs")
    _fake(root, "burgers", "multipdenet", 1.5)
    _fake(root, "burgers", "fno", 0.5)
    folder = results_tool.write_collection(root, "quick")
    assert folder == os.path.join(root, "collected_quick")
    stored = json.load(open(os.path.join(folder, "results.json")))
    config = json.load(open(os.path.join(folder, "config.json")))
    assert config["machine"].endswith(f"with {common_report.cores_text()} (cpu).")
    config["machine"] = "Measured on M."
    assert results_tool.render(stored, config) == (
        "| system | model | RMSE | MAE | MNAD | HCT (time units) | horizon | HCT / best baseline HCT "
        "| params | train steps | train wall s |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
        "| burgers | multipdenet | 0.1 ± 0.01 | 0.05 ± 0 | 0.01 ± 0 | 1.5 ± 0.1 | 2 | 3.00 | 10 | 5 | 1 |\n"
        "| burgers | fno | 0.1 ± 0.01 | 0.05 ± 0 | 0.01 ± 0 | 0.5 ± 0.1 | 2 | 1.00 | 10 | 5 | 1 |\n"
        "\n| target | MultiPDENet HCT / baseline HCT | verdict |\n|---|---|---|\n"
        "| burgers: HCT above fno's | 1.5 / 0.5 = 3.00× | met |\n"
        "\nMeasured on M.")
    assert stored["targets"] == {"burgers": {"vs_fno": {
        "hct": 1.5, "baseline_hct": 0.5, "ratio": 3.0, "bound": 1.0, "met": True}}}
    assert results_tool.write_collection(str(tmp_path / "empty"), "quick") is None


def _cost_bench(tmp_path, *args):
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    out = str(tmp_path / "cost.json")
    proc = subprocess.run([sys.executable, os.path.join(root, "tools", "bench", "multipdenet_cost.py"),
                           "--variant=tiny", "--repeats=1", "--macro_steps=1", "--grid_factor=1",
                           f"--out={out}", *args], capture_output=True, text=True, cwd=root)
    return proc, out


def test_quick_targets_are_records_met_at_the_bound_and_strictly_above_at_one():
    def runs(m, **base):
        return {"multipdenet": {"hct": [m, 0.1]}, **{b: {"hct": [h, 0.1]} for b, h in base.items()}}
    t = results_tool.targets({"navier_stokes": runs(3.0, fno=2.0, unet=1.9, coarse_solver=3.0),
                              "gray_scott": runs(1.0, fno=0.5), "kdv": runs(1.0, fno=2.0)})
    assert set(t) == {"navier_stokes", "gray_scott"}                   # KdV has no target
    ns = t["navier_stokes"]
    assert ns["vs_fno"]["met"] and ns["vs_fno"]["ratio"] == 1.5         # the bound itself
    assert ns["vs_unet"]["met"] and not ns["vs_coarse_solver"]["met"]   # equal is not above
    assert t["gray_scott"] == {"vs_fno": {"hct": 1.0, "baseline_hct": 0.5, "ratio": 2.0,
                                          "bound": 1.0, "met": True}}


def test_cost_bench_measures_the_overridden_config_and_names_a_bad_override(tmp_path):
    proc, out = _cost_bench(tmp_path, "--override=model.n_micro=2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.load(open(out))
    assert result["n_micro"] == 2 and result["config"].endswith("tiny with model.n_micro=2")
    assert all(r["ms_per_macro_step"] > 0 for r in result["rows"])
    from lib.common import report
    records = report.walk_targets(result["targets"])   # one record per target, met iff both ratios meet it
    assert len(records) == len(result["targets"]) == 4
    for _, t in records:
        assert t["met"] == (t["ratio_median"] <= t["bound"] and t["ratio_fastest"] <= t["bound"])
        assert t["verdict"] == ("met" if t["met"] else "unsettled" if min(
            t["ratio_median"], t["ratio_fastest"]) <= t["bound"] else "missed")
    os.remove(out)
    proc, _ = _cost_bench(tmp_path, "--override=model.n_micro")      # one line, before any compute
    assert proc.returncode != 0 and proc.stderr.strip() == "--override item 'model.n_micro' is not key=value"
    assert not os.path.exists(out)
