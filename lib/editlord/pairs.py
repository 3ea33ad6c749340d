"""Before/after code pairs with ground truth, built from HumanEval, and a loader for user pairs.

A HumanEval problem is split into a *unit* -- the entry-point function, docstring removed,
in `ast.unparse` normal form -- and its *context* (imports, helper functions), so that an
editor edits short functions and the test program is `context + unit + tests`.

    target = unit(canonical solution)
    source = inject_k(... inject_1(target))        rules 1..k of the library, library order

A pair is kept only when (all checked here, failures counted by reason):
  * each injection changed the code, and forward_1(... forward_k(source)) == target;
  * the set of library checkers firing on the source equals the injected set, and none
    fires on the target (so the ground-truth rule set is exact);
  * the HumanEval tests pass on the source and on the target.
A canonical solution that itself holds an anti-pattern is first cleaned by the forward
rules (`canonicalize`); its tests are rerun on the cleaned target.

User pairs (`load_user_pairs`): JSON lines `{"id", "source", "target"}` (+ optional
`"context"`, `"rules"`); a record that is not valid JSON, lacks a field or whose code does
not parse is skipped, counted and logged (or raises with `strict=True`).
"""
from __future__ import annotations

import ast
import dataclasses
import itertools
import json
import logging
from collections import Counter
from collections.abc import Sequence

from lib.common import workdir as wd
from lib.data import humaneval
from lib.editlord import library

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Pair:
    id: str
    task_id: str             # HumanEval id ("" for user pairs)
    context: str             # code the unit needs (imports, helpers)
    source: str              # code to edit (anti-patterns injected)
    target: str              # edited code (canonical solution)
    rules: tuple[str, ...]   # injected library rules (ground truth; () when unknown)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Pair:
        return cls(d["id"], d.get("task_id", ""), d.get("context", ""), d["source"], d["target"],
                   tuple(d.get("rules", ())))


def normal(code: str) -> str:
    """`ast.unparse` normal form (SyntaxError when the code does not parse)."""
    return ast.unparse(ast.parse(code))


def split_problem(problem: humaneval.Problem) -> tuple[str, str]:
    """(context, unit) of a problem's canonical program; ValueError when the entry point
    is not a top-level function."""
    tree = ast.parse(problem.prompt + problem.canonical_solution)
    fn = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == problem.entry_point]
    if len(fn) != 1:
        raise ValueError(f"{problem.task_id}: entry point {problem.entry_point!r} is not one "
                         "top-level function")
    fn = fn[0]
    if (len(fn.body) > 1 and isinstance(fn.body[0], ast.Expr)
            and isinstance(fn.body[0].value, ast.Constant) and isinstance(fn.body[0].value.value, str)):
        fn.body = fn.body[1:]
    rest = ast.Module([s for s in tree.body if s is not fn], [])
    return ast.unparse(rest), ast.unparse(ast.Module([fn], []))


def program(context: str, unit: str) -> str:
    return f"{context}\n\n{unit}\n" if context else f"{unit}\n"


def grade_unit(problem: humaneval.Problem, context: str, unit: str) -> humaneval.Grade:
    return humaneval.grade_program(problem, program(context, unit))


def canonicalize(unit: str, max_rounds: int = 5) -> str:
    """`unit` with every library rule applied forward until nothing changes (a HumanEval
    canonical solution may itself hold an anti-pattern; the target is its cleaned form,
    whose tests are checked again in `build_pairs`)."""
    tree = ast.parse(unit)
    for _ in range(max_rounds):
        total = 0
        for r in library.LIBRARY:
            tree, n = r.forward(tree)
            total += n
        if total == 0:
            break
    return ast.unparse(tree)


def inject(target: str, rules: Sequence[str]) -> tuple[str | None, str]:
    """(source, "") or (None, reason) for injecting `rules` (library order) into `target`."""
    tree = ast.parse(target)
    for r in library.get(sorted(rules, key=list(library.BY_NAME).index)):
        tree, n = r.inject(tree)
        if n == 0:
            return None, "not_applicable"
    return ast.unparse(tree), ""


