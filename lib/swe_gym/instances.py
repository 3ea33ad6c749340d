"""Task instances in the SWE-bench format (the `SWEbenchInstance` of swebench/types.py).

A record is a dict with exactly these string fields

    repo, instance_id, base_commit, patch, test_patch, problem_statement, hints_text,
    created_at, version, FAIL_TO_PASS, PASS_TO_PASS, environment_setup_commit

where FAIL_TO_PASS / PASS_TO_PASS are JSON-encoded lists of test ids (as in the released
SWE-bench and SWE-Gym files; a list is also accepted on load and encoded). Extra keys
(e.g. SWE-Gym's `image_name`) are kept. `load` reads a `.json` file (a list of records)
or `.jsonl` (one per line) and raises ValueError naming `path:line` and the field for a
bad record before anything runs.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence

from lib.toolbox import jsonl

FIELDS = ("repo", "instance_id", "base_commit", "patch", "test_patch", "problem_statement",
          "hints_text", "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS",
          "environment_setup_commit")
TEST_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")


def test_list(record: dict, field: str) -> list[str]:
    """The decoded FAIL_TO_PASS / PASS_TO_PASS list of a validated record."""
    return json.loads(record[field])


def validate_record(record: object, where: str = "record") -> dict:
    """A copy with test lists JSON-encoded; ValueError naming `where` and the bad field."""
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected an object, got {type(record).__name__}")
    missing = [f for f in FIELDS if f not in record]
    if missing:
        raise ValueError(f"{where}: missing SWE-bench field(s) {missing}")
    out = dict(record)
    for f in TEST_LISTS:
        v = out[f]
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except json.JSONDecodeError:
                raise ValueError(f"{where}: field {f} is not a JSON-encoded list") from None
        if not isinstance(v, list) or not all(isinstance(t, str) for t in v):
            raise ValueError(f"{where}: field {f} must be a list of test-id strings")
        out[f] = json.dumps(v)
    for f in FIELDS:
        if f in TEST_LISTS:
            continue
        if out[f] is None and f in ("hints_text", "environment_setup_commit", "version"):
            out[f] = ""
        if not isinstance(out[f], str):
            raise ValueError(f"{where}: field {f} must be a string, got {type(out[f]).__name__}")
    for f in ("repo", "instance_id", "base_commit", "patch"):
        if not out[f].strip():
            raise ValueError(f"{where}: field {f} is empty")
    if not test_list(out, "FAIL_TO_PASS"):
        raise ValueError(f"{where}: FAIL_TO_PASS is empty (nothing to resolve)")
    return out


def load(path: str) -> list[dict]:
    """Records from a `.json` list or a `.jsonl` file; ValueError naming path, line, field."""
    if not os.path.exists(path):
        raise ValueError(f"instance file {path!r} does not exist")
    out: list[dict] = []
    if path.endswith(".jsonl"):
        out = [validate_record(obj, where) for where, obj in jsonl.records(path)]
    else:
        with open(path) as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
            if not isinstance(data, list):
                raise ValueError(f"{path}: expected a JSON list of instances")
            out = [validate_record(r, f"{path}[{i}]") for i, r in enumerate(data)]
    ids = [r["instance_id"] for r in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"{path}: duplicate instance_id(s) {dup[:5]}")
    return out


def save(path: str, records: Iterable[dict]) -> None:
    """Write validated records as `.jsonl` or `.json` (by the extension), atomically."""
    recs = [validate_record(r, f"record {i}") for i, r in enumerate(records)]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        if path.endswith(".jsonl"):
            f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in recs)
        else:
            json.dump(recs, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def split_by_repo(records: Sequence[dict], test_repos: Sequence[str]) -> tuple[list[dict], list[dict]]:
    """(train, test): an instance is in test iff its repo is in `test_repos`."""
    held = set(test_repos)
    return [r for r in records if r["repo"] not in held], [r for r in records if r["repo"] in held]
