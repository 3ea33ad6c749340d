"""Meta-rules and the rule book file (readable, editable JSON lines).

A `Rule` is one meta-rule "switch from X to Y". `alternatives` holds the (X, Y) code
patterns it stands for (lib/editlord/patterns.py; several after MERGE); a rule learned by
a served LM has its X and Y as text. `support` is the number of training pairs the rule
manifests on.

Rule book file, one rule per line:

    {"id": "R1", "text": "switch from `eval(_)` to `int(_)`",
     "alternatives": [["eval(_)", "int(_)"]], "support": 31}

`load` validates it before use: a missing file, an empty book, a line that is not a JSON
object, a rule without text or alternatives, an alternative that is not a pair of
strings, or (for `kind="pattern"`) a pattern that does not parse is a `RuleBookError`
naming the file and line.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence

from lib.toolbox import jsonl
from lib.editlord import patterns

_SWITCH_RE = re.compile(r"^\s*switch from (.+?) to (.+?)\s*\.?\s*$", re.DOTALL | re.IGNORECASE)


class RuleBookError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Rule:
    text: str
    alternatives: tuple[tuple[str, str], ...]
    support: int = 0
    id: str = ""

    def with_(self, **kw) -> Rule:
        return dataclasses.replace(self, **kw)


def one_line(code: str) -> str:
    return "; ".join(line.strip() for line in code.splitlines() if line.strip())


def switch_text(x: str, y: str) -> str:
    """The paper's rule form, patterns on one line: switch from `X` to `Y`."""
    return f"switch from `{one_line(x)}` to `{one_line(y)}`"


def pattern_rule(x: str, y: str, support: int = 0) -> Rule:
    return Rule(switch_text(x, y), ((x, y),), support)


def parse_switch(text: str) -> tuple[str, str] | None:
    """(X, Y) of a "switch from X to Y" sentence (backticks stripped), else None."""
    m = _SWITCH_RE.match(text)
    if not m:
        return None
    return m.group(1).strip().strip("`"), m.group(2).strip().strip("`")


def save(path: str, rules: Sequence[Rule]) -> None:
    if not rules:
        raise RuleBookError(f"refusing to write an empty rule book to {path}")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rules:
            f.write(json.dumps({"id": r.id, "text": r.text,
                                "alternatives": [list(a) for a in r.alternatives],
                                "support": r.support}) + "\n")
    os.replace(tmp, path)


def load(path: str, kind: str = "pattern") -> list[Rule]:
    """A validated rule book (module docstring). kind: "pattern" (offline learner: X and
    Y must parse as code) or "text" (served-LM rules)."""
    if kind not in ("pattern", "text"):
        raise ValueError(f"kind = {kind!r} must be 'pattern' or 'text'")
    if not os.path.exists(path):
        raise RuleBookError(f"rule book {path} does not exist")
    rules = []
    for where, d in jsonl.records(path, error=RuleBookError):
        text, alts = d.get("text"), d.get("alternatives")
        if not isinstance(text, str) or not text.strip():
            raise RuleBookError(f"{where}: rule has no 'text'")
        if not isinstance(alts, list) or not alts:
            raise RuleBookError(f"{where}: rule has no 'alternatives' list")
        out = []
        for a in alts:
            if not (isinstance(a, list) and len(a) == 2 and all(isinstance(s, str) and s.strip()
                                                                for s in a)):
                raise RuleBookError(f"{where}: alternative {a!r} is not a pair [X, Y] of "
                                    "non-empty strings")
            if kind == "pattern":
                for s in a:
                    try:
                        patterns.key(s)
                    except SyntaxError as e:
                        raise RuleBookError(f"{where}: pattern {s!r} does not parse as "
                                            f"Python ({e.msg})") from None
            out.append((a[0], a[1]))
        support = d.get("support", 0)
        if not isinstance(support, int) or support < 0:
            raise RuleBookError(f"{where}: support {support!r} must be an int >= 0")
        rules.append(Rule(text.strip(), tuple(out), support, str(d.get("id", ""))))
    if not rules:
        raise RuleBookError(f"rule book {path} is empty")
    return rules
