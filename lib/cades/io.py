"""Real event-sequence files: JSON lines, one sequence per line.

    {"id": "seq-001", "t_max": 100.0, "times": [0.3, 1.7, 2.2], "marks": [0, 2, 1]}

`times` (required): sorted, non-negative event times <= t_max; `t_max` (required): end of
the observation window; `marks` (optional, default all 0): ints in [0, num_marks);
`id` (optional, default "line N"). Blank lines are skipped. Every problem raises
`SequenceError` naming the file, the line and the sequence id, before anything is padded.
"""
from __future__ import annotations

import json

import numpy as np

from lib.toolbox import jsonl
from lib.tpp.events import Events, SequenceError, check_sequence, from_lists, to_lists

_KEYS = {"id", "t_max", "times", "marks"}


def load_jsonl(path: str, num_marks: int | None = None, max_len: int | None = None
               ) -> tuple[Events, list[str]]:
    """(padded Events, ids). num_marks: the mark alphabet size (default: max mark + 1)."""
    records = []
    for where, rec in jsonl.records(path, error=SequenceError):
        name = f"'{rec.get('id', 'line ' + where.rsplit(':', 1)[1])}' ({where})"
        unknown = sorted(set(rec) - _KEYS)
        if unknown:
            raise SequenceError(f"sequence {name}: unknown field(s) {unknown}; allowed "
                                f"{sorted(_KEYS)}")
        for key in ("times", "t_max"):
            if key not in rec:
                raise SequenceError(f"sequence {name}: missing field '{key}'")
        if not isinstance(rec["times"], list):
            raise SequenceError(f"sequence {name}: 'times' must be a list of numbers")
        records.append((name, rec))
    if not records:
        raise SequenceError(f"{path}: no sequences")
    marks_given = any("marks" in r for _, r in records)
    if num_marks is None:
        num_marks = 1 + max((max(r["marks"]) for _, r in records if r.get("marks")), default=0) \
            if marks_given else 1
    times, marks, t_max, names = [], [], [], []
    for name, rec in records:
        try:
            t = np.asarray(rec["times"], dtype=np.float64)
            m = np.asarray(rec.get("marks", [0] * len(rec["times"])), dtype=np.float64)
            tm = float(rec["t_max"])
        except (TypeError, ValueError):
            raise SequenceError(f"sequence {name}: times, marks and t_max must be numbers") from None
        check_sequence(name, t, m, tm, num_marks)
        times.append(t)
        marks.append(m.astype(np.int64))
        t_max.append(tm)
        names.append(str(rec.get("id", name)))
    ev = from_lists(times, marks, np.asarray(t_max), num_marks, names, max_len)
    return ev, names


def save_jsonl(path: str, ev: Events, ids: list[str] | None = None) -> None:
    """Write a padded batch as JSON lines (the inverse of `load_jsonl`)."""
    times, marks = to_lists(ev)
    t_max = np.asarray(ev.t_max)
    with open(path, "w") as f:
        for i, (t, m) in enumerate(zip(times, marks)):
            rec = {"id": ids[i] if ids else f"seq-{i}", "t_max": float(t_max[i]),
                   "times": [float(x) for x in t], "marks": [int(x) for x in m]}
            f.write(json.dumps(rec) + "\n")
