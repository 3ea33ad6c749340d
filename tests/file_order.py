"""The order test files start in: the slowest first, from a record of what each took.

pytest-xdist hands whole files to workers (`--dist loadfile`), two to each at the start and
then one to whichever worker is free. By default it sends the files with the most tests
first, so a file of one long end-to-end test (a binary trained twice, a notebook) was among
the last to start and ran on alone while the other workers had finished. Started slowest
first (largest-processing-time-first scheduling), the long files overlap and the short ones
fill in at the end. `tests/conftest.py` sorts the collected tests so and turns xdist's own
reordering off; the record is `tests/file_seconds.json`, written from a `--durations=0` run by

    python3 tools/test_budget.py --out=/tmp/budget --log=pytest.log --file_order=tests/file_seconds.json

A file the record does not name starts after those it names (as a 0 s file); the order
changes when tests run, never what they check.
"""
from __future__ import annotations

import json
import os

RECORD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "file_seconds.json")


def file_of(nodeid: str) -> str:
    """'tests/a/test_b.py' of 'tests/a/test_b.py::test_c[x]'."""
    return nodeid.split("::", 1)[0]


def load(path: str = RECORD) -> dict[str, float]:
    """{test file: seconds} of the record; {} when there is none."""
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        return json.load(f)["seconds"]


def slowest_first(nodeids: list[str], seconds: dict[str, float]) -> list[str]:
    """`nodeids` with their files in decreasing recorded seconds; the files' tests stay
    together and in their order, files of equal (or no) record in their collected order."""
    first_seen = {}
    for nodeid in nodeids:
        first_seen.setdefault(file_of(nodeid), len(first_seen))
    rank = {f: (-seconds.get(f, 0.0), i) for f, i in first_seen.items()}
    return sorted(nodeids, key=lambda n: rank[file_of(n)])


def record(files: list[dict]) -> dict:
    """The record's JSON from test_budget's per-file totals [{"name", "total", ...}]."""
    return {"about": "seconds per test file of one --durations=0 run (tests/file_order.py)",
            "seconds": {d["name"]: d["total"] for d in sorted(files, key=lambda d: -d["total"])}}
