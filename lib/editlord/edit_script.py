"""Line-addressed edit scripts: the compact target format of the editor.

An edit script turns a source (lines numbered from 1) into a candidate target. It is a
sequence of hunks, each a header followed by the hunk's new lines:

    @@ START,COUNT          replace COUNT source lines from line START (1-based) ...
    + new line              ... by these lines ("+ " then the line, indentation kept)

COUNT = 0 inserts before line START (START = n + 1 appends); a hunk without "+" lines
deletes. Hunks must be in increasing order and must not overlap. Example (`index_loop`):

    source                                   script
    1 def f(xs):                             @@ 3,2
    2     t = 0                              +     for x in xs:
    3     for i in range(len(xs)):
    4         x = xs[i]
    5         t += x

`gold(source, target)` is the difflib line diff written as a script, so
`apply(source, gold(source, target)) == target` (tested on every pair). `apply` never
repairs a script: anything that is not exactly this grammar, or that addresses lines the
source does not have, raises `EditScriptError` with a short `reason` (counted by the
evaluation as a failed edit).
"""
from __future__ import annotations

import difflib
import re

HEADER = re.compile(r"@@ (\d+),(\d+)\Z")
REASONS = ("empty", "bad_line", "body_before_header", "out_of_range", "overlap", "no_op")


class EditScriptError(ValueError):
    """A malformed edit script; `reason` is one of REASONS."""

    def __init__(self, reason: str, detail: str):
        assert reason in REASONS, reason
        super().__init__(f"malformed edit script ({reason}): {detail}")
        self.reason = reason


def numbered(source: str) -> str:
    """The source with each line prefixed by its 1-based number and '| ' (the editor's
    view of the source, so that line addresses can be read off)."""
    return "\n".join(f"{i}| {ln}" for i, ln in enumerate(source.split("\n"), 1))


def gold(source: str, target: str) -> str:
    """The edit script of the line diff source -> target (difflib opcodes, one hunk per
    non-equal opcode). Empty string when the two are equal."""
    a, b = source.split("\n"), target.split("\n")
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        out.append(f"@@ {i1 + 1},{i2 - i1}")
        out += [f"+ {ln}" for ln in b[j1:j2]]
    return "\n".join(out)


def parse(script: str) -> list[tuple[int, int, list[str]]]:
    """[(start, count, new lines)] of a script; EditScriptError on any deviation."""
    lines = script.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise EditScriptError("empty", "no hunks")
    hunks: list[tuple[int, int, list[str]]] = []
    for k, ln in enumerate(lines, 1):
        m = HEADER.match(ln)
        if m:
            hunks.append((int(m.group(1)), int(m.group(2)), []))
        elif ln.startswith("+ ") or ln == "+":
            if not hunks:
                raise EditScriptError("body_before_header", f"line {k} {ln[:40]!r}")
            hunks[-1][2].append(ln[2:])
        else:
            raise EditScriptError("bad_line", f"line {k} {ln[:40]!r} is neither '@@ START,COUNT' "
                                  "nor '+ text'")
    return hunks


def apply(source: str, script: str) -> str:
    """The source with the script's hunks applied (module docstring); EditScriptError when
    the script is malformed or addresses lines the source lacks."""
    src = source.split("\n")
    n = len(src)
    out, pos = [], 1                                  # pos: next source line not yet consumed
    for start, count, new in parse(script):
        if start < 1 or start + count - 1 > n or (count == 0 and start > n + 1):
            raise EditScriptError("out_of_range", f"hunk @@ {start},{count} on a source of {n} lines")
        if start < pos:
            raise EditScriptError("overlap", f"hunk @@ {start},{count} starts before line {pos}")
        if count == 0 and not new:
            raise EditScriptError("no_op", f"hunk @@ {start},0 without new lines")
        out += src[pos - 1:start - 1] + new
        pos = start + count
    return "\n".join(out + src[pos - 1:])
