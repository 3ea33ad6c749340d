"""Trajectory collection and rejection-sampling fine-tuning (filtered behaviour cloning).

SWE-Gym §3: sample trajectories, keep only those whose patch the grader says resolves the
instance, and fine-tune with the NLL of the assistant turns. The per-instance cap
(Table 4; MoatlessTools) keeps at most `cap` resolved trajectories of each instance,
preferring those with fewer LM calls (`cap=None`: keep all), which counters the bias
towards easy instances that many rollouts of the same easy task would bring.

    records = collect(instances, make_policy, store, rollouts=4, cache=cache)
    kept = select(records, cap=2)
    convs = conversations(kept, "lm_messages")      # the workspace LM's own view
    export_chat_jsonl(path, kept)                    # full agent conversations + tools
    optim, loop = schedule(len(convs), epochs=3, min_steps=60, batch_size=16, lr=5e-4, seed=0)
    lm, info = lib.lm.finetune.finetune(cfg, tok, repeat_to_batch(convs, 16), workdir,
                                        batch_size=16, seed=0, loop=loop, optim=optim)
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from lib.common import train_loop
from lib.swe_gym import agent, grader, runtime


def collect(instances: Sequence[dict], make_policy: Callable[[int, int], Any], store: str, *,
            rollouts: int, caps: agent.Caps = agent.Caps(), cache: runtime.TestCache | None = None,
            limits=runtime.DEFAULT_LIMITS, bash_cache: dict | None = None,
            grade_cache: grader.GradeCache | None = None, memo: dict | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[dict]:
    """Roll out `make_policy(instance_index, rollout)` `rollouts` times on every instance and
    grade each patch: [{instance_id, rollout, trajectory, grade, resolved}]. A patch seen
    before on the same instance is not graded again (`grade_cache`, keyed by instance and
    patch hash; an in-memory one when None). `memo`: episode memo of `agent.run_episode`
    (only for policies whose tools are deterministic, e.g. the scripted workflows)."""
    bash_cache = {} if bash_cache is None else bash_cache
    grade_cache = grader.GradeCache() if grade_cache is None else grade_cache
    out = []
    total = len(instances) * rollouts
    for i, inst in enumerate(instances):
        for r in range(rollouts):
            traj = agent.run_episode(inst, make_policy(i, r), store, caps, bash_cache, memo)
            rep = grade_cache.grade(inst, traj.patch, store, limits=limits, cache=cache)
            out.append({"instance_id": inst["instance_id"], "rollout": r,
                        "trajectory": traj.to_dict(), "grade": rep.to_dict(),
                        "resolved": rep.resolved})
            if progress:
                progress(len(out), total)
    return out


def lm_calls(record: dict) -> int:
    """Assistant turns of the LM's own conversation (else of the agent conversation)."""
    t = record["trajectory"]
    msgs = t["extra"].get("lm_messages") or t["messages"]
    return sum(m["role"] == "assistant" for m in msgs)


def select(records: Sequence[dict], cap: int | None) -> list[dict]:
    """Resolved records, at most `cap` per instance (fewest LM calls first, then rollout)."""
    if cap is not None and cap < 1:
        raise ValueError(f"cap = {cap} must be >= 1 or None (no cap)")
    by: dict[str, list[dict]] = {}
    for r in records:
        if r["resolved"]:
            by.setdefault(r["instance_id"], []).append(r)
    out = []
    for iid in sorted(by):
        ranked = sorted(by[iid], key=lambda r: (lm_calls(r), r["rollout"]))
        out.extend(ranked if cap is None else ranked[:cap])
    return out


def conversations(records: Sequence[dict], view: str = "lm_messages") -> list[list[dict]]:
    """The chat conversations of records: "lm_messages" (the workspace LM's compact view)
    or "messages" (the full agent conversation)."""
    if view not in ("lm_messages", "messages"):
        raise ValueError(f"view = {view!r}; expected lm_messages or messages")
    out = []
    for r in records:
        t = r["trajectory"]
        msgs = t["extra"].get("lm_messages") if view == "lm_messages" else t["messages"]
        if not msgs:
            raise ValueError(f"{r['instance_id']}: the trajectory has no {view}")
        out.append(msgs)
    return out


def export_chat_jsonl(path: str, records: Sequence[dict]) -> int:
    """Resolved trajectories as chat JSONL (`{"messages": [...], "tools": [...]}`, the
    OpenAI / torchtune / Unsloth form) for fine-tuning elsewhere; returns the count."""
    n = 0
    with open(path, "w") as f:
        for r in records:
            if not r["resolved"]:
                continue
            f.write(json.dumps({"messages": r["trajectory"]["messages"], "tools": agent.TOOLS,
                                "instance_id": r["instance_id"]}) + "\n")
            n += 1
    return n


def repeat_to_batch(convs: Sequence[Sequence[dict]], batch_size: int) -> list:
    """`convs` repeated ceil(batch / n) times, so that a batch can be drawn from few.
    ValueError when there are none."""
    convs = list(convs)
    if not convs:
        raise ValueError("no conversations to train on")
    return convs * -(-batch_size // len(convs))


def schedule(n: int, *, epochs: int, min_steps: int, batch_size: int, lr: float, seed: int,
             warmup_steps: int = 0, log_every: int = 10) -> tuple[dict, train_loop.LoopConfig]:
    """SWE-Gym's fine-tuning schedule for `n` conversations, as the `optim` and `loop` of
    `lib.lm.finetune.finetune`: steps = max(min_steps, epochs * ceil(n / batch)), AdamW
    with weight decay 0.01, clip 1.0, warm-up min(warmup_steps, steps // 4), cosine decay;
    one checkpoint at the end."""
    steps = max(min_steps, epochs * -(-n // batch_size))
    optim = dict(lr=lr, num_steps=steps, warmup_steps=min(warmup_steps, steps // 4),
                 weight_decay=0.01, grad_clip=1.0)
    loop = train_loop.LoopConfig(num_steps=steps, log_every=log_every,
                                 checkpoint_every=max(steps, 1), keep_checkpoints=1, seed=seed)
    return optim, loop
