"""A run's pairs: HumanEval pairs and standard-library corpus pairs as resumable stages
(`lib.common.stages`, folder `data/`), and the train / held-out split by problem clusters.

Stage `pairs` (`corpus_pairs`) writes `data/pairs.jsonl` (`data/corpus_pairs.jsonl`) and
stores its build statistics as its result, `data/pairs.json`. A workdir from before the
stages holds the statistics in `data/<name>.jsonl.stats.json`; they are adopted as the
result (the pairs file beside them is complete: it was written first).
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable

from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.data import humaneval
from lib.editlord import corpus, dedup
from lib.editlord import pairs as pairs_lib
from lib.editlord.pairs import Pair


def _pairs_stage(stages: Stages, name: str, build: Callable[[], tuple[list[Pair], dict]],
                 identity: dict) -> tuple[list[Pair], dict]:
    """(pairs, stats) of stage `name`: pairs in `<root>/<name>.jsonl`, stats its result."""
    path = os.path.join(stages.root, f"{name}.jsonl")
    legacy = path + ".stats.json"

    def fn(_stage_dir: str) -> dict:
        if os.path.exists(legacy) and os.path.exists(path):
            return wd.read_json(legacy)
        ps, stats = build()
        pairs_lib.save_pairs(path, ps)
        return stats
    stats = stages.run(name, fn, identity=identity)
    return pairs_lib.load_pairs(path), stats


def humaneval_pairs(config, stages: Stages) -> tuple[list[Pair], dict]:
    """(pairs, stats): the user's pairs (`data.source = "user"`, read each time) or the
    HumanEval pairs with injected rules (stage `pairs`)."""
    d = config.data
    if d.source == "user":
        ps, skipped = pairs_lib.load_user_pairs(d.user_pairs)
        return ps, {"skipped": dict(skipped), "source": d.user_pairs}

    def build():
        probs = humaneval.load(limit=d.num_problems or None)
        ps, dropped = pairs_lib.build_pairs(probs, max_rules=d.max_rules,
                                            max_pairs_per_problem=d.max_pairs_per_problem,
                                            max_chars=d.max_chars, run_tests=d.run_tests)
        allowed = set(d.rules)
        return ([p for p in ps if set(p.rules) <= allowed],
                {"dropped": dict(dropped), "problems": len(probs)})
    keys = ("num_problems", "rules", "max_rules", "max_pairs_per_problem", "max_chars",
            "run_tests")
    return _pairs_stage(stages, "pairs", build, {k: d[k] for k in keys})


def corpus_pairs(config, stages: Stages, test_pairs: list[Pair]) -> tuple[list[Pair], dict]:
    """(pairs, stats) of the standard-library corpus (`corpus.py`; stage `corpus_pairs`);
    functions that are near-duplicates of a held-out unit are left out."""
    d = config.data
    root = os.path.join(corpus.stdlib_dir(), d.corpus_subdir)

    def build():
        if not os.path.isdir(root):
            raise ValueError(f"data.corpus_subdir = {d.corpus_subdir!r}: {root} is not a "
                             "directory")
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
        return ps, {"root": root, "functions": len(units), "skipped": dict(skipped),
                    "dropped": dict(dropped), "pairs": len(ps),
                    "rule_counts": dict(Counter(r for p in ps for r in p.rules))}
    keys = ("corpus_subdir", "rules", "max_rules", "max_chars", "corpus_max_pairs",
            "corpus_pairs_per_unit", "near_dup_threshold")
    identity = {**{k: d[k] for k in keys}, "seed": config.seed,
                "held_out_problems": sorted({p.task_id for p in test_pairs})}
    return _pairs_stage(stages, "corpus_pairs", build, identity)


def split(ps: list[Pair], test_fraction: float, seed: int, near_dup: float = 1.0):
    """(train, held-out, info): pairs split by problem; problems whose targets are
    near-duplicates (`dedup`: shape-token similarity >= near_dup) form one cluster, and
    whole clusters go to one side, so no held-out problem has a near-duplicate in training."""
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
