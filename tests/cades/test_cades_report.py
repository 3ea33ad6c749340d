"""The README block (lib/cades/report.py) of a small stored results.json, byte for byte,
with the summaries and targets recomputed from the raw AUROC and FPR numbers."""
import copy

from lib.cades import report

FAM = {"etas": [0.0, 0.4, 0.8],
       "auroc": {"cades": [[0.5, 0.7, 0.9], [0.52, 0.72, 0.95]],
                 "kl_arr": [[0.5, 0.66, 0.91], [0.5, 0.7, 0.93]],
                 "kl_int": [[0.5, 0.6, 0.8], [0.5, 0.61, 0.82]],
                 "ks_arrival": [[0.5, 0.74, 0.92], [0.5, 0.75, 0.94]],
                 "ks_interevent": [[0.5, 0.55, 0.7], [0.5, 0.56, 0.71]],
                 "sss": [[0.5, 0.65, 0.85], [0.5, 0.64, 0.86]]}}


def _m(f, se, ok):
    return {"fpr": f, "se": se, "within_3se": ok}
FPR = {"alphas": [0.05, 0.1], "epsilon_conditional": [0.031, 0.045], "delta": 0.1,
       "repetitions": 1000, "methods": {
           "cades": _m([0.049, 0.101], [0.002, 0.003], [True, True]),
           "cades_conditional": _m([0.02, 0.055], [0.001, 0.002], [True, True]),
           "kl_arr": _m([0.05, 0.1], [0.002, 0.003], [True, True]),
           "kl_int": _m([0.051, 0.099], [0.002, 0.003], [True, True]),
           "ks_arrival": _m([0.06, 0.12], [0.002, 0.003], [False, False]),
           "ks_interevent": _m([0.048, 0.097], [0.002, 0.003], [True, True]),
           "sss": _m([0.05, 0.1], [0.002, 0.003], [True, True])}}
RESULTS = {"tag": "quick", "machine": "x86_64, 2 CPU cores", "wall_s": 1234.4,
           "models_wall_s": 56.2,
           "parts": {"spp": {"families": {"self_correcting": FAM}, "wall_s": 300.2},
                     "fpr": {"settings": {"server/hawkes": FPR}, "wall_s": 800.7}}}
CONFIG = {"tag": "cades_quick"}


EXPECTED = """\
AUROC (mean over η > 0 and seeds; AUROC of −p with two-sided conformal p-values; ✗: CADES more than 2 SE below)

| scenario | CADES | CADES-arr | CADES-int | KS arr | KS int | 3S | best single (all) | CADES − best (± SE) | best CADES score alone | CADES − it (± SE) |
|---|---|---|---|---|---|---|---|---|---|---|
| self_correcting | **0.818** | 0.800 | 0.708 | 0.838 | 0.630 | 0.750 | KS arr | -0.020 ± 0.010 | CADES-arr | +0.018 ± 0.003 |

Empirical FPR ± SE over 1000 calibration/test splits per row (✗: above α + 3 SE)

| setting/model | α | CADES | CADES (cond. ε) | CADES-arr | CADES-int | KS arr | KS int | 3S | ε (cond.) |
|---|---|---|---|---|---|---|---|---|---|
| server/hawkes | 0.05 | 0.0490 ± 0.0020 | 0.0200 ± 0.0010 | 0.0500 ± 0.0020 | 0.0510 ± 0.0020 | 0.0600 ± 0.0020 ✗ | 0.0480 ± 0.0020 | 0.0500 ± 0.0020 | 0.031 |
| server/hawkes | 0.1 | 0.1010 ± 0.0030 | 0.0550 ± 0.0020 | 0.1000 ± 0.0030 | 0.0990 ± 0.0030 | 0.1200 ± 0.0030 ✗ | 0.0970 ± 0.0030 | 0.1000 ± 0.0030 | 0.045 |

Targets

- FPR <= α + 3 SE everywhere: **MET** (worst: server/hawkes CADES α = 0.1: 0.1010, +0.33 SE from α)
- CADES >= best single statistic (KS arr, KS int, 3S, CADES-arr, CADES-int) in every family (within 2 SE): **MET**
- CADES above the per-family best single statistic (KS arr, KS int, 3S, CADES-arr, CADES-int) on average: **MISSED** (mean difference -0.0200)
- CADES >= best CADES score alone in every family (within 2 SE): **MET**
- CADES above the per-family best CADES score alone on average: **MET** (mean difference +0.0175)
- CADES's AUROC averaged over all families above every single method's average: **MISSED** (CADES 0.8175; best single method on average: KS arr 0.8375)

Config `cades_quick`; measured on x86_64, 2 CPU cores (load average not recorded) in 1234 s (spp 300 s, fpr 801 s; model fitting 56 s)."""


def test_render_of_a_stored_results_json_is_unchanged():
    assert report.render(copy.deepcopy(RESULTS), CONFIG) == EXPECTED


def test_render_recomputes_stale_summaries_and_targets():
    stale = copy.deepcopy(RESULTS)
    stale["parts"]["spp"]["families"]["self_correcting"]["summary"] = {"mean": {}}
    stale["targets"] = {"fpr_within_alpha_plus_3se": {"met": False}}
    assert report.render(stale, CONFIG) == EXPECTED


def test_the_per_family_line_states_how_far_below_the_missed_families_are():
    results = copy.deepcopy(RESULTS)
    fams = results["parts"]["spp"]["families"]
    for name, drop in (("b", 0.05), ("c", 0.02)):     # CADES 0.07 / 0.04 below KS arrival
        fam = copy.deepcopy(FAM)
        fam["auroc"]["cades"] = [[x - drop * (i > 0) for i, x in enumerate(row)]
                                 for row in FAM["auroc"]["cades"]]
        fams[name] = fam
    text = report.render(results, CONFIG)
    assert ("- CADES >= best single statistic (KS arr, KS int, 3S, CADES-arr, CADES-int) in "
            "every family (within 2 SE): **MISSED** (missed in 2 of 3 families, by "
            "0.040–0.070: b, c)\n") in text


def test_auroc_is_the_mann_whitney_area_with_ties_counting_half():
    import numpy as np
    import pytest
    from sklearn.metrics import roc_auc_score

    assert report.auroc([0.1, 0.2], [0.3, 0.4]) == 1.0 and report.auroc([0.3, 0.4], [0.1, 0.2]) == 0.0
    assert report.auroc([1.0, 2.0], [2.0, 3.0]) == pytest.approx(0.875)   # one tie of four pairs
    rng = np.random.default_rng(0)
    for n, p in ((7, 5), (40, 33), (1, 9)):
        neg, pos = rng.integers(0, 6, n) / 2.0, rng.integers(1, 7, p) / 2.0     # many ties
        pairs = np.mean((pos[:, None] > neg[None]) + 0.5 * (pos[:, None] == neg[None]))
        labels = np.r_[np.zeros(n), np.ones(p)]
        assert report.auroc(neg, pos) == pytest.approx(pairs, abs=1e-12)
        assert report.auroc(neg, pos) == pytest.approx(roc_auc_score(labels, np.r_[neg, pos]), abs=1e-12)
    with pytest.raises(ValueError, match="needs both classes; got 0 negatives, 2 positives"):
        report.auroc([], [1.0, 2.0])
