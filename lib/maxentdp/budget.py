"""A wall-clock budget for `lib.common.train_loop.train` (a fixed accelerator slot).

    clock = Budget(deadline=time.monotonic() + 300.0)       # or Budget(None): no budget
    result = train_budgeted(task, loop_cfg, workdir=..., mesh=..., budget=clock,
                            on_step=lambda done: ...)        # after every completed loop step

One loop step of a MaxEntDP run is one chunk of environment steps with its evaluation.
`train_budgeted` wraps the task's `batch_fn`, the host-side call the loop makes before
every step: there it measures the duration of the step that just ended, calls `on_step`
(progressive results), and raises `BudgetSpent` when the time left is shorter than that
duration, i.e. when the next step would not end before the deadline. The previous step's
checkpoint has been saved by then (a budget requires `checkpoint_every == 1`), so the
stopped run is restored from it and returned like a finished one, with `stopped = True`;
running the same command again resumes it exactly (the loop's keys depend on the step only).
The first step of a call (jit compilation included) is never timed in advance: it runs
unless the deadline has already passed.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Callable, NamedTuple

from lib.common import train_loop


class BudgetSpent(Exception):
    """Raised before a loop step that would end after the deadline."""


@dataclasses.dataclass
class Budget:
    """`deadline` on `clock`'s scale (`time.monotonic` by default); None = unlimited."""

    deadline: float | None
    clock: Callable[[], float] = time.monotonic

    def left(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - self.clock()


class BudgetedResult(NamedTuple):
    state: object | None   # None when the budget was spent before any step of a fresh run
    step: int              # completed loop steps
    stopped: bool          # True when the budget ended the run before cfg.num_steps
    resumed_from: int
    preempted: bool        # SIGTERM (not the budget) stopped the run


def _timed_batch_fn(task: train_loop.Task, budget: Budget,
                    on_step: Callable[[int], None] | None, seen: dict) -> Callable:
    last = {"t": None}

    def batch_fn(step, rows):
        now = budget.clock()
        seen.setdefault("first", step)
        if last["t"] is not None:
            duration = now - last["t"]
            if on_step is not None:
                on_step(step)                   # `step` loop steps are complete and logged
            if budget.left() < duration:
                raise BudgetSpent(f"{budget.left():.1f} s left < last step's {duration:.1f} s")
        elif budget.left() <= 0:
            raise BudgetSpent("the deadline passed before the first step")
        last["t"] = budget.clock()
        return task.batch_fn(step, rows)

    return batch_fn


def train_budgeted(task: train_loop.Task, cfg: train_loop.LoopConfig, *, workdir: str, mesh,
                   budget: Budget, on_step: Callable[[int], None] | None = None
                   ) -> BudgetedResult:
    """`train_loop.train` that stops at a step boundary when `budget` would be exceeded.

    `on_step(done)` is called on the host after each completed step but the last of a call
    (metrics.jsonl already holds that step's row). ValueError when a budget is set and
    `cfg.checkpoint_every != 1` (a stop would lose the steps since the last checkpoint).
    """
    if budget.deadline is not None and cfg.checkpoint_every != 1:
        raise ValueError(f"a time budget needs checkpoint_every == 1, got {cfg.checkpoint_every}")
    seen: dict = {}                             # "first": the loop step the call started at
    timed = task._replace(batch_fn=_timed_batch_fn(task, budget, on_step, seen))
    try:
        res = train_loop.train(timed, cfg, workdir=workdir, mesh=mesh)
    except BudgetSpent:
        try:
            state, step = train_loop.restore_trained(task, workdir, seed=cfg.seed, mesh=mesh)
        except ValueError:                      # no checkpoint: nothing was run
            return BudgetedResult(None, 0, True, 0, False)
        return BudgetedResult(state, step, step < cfg.num_steps, seen["first"], False)
    return BudgetedResult(res.state, res.step, False, res.resumed_from, res.preempted)
