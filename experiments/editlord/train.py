"""EditLord in small: learned rule books, editors fine-tuned in four variants, robustness.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` parses flags.

    pairs (HumanEval with injected anti-patterns, or the user's; stage data/pairs)
      -> split by clusters of near-duplicate problems        (lib/editlord/datasets.py)
      -> rule book on the training pairs, rulebook.jsonl     (rule_learning.py)
      -> samples: spec + manifested rules, renamed copies, stdlib corpus (stage
         data/corpus_pairs), identifier abstraction; data/sft_<variant>.jsonl (samples.py)
      -> per variant: editor fine-tuned in editor_<variant>/ (resumes), greedy edits of
         clean and perturbed held-out pairs, scored          (editor_training.py,
                                                               evaluation.py)
      -> prompting and iterative modes against a served LM (when configured)
      -> results.json, results.md, plots/*.png               (report.py)
"""
from __future__ import annotations

import os
import time
from collections import Counter

import jax
import numpy as np

from lib.common import config as config_lib
from lib.common import extras, guards
from lib.common import mesh as mesh_lib
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.editlord import datasets, evaluation, rule_learning, samples
from lib.editlord import report as el_report
from lib.editlord.config_schema import RENAMED_KEYS, optional_modules, validate
from lib.editlord.editor_training import build_tokenizer, train_editor
from lib.lm import sft


class _Clock:
    """Wall seconds per named stage, into `stage_s`."""

    def __init__(self):
        self.stage_s: dict = {}

    def time(self, name: str, fn, *args, **kw):
        t = time.perf_counter()
        out = fn(*args, **kw)
        self.stage_s[name] = time.perf_counter() - t
        return out


def load_data(config, data: Stages, results: dict):
    """(train pairs, held-out pairs); results["data"] describes them."""
    ps, pstats = datasets.humaneval_pairs(config, data)
    if not ps:
        raise ValueError("no usable pairs; check data.* settings")
    train_pairs, test_pairs, sinfo = datasets.split(ps, config.data.test_fraction, config.seed,
                                                    config.data.near_dup_threshold)
    results["data"] = {**sinfo, "pairs": len(ps), "train_pairs": len(train_pairs),
                       "test_pairs": len(test_pairs),
                       "train_problems": len({p.task_id for p in train_pairs}),
                       "test_problems": len({p.task_id for p in test_pairs}),
                       "rule_counts": dict(Counter(r for p in ps for r in p.rules)),
                       **pstats}
    return train_pairs, test_pairs


def _mean_rules(aug) -> float:
    n = [len(ms) for _, _, ms in aug]
    return float(np.mean(n)) if n else 0.0


def editor_samples(config, backend, rules, train_pairs, test_pairs, data: Stages,
                   results: dict, clock: _Clock):
    """[(pair, spec, manifested rules)] the editors train on: the training pairs, their
    renamed copies, the corpus pairs; in identifier-abstract form when configured."""
    kw = dict(seed=config.seed, max_rules=config.rules.max_rules_per_sample)
    aug, skipped = samples.augment(backend, rules, train_pairs, **kw)
    results["augmentation"] = {
        "samples": len(aug), "skipped": skipped, "mean_rules_per_sample": _mean_rules(aug),
        "samples_without_rules": int(sum(len(ms) == 0 for _, _, ms in aug))}
    aug = samples.add_renamed_copies(backend, aug, config.editor.rename_copies, config.seed)
    if config.data.corpus == "stdlib":
        def corpus():
            cps, cstats = datasets.corpus_pairs(config, data, test_pairs)
            caug, cskipped = samples.augment(backend, rules, cps, **kw)
            results["corpus"] = {**cstats, "augment_skipped": cskipped, "samples": len(caug),
                                 "mean_rules_per_sample": _mean_rules(caug)}
            return caug
        aug = aug + clock.time("corpus", corpus)
    results["augmentation"]["editor_samples"] = len(aug)
    if config.editor.abstract_identifiers:
        aug, unrenamed = samples.abstract_samples(backend, aug)
        results["augmentation"]["abstract_identifiers"] = {
            "samples_without_renamable_names": unrenamed}
    return aug


