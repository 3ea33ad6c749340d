"""The SWE-Gym experiment: benchmark, baselines, expert iteration, caps, verifier, Best@K.

`train_and_evaluate(config, workdir)`; `main.py` parses flags. Each phase is a
lib/swe_gym module; each stage's records are saved under `<workdir>/stages/`, each
fine-tune's checkpoints under `<workdir>/models/<name>/`, so a rerun resumes where it
stopped (`lib.swe_gym.runs`):

  instances, recheck        benchmark.build / benchmark.recheck
  search                    baselines.search on the held-out instances
  base, base_eval           workspace_lm.base (synthetic line repairs), T = 0 held-out
  search_train, warm(_eval) self_improvement.warm_start (round 0)
  ei_sample_r<k>, ei_r<k>, ei_eval_r<k>   self_improvement.expert_iteration
  caps_<c>                  self_improvement.cap_ablation
  verifier, scaling_*       verification.train_verifier / verification.best_at_k
  served                    baselines.served (only with served.base_url)
"""
from __future__ import annotations

import dataclasses
import os
import time

from absl import logging

from lib.common import config as config_lib
from lib.common import guards
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.lm.model import num_params
from lib.swe_gym import (baselines, benchmark, config_schema, plots, records, report, rft,
                         self_improvement, verification, workspace_lm)
from lib.swe_gym.runs import Context

validate = config_schema.validate


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    t_start = time.perf_counter()
    wd.prepare(workdir, config_lib.to_json_dict(config),
               added=config_lib.added_of(config_schema.KEYS))
    ctx = Context.open(config, workdir)
    bench = benchmark.build(ctx)
    rechecked = benchmark.recheck(ctx, bench.test)
    search = baselines.search(ctx, bench.test, "search")
    lm = workspace_lm.base(ctx, bench)
    base_eval = ctx.stages.run("base_eval", lambda _: lm.evaluate(lm.base_params, bench.test))
    e = config.rft
    pool = bench.train if e.num_train < 0 else bench.train[:e.num_train]
    r0 = self_improvement.warm_start(ctx, lm, bench, pool, base_eval)
    ei = self_improvement.expert_iteration(ctx, lm, bench, pool, r0)
    n_export = rft.export_chat_jsonl(os.path.join(workdir, "resolved_trajectories.jsonl"),
                                     ei.own)
    caps = self_improvement.cap_ablation(ctx, lm, bench, ei, r0)
    ver_lm, ver_info = verification.train_verifier(ctx, lm, ei.own)
    sc_name = f"round {ei.final}" + (" (warm start)" if ei.final == 0 and "rate" in r0.summary
                                     else "")
    scaling_out, sc_recs = verification.best_at_k(ctx, lm, bench.test, ei.params[ei.final],
                                                  sc_name, ver_lm)
    served = baselines.served(ctx, bench.test)
    results = {
        "tag": config.tag,
        "instances": _instances(bench),
        "recheck": benchmark.recheck_summary(rechecked, config.eval.recheck_disagreements),
        "search": {**records.rate(search), "by_kind": records.by_kind(search, bench.kinds)},
        "lm": {"num_params": num_params(lm.base_params), "vocab": lm.tok.vocab_size,
               "model": dataclasses.asdict(lm.cfg), "pretrain_examples": lm.pretrain_examples,
               "pretrain_steps": lm.pretrain_steps},
        "base": {**records.rate(base_eval), "by_kind": records.by_kind(base_eval, bench.kinds)},
        "warm": r0.summary,
        "rounds": ei.rounds,
        "expert_iteration": {"instances": len(pool), "rollouts": e.rollouts,
                             "temperature": e.temperature, "main_cap": e.main_cap,
                             "exported_chat_jsonl": n_export},
        "rft": caps,
        "verifier": ver_info,
        "scaling": scaling_out,
        "served": served,
        "targets": report.targets(config, records.rate(r0.eval)["rate"], ei.rounds,
                                  scaling_out["curves"], rechecked),
        "test_cache": {"hits": ctx.cache.hits, "misses": ctx.cache.misses},
        "grade_cache": {"graded": ctx.grades.graded, "hits": ctx.grades.hits,
                        "entries": len(os.listdir(os.path.join(workdir, "grade_cache"))),
                        "rollouts": len(search) + len(base_eval) + len(ei.own) + len(sc_recs)
                        + len(r0.eval) * (1 + len(ei.rounds) + len(e.caps))},
    }
    return _publish(config, workdir, results, ctx, t_start)


def _instances(bench: benchmark.Benchmark) -> dict:
    """results.json "instances": counts, held-out repositories, bug kinds, generation."""
    kinds = list(bench.kinds.values())
    return {"total": len(bench.all), "train": len(bench.train), "test": len(bench.test),
            "train_repos": len(bench.train_specs), "test_repos": bench.test_repos,
            "by_kind": {k: kinds.count(k) for k in sorted(set(kinds))},
            "generation": bench.stats}


def _publish(config, workdir: str, results: dict, ctx: Context, t_start: float) -> dict:
    """Wall times and machine added; plots, results.json and results.md written."""
    walls = ctx.stage_wall_s()
    results.update({"stage_wall_s": walls, "wall_s": time.perf_counter() - t_start,
                    "stages_total_wall_s": float(sum(walls.values())),
                    "machine": common_report.machine()})
    guards.check_preempted("writing results.json")
    if config.eval.plots:
        plots.write(workdir, results)
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), report.render(results) + "\n")
    logging.info("swe_gym: done in %.0f s", results["wall_s"])
    return results
