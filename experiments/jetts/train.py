"""JETTS in small: judges vs reward models in reranking, beam search and refinement.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` parses flags.

    validate -> [arithmetic]
        generator LM (solve + refine SFT) or a served model -> pools and step trees
        judge LM (compact Prometheus format) or a served judge -> preflight
        ORM and PRM fine-tuned from the generator on its samples
        judges = oracle, simulated, prompted, ORM, PRM
        reranking / beam search (with and without look-ahead) / refinement, position study
    -> [humaneval] reranking of mutant pools, beam search over mutant step trees
       [instructions] reranking of edited pools (simulated and oracle judges)
    -> targets, results.json, results.md, plots/*.png

Workdir: generator/, judge_lm/, orm/, prm/ (checkpointed sub-runs, resumed) and data/
(pools, trees, RM training rows as JSONL stages, reused), through `lib.common.stages`.
"""
from __future__ import annotations

import os
import time

from lib.common import config as config_lib
from lib.common import extras, guards
from lib.common import mesh as mesh_lib
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.jetts import arithmetic_setup as setup
from lib.jetts import config_schema, evaluation, generators, judges, report, runs, truncation
from lib.jetts import pools as pools_lib
from lib.jetts.config_schema import optional_modules
from lib.jetts.domains import humaneval as he_dom
from lib.jetts.domains import instructions as if_dom
from lib.lm import finetune

validate = config_schema.validate


def _pool_identity(config) -> dict:
    return {"seed": config.seed, "arithmetic": config.arithmetic.to_dict(),
            "pools": config.pools.to_dict()}


def _generator(config, stages: Stages, mesh, training: dict):
    """(local generator LM, the generator/refiner used, its sampler); the local one is
    trained either way (the reward models start from it)."""
    gen_lm, training["generator"] = runs.train_generator(config, stages.dir("generator"), mesh)
    if config.generator.source == "local":
        return gen_lm, gen_lm, generators.LocalSampler(gen_lm)
    served = finetune.served_lm(config.generator.served)
    return gen_lm, served, generators.ClientSampler(served)


def _pools_and_trees(config, stages: Stages, sampler):
    test_q, tree_q = setup.eval_queries(config)
    t0 = time.perf_counter()
    pools, pools_reused = pools_lib.stage_jsonl(
        stages, "data/arithmetic_pools", lambda: setup.make_pools(config, sampler, test_q),
        pools_lib.save_pools, pools_lib.load_pools, identity=_pool_identity(config))
    trees, trees_reused = pools_lib.stage_jsonl(
        stages, "data/arithmetic_trees", lambda: setup.make_trees(config, sampler, tree_q),
        pools_lib.save_trees, pools_lib.load_trees,
        identity={**_pool_identity(config), "tree": config.tree.to_dict()})
    info = setup.generator_info(pools, trees, config.pools.num_sampled,
                                time.perf_counter() - t0, pools_reused and trees_reused)
    return pools, trees, info


def _judges(config, stages: Stages, mesh, training: dict, gen_lm):
    """(oracle, simulated and prompted judges by name, the prompted judge)."""
    judge_set: dict[str, judges.Judge] = {"oracle": judges.OracleJudge(),
                                          **evaluation.simulated_judges(config)}
    jb = config.judge_lm
    if jb.source == "local":
        judge_lm, training["judge_lm"] = runs.train_judge_lm(config, stages.dir("judge_lm"),
                                                             mesh, gen_lm)
    else:
        judge_lm = finetune.served_lm(jb.served)
    prompted = judges.PromptedJudge(judge_lm, jb.fmt, name=f"judge-lm:{jb.fmt}",
                                    max_tokens=jb.max_tokens, seed=config.seed)
    judge_set[prompted.name] = prompted
    return judge_set, prompted


def _reward_models(config, stages: Stages, mesh, training: dict, gen_lm, judge_set: dict):
    """Adds the trained ORM / PRM (`reward.kinds`) to `judge_set`."""
    r = config.reward
    if not r.kinds:
        return
    rows, _ = pools_lib.stage_jsonl(
        stages, "data/rm_train", lambda: setup.rm_rows(config, gen_lm),
        pools_lib.save_rows, pools_lib.load_rows,
        identity={"seed": config.seed, "arithmetic": config.arithmetic.to_dict(),
                  "pools": config.pools.to_dict(), "num_train_queries": r.num_train_queries,
                  "samples_per_query": r.samples_per_query, "synthetic": r.synthetic})
    for kind in r.kinds:
        rm, training[kind] = runs.train_reward_model(kind, config, gen_lm, rows,
                                                     stages.dir(kind), mesh)
        judge_set[rm.name] = rm


