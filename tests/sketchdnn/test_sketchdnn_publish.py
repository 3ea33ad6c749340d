"""`tools/results.py --paper=sketchdnn --seeds=...`: the block over seed workdirs and the
claims published as target records (`lib.sketchdnn.seeds.targets`)."""
import json
import os
import subprocess
import sys

from lib.sketchdnn import seeds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REF = {"fd": 2.5, "precision": 0.9, "recall": 0.9, "type_tv": 0.01, "count_tv": 0.02,
       "validity": {"dangling_fraction": 0.0, "closed_rate": 1.0}}


def _run(fd, nll, by=None):
    nll_entry = {"total": nll, **({"by_x0_logits": {k: {"total": v} for k, v in by.items()}}
                                  if by else {})}
    return {"fd": fd, "precision": 0.5, "recall": 0.5, "type_tv": 0.1, "count_tv": 0.1,
            "nll": nll_entry, "validity": {"dangling_fraction": 0.9, "closed_rate": 0.0},
            "curve": []}


def _results(i):
    """Seed i: Gaussian-Softmax FD 20 + i (worse than D3PM's 10 + i, tied with one-hot's
    19, 21, 20), its bound 1000 + i under Σ p̂·u and 2000 + i under 2·log p̂; the ablation
    FD 40 + i, bound 1500 + i (worse on both)."""
    return {"reference": REF, "machine": f"x86_64, load average 1.0 / {2 + i}.0 (1 / 15 min)",
            "wall_s": 100.0 + i, "tag": "sketchdnn_official",
            "budget": {"num_samples": 1000, "sample_steps": 100, "diffusion_steps": 200},
            "targets": {"fd_beats_baselines": None},
            "runs": {"gaussian_softmax": _run(20 + i, 1000 + i, {"two_log_p": 2000 + i,
                                                                 "embedding_mean": 1000 + i}),
                     "d3pm": _run(10 + i, 1100 + i),
                     "onehot_gaussian": _run((19, 21, 20)[i], 990 + i),
                     "gaussian_softmax_pe": _run(40 + i, 1500 + i, {"two_log_p": 2500 + i,
                                                                    "embedding_mean": 1500 + i})}}


CONFIG = {"tag": "sketchdnn_official", "runs": ["gaussian_softmax", "d3pm", "onehot_gaussian",
                                                "gaussian_softmax_pe"],
          "optim": {"lr": 1e-4, "schedule": "constant", "ema_decay": 0.0, "batch_size": 64,
                    "warmup": 0, "clip": 0.0},
          "loss": {"ce_mean": "slots_and_classes"}, "diffusion": {"x0_logits": "two_log_p"},
          "model": {"width": 64, "depth": 3}, "eval": {"curve_samples": 0}}


def _workdirs(tmp_path, n=3, finished=3):
    dirs = []
    for i in range(n):
        d = tmp_path / f"s{i}"
        d.mkdir()
        (d / "config.json").write_text(json.dumps({**CONFIG, "train": {"num_steps": 6000,
                                                                         "seed": i}}))
        if i < finished:
            (d / "results.json").write_text(json.dumps(_results(i)))
        dirs.append(str(d))
    readme = tmp_path / "exp" / "README.md"
    readme.parent.mkdir()
    readme.write_text("<!-- results:official:begin -->\nold\n<!-- results:official:end -->\n")
    return dirs, readme


def _publish(dirs, readme):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "results.py"),
                           "--paper=sketchdnn", f"--workdir={dirs[0]}",
                           f"--seeds={','.join(dirs[1:])}", f"--readme={readme}",
                           "--tag=official", "--publish"],
                          capture_output=True, text=True, cwd=ROOT)


def test_targets_over_seeds_are_records_met_only_when_ranked_better():
    t = seeds.targets(seeds.summarise([_results(i) for i in range(3)]))
    fd = t["fd_beats_baselines"]   # worse than D3PM beyond 2 std (10 apart, std 1)
    assert (fd["met"], fd["verdict"]) == (False, "MISSED")
    assert fd["compared"] == {"onehot_gaussian": "tied", "d3pm": "worse"}
    assert fd["stats"]["gaussian_softmax"]["fd"] == {"mean": 21.0, "std": 1.0, "seeds": 3}
    nll = t["nll_beats_baselines"]  # 1001 ± 1 vs 991 ± 1 (worse) and 1101 ± 1 (better)
    assert nll["verdict"] == "MISSED" and nll["met"] is False
    assert nll["nll_by_x0_logits"]["gaussian_softmax"] == {"two_log_p": 2001.0,
                                                          "embedding_mean": 1001.0}
    pe = t["pe_does_worse"]
    assert (pe["met"], pe["verdict"], pe["compared"]) == (True, "MET",
                                                          {"fd": "worse", "nll": "worse"})
    only_gs = [{**r, "runs": {"gaussian_softmax": r["runs"]["gaussian_softmax"]}}
               for r in (_results(0), _results(1))]
    assert seeds.targets(seeds.summarise(only_gs)) == {
        "fd_beats_baselines": None, "nll_beats_baselines": None, "pe_does_worse": None}


def test_publish_writes_the_claims_over_all_seed_workdirs(tmp_path):
    dirs, readme = _workdirs(tmp_path)
    proc = _publish(dirs, readme)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads((readme.parent / "results_official.json").read_text())
    assert (out["scale"], out["train_seeds"], out["merged"]) == (
        "official", "0, 1, 2", ", ".join(dirs[1:]))
    assert {k: v["verdict"] for k, v in out["targets"].items()} == {
        "fd_beats_baselines": "MISSED", "nll_beats_baselines": "MISSED", "pe_does_worse": "MET"}
    block = readme.read_text()
    assert "| Gaussian-Softmax (SketchDNN) | 3 | 21 ± 1 |" in block
    # both bounds labelled, the tighter (Σ p̂·u) in bold, the model's bound beside them
    assert "| NLL bound, bits/sketch ↓ | NLL, x̂₀ logits 2·log p̂ ↓ | NLL, x̂₀ logits Σ p̂·u ↓ |" \
        in block
    assert "| 1001 ± 1 | 2001 ± 1 | **1001 ± 1** |" in block
    assert "15-min load average at each seed's end 2.0 / 3.0 / 4.0" in block


def test_publish_refuses_an_unfinished_seed_and_writes_nothing(tmp_path):
    dirs, readme = _workdirs(tmp_path, finished=2)
    proc = _publish(dirs, readme)
    assert proc.returncode == 2
    assert f"{dirs[2]}: no results.json" in proc.stderr
    assert not (readme.parent / "results_official.json").exists()
    assert "old" in readme.read_text()
