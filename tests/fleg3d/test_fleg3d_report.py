"""The 3D-FLEG targets and README block from a small results fixture (re-rendered
byte-identical from a stored results.json, whose targets are old bare bools or records)."""
from lib.common.report import met_tree, verdict, walk_targets
from lib.fleg3d.report import render, targets

def _method(acc, last_h):
    return {"acc": acc, "acc_std": [0.0, 0.02], "acc_old": [acc[0], 0.7], "acc_new": [0.0, 0.5],
            "last_acc": acc[-1], "last_harmonic": last_h, "mean_harmonic": last_h / 2,
            "drop": 100 * (acc[0] - acc[-1]) / acc[0]}


BY = {"NCM prototypes": _method([0.9, 0.6], 0.5), "3D-FLEG": _method([0.95, 0.8], 0.7),
      "fine-tuning": _method([0.9, 0.2], 0.1), "text zero-shot": _method([0.5, 0.3], 0.0),
      "FILP-3D-like": _method([0.9, 0.65], 0.55), "w/o embedding": _method([0.95, 0.82], 0.72)}
RESULTS = {"protocols": {"same_domain": BY}, "machine": "x86_64, 2 CPU cores", "wall_s": 780.0,
           "train": {"fleg3d": {"wall_s": 300.0}, "filp3d": {"wall_s": 360.0}},
           "num_clouds": 2800, "descriptor_dim": 67,
           "data": {"source": "modelnet40"}}
CONFIG = {"tag": "tiny", "eval": {"repeats": 5}, "data": {"path": "/data/ModelNet40"}}

EXPECTED = """\
**same_domain** — accuracy (%) over all seen classes after each session (mean over support draws; sd last = its standard deviation over the draws in the last session), last-session old/new/harmonic, relative drop Δ

| method | S0 | S1 | sd last | A_old | A_new | A_h (last) | mean A_h | Δ % |
|---|---|---|---|---|---|---|---|---|
| 3D-FLEG | 95.0 | 80.0 | 2.0 | 70.0 | 50.0 | 70.0 | 35.0 | 15.8 |
| w/o embedding | 95.0 | 82.0 | 2.0 | 70.0 | 50.0 | 72.0 | 36.0 | 13.7 |
| FILP-3D-like | 90.0 | 65.0 | 2.0 | 70.0 | 50.0 | 55.0 | 27.5 | 27.8 |
| text zero-shot | 50.0 | 30.0 | 2.0 | 70.0 | 50.0 | 0.0 | 0.0 | 40.0 |
| NCM prototypes | 90.0 | 60.0 | 2.0 | 70.0 | 50.0 | 50.0 | 25.0 | 33.3 |
| fine-tuning | 90.0 | 20.0 | 2.0 | 70.0 | 50.0 | 10.0 | 5.0 | 77.8 |

Targets (same_domain): last accuracy beats every baseline: MET (best baseline FILP-3D-like 65.0); last harmonic beats every baseline: MET (best baseline FILP-3D-like 55.0); removing a module costs accuracy: w/o embedding MISSED


Config `tiny` (modelnet40 files at `/data/ModelNet40`; 2800 clouds, descriptor dim 67, 5 support draws); measured on x86_64, 2 CPU cores (load average not recorded) in 13 min (11 min training 2 networks). Per-session curves in the workdir: `plots/same_domain_acc.png`, `plots/same_domain_harmonic.png`."""


def test_render_of_a_fixture_is_the_expected_markdown():
    """Rows in the fixed method order, percentages to one decimal, the best baseline named,
    a missed ablation reported as MISSED, the real-data source and the config line."""
    results = dict(RESULTS, targets=targets(RESULTS))
    t = results["targets"]["same_domain"]
    assert t["best_baseline_last_acc"] == [0.65, "FILP-3D-like"]
    assert met_tree(t["ablations_cost_accuracy"]) == {"w/o embedding": False}
    assert render(results, CONFIG) == EXPECTED


def test_targets_are_records_with_the_numbers_behind_them():
    """Beats the best baseline (FILP-3D-like) in both (met); w/o embedding is ahead of the
    full method (missed), w/o extraction behind it (met)."""
    by = dict(BY, **{"w/o extraction": _method([0.95, 0.7], 0.6)})
    t = targets(dict(RESULTS, protocols={"same_domain": by}))
    assert [(p, verdict(r)) for p, r in walk_targets(t)] == [
        ("same_domain.beats_baselines_last_acc", "MET"),
        ("same_domain.beats_baselines_last_harmonic", "MET"),
        ("same_domain.ablations_cost_accuracy.w/o extraction", "MET"),
        ("same_domain.ablations_cost_accuracy.w/o embedding", "MISSED")]
    s = t["same_domain"]
    assert s["beats_baselines_last_harmonic"] == {"ours": 0.7, "best": 0.55, "met": True}
    assert s["ablations_cost_accuracy"]["w/o embedding"] == {"ours": 0.8, "ablation": 0.82,
                                                              "met": False}


def test_render_is_the_same_from_records_and_from_old_bare_bools():
    new = dict(RESULTS, targets=targets(RESULTS))
    old = dict(RESULTS, targets=met_tree(new["targets"]))     # the form stored before records
    assert old["targets"]["same_domain"]["beats_baselines_last_acc"] is True
    assert render(old, CONFIG) == render(new, CONFIG) == EXPECTED