def run_arithmetic(config, stages: Stages, mesh, training: dict) -> dict:
    gen_lm, generator, sampler = _generator(config, stages, mesh, training)
    pools, trees, gen_info = _pools_and_trees(config, stages, sampler)
    judge_set, prompted = _judges(config, stages, mesh, training, gen_lm)
    out = {"generator": gen_info, "judge_preflight": truncation.judge_preflight(
        prompted, pools, trees, config.eval.max_truncation_rate)}
    _reward_models(config, stages, mesh, training, gen_lm, judge_set)
    out["rerank"] = evaluation.rerank_all(judge_set, pools, config)
    out["beam"] = evaluation.beam_all(judge_set, trees, config)
    if config.protocols.refine_queries:
        out["refine"] = evaluation.eval_refinement(
            prompted, generator, pools[:config.protocols.refine_queries], config,
            "compact" if config.generator.source == "local" else "full")
    first_sim = next(iter(evaluation.simulated_judges(config).values()))
    out["position_study"] = evaluation.position_study(first_sim, pools, config.seed,
                                                      config.eval.num_bootstrap)
    return out


def run_humaneval(config, stages: Stages, judge_set: dict) -> dict:
    guards.check_preempted("the humaneval domain")
    h, seed = config.humaneval, config.seed
    pools, _ = pools_lib.stage_jsonl(
        stages, "data/humaneval_pools", lambda: he_dom.make_pools(h.num_problems, h.pool_size, seed),
        pools_lib.save_pools, pools_lib.load_pools,
        identity={"seed": seed, "num_problems": h.num_problems, "pool_size": h.pool_size})
    out = {"pools": evaluation.pool_info(pools),
           "rerank": evaluation.rerank_all(judge_set, pools, config)}
    if h.tree_problems:
        t = config.tree
        trees, _ = pools_lib.stage_jsonl(
            stages, "data/humaneval_trees",
            lambda: he_dom.make_trees(h.tree_problems, t.n, t.m, h.tree_depth, h.tree_keep, seed),
            pools_lib.save_trees, pools_lib.load_trees,
            identity={"seed": seed, "tree_problems": h.tree_problems, "n": t.n, "m": t.m,
                      "tree_depth": h.tree_depth, "tree_keep": h.tree_keep})
        out["trees"] = evaluation.tree_info(trees)
        out["beam"] = evaluation.beam_all(judge_set, trees, config)
    return out


def run_instructions(config, judge_set: dict) -> dict:
    guards.check_preempted("the instructions domain")
    i = config.instructions
    pools = if_dom.make_pools(i.num_queries, i.pool_size, config.seed)
    return {"pools": evaluation.pool_info(pools),
            "rerank": evaluation.rerank_all(judge_set, pools, config)}


def _write(config, workdir: str, results: dict) -> None:
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"),
                             report.results_markdown(results) + "\n")
        if config.eval.plots:
            report.plots(results, os.path.join(workdir, wd.PLOTS))


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    t_start = time.perf_counter()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               renamed=config_schema.RENAMED_KEYS)
    stages = Stages(workdir, folder=".")          # the layout of runs made before stages
    results = {"tag": config.tag, "training": {}, "domains": {}}
    if "arithmetic" in config.domains:
        mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
        results["domains"]["arithmetic"] = run_arithmetic(config, stages, mesh,
                                                          results["training"])
    sim = {"oracle": judges.OracleJudge(), **evaluation.simulated_judges(config)}
    if "humaneval" in config.domains:
        results["domains"]["humaneval"] = run_humaneval(config, stages, sim)
    if "instructions" in config.domains:
        results["domains"]["instructions"] = run_instructions(config, sim)
    results["targets"] = report.targets(results)
    results["warnings"] = truncation.truncation_warnings(results, config.eval.max_truncation_rate)
    results["wall_s"] = time.perf_counter() - t_start
    results["machine"] = common_report.machine()
    _write(config, workdir, results)
    return results
