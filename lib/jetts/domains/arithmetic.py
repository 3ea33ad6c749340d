"""Arithmetic domain: step-by-step addition (lib/lm/tasks.py) with exact step labels.

A response is a sequence of steps separated by single spaces (`SEP`):

    query:    347+085                      (digits D = 3, zero-padded operands)
    steps:    7+5+0=12  4+8+1=13  3+0+1=04  =0432

The first D steps are column steps, the last the answer step. The correct working is
unique, so every step's correctness is exact: `first_wrong_step` is the index of the first
step that differs from the reference working (a missing or extra step counts as wrong;
None when the whole response is the reference). The response's score (what reranking
measures) is 1 when its final step is an answer step `=N` with N = a + b, else 0, as
JETTS scores math by the final answer. Process labels (PRM training): step k is good iff
k < first_wrong_step.

`corrupt` makes realistic wrong workings for judge training: step k's written sum digit
or carry is changed, and later steps follow consistently from the wrong carry; the answer
is assembled from the written digits (the kinds of error the small generator makes).
`judge_targets` writes the exact critique / rating / verdict a perfect judge would give in
the compact format (lib/jetts/judges.py), and `refine_target` the refiner's answer.
"""
from __future__ import annotations

import numpy as np

from lib.jetts.pools import Query
from lib.lm import tasks

SEP = " "
NAME = "arithmetic"


def make_query(p: tasks.Problem, digits: int, qid: str) -> Query:
    return Query(qid, tasks.prompt_text(p, digits), NAME, {"a": p.a, "b": p.b, "digits": digits})


def problem_of(q: Query) -> tuple[tasks.Problem, int]:
    return tasks.Problem(q.meta["a"], q.meta["b"]), q.meta["digits"]


def queries(rng: np.random.Generator, n: int, digits: int, *, held_out: bool,
            test_fraction: float = 0.1, prefix: str = "arith") -> list[Query]:
    probs = tasks.sample_problems(rng, n, digits, held_out=held_out, test_fraction=test_fraction)
    return [make_query(p, digits, f"{prefix}/{i}") for i, p in enumerate(probs)]


def steps(text: str) -> list[str]:
    return [s for s in text.strip().split(SEP) if s]


def reference_steps(q: Query) -> list[str]:
    p, d = problem_of(q)
    return steps(tasks.solution_text(p, d))


def first_wrong_step(q: Query, text: str) -> int | None:
    ref, got = reference_steps(q), steps(text)
    for k, s in enumerate(got):
        if k >= len(ref) or s != ref[k]:
            return k
    return None if len(got) == len(ref) else len(got)


def prefix_ok(q: Query, text: str) -> bool:
    """Every step written so far matches the reference (a partial response on track)."""
    ref, got = reference_steps(q), steps(text)
    return len(got) <= len(ref) and got == ref[:len(got)]


def score(q: Query, text: str) -> float:
    p, _ = problem_of(q)
    got = steps(text)
    if not got or not got[-1].startswith("=") or not got[-1][1:].isdigit():
        return 0.0
    return float(int(got[-1][1:]) == p.a + p.b)


def step_labels(q: Query, text: str) -> list[int]:
    """1 for each step before the first wrong one, 0 from it on (PRM targets)."""
    k = first_wrong_step(q, text)
    n = len(steps(text))
    return [int(k is None or i < k) for i in range(n)]


def corrupt(q: Query, rng: np.random.Generator) -> tuple[str, int]:
    """(a wrong working, index of its first wrong step); see the module docstring."""
    p, d = problem_of(q)
    k = int(rng.integers(0, d + 1))
    out, carry, digits_written = [], 0, []
    for i in range(d):
        x, y = (p.a // 10 ** i) % 10, (p.b // 10 ** i) % 10
        s = x + y + carry
        c_out, dig = s // 10, s % 10
        if i == k:
            if rng.random() < 0.5:
                dig = (dig + int(rng.integers(1, 10))) % 10
            else:
                c_out = 1 - c_out
        out.append(f"{x}+{y}+{carry}={c_out}{dig}")
        digits_written.append(dig)
        carry = c_out
    answer = str(carry) + "".join(str(t) for t in reversed(digits_written))
    if k == d:      # every column right, the answer assembled wrongly
        true = list(answer)
        j = int(rng.integers(0, len(true)))
        true[j] = str((int(true[j]) + int(rng.integers(1, 10))) % 10)
        answer = "".join(true)
    out.append("=" + answer)
    text = SEP.join(out)
    return text, first_wrong_step(q, text)


def critique(q: Query, text: str, partial: bool = False) -> str:
    k = first_wrong_step(q, text)
    if partial and prefix_ok(q, text):
        return "steps so far correct"
    return "all steps correct" if k is None else f"step {k + 1} wrong"


def likert_target(q: Query, text: str, partial: bool = False) -> int:
    """5 when correct (or a correct prefix); else 1 + 3 k / S for first error k of S steps."""
    k = first_wrong_step(q, text)
    if k is None or (partial and prefix_ok(q, text)):
        return 5
    return 1 + (3 * k) // max(len(reference_steps(q)), 1)


def additive_target(q: Query, text: str, partial: bool = False) -> int:
    """1 + one point each (judges.ADDITIVE_RUBRIC): all steps right, an answer step
    present, the answer right, complete with the right number of steps."""
    ref, got = reference_steps(q), steps(text)
    on_track = partial and prefix_ok(q, text)
    pts = [first_wrong_step(q, text) is None or on_track,
           (bool(got) and got[-1].startswith("=")) or on_track,
           score(q, text) == 1.0 or on_track,
           len(got) == len(ref) or (on_track and len(got) < len(ref))]
    return 1 + sum(bool(x) for x in pts)


def pair_target(q: Query, a: str, b: str, rng: np.random.Generator,
                partial: bool = False) -> str:
    """'A' or 'B': the one whose first error comes later (no error = best); a coin when
    equal (so the judge learns no position preference)."""
    def quality(t):
        if partial and prefix_ok(q, t):
            return 10 ** 6
        k = first_wrong_step(q, t)
        return 10 ** 6 if k is None else k
    qa, qb = quality(a), quality(b)
    if qa == qb:
        return "A" if rng.random() < 0.5 else "B"
    return "A" if qa > qb else "B"


def refine_target(q: Query, text: str) -> str:
    if first_wrong_step(q, text) is None:
        return "No revision needed"
    p, d = problem_of(q)
    return f"<revised_response>{tasks.solution_text(p, d)}</revised_response>"
