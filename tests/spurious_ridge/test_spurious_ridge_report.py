"""The spurious-ridge targets and README block from a small results fixture (re-rendered
byte-identical from a stored results.json, whose targets are old bare bools or records)."""
from lib.common.report import met_tree, verdict, walk_targets
from lib.spurious_ridge.report import render, targets

DIGITS = {"colour": "background", "rho": 0.9, "n_train": 100, "num_seeds": 4,
          "lambdas": [0.01, 1.0], "C": [0.5, 0.25], "C_se": [0.01, 0.02],
          "C_theory": [0.55, 0.2], "L": [1.5, 1.25], "L_se": [0.05, 0.04], "L_theory": [1.4, 1.3],
          "tradeoff_sim": {"lambda_loss_opt": 1.0, "spurious_increasing_at_opt": False,
                           "lambda_spurious_peak": 0.01},
          "rf_lambda": 0.1, "widths": [50, 200], "rf_C": [0.3, 0.125], "rf_C_se": [0.01, 0.005],
          "rf_L": [2.0, 1.75], "rf_L_se": [0.1, 0.08]}
RESULTS = {"digits": DIGITS, "targets": {"tradeoff_visible_digits": False},
           "machine": "x86_64, 2 CPU cores", "wall_s": 7.6}

EXPECTED = """\
### Coloured digits

Coloured digits (background, ρ = 0.9, n_train = 100, D = 128, 4 splits):

| λ | Ĉ (held-out) | C^Σ (moments) | L̂ (held-out) | L^Σ (moments) |
|---|---|---|---|---|
| 0.01 | 0.5 ± 0.01 | 0.55 | 1.5 ± 0.05 | 1.4 |
| 1 | 0.25 ± 0.02 | 0.2 | 1.25 ± 0.04 | 1.3 |

λ_L* = 1 (held-out), C increasing there: no; λ at max Ĉ = 0.01.

RF at λ = 0.1:

| p | Ĉ | L̂ |
|---|---|---|
| 50 | 0.3 ± 0.01 | 2 ± 0.1 |
| 200 | 0.125 ± 0.005 | 1.75 ± 0.08 |

Targets: `{"tradeoff_visible_digits": false}`

Config `tiny`; measured on x86_64, 2 CPU cores in 8 s."""


def test_render_of_a_fixture_is_the_expected_markdown():
    """Values in 3 significant digits, standard errors in 2, the trade-off line, the RF width
    table, the targets as JSON and the config line."""
    assert render(RESULTS, {"tag": "tiny"}) == EXPECTED


def test_digits_target_is_the_held_out_trade_off():
    """Ĉ falls at λ_L* here, so the trade-off is not visible (the target is missed)."""
    assert met_tree(targets({"digits": DIGITS})) == {"tradeoff_visible_digits": False}
    rising = dict(DIGITS, tradeoff_sim=dict(DIGITS["tradeoff_sim"], spurious_increasing_at_opt=True))
    assert met_tree(targets({"digits": rising})) == {"tradeoff_visible_digits": True}


def _setting(met, increasing):
    trade = {"lambda_loss_opt": 0.1, "lambda_spurious_peak": 1.0,
             "spurious_increasing_at_opt": increasing}
    return {"target_met": met, "target_applies": met, "max_rel_err_C_cond": 0.01,
            "max_rel_err_L_cond": 0.02 if met else 0.2, "tradeoff_theory": trade,
            "tradeoff_sim": dict(trade, spurious_increasing_at_opt=False)}


GAUSSIAN = {"settings": {"iso": _setting(True, True), "aniso": _setting(False, False)}}


def test_targets_are_records_with_the_numbers_behind_them():
    """Per setting: DE within tolerance (met for iso, missed for aniso) with both errors and
    whether the target applies; the trade-off per curve with λ_L* and the λ of max C."""
    t = targets({"gaussian": GAUSSIAN, "digits": DIGITS})
    assert [(p, verdict(r)) for p, r in walk_targets(t)] == [
        ("de_within_tolerance.iso", "MET"), ("de_within_tolerance.aniso", "MISSED"),
        ("tradeoff_visible_theory.iso", "MET"), ("tradeoff_visible_theory.aniso", "MISSED"),
        ("tradeoff_visible_sim.iso", "MISSED"), ("tradeoff_visible_sim.aniso", "MISSED"),
        ("tradeoff_visible_digits", "MISSED")]
    assert t["de_within_tolerance"]["aniso"] == {"max_rel_err_C_cond": 0.01,
                                                 "max_rel_err_L_cond": 0.2, "applies": False,
                                                 "met": False}
    assert t["de_target_applies"] == {"iso": True, "aniso": False}        # kept as it was
    assert t["tradeoff_visible_digits"] == {"lambda_loss_opt": 1.0, "lambda_spurious_peak": 0.01,
                                            "met": False}


def test_render_is_the_same_from_records_and_from_old_bare_bools():
    new = dict(RESULTS, targets=targets({"digits": DIGITS}))
    assert render(new, {"tag": "tiny"}) == render(RESULTS, {"tag": "tiny"}) == EXPECTED
