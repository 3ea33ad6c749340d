"""The SWE-Gym experiment: benchmark generation, policies, RFT caps, verifier, scaling.

`train_and_evaluate(config, workdir)`; `main.py` parses flags. Stages (each result is
saved under `<workdir>/stages/`, each trained model under `<workdir>/models/<name>/` with
train_loop checkpoints, so a rerun resumes where it stopped):

  instances    repositories (train / held-out split by repository) -> validated instances
  recheck      held-out instances: the grader's verdict on the gold and empty patches
               against a direct, uncached re-run of pytest in a fresh checkout
  search       the search baseline on the held-out instances
  base         workspace LM pre-trained on synthetic line repairs of the training repos
  base_eval    base LM at T = 0 on the held-out instances
  search_train the search baseline on the rft.num_train training instances; its resolved
               trajectories rewritten as fix(line, op) conversations (warm start data)
  warm         round 0: the base fine-tuned on them (rft.warm_start); warm_eval
  ei_sample_r<k>  round k of expert iteration: the round k-1 model, rft.rollouts per
               training instance at T = rft.temperature (batched sampling, PooledLM),
               graded (grade cache keyed by instance and patch hash)
  ei_r<k>      round 0 fine-tuned on all own resolved rollouts of rounds 1..k (cap
               rft.main_cap per instance); ei_eval_r<k> at T = 0 on the held-out instances
  caps_<c>     cap ablation on the same pool (0 = none), from round 0
  verifier     base LM fine-tuned on balanced resolved / unresolved own rollouts -> p(YES)
  scaling      the last round's model, scaling.rollouts per held-out instance (rollout 0
               at T = 0, the rest at scaling.temperature), graded and scored;
               Pass@K / Best@K curves
  served       (optional) a served model as a ChatPolicy on the held-out instances
"""
from __future__ import annotations

import dataclasses
import os
import time

import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import guards
from lib.common import plotting
from lib.common import report as common_report
from lib.common import stats
from lib.common import workdir as wd
from lib.lm import chat, client, sandbox
from lib.lm.local import LocalLM
from lib.lm.model import num_params
from lib.lm.tokenizer import Tokenizer, train_bpe
from lib.swe_gym import (agent, config_schema, expert_iteration, generate, grader, instances,
                         policies, pretrain, repos, rft, runtime, scaling, verifier)

validate = config_schema.validate


class _Stages:
    """JSON results of finished stages under <workdir>/stages (recomputed when absent)."""

    def __init__(self, workdir: str):
        self.dir = os.path.join(workdir, "stages")
        os.makedirs(self.dir, exist_ok=True)
        self._wall_path = os.path.join(self.dir, "_wall_s.json")
        self.wall: dict[str, float] = (wd.read_json(self._wall_path)
                                       if os.path.exists(self._wall_path) else {})

    def run(self, name: str, fn):
        path = os.path.join(self.dir, name + ".json")
        if os.path.exists(path):
            return wd.read_json(path)
        guards.check_preempted(f"stage {name}")
        t0 = time.perf_counter()
        out = fn()
        self.wall[name] = time.perf_counter() - t0
        guards.check_preempted(f"writing stage {name}")
        wd.write_json_atomic(path, out)
        wd.write_json_atomic(self._wall_path, self.wall)   # kept across reruns
        logging.info("swe_gym: stage %s done in %.0f s", name, self.wall[name])
        return out


def _progress(name: str):
    def log(i: int, n: int) -> None:
        if i % 50 == 0 or i == n:
            logging.info("swe_gym: %s %d/%d rollouts", name, i, n)
    return log


def _rate(records: list[dict]) -> dict:
    n = len(records)
    k = sum(r["resolved"] for r in records)
    exits: dict[str, int] = {}
    for r in records:
        e = r["trajectory"]["exit_reason"].split(":")[0]
        exits[e] = exits.get(e, 0) + 1
    empty = sum(not r["trajectory"]["patch"].strip() for r in records)
    return {"resolved": k, "n": n, "rate": k / n if n else float("nan"), "exits": exits,
            "empty_patch": empty}


