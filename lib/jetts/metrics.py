"""Metrics: top-1 score, baselines, normalized helpfulness, bootstrap CIs, bias reports.

For Q queries with chosen score c_q (the top-1's ground truth), greedy score g_q, oracle
(best available) score o_q and random-choice expectation r_q (mean score of the pool):

    top-1 score            P_judge = 100 * mean_q c_q        (JETTS reports x100)
    baselines              P_greedy, P_oracle, P_random likewise
    normalized helpfulness H = (P_judge - P_greedy) / (P_oracle - P_greedy)

H = 0 when the judge does exactly as well as greedy decoding, 1 when it always finds the
best available response, negative when it hurts. This is the notes' "probable" form (the
paper text was not available; [U] in the notes); it is computed on dataset means (not per
query, where o_q = g_q is common) and is undefined (nan) when P_oracle = P_greedy.

Bootstrap: resample the Q queries with replacement B times (same resample for every
quantity), recompute the statistic, report the 2.5 / 97.5 percentiles; resamples where H
is undefined are dropped and counted.

Pairwise bias report (from verdicts (A index, B index, s) of calls made in both orders):
* first_win_rate: fraction of non-tie verdicts in which the response shown first won
  (0.5 = no position bias);
* consistency: fraction of pairs judged in both orders whose two verdicts agree after the
  swap (s_AB = 1 - s_BA);
* longer_win_rate: fraction of non-tie verdicts between texts of different length won by
  the longer one.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def normalized_helpfulness(judge: float, greedy: float, oracle: float) -> float:
    """(judge - greedy) / (oracle - greedy); nan when oracle == greedy."""
    gap = oracle - greedy
    return float("nan") if abs(gap) < 1e-12 else (judge - greedy) / gap


def summarize(chosen: Sequence[float], greedy: Sequence[float], oracle: Sequence[float],
              random: Sequence[float], *, num_bootstrap: int = 1000, seed: int = 0) -> dict:
    """Top-1 scores (x100), baselines, H, and bootstrap 95 % CIs (module docstring)."""
    c, g, o, r = (np.asarray(x, float) for x in (chosen, greedy, oracle, random))
    if not (len(c) == len(g) == len(o) == len(r)) or len(c) == 0:
        raise ValueError(f"need equal, non-zero numbers of queries; got {len(c)}, {len(g)}, "
                         f"{len(o)}, {len(r)}")
    out = {"num_queries": int(len(c)), "top1": 100 * c.mean(), "greedy": 100 * g.mean(),
           "oracle": 100 * o.mean(), "random": 100 * r.mean()}
    out["helpfulness"] = normalized_helpfulness(c.mean(), g.mean(), o.mean())
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(c), size=(num_bootstrap, len(c)))
    top = 100 * c[idx].mean(1)
    diff = 100 * (c[idx].mean(1) - g[idx].mean(1))
    gap = o[idx].mean(1) - g[idx].mean(1)
    ok = np.abs(gap) > 1e-12
    h = (c[idx].mean(1) - g[idx].mean(1))[ok] / gap[ok]
    out["top1_ci"] = [float(np.percentile(top, 2.5)), float(np.percentile(top, 97.5))]
    out["minus_greedy_ci"] = [float(np.percentile(diff, 2.5)), float(np.percentile(diff, 97.5))]
    out["helpfulness_ci"] = ([float(np.percentile(h, 2.5)), float(np.percentile(h, 97.5))]
                             if len(h) else [float("nan")] * 2)
    out["bootstrap_undefined"] = int((~ok).sum())
    return {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in out.items()}


def ratio_ci(num: Sequence[float], den: Sequence[float], *, num_bootstrap: int = 1000,
             seed: int = 0) -> list[float]:
    """Query-bootstrap 95 % CI of sum(num) / sum(den) (e.g. a judge's pairwise accuracy
    from per-query counts of correctly ordered and decided pairs); resamples with
    sum(den) = 0 are dropped; [nan, nan] when every one is."""
    n, d = np.asarray(num, float), np.asarray(den, float)
    if len(n) != len(d) or len(n) == 0:
        raise ValueError(f"need equal, non-zero numbers of queries; got {len(n)}, {len(d)}")
    idx = np.random.default_rng(seed).integers(0, len(n), size=(num_bootstrap, len(n)))
    tot = d[idx].sum(1)
    ok = tot > 0
    r = n[idx].sum(1)[ok] / tot[ok]
    return ([float(np.percentile(r, 2.5)), float(np.percentile(r, 97.5))] if len(r)
            else [float("nan")] * 2)


def pairwise_bias(verdicts: Sequence[tuple[int, int, float]],
                  lengths: Sequence[int] | None = None) -> dict:
    """Position-bias / consistency / length-bias report from one pool's verdicts; merge
    pools with `merge_bias`. Keys: counts, so that reports add up exactly."""
    s = {(a, b): v for a, b, v in verdicts}
    decided = [(a, b, v) for a, b, v in verdicts if v != 0.5]
    rep = {"verdicts": len(verdicts), "decided": len(decided),
           "first_wins": sum(v == 0.0 for _, _, v in decided),
           "pairs_both_orders": 0, "consistent": 0, "length_decided": 0, "longer_wins": 0}
    for (a, b), v in s.items():
        if a < b and (b, a) in s:
            rep["pairs_both_orders"] += 1
            rep["consistent"] += int(v == 1.0 - s[(b, a)])
    if lengths is not None:
        for a, b, v in decided:
            if lengths[a] != lengths[b]:
                rep["length_decided"] += 1
                winner = a if v == 0.0 else b
                rep["longer_wins"] += int(lengths[winner] == max(lengths[a], lengths[b]))
    return rep


def merge_bias(reports: Sequence[dict]) -> dict:
    """Sum of counts and the rates first_win_rate, consistency, longer_win_rate."""
    keys = ("verdicts", "decided", "first_wins", "pairs_both_orders", "consistent",
            "length_decided", "longer_wins")
    tot = {k: int(sum(r[k] for r in reports)) for k in keys}
    rate = lambda a, b: tot[a] / tot[b] if tot[b] else float("nan")
    tot["first_win_rate"] = rate("first_wins", "decided")
    tot["consistency"] = rate("consistent", "pairs_both_orders")
    tot["longer_win_rate"] = rate("longer_wins", "length_decided")
    return tot
