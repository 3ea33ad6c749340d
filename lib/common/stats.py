"""Small exact statistics shared by the experiments' reports (pure Python, no arrays).

    sign_test_p(wins, losses)   one-sided exact sign / McNemar test on discordant pairs
    wilson_interval(k, n)       95 % Wilson score interval of a proportion k / n
"""
from __future__ import annotations

import math


def sign_test_p(wins: int, losses: int) -> float:
    """P(X >= wins), X ~ Binomial(wins + losses, 1/2): the chance that at least `wins` of the
    discordant pairs favour one side if neither side is better (1.0 with no discordant pair).
    On paired binary outcomes this is the exact one-sided McNemar test."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n


def wilson_interval(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of the proportion k / n (95 % at the default z); (nan, nan)
    when n <= 0."""
    if n <= 0:
        return float("nan"), float("nan")
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)
