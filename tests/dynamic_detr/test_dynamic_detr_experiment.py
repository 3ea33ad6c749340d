"""The experiment's pieces: equal token budgets of the variants, the targets' logic and the
rendered table, config errors. (A train step with the teacher, FLOPs and throughput are
checked end to end in test_dynamic_detr_binary.py.)"""
import pytest

from configs.dynamic_detr import dynamic_detr as cfg
from experiments.dynamic_detr import train
from lib.common.config import ConfigError
from lib.dynamic_detr import report
from lib.dynamic_detr import training


def test_variants_share_the_mean_token_budget():
    config = cfg.get_config("quick")
    vs = training.variants(config)
    assert [v.name for v in vs][:4] == ["dense", "topk_0.25", "focus_0.25", "dynamic_0.25"]
    n = 64 + 16 + 4
    for v in vs[1:]:
        counts = v.spec.counts(n, config.model.enc_layers)
        assert abs(sum(counts) / len(counts) - v.budget * n) <= 1.0, (v.name, counts)
        assert v.cd == (v.method == "dynamic" and v.ablation != "no_center_distance")
    modes = {v.name: v.spec.modes for v in vs}
    assert modes["dynamic_0.25"] == ("proximal", "context", "context")
    assert modes["dynamic_no_proximal_0.25"] == ("drop", "context", "context")
    assert modes["dynamic_no_holistic_0.25"] == ("proximal", "drop", "drop")
    assert modes["topk_0.25"] == ("drop",) * 3
    assert "dynamic_holistic_kept_0.25" not in modes
    config.sparse.compare_holistic_kept = True            # the earlier design as one more row
    last = training.variants(config)[-1]
    assert (last.name, last.ablation, last.spec.modes, last.cd) == (
        "dynamic_holistic_kept_0.25", "holistic_kept", ("proximal", "holistic", "holistic"), True)


def _row(name, method, budget, ap, gflops, ablation="none"):
    return {"name": name, "method": method, "budget": budget, "ablation": ablation, "AP": ap,
            "encoder_gflops": gflops}


def test_targets_logic():
    rows = [_row("dense", "dense", 1.0, 0.50, 10.0), _row("t", "topk", 0.25, 0.40, 4.0),
            _row("d", "dynamic", 0.25, 0.45, 5.0), _row("t5", "topk", 0.5, 0.49, 6.0),
            _row("d5", "dynamic", 0.5, 0.52, 6.5), _row("a", "dynamic", 0.25, 0.44, 5.0, "no_proximal"),
            _row("b", "dynamic", 0.25, 0.46, 5.0, "no_holistic")]
    t = report.targets(rows, (0.25, 0.5))
    assert t["dynamic_ge_topk"]["met"]
    assert t["flops_saving_at_dense_ap"]["met"] and t["flops_saving_at_dense_ap"]["saving"] == pytest.approx(0.35)
    assert not t["ablations_cost_ap"]["met"]                          # no_holistic is better
    # a design alternative is not an ablation: no target on it, reported on its own line
    alt = _row("dynamic_holistic_kept_0.25", "dynamic", 0.25, 0.47, 5.0, "holistic_kept")
    t_alt = report.targets(rows[:-1] + [alt], (0.25, 0.5))
    assert t_alt["ablations_cost_ap"]["met"]
    assert [a["ablation"] for a in t_alt["ablations_cost_ap"]["per_ablation"]] == ["no_proximal"]
    for r in rows[:-1] + [alt]:
        r.update(AP50=0.5, AP75=0.4, AP_S=0.1, AP_M=0.2, AP_L=0.3, mean_keep=r["budget"],
                 tokens_per_block=[1], images_per_s=100.0)
    text = report.tables({"rows": rows[:-1] + [alt], "targets": t_alt,
                             "pretrained_dense": {"AP": 0.3}, "tokens": 84})
    assert ("design comparison: dynamic_holistic_kept_0.25 (holistic aggregation into the kept "
            "tokens, the earlier design) AP 0.470 against the full method's 0.450") in text
    rows[4]["AP"] = 0.48                                              # below top-k and dense now
    t = report.targets(rows, (0.25, 0.5))
    assert not t["dynamic_ge_topk"]["met"] and not t["flops_saving_at_dense_ap"]["met"]
    assert t["flops_saving_at_dense_ap"]["saving"] is None
    for r in rows:
        r.update(AP50=0.5, AP75=0.4, AP_S=0.1, AP_M=0.2, AP_L=-1.0, mean_keep=r["budget"],
                 tokens_per_block=[1], images_per_s=100.0)
    text = report.tables({"rows": rows, "targets": t, "pretrained_dense": {"AP": 0.3}, "tokens": 84,
                             "complete": False, "missing": ["focus_0.5"]})
    assert "AP(dynamic) ≥ AP(top-k) at every budget: **MISSED** (ρ=0.25: 0.450 vs 0.400, ρ=0.5: 0.480 vs 0.490)" in text
    assert "no dynamic run reached the dense AP" in text and "not yet measured: focus_0.5" in text


