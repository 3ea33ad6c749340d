"""Extra training code for the editor: functions of Python's own standard library.

The HumanEval pairs (about 250 from 164 problems) are far too few to teach a from-scratch
editor to edit code. The interpreter that runs this workspace ships thousands of real,
reviewed functions (`sysconfig.get_paths()["stdlib"]`, PSF licence); they are read at run
time and never stored in the repository. Each becomes edit pairs exactly like a HumanEval
unit (`pairs.py`), with the same library of rules and the same exactness checks:

    unit   = a top-level function or a method (decorators and docstring dropped, nested
             functions kept inside it), `ast.unparse` normal form, <= max_chars
    target = canonicalize(unit)                    forward rules until nothing changes
    source = inject_k(... inject_1(target))        1..max_rules library rules
    kept   iff forward rules recover the target exactly and the checkers firing on the
             source are exactly the injected rules and none fires on the target

There are no tests for these functions, so they are for training the editor only; the
functional evaluation stays on held-out HumanEval problems. Pair ids are
`stdlib:<module>:<qualified name>:<rules>`, task_id is "" (so a grader refuses them).

Files under test / demo / IDE / site-packages directories are skipped, and so is a file
that does not parse or cannot be read (counted). `functions` is deterministic for a given
interpreter: files in sorted order, then a seeded shuffle of the units.
"""
from __future__ import annotations

import ast
import copy
import itertools
import os
import random
import sysconfig
from collections import Counter
from collections.abc import Iterator

from lib.editlord import pairs as pairs_lib
from lib.editlord.pairs import Pair

SKIP_DIRS = frozenset({"test", "tests", "idle_test", "idlelib", "site-packages",
                       "dist-packages", "lib2to3", "turtledemo", "ensurepip", "__pycache__",
                       "tkinter", "pydoc_data"})


def stdlib_dir() -> str:
    """The running interpreter's standard-library directory."""
    return sysconfig.get_paths()["stdlib"]


def source_files(root: str) -> list[str]:
    """Sorted .py files under `root`, skipping SKIP_DIRS and files whose name starts with
    `test_`."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        out += [os.path.join(d, f) for f in sorted(files)
                if f.endswith(".py") and not f.startswith("test_")]
    return sorted(out)


def _strip(fn: ast.FunctionDef) -> ast.FunctionDef:
    body = fn.body
    if (len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        body = body[1:]
    out = copy.copy(fn)
    out.body, out.decorator_list = body, []
    return out


def units(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    """(qualified name, function without decorators / docstring) for every top-level
    function and every method of a top-level class (async functions are skipped)."""
    for s in tree.body:
        if isinstance(s, ast.FunctionDef):
            yield s.name, _strip(s)
        elif isinstance(s, ast.ClassDef):
            for m in s.body:
                if isinstance(m, ast.FunctionDef):
                    yield f"{s.name}.{m.name}", _strip(m)


def functions(root: str, *, max_chars: int, seed: int = 0,
              base: str | None = None) -> tuple[list[tuple[str, str]], Counter]:
    """[(name "module:qualname", unit code)] of every function of at most `max_chars`
    characters under `root` (module names relative to `base`, default `root`), seeded
    shuffle; and a Counter of skipped files / units."""
    out, skipped = [], Counter()
    for path in source_files(root):
        mod = os.path.relpath(path, base or root)[:-3].replace(os.sep, ".")
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            skipped["unreadable_file"] += 1
            continue
        for name, fn in units(tree):
            code = ast.unparse(ast.Module([fn], []))
            if len(code) > max_chars:
                skipped["too_long"] += 1
            else:
                out.append((f"{mod}:{name}", code))
    random.Random(seed).shuffle(out)
    return out, skipped


def build_pairs(units_: list[tuple[str, str]], *, max_rules: int, max_pairs_per_unit: int,
                max_chars: int, max_pairs: int, allowed: set[str] | None = None
                ) -> tuple[list[Pair], Counter]:
    """Edit pairs from `units_` (in order) until `max_pairs`; every candidate is checked like
    a HumanEval pair except for tests (module docstring). Returns (pairs, drop reasons)."""
    from lib.editlord import library
    out, dropped = [], Counter()
    names = [r.name for r in library.LIBRARY if allowed is None or r.name in allowed]
    for uname, code in units_:
        if len(out) >= max_pairs:
            break
        try:
            target = pairs_lib.canonicalize(code)
        except (SyntaxError, ValueError, RecursionError):
            dropped["canonicalize_failed"] += 1
            continue
        try:
            singles = [n for n in names if pairs_lib.inject(target, [n])[0] is not None]
        except (SyntaxError, ValueError, RecursionError):
            dropped["inject_failed"] += 1
            continue
        if not singles:
            dropped["no_site"] += 1
            continue
        made = 0
        for k in range(1, max_rules + 1):
            for combo in itertools.combinations(singles, k):
                if made >= max_pairs_per_unit or len(out) >= max_pairs:
                    break
                source, why = pairs_lib.inject(target, combo)
                why = why or ("source_too_long" if len(source) > max_chars else "")
                why = why or pairs_lib.check_pair(target, source, combo)
                if why:
                    dropped[why] += 1
                    continue
                out.append(Pair(f"stdlib:{uname}:{'+'.join(combo)}", "", "", source, target,
                                tuple(combo)))
                made += 1
    return out, dropped
