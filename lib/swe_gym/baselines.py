"""Policies that are not trained here: the search baseline and an optional served model.

    recs = search(ctx, bench.test, "search")              # stage: held-out baseline
    served_summary = served(ctx, bench.test)               # None unless served.base_url
"""
from __future__ import annotations

import dataclasses

from lib.lm import finetune
from lib.swe_gym import policies, records


def search(ctx, insts: list[dict], name: str, *, graded: bool = False) -> list[dict]:
    """Stage `name`: one search-baseline rollout per instance (`search.max_turns` turns).
    `graded`: through the on-disk grade cache (the held-out run is not, as before)."""
    s = ctx.config.search
    caps = dataclasses.replace(ctx.caps, max_turns=s.max_turns)
    return ctx.stages.run(name, lambda _: ctx.collect(
        insts, lambda i, r: policies.SearchPolicy(s.max_candidates), caps=caps,
        graded=graded, memo=False))


def served(ctx, test_insts: list[dict]) -> dict | None:
    """Stage "served": the served model as a CodeAct `ChatPolicy` at T = 0 on the held-out
    instances; {model, **records.rate}, or None when `served.base_url` is empty."""
    s = ctx.config.served
    if not s.base_url:
        return None
    lm = finetune.served_lm(s)
    caps = dataclasses.replace(ctx.caps, max_turns=s.max_turns)
    recs = ctx.stages.run("served", lambda _: ctx.collect(
        test_insts, lambda i, r: policies.ChatPolicy(lm, temperature=0.0, seed=i), caps=caps,
        graded=False, memo=False))
    return {"model": s.model, **records.rate(recs)}
