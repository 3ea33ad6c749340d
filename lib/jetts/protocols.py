"""The three JETTS protocols with the semantics of the notes (`jetts/judge_task/*.py`).

Reranking (`rerank`), a pool of N responses -> a ranking (or only the top-1):
* "likert" / "additive": one single-instance rating per response; ties broken by
  uniform noise of size 1e-6 (JETTS); ranking by rating.
* "round_robin": every unordered pair {i, j} (i < j) judged in both orders, (A=i, B=j)
  giving s_ij and (A=j, B=i) giving s_ji (s = 0: A better, 1: B better). The pair's
  probability that j beats i is p_ij = (s_ij + (1 - s_ji)) / 2; response i accumulates
  1 - p_ij and j accumulates p_ij; the ranking is by total (ties broken by 1e-6 noise).
  `both_orders=False` (an ablation) uses p_ij = s_ij with i always shown first.
* "knockout": pad to the next power of two with byes, shuffle, judge adjacent pairs in
  both orders (p as above); the winner (p > 1/2: the second, < 1/2: the first, = 1/2:
  a fair coin) advances; a response paired with a bye advances unjudged. Only the top-1
  is defined.

Step-level beam search (`beam_search`) over a precomputed `pools.Tree` with N, M, d: the
beam starts as the root's N children; each round the judge ranks the active nodes' partial
responses (`partial=True`; with `lookahead` it judges each inner node's greedy rollout to a
full response instead), keeps the top K = N / M, and replaces each kept inner node by its M
children (the first greedy) while a kept leaf stays as it is. When every active node is a
leaf, a final ranking without the partial note picks one; its correctness is the result.

Critique-based refinement (`refine_single`, `refine_pairwise`): the judge rates (or
compares) with an explanation; the refiner (the generator) is prompted with the query, the
response(s), the score / verdict and the explanation, and answers
`<revised_response>...</revised_response>` or "No revision needed". Iterate up to
`max_iterations`, stopping on "no revision" or a refinement that cannot be parsed. Then all
iterations' responses are merged and reranked by the same judge (single: the rating used in
the loop; pairwise: round robin), and the top-1 is the answer. Pairwise: the refiner merges
A and B (keeping merits, fixing flaws); the new response is then paired with the better of
the previous two.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np

from lib.jetts.judges import Judge, Judgement
from lib.jetts.pools import Query, Response, Tree
from lib.lm.client import LanguageModel

RERANK_METHODS = ("likert", "additive", "round_robin", "knockout")
RANKING_METHODS = ("likert", "additive", "round_robin")     # define a full ranking
TIE_NOISE = 1e-6


@dataclasses.dataclass
class Ranked:
    top: int                          # index of the chosen response
    ranking: list[int] | None         # best first (None for knockout)
    totals: np.ndarray | None         # ratings / round-robin totals (before tie noise)
    calls: int                        # judge calls made
    parse_failures: int               # of those, outputs that could not be parsed
    verdicts: list[tuple[int, int, float]] = dataclasses.field(default_factory=list)
    # (A index, B index, s) of every pairwise call, for position-bias reports


def _failures(judges_out: Sequence[Judgement]) -> int:
    return sum(not j.parsed for j in judges_out)


def _order(values: np.ndarray, rng: np.random.Generator) -> list[int]:
    noisy = values + rng.uniform(0.0, TIE_NOISE, size=values.shape)
    return [int(i) for i in np.argsort(-noisy, kind="stable")]


def rerank_single(judge: Judge, query: Query, responses: Sequence[Response], rubric: str,
                  rng: np.random.Generator, partial: bool = False) -> Ranked:
    js = judge.rate(query, responses, rubric=rubric, partial=partial)
    vals = np.asarray([j.value for j in js], float)
    order = _order(vals, rng)
    return Ranked(order[0], order, vals, len(js), _failures(js))


def round_robin_totals(verdicts: Sequence[tuple[int, int, float]], n: int,
                       both_orders: bool = True) -> np.ndarray:
    """Totals (n,) from verdicts (A, B, s): for both orders, p_ij = (s_ij + 1 - s_ji) / 2."""
    s = {(a, b): v for a, b, v in verdicts}
    totals = np.zeros(n)
    for i in range(n):
        for j in range(i + 1, n):
            p = (s[(i, j)] + 1.0 - s[(j, i)]) / 2.0 if both_orders else s[(i, j)]
            totals[i] += 1.0 - p
            totals[j] += p
    return totals


def rerank_round_robin(judge: Judge, query: Query, responses: Sequence[Response],
                       rng: np.random.Generator, *, both_orders: bool = True,
                       partial: bool = False) -> Ranked:
    n = len(responses)
    idx = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if both_orders:
        idx += [(j, i) for i, j in idx]
    js = judge.compare(query, [(responses[a], responses[b]) for a, b in idx], partial=partial)
    verdicts = [(a, b, j.value) for (a, b), j in zip(idx, js)]
    totals = round_robin_totals(verdicts, n, both_orders)
    order = _order(totals, rng)
    return Ranked(order[0], order, totals, len(js), _failures(js), verdicts)


def rerank_knockout(judge: Judge, query: Query, responses: Sequence[Response],
                    rng: np.random.Generator) -> Ranked:
    n = len(responses)
    size = 1 << (n - 1).bit_length()
    slots: list[int | None] = list(range(n)) + [None] * (size - n)
    rng.shuffle(slots)
    calls = fails = 0
    verdicts = []
    while len(slots) > 1:
        games = [(slots[k], slots[k + 1]) for k in range(0, len(slots), 2)]
        real = [(a, b) for a, b in games if a is not None and b is not None]
        asked = real + [(b, a) for a, b in real]
        js = judge.compare(query, [(responses[a], responses[b]) for a, b in asked]) if asked else []
        calls += len(js)
        fails += _failures(js)
        s = {ab: j.value for ab, j in zip(asked, js)}
        verdicts += [(a, b, v) for (a, b), v in s.items()]
        nxt = []
        for a, b in games:
            if a is None or b is None:
                nxt.append(b if a is None else a)
                continue
            p = (s[(a, b)] + 1.0 - s[(b, a)]) / 2.0
            nxt.append(b if p > 0.5 else a if p < 0.5 else (a if rng.random() < 0.5 else b))
        slots = nxt
    return Ranked(int(slots[0]), None, None, calls, fails, verdicts)


def rerank(judge: Judge, query: Query, responses: Sequence[Response], method: str,
           rng: np.random.Generator, *, partial: bool = False) -> Ranked:
    """Dispatch to one reranking method (module docstring)."""
    if method in ("likert", "additive"):
        return rerank_single(judge, query, responses, method, rng, partial)
    if method == "round_robin":
        return rerank_round_robin(judge, query, responses, rng, partial=partial)
    if method == "knockout":
        if partial:
            raise ValueError("knockout defines only a top-1; it cannot rank a beam")
        return rerank_knockout(judge, query, responses, rng)
    raise ValueError(f"unknown reranking method {method!r}; expected one of {RERANK_METHODS}")


# ----------------------------------------------------------------------------- beam search


@dataclasses.dataclass
class BeamResult:
    leaf: int                 # chosen leaf node
    score: float              # its correctness
    rounds: int
    calls: int
    parse_failures: int


def beam_search(judge: Judge, tree: Tree, method: str, rng: np.random.Generator, *,
                lookahead: bool = False) -> BeamResult:
    """Step-level beam search over a precomputed tree (module docstring)."""
    if method not in RANKING_METHODS:
        raise ValueError(f"beam search needs a ranking method {RANKING_METHODS}, got {method!r}")
    nodes = tree.nodes
    keep = tree.n // tree.m
    active = list(nodes[0].children)
    if len(active) != tree.n:
        raise ValueError(f"tree of {tree.query.qid!r}: root has {len(active)} children, N = {tree.n}")
    calls = fails = rounds = 0
    while not all(nodes[i].leaf for i in active):
        if lookahead:
            shown = [Response(nodes[i].text, nodes[i].score) if nodes[i].leaf
                     else Response(nodes[i].rollout, nodes[i].rollout_score) for i in active]
            partial = False
        else:
            shown = [Response(nodes[i].text, nodes[i].score) for i in active]
            partial = True
        r = rerank(judge, tree.query, shown, method, rng, partial=partial)
        calls, fails, rounds = calls + r.calls, fails + r.parse_failures, rounds + 1
        nxt = []
        for k in r.ranking[:keep]:
            i = active[k]
            nxt.extend([i] if nodes[i].leaf else nodes[i].children)
        active = nxt
    if len(active) == 1:
        leaf = active[0]
    else:
        r = rerank(judge, tree.query, [Response(nodes[i].text, nodes[i].score) for i in active],
                   method, rng)
        calls, fails = calls + r.calls, fails + r.parse_failures
        leaf = active[r.top]
    return BeamResult(leaf, nodes[leaf].score, rounds, calls, fails)


# ----------------------------------------------------------------------------- refinement

REFINE_FORMATS = ("full", "compact")
_REVISED = re.compile(r"<revised_response>(.*?)</revised_response>", re.S)
NO_REVISION = "no revision needed"


def refine_prompt_single(query: str, response: str, score: float, critique: str,
                         fmt: str = "full") -> str:
    if fmt == "compact":
        return f"refine\n{query}\n{response}\nscore {int(score)} {critique}"
    return (f"Below are an instruction, your earlier response, and an evaluation of it "
            f"(a score out of 5 and an explanation).\n\n### Instruction:\n{query}\n\n"
            f"### Response:\n{response}\n\n### Evaluation: score {score:g} out of 5.\n{critique}\n\n"
            "If the evaluation shows a flaw, write an improved response between "
            "<revised_response> and </revised_response>. If the response needs no change, "
            "answer exactly \"No revision needed\".")


def refine_prompt_pairwise(query: str, a: str, b: str, better: str, critique: str,
                           fmt: str = "full") -> str:
    if fmt == "compact":
        return f"merge\n{query}\nA {a}\nB {b}\nbetter {better} {critique}"
    return (f"Below are an instruction, two responses and a comparison of them.\n\n"
            f"### Instruction:\n{query}\n\n### Response A:\n{a}\n\n### Response B:\n{b}\n\n"
            f"### Comparison: response {better} is better.\n{critique}\n\n"
            "Write one response that combines the merits of both and fixes their flaws, "
            "between <revised_response> and </revised_response>. If the better response "
            "needs no change, answer exactly \"No revision needed\".")


def parse_refinement(text: str) -> tuple[str, str | None]:
    """("revised", text) | ("no_revision", None) | ("parse_failure", None)."""
    m = _REVISED.findall(text)
    if m:
        return "revised", m[-1].strip()
    if NO_REVISION in text.lower():
        return "no_revision", None
    return "parse_failure", None


@dataclasses.dataclass
class RefineResult:
    responses: list[Response]       # iteration 0 (the initial response(s)) then revisions
    top: int                        # chosen by the final rerank
    score: float
    stop_reason: str                # "max_iterations" | "no_revision" | "parse_failure"
    iterations: int                 # revisions made
    judge_calls: int
    judge_parse_failures: int
    refiner_parse_failures: int


Grader = Callable[[Query, str], float]


def _ask(refiner: LanguageModel, prompt: str, max_tokens: int) -> str:
    return refiner.chat([{"role": "user", "content": prompt}], n=1, temperature=0.0,
                        max_tokens=max_tokens, seed=0).choices[0].text


def refine_single(judge: Judge, refiner: LanguageModel, query: Query, initial: Response,
                  grade: Grader, rng: np.random.Generator, *, max_iterations: int = 3,
                  rubric: str = "likert", fmt: str = "full", max_tokens: int = 512) -> RefineResult:
    history = [initial]
    calls = fails = rfails = 0
    stop = "max_iterations"
    cur = initial
    for _ in range(max_iterations):
        j = judge.rate(query, [cur], rubric=rubric)[0]
        calls, fails = calls + 1, fails + (not j.parsed)
        kind, text = parse_refinement(
            _ask(refiner, refine_prompt_single(query.prompt, cur.text, j.value, j.critique, fmt),
                 max_tokens))
        if kind != "revised":
            stop = kind
            rfails += kind == "parse_failure"
            break
        cur = Response(text, grade(query, text), meta={"refined": True})
        history.append(cur)
    final = rerank_single(judge, query, history, rubric, rng)
    return RefineResult(history, final.top, history[final.top].score, stop, len(history) - 1,
                        calls + final.calls, fails + final.parse_failures, rfails)


def refine_pairwise(judge: Judge, refiner: LanguageModel, query: Query, a: Response,
                    b: Response, grade: Grader, rng: np.random.Generator, *,
                    max_iterations: int = 3, fmt: str = "full",
                    max_tokens: int = 512) -> RefineResult:
    history = [a, b]
    calls = fails = rfails = 0
    stop = "max_iterations"
    for _ in range(max_iterations):
        j = judge.compare(query, [(a, b)])[0]
        calls, fails = calls + 1, fails + (not j.parsed)
        better_name, better = ("B", b) if j.value > 0.5 else ("A", a)
        kind, text = parse_refinement(_ask(
            refiner, refine_prompt_pairwise(query.prompt, a.text, b.text, better_name,
                                            j.critique, fmt), max_tokens))
        if kind != "revised":
            stop = kind
            rfails += kind == "parse_failure"
            break
        new = Response(text, grade(query, text), meta={"refined": True})
        history.append(new)
        a, b = better, new
    final = rerank_round_robin(judge, query, history, rng)
    return RefineResult(history, final.top, history[final.top].score, stop, len(history) - 2,
                        calls + final.calls, fails + final.parse_failures, rfails)
