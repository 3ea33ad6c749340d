"""EditLord in small: learned rule books, editors fine-tuned in four variants, robustness.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` parses flags.

    validate -> pairs (HumanEval canonical solutions with injected anti-patterns, tests
                run on both sides; or the user's pairs) -> workdir/data/pairs.jsonl
             -> split by problem (held-out problems for evaluation)
             -> rule learning on the training pairs (offline AST learner + MiniLM, or a
                served LM): extraction, Algorithm 1, rule book workdir/rulebook.jsonl,
                rule-recovery precision / recall against the injected library
             -> augmentation: spec + manifested rules (<= 9) per training pair, code part
                as the whole target or as a line-addressed edit script
                (editor.target_format), optionally in identifier-abstract form
                (editor.abstract_identifiers: the editor sees and writes f0 / v0 ...
                placeholders, its output is mapped back; `abstraction.py`), exported
                as chat JSONL per variant (workdir/data/sft_<variant>.jsonl)
             -> per variant: BPE editor trained from scratch (lib/lm SFT on train_loop;
                resumes), greedy edits of the held-out pairs, clean and perturbed
                (rename / dead code / reorder, kept only when tests and checkers agree)
             -> prompting and iterative modes against a served LM (when configured)
             -> results.json, results.md, plots/*.png
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from collections import Counter

import jax
import numpy as np

from lib.common import extras
from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import guards
from lib.common import report as common_report
from lib.common import train_loop
from lib.common import workdir as wd
from lib.data import humaneval
from lib.editlord import (
    abstraction,
    corpus,
    dedup,
    editor,
    learner,
    library,
    perturb,
    rulebook,
)
from lib.editlord import augment as augment_lib
from lib.editlord import pairs as pairs_lib
from lib.editlord import report as el_report
from lib.editlord.config_schema import validate
from lib.lm import chat, sft
from lib.lm.local import LocalLM
from lib.lm.model import LMConfig
from lib.lm.tokenizer import Tokenizer, train_bpe
from lib.editlord.config_schema import optional_modules

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------- data


def load_or_build_pairs(config, datadir: str) -> tuple[list[pairs_lib.Pair], dict]:
    path = os.path.join(datadir, "pairs.jsonl")
    d = config.data
    if d.source == "user":
        ps, skipped = pairs_lib.load_user_pairs(d.user_pairs)
        return ps, {"skipped": dict(skipped), "source": d.user_pairs}
    if os.path.exists(path):
        with open(path) as f:
            ps = [pairs_lib.Pair.from_json(json.loads(line)) for line in f if line.strip()]
        return ps, wd.read_json(path + ".stats.json")
    probs = humaneval.load(limit=d.num_problems or None)
    allowed = set(d.rules)
    ps, dropped = pairs_lib.build_pairs(probs, max_rules=d.max_rules,
                                        max_pairs_per_problem=d.max_pairs_per_problem,
                                        max_chars=d.max_chars, run_tests=d.run_tests)
    ps = [p for p in ps if set(p.rules) <= allowed]
    pairs_lib.save_pairs(path, ps)
    stats = {"dropped": dict(dropped), "problems": len(probs)}
    wd.write_json_atomic(path + ".stats.json", stats)
    return ps, stats


def split(ps, test_fraction: float, seed: int, near_dup: float = 1.0):
    """(train, held-out) pairs, split by problem: problems whose targets are near-duplicates
    (`dedup`: shape-token similarity >= near_dup) form one cluster, and whole clusters go
    to one side, so no held-out problem has a near-duplicate in training."""
    shapes = {}
    for p in ps:
        if p.task_id not in shapes:
            shapes[p.task_id] = dedup.shape(p.target)
    comps = dedup.clusters(shapes, near_dup)
    _, test = dedup.split_clusters(comps, test_fraction, seed)
    info = {"near_dup_threshold": near_dup,
            "near_dup_clusters": [c for c in comps if len(c) > 1]}
    return ([p for p in ps if p.task_id not in test], [p for p in ps if p.task_id in test],
            info)


def load_or_build_corpus(config, datadir: str, test_pairs) -> tuple[list[pairs_lib.Pair], dict]:
    """Standard-library training pairs (`corpus.py`), cached in data/corpus_pairs.jsonl;
    functions that are near-duplicates of a held-out unit are left out."""
    d = config.data
    path = os.path.join(datadir, "corpus_pairs.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            ps = [pairs_lib.Pair.from_json(json.loads(line)) for line in f if line.strip()]
        return ps, wd.read_json(path + ".stats.json")
    root = os.path.join(corpus.stdlib_dir(), d.corpus_subdir)
    if not os.path.isdir(root):
        raise ValueError(f"data.corpus_subdir = {d.corpus_subdir!r}: {root} is not a directory")
    units, skipped = corpus.functions(root, max_chars=d.max_chars, seed=config.seed,
                                      base=corpus.stdlib_dir())
    held = list({p.task_id: dedup.shape(p.target) for p in test_pairs}.values())
    kept = []
    for name, code in units:
        if dedup.near_any(dedup.shape(code), held, d.near_dup_threshold):
            skipped["near_dup_of_held_out"] += 1
        else:
            kept.append((name, code))
    ps, dropped = corpus.build_pairs(kept, max_rules=d.max_rules,
                                     max_pairs_per_unit=d.corpus_pairs_per_unit,
                                     max_chars=d.max_chars, max_pairs=d.corpus_max_pairs,
                                     allowed=set(d.rules))
    pairs_lib.save_pairs(path, ps)
    stats = {"root": root, "functions": len(units), "skipped": dict(skipped),
             "dropped": dict(dropped), "pairs": len(ps),
             "rule_counts": dict(Counter(r for p in ps for r in p.rules))}
    wd.write_json_atomic(path + ".stats.json", stats)
    return ps, stats


# ----------------------------------------------------------------------------- rules


def served_lm(config):
    from lib.lm.client import OpenAIClient
    s = config.served
    return OpenAIClient(s.base_url, s.model,
                        api_key=os.environ.get(s.api_key_env) if s.api_key_env else None,
                        cache_dir=s.cache_dir or None)


def make_backend(config, train_pairs):
    r = config.rules
    if r.backend == "served":
        from lib.editlord.lm_backend import ServedBackend
        return ServedBackend(served_lm(config), max_tokens=config.served.max_tokens)
    enc = None
    if r.similarity == "minilm":
        from lib.lm import minilm
        enc = minilm.TextEncoder.from_package()
    return learner.OfflineBackend(train_pairs, min_support=r.min_support,
                                  max_fraction=r.max_fraction, tau=r.tau, encoder=enc)


def learn_rules(config, backend, train_pairs, workdir: str) -> tuple[list, dict]:
    r = config.rules
    t0 = time.perf_counter()
    if r.book:
        rules = rulebook.load(r.book, kind="pattern" if r.backend == "offline" else "text")
        info = {"loaded_from": r.book, "num_rules": len(rules)}
    else:
        raw, skipped = learner.extract_all(train_pairs, backend)
        rules, rlog = learner.refine(raw, backend, max_iters=r.max_iters,
                                     reformat_every=r.reformat_every)
        if not rules:
            raise ValueError("rule learning produced an empty rule book; lower "
                             "rules.min_support or give more training pairs")
        info = {"num_raw": len(raw), "num_rules": len(rules), "extract_skipped": skipped,
                "iterations": rlog.iterations, "converged": rlog.converged,
                "pruned": rlog.pruned, "added": rlog.added, "merged": rlog.merged,
                "reformats": rlog.reformats, "sizes": rlog.sizes}
    if mesh_lib.is_primary():
        rulebook.save(os.path.join(workdir, "rulebook.jsonl"), rules)
    info["wall_s"] = time.perf_counter() - t0
    if isinstance(backend, learner.OfflineBackend) and config.data.source == "humaneval":
        info["recovery"] = learner.recovery(rules, backend, purity=r.recovery_purity,
                                            coverage=r.recovery_coverage,
                                            min_support=r.min_support)
    return rules, info


def augment(config, backend, rules, train_pairs):
    """(spec, manifested rules) per training pair; failures counted."""
    out, skipped = [], Counter()
    for p in train_pairs:
        try:
            spec = backend.spec(p.target)
            ms = learner.manifest_sample(backend, p, rules, seed=config.seed,
                                         max_rules=config.rules.max_rules_per_sample)
        except (ValueError, SyntaxError) as e:
            skipped[type(e).__name__] += 1
            log.warning("augmentation skipped %s: %s", p.id, e)
            continue
        out.append((p, spec, ms))
    return out, dict(skipped)


def abstract_samples(backend, aug):
    """aug with every pair in identifier-abstract form (`abstraction.abstract`: one mapping
    for source and target, extended by the target's new names); the spec is recomputed
    from the abstract target (the editor generates it from abstract code, so it cannot
    hold the concrete names), the manifested rules are name-independent and kept.
    Returns (samples, number of pairs where nothing could be renamed)."""
    out, unrenamed = [], 0
    for p, _, ms in aug:
        src, m = abstraction.abstract(p.source)
        tgt, _ = abstraction.abstract(p.target, m)
        unrenamed += not m
        q = dataclasses.replace(p, source=src, target=tgt)
        out.append((q, backend.spec(tgt), ms))
    return out, unrenamed


def add_renamed_copies(backend, aug, copies: int, seed: int):
    """aug [(pair, spec, rules)] followed by `copies` renamed copies of each sample
    (`augment.renamed`: one mapping for source and target; the spec is recomputed from the
    renamed target, the manifested rules are name-independent patterns and kept)."""
    out = list(aug)
    for k in range(copies):
        for i, (p, _, ms) in enumerate(aug):
            q = augment_lib.renamed(p, seed + 1000 * (k + 1) + i)
            if q is not None:
                out.append((q, backend.spec(q.target), ms))
    return out


# ----------------------------------------------------------------------------- editor


def build_tokenizer(config, texts, path: str) -> Tokenizer:
    if os.path.exists(path):
        return Tokenizer.load(path)
    tok = train_bpe(texts, config.editor.bpe_merges)
    if mesh_lib.is_primary():
        tok.save(path)
    return tok


def _optim(config) -> dict:
    o = config.editor.optim
    return dict(lr=o.lr, num_steps=config.train.num_steps, warmup_steps=o.warmup_steps,
                weight_decay=o.weight_decay, grad_clip=o.grad_clip)


def train_editor(config, variant, convs, tok, workdir, mesh) -> tuple[LocalLM, dict]:
    m = config.editor.model
    cfg = LMConfig(vocab_size=tok.vocab_size, d_model=m.d_model, num_layers=m.num_layers,
                   num_heads=m.num_heads, d_ff=m.d_ff, max_len=m.max_len, dtype=m.dtype)
    examples, too_long = [], 0
    for c in convs:
        try:
            examples.append(sft.encode_conversation(tok, c, cfg.max_len))
        except ValueError:
            too_long += 1
    if len(examples) < config.editor.batch_size:
        raise ValueError(f"variant {variant}: {len(examples)} training conversations fit "
                         f"model.max_len = {cfg.max_len}; fewer than the batch size")
    data = sft.pad_examples(examples, max(len(i) for i, _ in examples), tok.pad_id)
    os.makedirs(workdir, exist_ok=True)
    if mesh_lib.is_primary():
        sft.save_run_spec(workdir, cfg, tok, _optim(config))
    task = sft.make_task(cfg, data, batch_size=config.editor.batch_size, seed=config.seed,
                         **_optim(config))
    t0 = time.perf_counter()
    res = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                           workdir=workdir, mesh=mesh)       # guards.Preempted on SIGTERM
    hist = []
    if os.path.exists(os.path.join(workdir, wd.METRICS)):
        with open(os.path.join(workdir, wd.METRICS)) as f:
            hist = [json.loads(line) for line in f if line.strip()]
    losses = [(h["step"], h["loss"]) for h in hist if "loss" in h and "step" in h]
    info = {"steps": res.step, "resumed_from": res.resumed_from,
            "wall_s": time.perf_counter() - t0, "examples": len(examples),
            "too_long": too_long, "tokens_per_example": int(data["tokens"].shape[1]),
            "final_loss": losses[-1][1] if losses else None, "loss_curve": losses}
    return LocalLM(cfg, jax.device_get(res.state["params"]), tok), info


# ----------------------------------------------------------------------------- evaluation


class Grader:
    """HumanEval grading of edited units, cached by (task, code)."""

    def __init__(self, run_tests: bool = True):
        self.cache: dict = {}
        self.run_tests = run_tests

    def __call__(self, pair, code: str) -> tuple[bool, str]:
        k = (pair.task_id, pair.context, code)
        if k not in self.cache:
            if not pair.task_id:
                raise ValueError(f"pair {pair.id} has no tests (user pair)")
            g = pairs_lib.grade_unit(humaneval.get(pair.task_id), pair.context, code)
            self.cache[k] = (g.passed, g.detail)
        return self.cache[k]


def perturbed_inputs(test_pairs, kinds, grader, seed: int):
    """{kind: [(pair, perturbed source)]}: kept only when the perturbed source passes the
    tests like the clean one and the library checkers see exactly the injected rules."""
    out, skipped = {}, {}
    for kind in kinds:
        ok, bad = [], Counter()
        for i, p in enumerate(test_pairs):
            s = perturb.perturb(kind, p.source, seed=seed + i)
            if s is None or s == p.source:
                bad["no_site"] += 1
            elif set(library.detected(s)) != set(p.rules):
                bad["checker_changed"] += 1
            elif not grader(p, s)[0]:
                bad["tests_changed"] += 1
            else:
                ok.append((p, s))
        out[kind], skipped[kind] = ok, dict(bad)
    return out, skipped


def score_edit(pair, reply: str, grader, source: str | None = None, fmt: str = "code",
               mapping: dict | None = None) -> dict:
    """Scores of one reply to `source` (default the pair's source; a perturbed input for
    robustness). A reply without a candidate (no code, a missing or malformed edit script)
    scores 0 everywhere, with its reason in row["failure"]. With `mapping` (identifier
    abstraction) `source` is the abstract code the editor saw, and the candidate is
    concretised with the mapping before it is scored; placeholder names the mapping lacks
    are kept as written and counted in row["invented"]."""
    code, failure = editor.candidate(reply, pair.source if source is None else source, fmt)
    row = {"id": pair.id, "parsed": False, "correct": False, "fixed": 0.0, "success": False,
           "exact": False, "rules_generated": len(editor.parse_rules(reply)), "failure": failure,
           "invented": 0}
    if code is None:
        return row
    try:
        if mapping is not None:
            code, invented = abstraction.concretise(code, mapping)
            row["invented"] = len(invented)
        norm = pairs_lib.normal(code)
    except SyntaxError:
        row["failure"] = "syntax"
        return row
    row["parsed"] = True
    row["correct"] = grader(pair, norm)[0]
    still = set(library.detected(norm)) & set(pair.rules)
    row["fixed"] = 1 - len(still) / len(pair.rules) if pair.rules else 1.0
    row["success"] = row["correct"] and not still
    row["exact"] = norm == pair.target
    return row


METRICS = ("parsed", "correct", "fixed", "success", "exact")


def summarise(rows) -> dict:
    n = len(rows)
    return {"n": n, **{m: (float(np.mean([float(r[m]) for r in rows])) if n else None)
                       for m in METRICS}}


def rule_prediction(test_pairs, replies, gold) -> dict:
    """Micro precision / recall of the rule lines an editor generated on clean held-out
    inputs against the rules manifested on the (source, target) pair (`gold`: id -> texts)."""
    tp = n_gen = n_gold = 0
    for p, reply in zip(test_pairs, replies):
        gen = set(editor.parse_rules(reply))
        g = set(gold[p.id])
        tp, n_gen, n_gold = tp + len(gen & g), n_gen + len(gen), n_gold + len(g)
    return {"precision": tp / n_gen if n_gen else None, "recall": tp / n_gold if n_gold else None,
            "generated": n_gen, "gold": n_gold}


def evaluate_local(lm: LocalLM, test_pairs, pert, grader, max_new_tokens: int,
                   cache_path: str, gold_rules: dict | None = None, *, fmt: str = "code",
                   step: int = 0, abstract: bool = False) -> dict:
    """Greedy edits of clean and perturbed inputs, scored; replies cached in `cache_path`
    for the editor trained `step` steps (a cache of another step is recomputed). With
    `gold_rules` (id -> rule texts) also the editor's rule-prediction accuracy. With
    `abstract` every input is shown in identifier-abstract form and each reply is applied
    to that form and mapped back (`score_edit`); inputs that abstract to the same code
    (a renamed input) get the same reply."""
    stored = wd.read_json(cache_path) if os.path.exists(cache_path) else {}
    cache = stored.get("replies", {}) if stored.get("step") == step else {}
    inputs = [("clean", p, p.source) for p in test_pairs] + \
             [(k, p, s) for k, lst in pert.items() for p, s in lst]

    shown = {s: (abstraction.abstract(s) if abstract else (s, None)) for _, _, s in inputs}

    def ut(source: str) -> str:
        return editor.user_text(shown[source][0], fmt)
    todo = sorted({ut(s) for _, _, s in inputs} - set(cache))
    limit = lm.cfg.max_len - max_new_tokens
    fits = [u for u in todo if len(lm.tok.encode(
        chat.render_chat([{"role": "user", "content": u}]), allow_special=True)) <= limit]
    for u in set(todo) - set(fits):
        cache[u] = ""                  # prompt too long for the context: counted as no edit
    if fits:
        for u, reply in zip(fits, editor.local_greedy(lm, fits, max_new_tokens)):
            cache[u] = reply
    if mesh_lib.is_primary():
        wd.write_json_atomic(cache_path, {"step": step, "replies": cache})
    rows = {}
    for cond, p, s in inputs:
        rows.setdefault(cond, []).append(score_edit(p, cache[ut(s)], grader, shown[s][0], fmt,
                                                    shown[s][1]))
    out = {"conditions": {c: summarise(r) for c, r in rows.items()}, "too_long": len(todo) - len(fits),
           "failures": {c: dict(Counter(x["failure"] for x in r if x["failure"]))
                        for c, r in rows.items()},
           "invented": {c: int(sum(x["invented"] for x in r)) for c, r in rows.items()}}
    drops = {}
    clean_by_id = {r["id"]: r for r in rows.get("clean", [])}
    for k in pert:
        pr = rows.get(k, [])
        if not pr:
            continue
        clean = summarise([clean_by_id[r["id"]] for r in pr])
        pert_s = summarise(pr)
        drops[k] = {m: clean[m] - pert_s[m] for m in METRICS}
    out["drop"] = drops
    if drops:
        out["mean_drop"] = {m: float(np.mean([d[m] for d in drops.values()])) for m in METRICS}
        allp = [r for k in pert for r in rows.get(k, [])]
        out["perturbed"] = summarise(allp)
    if gold_rules is not None:
        out["rule_prediction"] = rule_prediction(
            test_pairs, [cache[ut(p.source)] for p in test_pairs], gold_rules)
    out["clean_successes"] = [r["id"] for r in rows.get("clean", []) if r["success"]]
    out["clean_rows"] = [{k: r[k] for k in ("id", "correct", "fixed", "success")}
                         for r in rows.get("clean", [])]
    out["examples"] = [{"id": p.id, "reply": cache[ut(p.source)][:600]}
                       for p in test_pairs[:3]]
    return out


def evaluate_served(config, test_pairs, rules, backend, grader) -> dict:
    lm = served_lm(config)
    rows_p, rows_i, rounds = [], [], []
    for p in test_pairs:
        in_ctx = backend.manifest(p.source, None, rules)[:learner.MAX_RULES_PER_SAMPLE]
        code, reply = editor.prompt_edit(lm, p.source, in_ctx, max_tokens=config.served.max_tokens)
        rows_p.append(score_edit(p, reply, grader))
        it = editor.iterative_edit(lm, p.source, in_ctx, run_tests=lambda c, p=p: grader(p, c),
                                   backend=backend, max_rounds=config.eval.iterative_rounds,
                                   max_tokens=config.served.max_tokens)
        body = it.code if it.code is not None else ""
        rows_i.append(score_edit(p, f"[{editor.TGT_TAG}]\n{body}\n[/{editor.TGT_TAG}]", grader))
        rounds.append(it.rounds)
    return {"prompting": summarise(rows_p), "iterative": summarise(rows_i),
            "mean_rounds": float(np.mean(rounds)) if rounds else None}


# ----------------------------------------------------------------------------- main


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    t_start = time.perf_counter()
    # keys added after workdirs existed, with the behaviour before them (resume rule of
    # lib.common.workdir.prepare): a workdir from before identifier abstraction resumes only
    # with abstraction off
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               added={"editor.abstract_identifiers": False})
    datadir = os.path.join(workdir, "data")
    os.makedirs(datadir, exist_ok=True)
    results: dict = {"tag": config.tag}
    stage_s: dict = {}

    t = time.perf_counter()
    ps, pstats = load_or_build_pairs(config, datadir)
    if not ps:
        raise ValueError("no usable pairs; check data.* settings")
    train_pairs, test_pairs, sinfo = split(ps, config.data.test_fraction, config.seed,
                                           config.data.near_dup_threshold)
    results["data"] = {**sinfo, "pairs": len(ps), "train_pairs": len(train_pairs),
                       "test_pairs": len(test_pairs),
                       "train_problems": len({p.task_id for p in train_pairs}),
                       "test_problems": len({p.task_id for p in test_pairs}),
                       "rule_counts": dict(Counter(r for p in ps for r in p.rules)),
                       **pstats}
    stage_s["pairs"] = time.perf_counter() - t

    t = time.perf_counter()
    backend = make_backend(config, train_pairs)
    rules, rinfo = learn_rules(config, backend, train_pairs, workdir)
    results["rules"] = rinfo
    stage_s["rules"] = time.perf_counter() - t

    aug, aug_skipped = augment(config, backend, rules, train_pairs)
    n_rules = [len(ms) for _, _, ms in aug]
    results["augmentation"] = {"samples": len(aug), "skipped": aug_skipped,
                               "mean_rules_per_sample": float(np.mean(n_rules)) if n_rules else 0.0,
                               "samples_without_rules": int(sum(n == 0 for n in n_rules))}
    aug = add_renamed_copies(backend, aug, config.editor.rename_copies, config.seed)
    if config.data.corpus == "stdlib":
        t = time.perf_counter()
        cps, cstats = load_or_build_corpus(config, datadir, test_pairs)
        caug, cskipped = augment(config, backend, rules, cps)
        aug = aug + caug
        n_cr = [len(ms) for _, _, ms in caug]
        results["corpus"] = {**cstats, "augment_skipped": cskipped, "samples": len(caug),
                             "mean_rules_per_sample": float(np.mean(n_cr)) if n_cr else 0.0}
        stage_s["corpus"] = time.perf_counter() - t
    results["augmentation"]["editor_samples"] = len(aug)
    if config.editor.abstract_identifiers:
        aug, unrenamed = abstract_samples(backend, aug)
        results["augmentation"]["abstract_identifiers"] = {"samples_without_renamable_names": unrenamed}
    fmt = config.editor.target_format
    convs = {v: [editor.conversation(v, p, spec, ms, fmt) for p, spec, ms in aug]
             for v in config.editor.variants}
    if mesh_lib.is_primary():
        for v, cs in convs.items():
            sft.write_chat_jsonl(os.path.join(datadir, f"sft_{v}.jsonl"), cs)

    if config.data.source == "user":
        results["note"] = "user pairs carry no tests: rule learning only"
    else:
        grader = Grader()
        tp = test_pairs[:config.eval.max_test_pairs]
        t = time.perf_counter()
        pert, pskip = perturbed_inputs(tp, config.eval.perturbations, grader, config.seed)
        results["perturbations"] = {"kept": {k: len(v) for k, v in pert.items()},
                                    "skipped": pskip}
        stage_s["perturb"] = time.perf_counter() - t
        results["editors"] = {}
        results["editor_format"] = fmt
        results["abstract_identifiers"] = bool(config.editor.abstract_identifiers)
        if config.editor.variants:
            texts = [m["content"] for cs in convs.values() for c in cs for m in c]
            tok = build_tokenizer(config, texts, os.path.join(workdir, "tokenizer.json"))
            n = config.mesh.data * config.mesh.model if config.mesh.data > 0 else None
            mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model,
                                      devices=jax.devices()[:n] if n else None)
            for v in config.editor.variants:
                guards.check_preempted(f"editor {v}")
                t = time.perf_counter()
                lm, tinfo = train_editor(config, v, convs[v], tok,
                                         os.path.join(workdir, f"editor_{v}"), mesh)
                gold = ({p.id: [r.text for r in learner.manifest_sample(
                            backend, p, rules, seed=config.seed,
                            max_rules=config.rules.max_rules_per_sample)] for p in tp}
                        if v in ("rules", "spec_rules") else None)
                ev = evaluate_local(lm, tp, pert, grader, config.editor.max_new_tokens,
                                    os.path.join(workdir, f"editor_{v}", "replies.json"), gold,
                                    fmt=fmt, step=tinfo["steps"],
                                    abstract=config.editor.abstract_identifiers)
                results["editors"][v] = {"train": tinfo, "eval": ev}
                stage_s[f"editor_{v}"] = time.perf_counter() - t
        if config.eval.prompting:
            t = time.perf_counter()
            results["served"] = evaluate_served(config, tp, rules, backend, grader)
            stage_s["served"] = time.perf_counter() - t
    results["stage_s"] = stage_s
    results["wall_s"] = time.perf_counter() - t_start
    results["machine"] = common_report.machine()
    results["targets"] = el_report.targets(results)
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), el_report.tables(results) + "\n")
        if config.eval.plots:
            el_report.plots(results, os.path.join(workdir, wd.PLOTS))
    return results
