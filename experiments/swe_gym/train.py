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
  sample       base LM at T = rft.temperature, rft.rollouts per training instance
  rft_cap<c>   fine-tune the base on the resolved samples with per-instance cap c
               (0 = none); evaluated at T = 0 on the held-out instances
  verifier     base LM fine-tuned on balanced resolved / unresolved samples -> p(YES)
  scaling      the rft.main_cap model, scaling.rollouts per held-out instance (rollout 0
               at T = 0, the rest at scaling.temperature), graded and scored;
               Pass@K / Best@K curves
  served       (optional) a served model as a ChatPolicy on the held-out instances
"""
from __future__ import annotations

import dataclasses
import math
import os
import time

import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import plotting
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.lm import chat, client, sandbox
from lib.lm.local import LocalLM
from lib.lm.model import num_params
from lib.lm.tokenizer import Tokenizer, train_bpe
from lib.swe_gym import (agent, config_schema, generate, grader, instances, policies, pretrain,
                         repos, rft, runtime, scaling, verifier)

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
        t0 = time.perf_counter()
        out = fn()
        self.wall[name] = time.perf_counter() - t0
        wd.write_json_atomic(path, out)
        wd.write_json_atomic(self._wall_path, self.wall)   # kept across reruns
        logging.info("swe_gym: stage %s done in %.0f s", name, self.wall[name])
        return out


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
    limits = dataclasses.replace(runtime.DEFAULT_LIMITS, wall_s=config.sandbox.wall_s,
                                 cpu_s=config.sandbox.cpu_s, memory_mb=config.sandbox.memory_mb)
    caps = agent.Caps(max_turns=config.agent.max_turns, max_context=config.agent.max_context,
                      loop_window=config.agent.loop_window)
    bash_cache: dict = {}
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
                                 bash_cache=bash_cache))

    base_eval = stages.run("base_eval", lambda: evaluate(base_params, "base"))
    sample_pool = train_insts if config.rft.num_train < 0 else train_insts[:config.rft.num_train]
    samples = stages.run("sample", lambda: _slim(rft.collect(
        sample_pool, lambda i, r: lm_policy(base_params, config.rft.temperature,
                                            1000 + i * 97 + r), store,
        rollouts=config.rft.rollouts, caps=caps, cache=cache, limits=limits,
        bash_cache=bash_cache)))
    n_export = rft.export_chat_jsonl(os.path.join(workdir, "resolved_trajectories.jsonl"), samples)

    # ---------------------------------------------------------------- RFT caps
    rft_results, rft_params = {}, {}
    for cap in config.rft.caps:
        kept = [r for r in rft.select(samples, cap or None)
                if r["trajectory"]["extra"].get("lm_messages")]
        key = f"cap_{cap or 'none'}"
        if not kept:
            rft_results[key] = {"trajectories": 0, "instances": 0, "skipped":
                                "no resolved trajectories to fine-tune on"}
            continue
        params, info = rft.finetune(cfg, tok, rft.conversations(kept), base_params,
                                    os.path.join(workdir, "models", f"rft_{key}"),
                                    epochs=config.rft.epochs, min_steps=config.rft.min_steps,
                                    batch_size=config.rft.batch_size, lr=config.rft.lr,
                                    seed=config.seed)
        rft_params[cap] = params
        ev = stages.run(f"rft_{key}", lambda: evaluate(params, key))
        rft_results[key] = {"trajectories": len(kept),
                            "instances": len({r["instance_id"] for r in kept}),
                            "steps": info["steps"], **_rate(ev), "by_kind": _by_kind(ev, kinds)}

    # ---------------------------------------------------------------- verifier
    ver_lm, ver_info = None, {}
    try:
        vconvs = verifier.training_conversations(samples, cap_positive=config.verifier.cap_positive,
                                                 seed=config.seed, max_chars=config.verifier.max_chars)
        vfit = [c for c in vconvs if len(tok.encode(chat.render_chat(c, add_generation_prompt=False),
                                                    allow_special=True)) <= cfg.max_len]
        vparams, vinfo = rft.finetune(cfg, tok, vfit, base_params,
                                      os.path.join(workdir, "models", "verifier"),
                                      epochs=config.verifier.epochs,
                                      min_steps=config.verifier.min_steps,
                                      batch_size=config.verifier.batch_size,
                                      lr=config.verifier.lr, seed=config.seed)
        ver_lm = LocalLM(cfg, vparams, tok, name="verifier")
        ver_info = {"train_conversations": len(vfit), "dropped_too_long": len(vconvs) - len(vfit),
                    "steps": vinfo["steps"]}
    except ValueError as e:
        ver_info = {"skipped": str(e)}

    # ---------------------------------------------------------------- scaling
    sc = config.scaling
    main_cap = config.rft.main_cap
    sc_params = rft_params.get(main_cap, base_params)
    sc_name = f"rft_cap_{main_cap or 'none'}" if main_cap in rft_params else "base"
    sc_insts = test_insts if sc.num_test < 0 else test_insts[:sc.num_test]

    def scaling_rollouts():
        return _slim(rft.collect(
            sc_insts, lambda i, r: lm_policy(sc_params, 0.0 if r == 0 else sc.temperature,
                                             50_000 + i * 131 + r), store,
            rollouts=sc.rollouts, caps=caps, cache=cache, limits=limits, bash_cache=bash_cache))
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
    main_key = f"cap_{main_cap or 'none'}"
    main = rft_results.get(main_key, {})
    gain = main.get("rate", float("nan")) - base_rate["rate"] if "rate" in main else None
    curves = scaling_out["curves"]
    ks = sorted(curves)
    best = [curves[k]["best_mean"] for k in ks]
    pass1 = curves[ks[0]]["pass_mean"]
    # Best@K must rise by more than twice the subsample sd of Pass@1 to count as rising
    margin = 2 * curves[ks[0]]["pass_std"]
    best_rises = all(b2 >= b1 for b1, b2 in zip(best, best[1:])) and best[-1] > best[0] + margin
    best_above = all(curves[k]["best_mean"] > pass1 + margin for k in ks if k > 1)
    # RFT gain: paired per-instance outcomes (same held-out instances), exact one-sided
    # McNemar (sign) test on the discordant pairs
    base_ok = {r["instance_id"]: r["resolved"] for r in base_eval}
    main_recs = stages.run(f"rft_{main_key}", lambda: []) if "rate" in main else []
    wins = sum(r["resolved"] and not base_ok[r["instance_id"]] for r in main_recs)
    losses = sum(base_ok[r["instance_id"]] and not r["resolved"] for r in main_recs)
    p_gain = sum(math.comb(wins + losses, j) for j in range(wins, wins + losses + 1)) / \
        2 ** (wins + losses) if wins + losses else 1.0
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
        "sample": {**_rate(samples), "rollouts": config.rft.rollouts,
                   "instances": len(sample_pool),
                   "instances_with_success": len({r["instance_id"] for r in samples if r["resolved"]}),
                   "exported_chat_jsonl": n_export},
        "rft": rft_results,
        "verifier": ver_info,
        "scaling": scaling_out,
        "served": served,
        "targets": {
            "rft_gain": {"base": base_rate["rate"], "rft": main.get("rate"), "gain": gain,
                         "wins": wins, "losses": losses, "p_value": p_gain,
                         "met": bool(gain is not None and gain > config.eval.target_gain
                                     and p_gain < 0.05)},
            "best_at_k_rises_above_pass1": {"best": best, "pass1": pass1, "margin": margin,
                                            "met": bool(best_rises and best_above)},
            "grader_agrees_with_rerun": {"agree": agree, "checked": len(rechecked),
                                         "met": agree == len(rechecked)},
        },
        "test_cache": {"hits": cache.hits, "misses": cache.misses},
        "stage_wall_s": stages.wall,
        "wall_s": time.perf_counter() - t_start,
        "stages_total_wall_s": float(sum(stages.wall.values())),
        "machine": common_report.machine(),
    }
    if config.eval.plots:
        _plots(workdir, results)
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    with open(os.path.join(workdir, "results.md"), "w") as f:
        f.write(results_table(results) + "\n")
    logging.info("swe_gym: done in %.0f s", results["wall_s"])
    return results


def _plots(workdir: str, results: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
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
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(range(len(rows)), [r[2] for r in rows], color=[f"C{i}" for i in range(len(rows))])
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], rotation=20, fontsize=8)
    ax.set_ylabel("held-out resolve rate")
    ax.set_title("resolve rate by policy")
    plotting.save(fig, os.path.join(workdir, wd.PLOTS, "resolve_rates.png"))


def policy_rows(results: dict) -> list[tuple[str, str, float, int, int]]:
    """(policy, training data, rate, resolved, n) for the table and the bar plot."""
    rows = [("search baseline", "—", results["search"]["rate"], results["search"]["resolved"],
             results["search"]["n"]),
            ("workspace LM (base)", f"{results['lm']['pretrain_examples']} synthetic repairs",
             results["base"]["rate"], results["base"]["resolved"], results["base"]["n"])]
    for key, r in results["rft"].items():
        if "rate" in r:
            rows.append((f"RFT {key.replace('_', ' ')}", f"{r['trajectories']} trajectories "
                         f"({r['instances']} instances)", r["rate"], r["resolved"], r["n"]))
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
             "| policy | training data | held-out resolved | rate |", "|---|---|---|---|"]
    for name, data, rate, k, n in policy_rows(results):
        lines.append(f"| {name} | {data} | {k}/{n} | {cell(rate, 3, 'f')} |")
    s = results["sample"]
    lines += ["", f"Base-LM sampling on the training repositories: {s['resolved']}/{s['n']} "
              f"rollouts resolved ({s['instances_with_success']}/{s['instances']} instances at "
              f"least once; {s['rollouts']} rollouts each); {s['exported_chat_jsonl']} exported "
              "as chat JSONL.", ""]
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
              f"| RFT raises the held-out resolve rate (one-sided exact McNemar p < 0.05) | base "
              f"{cell(g['base'], 3, 'f')} → RFT {cell(g['rft'], 3, 'f')} ({g.get('wins', 0)} "
              f"gained, {g.get('losses', 0)} lost; p = {cell(g.get('p_value'), 2, 'f')}) | "
              f"{'MET' if g['met'] else 'MISSED'} |",
              f"| Best@K rises with K and stays above Pass@1 (by > 2 sd of Pass@1) | Best@K "
              f"{', '.join(cell(b, 3, 'f') for b in t['best_at_k_rises_above_pass1']['best'])}; "
              f"Pass@1 {cell(t['best_at_k_rises_above_pass1']['pass1'], 3, 'f')} | "
              f"{'MET' if t['best_at_k_rises_above_pass1']['met'] else 'MISSED'} |",
              f"| grader = direct re-run (gold and empty patch, held-out) | "
              f"{t['grader_agrees_with_rerun']['agree']}/{t['grader_agrees_with_rerun']['checked']} | "
              f"{'MET' if t['grader_agrees_with_rerun']['met'] else 'MISSED'} |",
              "", f"Measured on {results['machine']}; stages took "
              f"{results.get('stages_total_wall_s', results['wall_s']):.0f} s in all "
              f"({', '.join(f'{k} {v:.0f} s' for k, v in results['stage_wall_s'].items())}; "
              "machine shared with other jobs, load average 15-20)."]
    return "\n".join(lines)