def recover(source: str, rules: Sequence[str]) -> str:
    """Apply the forward rules (reverse library order) to `source`."""
    tree = ast.parse(source)
    for r in reversed(library.get(sorted(rules, key=list(library.BY_NAME).index))):
        tree, _ = r.forward(tree)
    return ast.unparse(tree)


def check_pair(target: str, source: str, rules: Sequence[str]) -> str:
    """"" when the pair's ground truth is exact (module docstring), else the reason."""
    if recover(source, rules) != target:
        return "no_round_trip"
    if set(library.detected(source)) != set(rules):
        return "other_checker_fires"
    if library.detected(target):
        return "target_has_anti_pattern"
    return ""


def build_pairs(problems: Sequence[humaneval.Problem], *, max_rules: int = 2,
                max_pairs_per_problem: int = 6, max_chars: int = 10_000,
                run_tests: bool = True) -> tuple[list[Pair], Counter]:
    """Pairs with 1..max_rules injected rules per problem (singles first, then
    combinations, up to `max_pairs_per_problem`), and a Counter of why candidates were
    dropped."""
    pairs, dropped = [], Counter()
    for prob in problems:
        context, canonical = split_problem(prob)
        target = canonicalize(canonical)
        if len(target) > max_chars:
            dropped["target_too_long"] += 1
            continue
        if target != canonical:
            dropped["canonical_cleaned"] += 1   # not a drop: the target is the cleaned form
        singles = [r.name for r in library.LIBRARY if inject(target, [r.name])[0] is not None]
        target_ok = None
        made = 0
        for k in range(1, max_rules + 1):
            for combo in itertools.combinations(singles, k):
                if made >= max_pairs_per_problem:
                    break
                source, why = inject(target, combo)
                why = why or ("source_too_long" if len(source) > max_chars else "")
                why = why or check_pair(target, source, combo)
                if not why and run_tests:
                    if target_ok is None:
                        target_ok = grade_unit(prob, context, target).passed
                    if not target_ok:
                        why = "target_fails_tests"
                    elif not grade_unit(prob, context, source).passed:
                        why = "source_fails_tests"
                if why:
                    dropped[why] += 1
                    continue
                pid = f"{prob.task_id}:{'+'.join(combo)}"
                pairs.append(Pair(pid, prob.task_id, context, source, target, tuple(combo)))
                made += 1
    return pairs, dropped


def save_pairs(path: str, pairs: Sequence[Pair]) -> None:
    """JSON lines, one pair each, written atomically (a crash leaves no half file)."""
    wd.write_text_atomic(path, "".join(json.dumps(p.to_json()) + "\n" for p in pairs))


def load_pairs(path: str) -> list[Pair]:
    """The pairs `save_pairs` wrote to `path`."""
    with open(path) as f:
        return [Pair.from_json(json.loads(line)) for line in f if line.strip()]


def load_user_pairs(path: str, *, strict: bool = False) -> tuple[list[Pair], Counter]:
    """The user's own before/after pairs (module docstring); (pairs, skip counts)."""
    out, skipped = [], Counter()
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                d = json.loads(line)
                if not isinstance(d, dict):
                    raise ValueError("not a JSON object")
                for k in ("id", "source", "target"):
                    if not isinstance(d.get(k), str):
                        raise ValueError(f"field {k!r} missing or not a string")
                src, tgt = normal(d["source"]), normal(d["target"])
                ctx = normal(d["context"]) if d.get("context") else ""
            except (ValueError, SyntaxError) as e:
                reason = "syntax_error" if isinstance(e, SyntaxError) else "bad_record"
                msg = f"{where}: {reason}: {e}"
                if strict:
                    raise ValueError(msg) from None
                log.warning("skipping pair %s", msg)
                skipped[reason] += 1
                continue
            out.append(Pair(d["id"], d.get("task_id", ""), ctx, src, tgt,
                            tuple(d.get("rules", ()))))
    return out, skipped
