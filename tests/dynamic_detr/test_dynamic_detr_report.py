"""The results tool's `render` (lib/dynamic_detr/report.py) on a small stored results.json:
the markdown is byte-identical to what the tool rendered before it moved into lib, and the
targets are re-derived from the rows with the run's configured budgets and ablations."""
from lib.dynamic_detr import report


def _row(name, method, budget, ap, gflops, ablation="none"):
    return {"name": name, "method": method, "budget": budget, "ablation": ablation,
            "tokens_per_block": [84, 42, 21], "mean_keep": budget, "finetune_steps": 300,
            "AP": ap, "AP50": ap + 0.2, "AP75": ap - 0.1, "AP_S": -1.0, "AP_M": ap / 2,
            "AP_L": ap * 1.1, "encoder_gflops": gflops, "images_per_s": 1234.5}


RESULTS = {"rows": [_row("dense", "dense", 1.0, 0.46, 0.01), _row("topk_0.25", "topk", 0.25, 0.279, 0.004),
                    _row("dynamic_0.25", "dynamic", 0.25, 0.268, 0.0045),
                    _row("dynamic_no_proximal_0.25", "dynamic", 0.25, 0.319, 0.0045, "no_proximal")],
           "pretrained_dense": {"AP": 0.44}, "tokens": 84, "complete": False,
           "missing": ["focus_0.5"], "targets": {},        # stale targets: render re-derives them
           "stages": {"pretrain": {"steps": 8000, "target_steps": 8000, "stopped_by_budget": False,
                                   "resumed_from": 0, "train_s": 100.0, "steps_per_s": 80.0}},
           "budget": {"time_budget_s": 600.0, "stopped_by_budget": ["dynamic_0.25"]},
           "machine": "x86_64, 2 CPU cores, 8 cpu device(s), jax 0.4", "wall_s": 600.0}
CONFIG = {"tag": "cpu_long", "train": {"seed": 0},
          "sparse": {"budgets": [0.25, 0.5], "ablations": ["no_proximal", "no_rescore"]}}

EXPECTED = """\
| variant | mean keep | tokens per block | AP | AP50 | AP75 | AP_S | AP_M | AP_L | encoder MFLOPs | encoder img/s | fine-tune steps |
|---|---|---|---|---|---|---|---|---|---|---|---|
| dense | 1.00 | 84/42/21 | 0.460 | 0.660 | 0.360 | -1.000 | 0.230 | 0.506 | 10.00 | 1234 | 300 |
| topk_0.25 | 0.25 | 84/42/21 | 0.279 | 0.479 | 0.179 | -1.000 | 0.140 | 0.307 | 4.00 | 1234 | 300 |
| dynamic_0.25 | 0.25 | 84/42/21 | 0.268 | 0.468 | 0.168 | -1.000 | 0.134 | 0.295 | 4.50 | 1234 | 300 |
| dynamic_no_proximal_0.25 | 0.25 | 84/42/21 | 0.319 | 0.519 | 0.219 | -1.000 | 0.160 | 0.351 | 4.50 | 1234 | 300 |

- AP(dynamic) ≥ AP(top-k) at every budget: **MISSED** (ρ=0.25: 0.268 vs 0.279; not measured at ρ=0.5)
- dense AP (0.460) with ≥ 30 % fewer encoder FLOPs: **MISSED** (no dynamic run reached the dense AP)
- every ablation costs AP: **MISSED** (no_proximal 0.319 (full 0.268); not measured: no_rescore)
- pretrained dense checkpoint before fine-tuning: AP 0.440; N = 84 tokens
- dense pre-training: 8000 of 8000 steps, 80.0 steps/s
- stopped by the wall-clock budget (600 s): dynamic_0.25
- **run incomplete**: not yet measured: focus_0.5

Config `cpu_long`; measured on x86_64, 2 CPU cores, 8 cpu device(s), jax 0.4 (load average not recorded) in 10.0 min."""


def test_render_of_a_stored_results_json_is_unchanged():
    assert report.render(RESULTS, CONFIG) == EXPECTED


def test_render_appends_the_ap_across_seed_runs():
    other = {**RESULTS, "rows": [{**r, "AP": r["AP"] + 0.01} for r in RESULTS["rows"]]}
    text = report.render(RESULTS, CONFIG, [("seed 1", other)])
    assert text.startswith(EXPECTED + "\n\nAP across runs:\n\n| variant | seed 0 | seed 1 | mean | sd |")
    assert "| dynamic_0.25 | 0.268 | 0.278 | 0.273 | 0.007 |" in text
