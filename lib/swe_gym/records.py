"""Rollout records (`rft.collect`'s dicts): slimmed for storage, resolve rates by policy and
by bug kind."""
from __future__ import annotations

from collections.abc import Sequence


def slim(records: Sequence[dict]) -> list[dict]:
    """Records without the bulky status maps (kept: verdict, patch, conversations)."""
    out = []
    for r in records:
        g = {k: v for k, v in r["grade"].items() if k != "status"}
        out.append({**r, "grade": g})
    return out


def rate(records: Sequence[dict]) -> dict:
    """{resolved, n, rate (nan when n = 0), exits {reason: count}, empty_patch}."""
    n = len(records)
    k = sum(r["resolved"] for r in records)
    exits: dict[str, int] = {}
    for r in records:
        e = r["trajectory"]["exit_reason"].split(":")[0]
        exits[e] = exits.get(e, 0) + 1
    empty = sum(not r["trajectory"]["patch"].strip() for r in records)
    return {"resolved": k, "n": n, "rate": k / n if n else float("nan"), "exits": exits,
            "empty_patch": empty}


def by_kind(records: Sequence[dict], kinds: dict[str, str]) -> dict:
    """{bug kind: [resolved, n]} with `kinds` mapping instance id -> bug kind."""
    out: dict[str, list] = {}
    for r in records:
        out.setdefault(kinds[r["instance_id"]], []).append(r["resolved"])
    return {k: [int(sum(v)), len(v)] for k, v in sorted(out.items())}


def resolved(records: Sequence[dict]) -> list[bool]:
    """Per-record outcomes, in order (the paired data of `expert_iteration.mcnemar_p`)."""
    return [r["resolved"] for r in records]
