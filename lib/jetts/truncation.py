"""Judge replies cut at max_tokens: a preflight that stops the run, and per-row warnings.

A reply cut before its verdict (which comes last) is a parse failure and becomes a random
fallback, so `judge_preflight` asks every prompt kind once before the protocols and
refuses a judge whose cut rate exceeds `eval.max_truncation_rate`; `truncation_warnings`
lists the result rows above that rate afterwards.
"""
from __future__ import annotations

from absl import logging

from lib.jetts import judges
from lib.jetts import pools as pools_lib


def judge_preflight(judge: judges.Judge, pools: list[pools_lib.Pool],
                    trees: list[pools_lib.Tree], max_rate: float, num: int = 2) -> dict:
    """Before the protocols: ask `judge` every kind of prompt they will send (Likert and
    additive ratings, both pairwise orders; full responses of `num` pools and partial
    prefixes and look-ahead rollouts of `num` trees) and measure how many replies stop at
    max_tokens. ValueError when the rate exceeds `max_rate`."""
    judge.reset_stats()
    for pl in pools[:num]:
        r = pl.responses[:4]
        for rubric in judges.RUBRICS:
            judge.rate(pl.query, r, rubric=rubric)
        judge.compare(pl.query, [(a, b) for a in r for b in r if a is not b])
    for t in trees[:num]:
        for d in range(1, t.depth + 1):
            nodes = [nd for nd in t.nodes if nd.depth == d][:3]
            resp = [pools_lib.Response(nd.text, nd.score) for nd in nodes]
            roll = [pools_lib.Response(nd.rollout, nd.rollout_score) for nd in nodes]
            for rubric in judges.RUBRICS:
                judge.rate(t.query, resp, rubric=rubric, partial=True)
            judge.compare(t.query, [(a, b) for a in resp for b in resp if a is not b], partial=True)
            judge.compare(t.query, [(a, b) for a in roll for b in roll if a is not b])
    cut, calls, rate = judges.truncation_rate(judge.stats)
    fails = sum(judge.stats[k]["parse_failures"] for k in judges.KINDS)
    judge.reset_stats()
    out = {"calls": calls, "truncated": cut, "truncation_rate": rate, "parse_failures": fails}
    logging.info("jetts judge preflight %s: %s", judge.name, out)
    if rate > max_rate:
        raise ValueError(
            f"judge {judge.name!r}: {cut} of {calls} preflight replies stopped at max_tokens = "
            f"{getattr(judge, 'max_tokens', '?')} (rate {rate:.3f} > eval.max_truncation_rate = "
            f"{max_rate}); their verdicts would be lost. Raise --config.judge_lm.max_tokens")
    return out


def truncation_warnings(results: dict, max_rate: float) -> list[str]:
    """One line per protocol row whose judge replies were cut at max_tokens more often than
    `max_rate` (those rows' parse failures are mostly truncations, not judge errors)."""
    out = []
    for dom, d in results["domains"].items():
        for proto in ("rerank", "beam"):
            for k, v in d.get(proto, {}).items():
                if v.get("truncation_rate", 0.0) > max_rate:
                    out.append(f"{dom} {proto} {k}: {v['truncated']} of {v['calls']} judge replies "
                               f"cut at max_tokens (rate {v['truncation_rate']:.3f} > {max_rate})")
        for k, v in d.get("refine", {}).items():
            if v.get("truncation_rate", 0.0) > max_rate:
                out.append(f"{dom} refine {k}: {v['truncated']} judge replies cut at max_tokens "
                           f"(rate {v['truncation_rate']:.3f} > {max_rate})")
    for line in out:
        logging.warning("jetts: %s", line)
    return out
