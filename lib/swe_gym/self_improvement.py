"""Round 0 (warm start), expert-iteration rounds and the per-instance cap ablation.

    r0 = warm_start(ctx, lm, bench, pool)       # stages search_train, warm_eval; models/warm
    ei = expert_iteration(ctx, lm, bench, pool, r0)   # ei_sample_r<k>, ei_eval_r<k>; models/ei_r<k>
    caps = cap_ablation(ctx, lm, bench, ei, r0)       # caps_cap_<c>; models/cap_cap_<c>

Every round k fine-tunes round 0 on all own resolved rollouts of rounds 1..k (cap
`rft.main_cap` per instance) and is compared with round 0 on the held-out instances by an
exact one-sided McNemar test; each cap fine-tunes round 0 on the same pool.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from lib.lm.local import LocalLM
from lib.swe_gym import baselines, records, rft
from lib.swe_gym import expert_iteration as ei_tools


@dataclasses.dataclass
class Round0:
    params: Any
    eval: list[dict]             # held-out records at T = 0
    summary: dict                # results.json "warm" ({} without a warm start)


@dataclasses.dataclass
class Rounds:
    rounds: list[dict]           # results.json "rounds"
    own: list[dict]              # every self-sampled rollout of all rounds
    params: dict[int, Any]       # round -> params (0 included; rounds without data absent)

    @property
    def final(self) -> int:
        return max(self.params)


def warm_start(ctx, lm, bench, pool: list[dict], base_eval: list[dict]) -> Round0:
    """Round 0: the base fine-tuned on the search baseline's resolved training trajectories
    that are expressible as fix(line, op); the base itself without `rft.warm_start` or
    without such trajectories."""
    e = ctx.config.rft
    if not e.warm_start:
        return Round0(lm.base_params, base_eval, {})
    search_train = baselines.search(ctx, pool, "search_train", graded=True)
    demos = ei_tools.search_demonstrations(search_train, ctx.config.lm.max_edits)
    warm = {"search_resolved": sum(r["resolved"] for r in search_train),
            "instances": len(search_train), "demonstrations": len(demos)}
    if not demos:
        warm["skipped"] = "the search baseline resolved nothing expressible as fix(line, op)"
        return Round0(lm.base_params, base_eval, warm)
    params, _ = lm.finetune(demos, lm.base_params, "warm", e.warm_steps)
    ev = ctx.stages.run("warm_eval", lambda _: lm.evaluate(params, bench.test))
    warm.update(records.rate(ev), by_kind=records.by_kind(ev, bench.kinds))
    return Round0(params, ev, warm)


def _sample(ctx, lm, pool: list[dict], params, rnd: int) -> list[dict]:
    """Stage ei_sample_r<rnd>: `rft.rollouts` rollouts per instance at `rft.temperature`,
    all rollouts of one instance drawing from one `PooledLM`."""
    e, seed = ctx.config.rft, ctx.config.seed

    def run(_):
        pools: dict[int, ei_tools.PooledLM] = {}

        def make(i, r):
            if i not in pools:
                pools.clear()
                pools[i] = ei_tools.PooledLM(
                    LocalLM(lm.cfg, params, lm.tok), min(e.pool, e.rollouts),
                    seed=seed * 7919 + rnd * 1009 + i)
            return lm.policy(params, e.temperature, i, lm=pools[i])
        return ctx.collect(pool, make, rollouts=e.rollouts, progress=f"round {rnd}")
    return ctx.stages.run(f"ei_sample_r{rnd}", run)


def _kept(own: list[dict], cap: int) -> list[dict]:
    """Resolved records with an LM conversation, at most `cap` per instance (0: no cap)."""
    return [r for r in rft.select(own, cap or None) if r["trajectory"]["extra"].get("lm_messages")]


def _min_steps(e, n: int) -> int:
    return max(e.min_steps, e.epochs * -(-n // e.batch_size))


def expert_iteration(ctx, lm, bench, pool: list[dict], r0: Round0) -> Rounds:
    """`rft.rounds` rounds: sample with the previous round's model, fine-tune round 0 on all
    own resolved rollouts so far, evaluate on the held-out instances (stage ei_eval_r<k>)."""
    e = ctx.config.rft
    out = Rounds([], [], {0: r0.params})
    params, r0_ok = r0.params, records.resolved(r0.eval)
    for rnd in range(1, e.rounds + 1):
        recs = _sample(ctx, lm, pool, params, rnd)
        out.own += recs
        kept = _kept(out.own, e.main_cap)
        info = {"round": rnd, "sampled": len(recs),
                "sample_resolved": sum(r["resolved"] for r in recs),
                "instances_with_success": len({r["instance_id"] for r in recs if r["resolved"]}),
                "distinct_patches": len({(r["instance_id"], r["trajectory"]["patch"])
                                         for r in recs}),
                "train_trajectories": len(kept),
                "train_instances": len({r["instance_id"] for r in kept})}
        info["yield"] = info["sample_resolved"] / max(info["sampled"], 1)
        out.rounds.append(info)
        if not kept:
            info["skipped"] = "no resolved trajectories to fine-tune on"
            continue
        params, _ = lm.finetune(rft.conversations(kept), r0.params, f"ei_r{rnd}",
                                _min_steps(e, len(kept)))
        out.params[rnd] = params
        ev = ctx.stages.run(f"ei_eval_r{rnd}",
                            lambda _, params=params: lm.evaluate(params, bench.test))
        info.update(records.rate(ev), by_kind=records.by_kind(ev, bench.kinds),
                    vs_round0=ei_tools.mcnemar_p(r0_ok, records.resolved(ev)))
    return out


def cap_ablation(ctx, lm, bench, ei: Rounds, r0: Round0) -> dict:
    """results.json "rft": per cap in `rft.caps`, round 0 fine-tuned on the capped pool of
    all own rollouts and evaluated; the main cap reuses the last round's evaluation."""
    e = ctx.config.rft
    r0_ok, out = records.resolved(r0.eval), {}
    for cap in e.caps:
        key = f"cap_{cap or 'none'}"
        kept = _kept(ei.own, cap)
        if not kept:
            out[key] = {"trajectories": 0, "instances": 0,
                        "skipped": "no resolved trajectories to fine-tune on"}
            continue
        if cap == e.main_cap and ei.final == e.rounds:
            ev = ctx.stages.run(f"ei_eval_r{ei.final}", lambda _: [])
        else:
            p_cap, _ = lm.finetune(rft.conversations(kept), r0.params, f"cap_{key}",
                                   _min_steps(e, len(kept)))
            ev = ctx.stages.run(f"caps_{key}",
                                lambda _, p_cap=p_cap: lm.evaluate(p_cap, bench.test))
        out[key] = {"trajectories": len(kept), "instances": len({r["instance_id"] for r in kept}),
                    **records.rate(ev), "by_kind": records.by_kind(ev, bench.kinds),
                    "vs_round0": ei_tools.mcnemar_p(r0_ok, records.resolved(ev))}
    return out
