"""The spurious-ridge targets and README block from a small results fixture (re-rendered
byte-identical from a stored results.json)."""
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
    assert targets({"digits": DIGITS}) == {"tradeoff_visible_digits": False}
    rising = dict(DIGITS, tradeoff_sim=dict(DIGITS["tradeoff_sim"], spurious_increasing_at_opt=True))
    assert targets({"digits": rising}) == {"tradeoff_visible_digits": True}
