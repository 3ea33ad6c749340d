"""Scoring edits of held-out pairs: HumanEval grading, verified perturbations, per-reply
scores, the local editors' evaluation (clean and perturbed, rule prediction) and the
served LM's prompting and iterative modes.

Scores per reply (`score_edit`): parsed, correct (tests pass), fixed (share of injected
anti-patterns the checkers no longer find), success (correct and none left), exact.
"""
from __future__ import annotations

import os
from collections import Counter

import numpy as np

from lib.common import mesh as mesh_lib
from lib.common import workdir as wd
from lib.data import humaneval
from lib.editlord import abstraction, editor, learner, library, perturb
from lib.editlord import pairs as pairs_lib
from lib.lm import chat
from lib.lm.finetune import served_lm

METRICS = ("parsed", "correct", "fixed", "success", "exact")


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


def summarise(rows) -> dict:
    """{"n", and the mean of each of METRICS (None without rows)}."""
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


def manifested_rules(backend, rules, test_pairs, *, seed: int, max_rules: int) -> dict:
    """{pair id: texts of the rules manifested on it}: the gold of `rule_prediction`."""
    return {p.id: [r.text for r in learner.manifest_sample(backend, p, rules, seed=seed,
                                                            max_rules=max_rules)]
            for p in test_pairs}


def _complete_cache(lm, todo, cache: dict, max_new_tokens: int) -> int:
    """Greedy replies to the user texts `todo` into `cache`; a prompt that leaves no room for
    `max_new_tokens` gets "" (counted as no edit). Returns the number of such prompts."""
    limit = lm.cfg.max_len - max_new_tokens
    fits = [u for u in todo if len(lm.tok.encode(
        chat.render_chat([{"role": "user", "content": u}]), allow_special=True)) <= limit]
    for u in set(todo) - set(fits):
        cache[u] = ""
    if fits:
        for u, reply in zip(fits, editor.local_greedy(lm, fits, max_new_tokens)):
            cache[u] = reply
    return len(todo) - len(fits)


def _drops(rows: dict, pert) -> dict:
    """Per perturbation kind: clean minus perturbed mean of each metric, on the pairs that
    kind kept; with any, also their mean and the summary of all perturbed rows."""
    drops = {}
    clean_by_id = {r["id"]: r for r in rows.get("clean", [])}
    for k in pert:
        pr = rows.get(k, [])
        if not pr:
            continue
        clean = summarise([clean_by_id[r["id"]] for r in pr])
        pert_s = summarise(pr)
        drops[k] = {m: clean[m] - pert_s[m] for m in METRICS}
    out = {"drop": drops}
    if drops:
        out["mean_drop"] = {m: float(np.mean([d[m] for d in drops.values()])) for m in METRICS}
        out["perturbed"] = summarise([r for k in pert for r in rows.get(k, [])])
    return out


def evaluate_local(lm, test_pairs, pert, grader, max_new_tokens: int,
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
    too_long = _complete_cache(lm, todo, cache, max_new_tokens)
    if mesh_lib.is_primary():
        wd.write_json_atomic(cache_path, {"step": step, "replies": cache})
    rows = {}
    for cond, p, s in inputs:
        rows.setdefault(cond, []).append(score_edit(p, cache[ut(s)], grader, shown[s][0], fmt,
                                                    shown[s][1]))
    out = {"conditions": {c: summarise(r) for c, r in rows.items()}, "too_long": too_long,
           "failures": {c: dict(Counter(x["failure"] for x in r if x["failure"]))
                        for c, r in rows.items()},
           "invented": {c: int(sum(x["invented"] for x in r)) for c, r in rows.items()},
           **_drops(rows, pert)}
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
    """Prompting and iterative modes of the served LM (`config.served`) on `test_pairs`,
    with the rules whose X occurs in the source in context."""
    lm = served_lm(config.served)
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