def _by_kind(records: list[dict], kinds: dict[str, str]) -> dict:
    out: dict[str, list] = {}
    for r in records:
        out.setdefault(kinds[r["instance_id"]], []).append(r["resolved"])
    return {k: [int(sum(v)), len(v)] for k, v in sorted(out.items())}


def _slim(records: list[dict]) -> list[dict]:
    """Records without the bulky status maps (kept: verdict, patch, conversations)."""
    out = []
    for r in records:
        g = {k: v for k, v in r["grade"].items() if k != "status"}
        out.append({**r, "grade": g})
    return out


def _direct_verdict(inst: dict, patch: str, store: str, limits) -> str:
    """Resolution from an uncached pytest run, written independently of grader.grade's
    plumbing (own checkout, `git apply`, test files from the test patch, run_pytest)."""
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        if patch.strip():
            r = repos.git(ws.path, "apply", "-", check=False, input_text=patch)
            if r.returncode:
                return "NO"
        for f in runtime.patch_files(inst["test_patch"]):
            repos.git(ws.path, "checkout", "-q", inst["base_commit"], "--", f)
        repos.git(ws.path, "apply", "-", input_text=inst["test_patch"])
        rep = sandbox.run_pytest(ws.path, grader.test_targets(inst), limits=limits,
                                 env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return grader.resolution(rep.status, instances.test_list(inst, "FAIL_TO_PASS"),
                             instances.test_list(inst, "PASS_TO_PASS"))["resolution"]


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    t_start = time.perf_counter()
    wd.prepare(workdir, config_lib.to_json_dict(config))
    stages = _Stages(workdir)
    store = os.path.abspath(os.path.join(workdir, "store"))
    cache = runtime.TestCache(os.path.join(workdir, "test_cache"))
    grades = grader.GradeCache(os.path.join(workdir, "grade_cache"))
    limits = dataclasses.replace(runtime.DEFAULT_LIMITS, wall_s=config.sandbox.wall_s,
                                 cpu_s=config.sandbox.cpu_s, memory_mb=config.sandbox.memory_mb)
    caps = agent.Caps(max_turns=config.agent.max_turns, max_context=config.agent.max_context,
                      loop_window=config.agent.loop_window)
    bash_cache: dict = {}
    ep_memo: dict = {}      # agent.run_episode memo for the (deterministic) LM workflow
    d = config.data
    specs = repos.sample_specs(d.num_repos, config.seed, d.themes_per_repo, d.funcs_per_theme)
    test_repos = [s.name for s in specs[-d.num_test_repos:]]
    train_specs = specs[:-d.num_test_repos]

    # ---------------------------------------------------------------- instances
    def make_instances():
        def progress(i, n, k):
            logging.info("swe_gym: generated %d/%d repositories, %d instances", i, n, k)
        insts, st = generate.generate(specs, store, per_repo=d.per_repo, kinds=tuple(d.kinds),
                                      seed=config.seed, cache=cache, limits=limits,
                                      progress=progress)
        return {"instances": insts, "stats": dataclasses.asdict(st)}
    gen = stages.run("instances", make_instances)
    missing = [s.name for s in specs if not os.path.isdir(repos.repo_dir(store, s.name))]
    if missing:
        raise RuntimeError(f"{workdir}/stages/instances.json exists but the repository store "
                           f"lacks {missing[:3]}; delete stages/instances.json to regenerate "
                           "(the commits are reproducible: same hashes)")
    all_insts = [instances.validate_record(r) for r in gen["instances"]]
    instances.save(os.path.join(workdir, "instances.jsonl"), all_insts)
    if len(all_insts) < d.min_instances:
        raise RuntimeError(f"only {len(all_insts)} validated instances, fewer than "
                           f"data.min_instances = {d.min_instances}; raise data.per_repo")
    train_insts, test_insts = instances.split_by_repo(all_insts, test_repos)
    kinds = {r["instance_id"]: r["bug_kind"] for r in all_insts}
    logging.info("swe_gym: %d instances (%d train, %d held-out)", len(all_insts),
                 len(train_insts), len(test_insts))

    # ---------------------------------------------------------------- recheck
    def recheck():
        rows = []
        for inst in test_insts:
            for name, patch in (("gold", inst["patch"]), ("empty", "")):
                g = grader.grade(inst, patch, store, limits=limits, cache=cache).resolution
                rows.append([inst["instance_id"], name, g, _direct_verdict(inst, patch, store, limits)])
        return rows
    rechecked = stages.run("recheck", recheck)

    # ---------------------------------------------------------------- search baseline
    search_caps = dataclasses.replace(caps, max_turns=config.search.max_turns)
    search = stages.run("search", lambda: _slim(rft.collect(
        test_insts, lambda i, r: policies.SearchPolicy(config.search.max_candidates), store,
        rollouts=1, caps=search_caps, cache=cache, limits=limits, bash_cache=bash_cache)))

    # ---------------------------------------------------------------- base LM
    syn = pretrain.examples(train_specs, config.pretrain.num_examples, config.seed)
    tok_path = os.path.join(workdir, "models", "tokenizer.json")
    if os.path.exists(tok_path):
        tok = Tokenizer.load(tok_path)
    else:
        texts = [chat.render_chat(c, add_generation_prompt=False) for c in syn[:2000]]
        tok = train_bpe(texts, config.lm.bpe_merges) if config.lm.bpe_merges else Tokenizer()
        os.makedirs(os.path.dirname(tok_path), exist_ok=True)
        tok.save(tok_path)
    cfg = config_schema.lm_config(config, tok.vocab_size)
    fits = [c for c in syn if len(tok.encode(chat.render_chat(c, add_generation_prompt=False),
                                             allow_special=True)) <= cfg.max_len]
    p = config.pretrain
    base_params, base_info = rft.finetune(cfg, tok, fits, None, os.path.join(workdir, "models", "base"),
                                          epochs=1, min_steps=p.steps, batch_size=p.batch_size,
                                          lr=p.lr, seed=config.seed, warmup_steps=50)

    def lm_policy(params, temperature, seed):
        return policies.WorkspaceLMPolicy(LocalLM(cfg, params, tok), temperature=temperature,
                                          max_edits=config.lm.max_edits,
                                          max_tokens=config.lm.max_tokens, seed=seed)

    def evaluate(params, name):
        return _slim(rft.collect(test_insts, lambda i, r: lm_policy(params, 0.0, 7 + i), store,
                                 rollouts=1, caps=caps, cache=cache, limits=limits,
                                 bash_cache=bash_cache, grade_cache=grades, memo=ep_memo))

    base_eval = stages.run("base_eval", lambda: evaluate(base_params, "base"))
    e = config.rft
    sample_pool = train_insts if e.num_train < 0 else train_insts[:e.num_train]

    def finetune(convs, init, name, min_steps):
        guards.check_preempted(f"fine-tune {name}")
        return rft.finetune(cfg, tok, convs, init, os.path.join(workdir, "models", name),
                            epochs=e.epochs, min_steps=min_steps, batch_size=e.batch_size,
                            lr=e.lr, seed=config.seed)[0]

    # ---------------------------------------------------------------- warm start (round 0)
    warm: dict = {}
    r0_params, r0_eval = base_params, base_eval
    if e.warm_start:
        search_train = stages.run("search_train", lambda: _slim(rft.collect(
            sample_pool, lambda i, r: policies.SearchPolicy(config.search.max_candidates),
            store, rollouts=1, caps=search_caps, cache=cache, limits=limits,
            bash_cache=bash_cache, grade_cache=grades)))
        demos = expert_iteration.search_demonstrations(search_train, config.lm.max_edits)
        warm = {"search_resolved": sum(r["resolved"] for r in search_train),
                "instances": len(search_train), "demonstrations": len(demos)}
        if demos:
            r0_params = finetune(demos, base_params, "warm", e.warm_steps)
            r0_eval = stages.run("warm_eval", lambda: evaluate(r0_params, "warm"))
            warm.update(_rate(r0_eval), by_kind=_by_kind(r0_eval, kinds))
        else:
            warm["skipped"] = "the search baseline resolved nothing expressible as fix(line, op)"
    r0_ok = [r["resolved"] for r in r0_eval]

    # ---------------------------------------------------------------- expert iteration
    own: list[dict] = []            # every self-sampled rollout of rounds 1..r
    rounds, params = [], r0_params
    round_params = {0: r0_params}
    for rnd in range(1, e.rounds + 1):
        cur = params

        def sample(cur=cur, rnd=rnd):
            pools: dict[int, expert_iteration.PooledLM] = {}

            def make(i, r):
                if i not in pools:
                    pools.clear()
                    pools[i] = expert_iteration.PooledLM(
                        LocalLM(cfg, cur, tok), min(e.pool, e.rollouts),
                        seed=config.seed * 7919 + rnd * 1009 + i)
                return policies.WorkspaceLMPolicy(pools[i], temperature=e.temperature,
                                                  max_edits=config.lm.max_edits,
                                                  max_tokens=config.lm.max_tokens, seed=i)
            return _slim(rft.collect(sample_pool, make, store, rollouts=e.rollouts, caps=caps,
                                     cache=cache, limits=limits, bash_cache=bash_cache,
                                     grade_cache=grades, memo=ep_memo, progress=_progress(f"round {rnd}")))
        recs = stages.run(f"ei_sample_r{rnd}", sample)
        own += recs
        kept = [r for r in rft.select(own, e.main_cap or None)
                if r["trajectory"]["extra"].get("lm_messages")]
        info = {"round": rnd, "sampled": len(recs),
                "sample_resolved": sum(r["resolved"] for r in recs),
                "instances_with_success": len({r["instance_id"] for r in recs if r["resolved"]}),
                "distinct_patches": len({(r["instance_id"], r["trajectory"]["patch"]) for r in recs}),
                "train_trajectories": len(kept),
                "train_instances": len({r["instance_id"] for r in kept})}
        info["yield"] = info["sample_resolved"] / max(info["sampled"], 1)
        if not kept:
            info["skipped"] = "no resolved trajectories to fine-tune on"
            rounds.append(info)
            continue
        params = finetune(rft.conversations(kept), r0_params, f"ei_r{rnd}",
                          max(e.min_steps, e.epochs * -(-len(kept) // e.batch_size)))
        round_params[rnd] = params
        ev = stages.run(f"ei_eval_r{rnd}", lambda params=params: evaluate(params, f"r{rnd}"))
        info.update(_rate(ev), by_kind=_by_kind(ev, kinds),
                    vs_round0=expert_iteration.mcnemar_p(r0_ok, [r["resolved"] for r in ev]))
        rounds.append(info)
    n_export = rft.export_chat_jsonl(os.path.join(workdir, "resolved_trajectories.jsonl"), own)
    final_round = max(round_params)
    final_params = round_params[final_round]

    # ---------------------------------------------------------------- cap ablation
    # every cap fine-tunes from round 0 on the same pool (all rounds' own rollouts); the
    # main cap's model is the last round's
    rft_results = {}
    for cap in e.caps:
        key = f"cap_{cap or 'none'}"
        kept = [r for r in rft.select(own, cap or None)
                if r["trajectory"]["extra"].get("lm_messages")]
        if not kept:
            rft_results[key] = {"trajectories": 0, "instances": 0,
                                "skipped": "no resolved trajectories to fine-tune on"}
            continue
        if cap == e.main_cap and final_round == e.rounds:
            ev = stages.run(f"ei_eval_r{final_round}", lambda: [])
        else:
            p_cap = finetune(rft.conversations(kept), r0_params, f"cap_{key}",
                             max(e.min_steps, e.epochs * -(-len(kept) // e.batch_size)))
            ev = stages.run(f"caps_{key}", lambda p_cap=p_cap: evaluate(p_cap, key))
        rft_results[key] = {"trajectories": len(kept),
                            "instances": len({r["instance_id"] for r in kept}),
                            **_rate(ev), "by_kind": _by_kind(ev, kinds),
                            "vs_round0": expert_iteration.mcnemar_p(
                                r0_ok, [r["resolved"] for r in ev])}

    # ---------------------------------------------------------------- verifier
    ver_lm, ver_info = None, {}
    try:
        vconvs = verifier.training_conversations(own, cap_positive=config.verifier.cap_positive,
                                                 seed=config.seed, max_chars=config.verifier.max_chars)
        vfit = [c for c in vconvs if len(tok.encode(chat.render_chat(c, add_generation_prompt=False),
                                                    allow_special=True)) <= cfg.max_len]
        v = config.verifier
        vparams, vinfo = rft.finetune(cfg, tok, vfit, base_params,
                                      os.path.join(workdir, "models", "verifier"),
                                      epochs=v.epochs, min_steps=v.min_steps,
                                      batch_size=v.batch_size, lr=v.lr, seed=config.seed)
        ver_lm = LocalLM(cfg, vparams, tok, name="verifier")
        ver_info = {"train_conversations": len(vfit), "dropped_too_long": len(vconvs) - len(vfit),
                    "steps": vinfo["steps"]}
    except ValueError as err:
        ver_info = {"skipped": str(err)}

    # ---------------------------------------------------------------- scaling
    sc = config.scaling
    sc_params = final_params
    sc_name = f"round {final_round}" + (" (warm start)" if final_round == 0 and "rate" in warm
                                        else "")
    sc_insts = test_insts if sc.num_test < 0 else test_insts[:sc.num_test]

    def scaling_rollouts():
        pools: dict[int, expert_iteration.PooledLM] = {}

        def make(i, r):
            if r == 0:          # rollout 0: greedy
                return lm_policy(sc_params, 0.0, 50_000 + i)
            if i not in pools:
                pools.clear()
                pools[i] = expert_iteration.PooledLM(LocalLM(cfg, sc_params, tok),
                                                     sc.rollouts - 1, seed=50_000 + i)
            return policies.WorkspaceLMPolicy(pools[i], temperature=sc.temperature,
                                              max_edits=config.lm.max_edits,
                                              max_tokens=config.lm.max_tokens, seed=i)
        return _slim(rft.collect(sc_insts, make, store, rollouts=sc.rollouts, caps=caps,
                                 cache=cache, limits=limits, bash_cache=bash_cache,
                                 grade_cache=grades, memo=ep_memo, progress=_progress("scaling")))
    sc_recs = stages.run("scaling_rollouts", scaling_rollouts)
    resolved = np.array([r["resolved"] for r in sc_recs], bool).reshape(len(sc_insts), sc.rollouts)
    scaling_out: dict = {"policy": sc_name, "instances": len(sc_insts), "rollouts": sc.rollouts}
    if ver_lm is not None:
        vmc = config.verifier.max_chars
        scores = np.array(stages.run("scaling_scores", lambda: verifier.score_records(
            ver_lm, sc_recs, max_chars=vmc)), float).reshape(resolved.shape)
        scaling_out["verifier_heldout"] = verifier.accuracy(scores.ravel(), resolved.ravel())
        scaling_out["curves"] = scaling.curves(resolved, scores, sc.ks, sc.num_subsamples,
                                               config.seed)
    else:
        scaling_out["curves"] = scaling.curves(resolved, np.zeros(resolved.shape), sc.ks,
                                               sc.num_subsamples, config.seed)
        scaling_out["note"] = "no verifier (Best@K uses rollout order)"

    # ---------------------------------------------------------------- served model
    served = None
    if config.served.base_url:
        lm = client.OpenAIClient(config.served.base_url, config.served.model,
                                 tool_mode=config.served.tool_mode,
                                 cache_dir=config.served.cache_dir or None)
        served_caps = dataclasses.replace(caps, max_turns=config.served.max_turns)
        served_recs = stages.run("served", lambda: _slim(rft.collect(
            test_insts, lambda i, r: policies.ChatPolicy(lm, temperature=0.0, seed=i), store,
            rollouts=1, caps=served_caps, cache=cache, limits=limits, bash_cache=bash_cache)))
        served = {"model": config.served.model, **_rate(served_recs)}

    # ---------------------------------------------------------------- results
    base_rate = _rate(base_eval)
    r0_rate = _rate(r0_eval)
    last = next((r for r in reversed(rounds) if "rate" in r), None)
    gain = last["rate"] - r0_rate["rate"] if last else None
    test = last["vs_round0"] if last else {"wins": 0, "losses": 0, "p": 1.0}
    curves = scaling_out["curves"]
    ks = sorted(curves)
    best = [curves[k]["best_mean"] for k in ks]
    pass1 = curves[ks[0]]["pass_mean"]
    # Best@K must rise by more than twice the subsample sd of Pass@1 to count as rising
    margin = 2 * curves[ks[0]]["pass_std"]
    best_rises = all(b2 >= b1 for b1, b2 in zip(best, best[1:])) and best[-1] > best[0] + margin
    best_above = all(curves[k]["best_mean"] > pass1 + margin for k in ks if k > 1)
    agree = sum(r[2] == r[3] for r in rechecked)
    results = {
        "tag": config.tag,
        "instances": {"total": len(all_insts), "train": len(train_insts), "test": len(test_insts),
                      "train_repos": len(train_specs), "test_repos": test_repos,
                      "by_kind": {k: sum(v == k for v in kinds.values()) for k in sorted(set(kinds.values()))},
                      "generation": gen["stats"]},
        "recheck": {"agree": agree, "checked": len(rechecked),
                    "disagreements": [r for r in rechecked if r[2] != r[3]][:10]},
        "search": {**_rate(search), "by_kind": _by_kind(search, kinds)},
        "lm": {"num_params": num_params(base_params), "vocab": tok.vocab_size,
               "model": dataclasses.asdict(cfg), "pretrain_examples": len(fits),
               "pretrain_steps": base_info["steps"]},
        "base": {**base_rate, "by_kind": _by_kind(base_eval, kinds)},
        "warm": warm,
        "rounds": rounds,
        "expert_iteration": {"instances": len(sample_pool), "rollouts": e.rollouts,
                             "temperature": e.temperature, "main_cap": e.main_cap,
                             "exported_chat_jsonl": n_export},
        "rft": rft_results,
        "verifier": ver_info,
        "scaling": scaling_out,
        "served": served,
        "targets": {
            "rft_gain": {"round0": r0_rate["rate"], "final": last["rate"] if last else None,
                         "round": last["round"] if last else None, "gain": gain,
                         "wins": test["wins"], "losses": test["losses"], "p_value": test["p"],
                         "met": bool(gain is not None and gain > config.eval.target_gain
                                     and test["p"] < 0.05)},
            "best_at_k_rises_above_pass1": {"best": best, "pass1": pass1, "margin": margin,
                                            "met": bool(best_rises and best_above)},
            "grader_agrees_with_rerun": {"agree": agree, "checked": len(rechecked),
                                         "met": agree == len(rechecked)},
        },
        "test_cache": {"hits": cache.hits, "misses": cache.misses},
        "grade_cache": {"graded": grades.graded, "hits": grades.hits,
                        "entries": len(os.listdir(os.path.join(workdir, "grade_cache"))),
                        "rollouts": len(search) + len(base_eval) + len(own) + len(sc_recs)
                        + len(r0_eval) * (1 + len(rounds) + len(e.caps))},
        "stage_wall_s": stages.wall,
        "wall_s": time.perf_counter() - t_start,
        "stages_total_wall_s": float(sum(stages.wall.values())),
        "machine": common_report.machine(),
    }
    guards.check_preempted("writing results.json")
    if config.eval.plots:
        _plots(workdir, results)
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), results_table(results) + "\n")
    logging.info("swe_gym: done in %.0f s", results["wall_s"])
    return results


def _plots(workdir: str, results: dict) -> None:
    import matplotlib.pyplot as plt
    curves = results["scaling"]["curves"]
    ks = sorted(int(k) for k in curves)
    c = {int(k): v for k, v in curves.items()}
    plotting.curves_and_points(
        os.path.join(workdir, wd.PLOTS, "pass_best_at_k.png"), curves={},
        points={"Pass@K": (ks, [c[k]["pass_mean"] for k in ks], [c[k]["pass_std"] for k in ks]),
                "Best@K (verifier)": (ks, [c[k]["best_mean"] for k in ks],
                                      [c[k]["best_std"] for k in ks])},
        xlabel="K (rollouts)", ylabel="resolve rate (held-out)", logx=True,
        title=f"{results['scaling']['policy']}: Pass@K vs Best@K")
    rows = policy_rows(results)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.bar(range(len(rows)), [r[2] for r in rows], color=[f"C{i % 10}" for i in range(len(rows))])
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], rotation=25, fontsize=7, ha="right")
    ax.set_ylabel("held-out resolve rate")
    ax.set_title("resolve rate by policy")
    plotting.save(fig, os.path.join(workdir, wd.PLOTS, "resolve_rates.png"))
    rounds = [r for r in results["rounds"] if "rate" in r]
    if rounds:
        r0 = results["warm"] if "rate" in results["warm"] else results["base"]
        xs = [0] + [r["round"] for r in rounds]
        ys = [r0["rate"]] + [r["rate"] for r in rounds]
        ci = [stats.wilson_interval(r["resolved"], r["n"]) for r in [r0] + rounds]
        plotting.curves_and_points(
            os.path.join(workdir, wd.PLOTS, "expert_iteration.png"), curves={},
            points={"held-out resolve rate (T = 0, 95 % Wilson)": (
                        xs, ys, [[y - lo for y, (lo, _) in zip(ys, ci)],
                                 [hi - y for y, (_, hi) in zip(ys, ci)]]),
                    "training yield (resolved / sampled)": ([r["round"] for r in rounds],
                                                            [r["yield"] for r in rounds],
                                                            [0.0] * len(rounds))},
            xlabel="expert-iteration round", ylabel="rate", logx=False,
            title="expert iteration of the workspace LM")


def policy_rows(results: dict) -> list[tuple[str, str, float, int, int]]:
    """(policy, training data, rate, resolved, n) for the table and the bar plot."""
    rows = [("search baseline", "—", results["search"]["rate"], results["search"]["resolved"],
             results["search"]["n"]),
            ("workspace LM (base)", f"{results['lm']['pretrain_examples']} synthetic repairs",
             results["base"]["rate"], results["base"]["resolved"], results["base"]["n"])]
    w = results.get("warm") or {}
    if "rate" in w:
        rows.append(("round 0: warm start", f"base + {w['demonstrations']} search-baseline "
                     "trajectories", w["rate"], w["resolved"], w["n"]))
    for r in results["rounds"]:
        if "rate" in r:
            rows.append((f"round {r['round']}: expert iteration", f"round 0 + "
                         f"{r['train_trajectories']} own trajectories ({r['train_instances']} "
                         "instances)", r["rate"], r["resolved"], r["n"]))
    for key, r in results["rft"].items():
        if "rate" in r:
            rows.append((f"RFT {key.replace('_', ' ')}", f"round 0 + {r['trajectories']} own "
                         f"trajectories ({r['instances']} instances)", r["rate"], r["resolved"],
                         r["n"]))
    if results.get("served"):
        s = results["served"]
        rows.append((f"served {s['model']}", "—", s["rate"], s["resolved"], s["n"]))
    return rows


def results_table(results: dict) -> str:
    """Markdown tables of results.json (spliced into the README by tools/swe_gym_results.py)."""
    cell = common_report.cell
    inst = results["instances"]
    lines = [f"Benchmark: {inst['total']} validated instances from "
             f"{inst['train_repos'] + len(inst['test_repos'])} generated repositories "
             f"({inst['train']} train / {inst['test']} held-out in {len(inst['test_repos'])} "
             f"repositories); bug kinds {inst['by_kind']}; generation rejected "
             f"{inst['generation']['rejected']}.", "",
             "| policy | training data | held-out resolved | rate [95 % Wilson] |",
             "|---|---|---|---|"]
    for name, data, rate, k, n in policy_rows(results):
        lo, hi = stats.wilson_interval(k, n)
        lines.append(f"| {name} | {data} | {k}/{n} | {cell(rate, 3, 'f')} "
                     f"[{cell(lo, 2, 'f')}, {cell(hi, 2, 'f')}] |")
    ei, w = results["expert_iteration"], results.get("warm") or {}
    lines += [""]
    if w:
        lines += [f"Warm start: the search baseline resolved {w['search_resolved']}/"
                  f"{w['instances']} training instances; {w['demonstrations']} of those "
                  "trajectories are expressible as fix(line, op) and were used.", ""]
    lines += [f"Expert iteration on {ei['instances']} training instances × {ei['rollouts']} "
              f"rollouts per round (T = {ei['temperature']}, batched sampling); each round "
              f"fine-tunes round 0 on all own resolved trajectories so far (cap "
              f"{ei['main_cap'] or 'none'} per instance); paired test vs round 0 on the "
              "held-out instances (exact one-sided McNemar):", "",
              "| round | sampled | resolved (yield) | instances solved | distinct patches | "
              "trained on | held-out | vs round 0: gained / lost, p |",
              "|---|---|---|---|---|---|---|---|"]
    for r in results["rounds"]:
        held = f"{cell(r['rate'], 3, 'f')}" if "rate" in r else "— (no data)"
        vs = (f"{r['vs_round0']['wins']} / {r['vs_round0']['losses']}, "
              f"{cell(r['vs_round0']['p'], 2, 'f')}" if "vs_round0" in r else "—")
        lines.append(f"| {r['round']} | {r['sampled']} | {r['sample_resolved']} "
                     f"({cell(r['yield'], 3, 'f')}) | {r['instances_with_success']}/"
                     f"{ei['instances']} | {r['distinct_patches']} | {r['train_trajectories']} | "
                     f"{held} | {vs} |")
    lines += ["", f"{ei['exported_chat_jsonl']} resolved own trajectories exported as chat JSONL.",
              ""]
    sc = results["scaling"]
    curves = {int(k): v for k, v in sc["curves"].items()}
    lines += [f"Pass@K / Best@K ({sc['policy']}, {sc['instances']} held-out instances × "
              f"{sc['rollouts']} rollouts; mean ± sd over 100 subsamples):", "",
              "| K | Pass@K | Best@K (verifier) | Pass@K closed form |", "|---|---|---|---|"]
    for k in sorted(curves):
        c = curves[k]
        lines.append(f"| {k} | {cell(c['pass_mean'], 3, 'f')} ± {cell(c['pass_std'], 3, 'f')} | "
                     f"{cell(c['best_mean'], 3, 'f')} ± {cell(c['best_std'], 3, 'f')} | "
                     f"{cell(c['pass_exact'], 3, 'f')} |")
    if "verifier_heldout" in sc:
        v = sc["verifier_heldout"]
        lines += ["", f"Verifier on the held-out rollouts: accuracy {cell(v['accuracy'], 3, 'f')}, "
                  f"AUC {cell(v['auc'], 3, 'f')} (trained on "
                  f"{results['verifier'].get('train_conversations', 0)} balanced conversations)."]
    t = results["targets"]
    g = t["rft_gain"]
    lines += ["", "| target | measured | verdict |", "|---|---|---|",
              f"| fine-tuning on its own resolved trajectories raises the held-out resolve rate "
              f"(last round vs round 0, one-sided exact McNemar p < 0.05) | round 0 "
              f"{cell(g['round0'], 3, 'f')} → round {g['round']} {cell(g['final'], 3, 'f')} "
              f"({g['wins']} gained, {g['losses']} lost; p = {cell(g['p_value'], 3, 'f')}) | "
              f"{'MET' if g['met'] else 'MISSED'} |",
              f"| Best@K rises with K and stays above Pass@1 (by > 2 sd of Pass@1) | Best@K "
              f"{', '.join(cell(b, 3, 'f') for b in t['best_at_k_rises_above_pass1']['best'])}; "
              f"Pass@1 {cell(t['best_at_k_rises_above_pass1']['pass1'], 3, 'f')} | "
              f"{'MET' if t['best_at_k_rises_above_pass1']['met'] else 'MISSED'} |",
              f"| grader = direct re-run (gold and empty patch, held-out) | "
              f"{t['grader_agrees_with_rerun']['agree']}/{t['grader_agrees_with_rerun']['checked']} | "
              f"{'MET' if t['grader_agrees_with_rerun']['met'] else 'MISSED'} |",
              "", f"Grading: about {results['grade_cache']['rollouts']} graded rollouts in all "
              f"stages, {results['grade_cache']['entries']} distinct (instance, patch) pairs "
              "graded by pytest (the grade cache on disk; search-baseline verdicts of the "
              "earlier run are not in it).",
              "", f"Measured on {results['machine']}; stages took "
              f"{results.get('stages_total_wall_s', results['wall_s']):.0f} s in all "
              f"({', '.join(f'{k} {v:.0f} s' for k, v in results['stage_wall_s'].items())}; "
              "machine shared with other jobs)."]
    return "\n".join(lines)