def editor_runs(config, workdir, convs, tp, pert, grader, backend, rules, clock) -> dict:
    """{variant: {"train": fine-tune summary, "eval": evaluation.evaluate_local}}; each
    editor in its sub-run folder editor_<variant>/ (resumes there)."""
    texts = [m["content"] for cs in convs.values() for c in cs for m in c]
    tok = build_tokenizer(config, texts, os.path.join(workdir, "tokenizer.json"))
    n = config.mesh.data * config.mesh.model if config.mesh.data > 0 else None
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model,
                              devices=jax.devices()[:n] if n else None)
    runs = Stages(workdir, folder="")             # editor_<variant>/ as before the stages
    out = {}
    for v in config.editor.variants:
        guards.check_preempted(f"editor {v}")

        def run(v=v):
            d = runs.dir(f"editor_{v}")
            lm, tinfo = train_editor(config, v, convs[v], tok, d, mesh)
            gold = (evaluation.manifested_rules(
                backend, rules, tp, seed=config.seed, max_rules=config.rules.max_rules_per_sample)
                if v in ("rules", "spec_rules") else None)
            ev = evaluation.evaluate_local(
                lm, tp, pert, grader, config.editor.max_new_tokens,
                os.path.join(d, "replies.json"), gold, fmt=config.editor.target_format,
                step=tinfo["steps"], abstract=config.editor.abstract_identifiers)
            return {"train": tinfo, "eval": ev}
        out[v] = clock.time(f"editor_{v}", run)
    return out


def evaluate(config, workdir, convs, test_pairs, backend, rules, results, clock) -> None:
    """Perturbed inputs, the local editors and the served modes into `results`."""
    grader = evaluation.Grader()
    tp = test_pairs[:config.eval.max_test_pairs]
    pert, pskip = clock.time("perturb", evaluation.perturbed_inputs, tp,
                             config.eval.perturbations, grader, config.seed)
    results["perturbations"] = {"kept": {k: len(v) for k, v in pert.items()},
                                "skipped": pskip}
    results["editors"] = {}
    results["editor_format"] = config.editor.target_format
    results["abstract_identifiers"] = bool(config.editor.abstract_identifiers)
    if config.editor.variants:
        results["editors"] = editor_runs(config, workdir, convs, tp, pert, grader, backend,
                                         rules, clock)
    if config.eval.prompting:
        results["served"] = clock.time("served", evaluation.evaluate_served, config, tp,
                                       rules, backend, grader)


def publish(config, workdir: str, results: dict) -> None:
    """results.json, results.md and the plots (primary process; never after SIGTERM)."""
    results["machine"] = common_report.machine()
    results["targets"] = el_report.targets(results)
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), el_report.tables(results) + "\n")
        if config.eval.plots:
            el_report.plots(results, os.path.join(workdir, wd.PLOTS))


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    t_start = time.perf_counter()
    # a workdir from before identifier abstraction resumes only with abstraction off
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               added={"editor.abstract_identifiers": False}, renamed=RENAMED_KEYS)
    data = Stages(workdir, folder="data")
    results: dict = {"tag": config.tag}
    clock = _Clock()
    train_pairs, test_pairs = clock.time("pairs", load_data, config, data, results)

    def rules_stage():
        backend = rule_learning.make_backend(config, train_pairs)
        rules, results["rules"] = rule_learning.learn_rules(config, backend, train_pairs,
                                                            workdir)
        return backend, rules
    backend, rules = clock.time("rules", rules_stage)
    aug = editor_samples(config, backend, rules, train_pairs, test_pairs, data, results, clock)
    convs = samples.conversations(aug, config.editor.variants, config.editor.target_format)
    if mesh_lib.is_primary():
        for v, cs in convs.items():
            sft.write_chat_jsonl(os.path.join(data.root, f"sft_{v}.jsonl"), cs)
    if config.data.source == "user":
        results["note"] = "user pairs carry no tests: rule learning only"
    else:
        evaluate(config, workdir, convs, test_pairs, backend, rules, results, clock)
    results["stage_s"] = clock.stage_s
    results["wall_s"] = time.perf_counter() - t_start
    publish(config, workdir, results)
    return results
