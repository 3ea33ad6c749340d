"""A run's rule-learning step: the backend its config names, the rule book (learned by
Algorithm 1 or loaded from `rules.book`) written to `<workdir>/rulebook.jsonl`, and its
recovery of the injected rules (offline backend on HumanEval pairs)."""
from __future__ import annotations

import os
import time

from lib.common import mesh as mesh_lib
from lib.editlord import learner, rulebook
from lib.lm import finetune


def make_backend(config, train_pairs):
    """The `learner.Backend` of `rules.backend`: a served LM, or the offline learner
    (AST patterns; MiniLM or Jaccard similarity)."""
    r = config.rules
    if r.backend == "served":
        from lib.editlord.lm_backend import ServedBackend
        return ServedBackend(finetune.served_lm(config.served), max_tokens=config.served.max_tokens)
    enc = None
    if r.similarity == "minilm":
        from lib.lm import minilm
        enc = minilm.TextEncoder.from_package()
    return learner.OfflineBackend(train_pairs, min_support=r.min_support,
                                  max_fraction=r.max_fraction, tau=r.tau, encoder=enc)


def learn_rules(config, backend, train_pairs, workdir: str) -> tuple[list, dict]:
    """(rule book, info): counts of Algorithm 1's operations, wall_s, and `recovery`
    (precision / recall against the injected library) where it can be measured."""
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
