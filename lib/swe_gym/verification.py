"""The outcome verifier and the Pass@K / Best@K rollouts on the held-out instances.

    ver = train_verifier(ctx, lm, ei.own)          # models/verifier; (LocalLM | None, info)
    out, recs = best_at_k(ctx, lm, bench.test, params, name, ver[0])
                                                   # stages scaling_rollouts, scaling_scores
"""
from __future__ import annotations

import numpy as np

from lib.lm.local import LocalLM
from lib.swe_gym import expert_iteration, scaling, verifier


def train_verifier(ctx, lm, own: list[dict]) -> tuple[LocalLM | None, dict]:
    """The base LM fine-tuned on balanced YES / NO conversations of the own rollouts (those
    that fit the context); (None, {"skipped": reason}) when there is nothing to train on."""
    v, seed = ctx.config.verifier, ctx.config.seed
    try:
        vconvs = verifier.training_conversations(own, cap_positive=v.cap_positive, seed=seed,
                                                 max_chars=v.max_chars)
        vfit = lm.fits(vconvs)
        params, info = lm.finetune(vfit, lm.base_params, "verifier", v.min_steps,
                                   epochs=v.epochs, batch_size=v.batch_size, lr=v.lr)
    except ValueError as err:
        return None, {"skipped": str(err)}
    return LocalLM(lm.cfg, params, lm.tok, name="verifier"), {
        "train_conversations": len(vfit), "dropped_too_long": len(vconvs) - len(vfit),
        "steps": info["steps"]}


def _rollouts(ctx, lm, insts: list[dict], params) -> list[dict]:
    """Stage scaling_rollouts: `scaling.rollouts` per instance, rollout 0 greedy, the rest
    at `scaling.temperature` from one `PooledLM` per instance."""
    sc = ctx.config.scaling

    def run(_):
        pools: dict[int, expert_iteration.PooledLM] = {}

        def make(i, r):
            if r == 0:          # rollout 0: greedy
                return lm.policy(params, 0.0, 50_000 + i)
            if i not in pools:
                pools.clear()
                pools[i] = expert_iteration.PooledLM(LocalLM(lm.cfg, params, lm.tok),
                                                     sc.rollouts - 1, seed=50_000 + i)
            return lm.policy(params, sc.temperature, i, lm=pools[i])
        return ctx.collect(insts, make, rollouts=sc.rollouts, progress="scaling")
    return ctx.stages.run("scaling_rollouts", run)


def best_at_k(ctx, lm, test_insts: list[dict], params, name: str,
              ver_lm: LocalLM | None) -> tuple[dict, list[dict]]:
    """(results.json "scaling", its rollout records): Pass@K / Best@K curves of `params` on
    the first `scaling.num_test` held-out instances (all when -1), ranked by the verifier's
    p(YES) (stage scaling_scores), or by rollout order without a verifier."""
    sc, seed = ctx.config.scaling, ctx.config.seed
    insts = test_insts if sc.num_test < 0 else test_insts[:sc.num_test]
    recs = _rollouts(ctx, lm, insts, params)
    resolved = np.array([r["resolved"] for r in recs], bool).reshape(len(insts), sc.rollouts)
    out: dict = {"policy": name, "instances": len(insts), "rollouts": sc.rollouts}
    if ver_lm is not None:
        vmc = ctx.config.verifier.max_chars
        scores = np.array(ctx.stages.run("scaling_scores", lambda _: verifier.score_records(
            ver_lm, recs, max_chars=vmc)), float).reshape(resolved.shape)
        out["verifier_heldout"] = verifier.accuracy(scores.ravel(), resolved.ravel())
        out["curves"] = scaling.curves(resolved, scores, sc.ks, sc.num_subsamples, seed)
    else:
        out["curves"] = scaling.curves(resolved, np.zeros(resolved.shape), sc.ks,
                                       sc.num_subsamples, seed)
        out["note"] = "no verifier (Best@K uses rollout order)"
    return out, recs
