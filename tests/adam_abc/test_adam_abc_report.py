"""The verdict lines of the adam_abc README block, from a small targets fixture."""
from lib.adam_abc import report

TARGETS = {"rate": {"slopes": {"quadratic-gaussian/adam": {"avg": True, "min": False},
                               "quadratic-gaussian/sgd": {"avg": True, "min": True}},
                    "eps_independent": {"avg": True}},
           "asymptotic": {"controls_fail": {"const_alpha": True, "const_beta2": False}}}


def test_verdicts_count_every_check_of_each_group():
    """Nested per-statistic checks count one each; groups keep their order."""
    assert report.verdicts({"targets": TARGETS}) == [
        "rate.slopes: 3/4 met", "rate.eps_independent: 1/1 met",
        "asymptotic.controls_fail: 1/2 met"]


def test_render_is_the_tables_then_the_verdicts():
    """No part ran: no tables, then the verdict lines (the config is not read)."""
    assert report.render({"targets": TARGETS}, None) == (
        "\n\nrate.slopes: 3/4 met\nrate.eps_independent: 1/1 met\nasymptotic.controls_fail: 1/2 met")
