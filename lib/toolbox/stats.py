"""Exact statistics shared by the experiments' reports, through scipy.stats.

    sign_test_p(wins, losses)   one-sided exact sign / McNemar test on discordant pairs
    wilson_interval(k, n)       95 % Wilson score interval of a proportion k / n
"""
from __future__ import annotations

import math

from scipy import stats


def sign_test_p(wins: int, losses: int) -> float:
    """P(X >= wins), X ~ Binomial(wins + losses, 1/2): the chance that at least `wins` of the
    discordant pairs favour one side if neither side is better (1.0 with no discordant pair).
    On paired binary outcomes this is the exact one-sided McNemar test."""
    n = wins + losses
    if n == 0:
        return 1.0
    return float(stats.binomtest(wins, n, 0.5, alternative="greater").pvalue)


def wilson_interval(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of the proportion k / n (95 % at the default z); (nan, nan)
    when n <= 0."""
    if n <= 0:
        return float("nan"), float("nan")
    level = math.erf(z / math.sqrt(2.0))          # two-sided coverage of +-z
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)
