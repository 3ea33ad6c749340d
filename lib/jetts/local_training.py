"""Chat data that teaches the workspace's small LM to generate, refine and judge arithmetic.

Offline there is no instruct model, so the local stand-ins are trained here (lib/lm/sft.py):

* the **generator** learns to solve (`tasks.conversation`) and, as the refiner of the
  critique-based refinement protocol, to answer the compact refinement prompts
  (protocols.refine_prompt_single / _pairwise with fmt="compact"): a correct working
  inside `<revised_response>...</revised_response>`, or "No revision needed" when the
  response (single) or the better response (pairwise) is already correct. It is trained
  briefly on purpose so that it makes mistakes (a pool has something to choose from).
* the **judge LM** learns the compact judge prompts (judges.CompactFormat) with the
  Prometheus output format: `Feedback: <critique> [RESULT] <1-5 | A | B>`, for Likert,
  additive and pairwise judging, on full responses and on partial ones (the "partial"
  tag), with the exact targets of domains/arithmetic.py. The responses it sees are correct
  workings and realistic corruptions (`arithmetic.corrupt`), cut to a prefix for partial
  prompts. Pairwise targets for equally good responses are a coin flip, so the data
  carries no position preference.

Judge and refiner targets are written only from the ground truth; nothing here reads the
evaluation pools or trees.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lib.jetts import judges, protocols
from lib.jetts.domains import arithmetic as ar
from lib.jetts.pools import Query
from lib.lm import tasks

COMPACT = judges.get_format("compact")


def _response(q: Query, rng: np.random.Generator, p_correct: float) -> str:
    if rng.random() < p_correct:
        return " ".join(ar.reference_steps(q))
    return ar.corrupt(q, rng)[0]


def _prefix(text: str, rng: np.random.Generator) -> str:
    st = ar.steps(text)
    return ar.SEP.join(st[:int(rng.integers(1, len(st)))]) if len(st) > 1 else text


def generator_conversations(queries: Sequence[Query], rng: np.random.Generator,
                            refine_fraction: float) -> list[list[dict]]:
    out = []
    for q in queries:
        p, d = ar.problem_of(q)
        out.append(tasks.conversation(p, d))
        if rng.random() >= refine_fraction:
            continue
        if rng.random() < 0.5:
            r = _response(q, rng, 0.3)
            prompt = protocols.refine_prompt_single(q.prompt, r, ar.likert_target(q, r),
                                                    ar.critique(q, r), "compact")
            target = ar.refine_target(q, r)
        else:
            a, b = _response(q, rng, 0.3), _response(q, rng, 0.3)
            better = ar.pair_target(q, a, b, rng)
            best = a if better == "A" else b
            crit = f"A {ar.critique(q, a)}, B {ar.critique(q, b)}"
            prompt = protocols.refine_prompt_pairwise(q.prompt, a, b, better, crit, "compact")
            target = ar.refine_target(q, best)
        out.append([{"role": "user", "content": prompt},
                    {"role": "assistant", "content": target}])
    return out


def judge_critiques(digits: int) -> list[str]:
    """Every critique `arithmetic.critique` can write for `digits`-digit sums (digits + 1
    steps: one per column and the answer)."""
    return (["steps so far correct", "all steps correct"]
            + [f"step {k + 1} wrong" for k in range(digits + 1)])


def longest_judge_reply(digits: int) -> str:
    """The longest well-formed reply the judge LM is trained to write (a pairwise verdict
    with the two longest critiques); with its stop token it needs len(tokens) + 1 of
    `judge_lm.max_tokens`."""
    c = max(judge_critiques(digits), key=len)
    return f"Feedback: A {c}, B {c} [RESULT] A"


def judge_conversations(queries: Sequence[Query], rng: np.random.Generator, *,
                        partial_fraction: float = 0.3) -> list[list[dict]]:
    out = []
    for q in queries:
        partial = rng.random() < partial_fraction
        kind = ("likert", "additive", "pair")[int(rng.integers(0, 3))]
        if kind == "pair":
            a, b = _response(q, rng, 0.4), _response(q, rng, 0.4)
            if partial:
                a, b = _prefix(a, rng), _prefix(b, rng)
            v = ar.pair_target(q, a, b, rng, partial)
            prompt = COMPACT.pairwise_prompt(q.prompt, a, b, partial)
            target = (f"Feedback: A {ar.critique(q, a, partial)}, B {ar.critique(q, b, partial)}"
                      f" [RESULT] {v}")
        else:
            r = _response(q, rng, 0.4)
            if partial:
                r = _prefix(r, rng)
            score = (ar.likert_target(q, r, partial) if kind == "likert"
                     else ar.additive_target(q, r, partial))
            prompt = COMPACT.single_prompt(q.prompt, r, kind, partial)
            target = f"Feedback: {ar.critique(q, r, partial)} [RESULT] {score}"
        out.append([{"role": "user", "content": prompt},
                    {"role": "assistant", "content": target}])
    return out