@pytest.mark.parametrize("key,value,message", [
    ("sparse.cascade", (1.5,), "mean must be 1"),
    ("data.image_size", 36, "divisible by 8"),
    ("data.max_objects", 4, "exceeds model.num_queries"),
    ("sparse.budgets", (0.5, 0.25), "strictly increasing"),
    ("sparse.ablations", ("no_such",), "sparse.ablations"),
    ("sparse.holistic", "soft", "sparse.holistic"),
    ("run.precompile", True, "needs loss.matcher = 'jax'"),
])
def test_bad_config_is_refused_before_compute(key, value, message):
    config = cfg.get_config("tiny")
    block, name = key.split(".")
    config[block][name] = value
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(config, "/nonexistent/never/written")


def test_budget_times_cascade_above_one_is_refused():
    config = cfg.get_config("tiny")
    config.model.enc_layers, config.sparse.cascade, config.sparse.budgets = 2, (1.5, 0.5), (0.9,)
    with pytest.raises(ConfigError, match="budget × largest cascade factor"):
        train.train_and_evaluate(config, "/nonexistent/never/written")


def test_targets_list_what_an_incomplete_run_did_not_measure():
    rows = [_row("dense", "dense", 1.0, 0.50, 10.0), _row("t", "topk", 0.25, 0.40, 4.0),
            _row("d", "dynamic", 0.25, 0.45, 5.0), _row("a", "dynamic", 0.25, 0.44, 5.0, "no_proximal")]
    t = report.targets(rows, (0.25, 0.5), ("no_proximal", "no_rescore"))
    assert t["dynamic_ge_topk"]["unmeasured"] == [0.5] and not t["dynamic_ge_topk"]["met"]
    assert t["ablations_cost_ap"]["unmeasured"] == ["no_rescore"] and not t["ablations_cost_ap"]["met"]
    for r in rows:
        r.update(AP50=0.5, AP75=0.4, AP_S=0.1, AP_M=0.2, AP_L=0.3, mean_keep=r["budget"],
                 tokens_per_block=[1], images_per_s=100.0)
    text = report.tables({"rows": rows, "targets": t, "pretrained_dense": {"AP": 0.3}, "tokens": 84})
    assert ("at every budget: **NOT ESTABLISHED** (ρ=0.25: 0.450 vs 0.400; not measured at ρ=0.5)"
            in text)
    assert "costs AP: **NOT ESTABLISHED** (no_proximal 0.440 (full 0.450); not measured: no_rescore)" in text
    rows[1]["AP"] = 0.46                                              # a measured budget fails
    text = report.tables({"rows": rows, "targets": report.targets(rows, (0.25, 0.5)),
                             "pretrained_dense": {"AP": 0.3}, "tokens": 84})
    assert "at every budget: **MISSED**" in text
    plain = [r for r in rows if r["ablation"] == "none"]             # a run without ablations
    text = report.tables({"rows": plain, "targets": report.targets(plain, (0.25,), ()),
                             "pretrained_dense": {"AP": 0.3}, "tokens": 84})
    assert "- every ablation costs AP: not measured (this run has no ablation)" in text


def test_holistic_comparison_needs_the_context_design():
    config = cfg.get_config("tiny")
    config.sparse.holistic, config.sparse.compare_holistic_kept = "kept", True
    with pytest.raises(ConfigError, match="already uses sparse.holistic = 'kept'"):
        train.train_and_evaluate(config, "/nonexistent/never/written")


def test_seed_table_counts_runs_meeting_each_target():
    def run(d, t, abl, alt):
        return {"rows": [_row("dense", "dense", 1.0, 0.5, 10.0), _row("topk_0.25", "topk", 0.25, t, 4.0),
                         _row("dynamic_0.25", "dynamic", 0.25, d, 5.0),
                         _row("dynamic_no_proximal_0.25", "dynamic", 0.25, abl, 5.0, "no_proximal"),
                         _row("dynamic_holistic_kept_0.25", "dynamic", 0.25, alt, 5.0, "holistic_kept")]}
    text = report.seed_table([("seed 0", run(0.30, 0.28, 0.32, 0.25)),
                                 ("seed 1", run(0.26, 0.27, 0.24, 0.27))])
    assert "| dynamic_0.25 | 0.300 | 0.260 | 0.280 | 0.028 |" in text
    assert "dynamic ≥ top-k at ρ=0.25: 1 of 2 runs (mean AP difference +0.005)" in text
    assert "no_proximal costs AP: 1 of 2 runs (mean AP difference ablation − full" in text
    assert "full method ≥ dynamic_holistic_kept_0.25: 1 of 2 runs (mean AP difference +0.020)" in text
