"""One training stage on the wall-clock budget (`run.time_budget_s`) and the budget's shares.

The dense pre-training gets `run.pretrain_fraction` of the budget; each fine-tune an equal
share of what is left, less the expected evaluation time; a fine-tune starts only when its
compile and evaluation still fit.
"""
from __future__ import annotations

import os
import time

from lib.common import train_loop


def loop_config(config, steps: int) -> train_loop.LoopConfig:
    t = config.train
    return train_loop.LoopConfig(num_steps=steps, log_every=t.log_every,
                                 checkpoint_every=min(t.checkpoint_every, steps),
                                 keep_checkpoints=t.keep_checkpoints, seed=t.seed)


def run_stage(task, config, steps: int, directory: str, mesh, deadline: float | None,
              clock=time.time):
    """Train one stage toward `steps` in `directory` (resuming its checkpoints), stopping
    at the step boundary the harness deadline predicts (`train_loop.train(deadline=...)`:
    the next step would end after `deadline`, a `clock()` value; None: no budget). A rerun
    resumes the stage from its checkpoint toward `steps`.

    Returns (TrainResult, record = {"steps", "target_steps", "stopped_by_budget",
    "resumed_from", "train_s", "steps_per_s"}); a SIGTERM raises `guards.Preempted`.
    """
    os.makedirs(directory, exist_ok=True)
    t0 = time.time()
    r = train_loop.train(task, loop_config(config, steps), workdir=directory, mesh=mesh,
                         deadline=deadline, clock=clock)
    took = time.time() - t0
    return r, {"steps": int(r.step), "target_steps": int(steps),
               "stopped_by_budget": bool(r.stopped_by_deadline),
               "resumed_from": int(r.resumed_from), "train_s": took,
               "steps_per_s": (r.step - r.resumed_from) / took if took > 0 else 0.0}


def deadlines(config, start: float):
    """(end of the whole budget, end of pre-training) as time.time() values, or Nones."""
    budget = config.run.time_budget_s
    if budget is None:
        return None, None
    return start + budget, start + config.run.pretrain_fraction * budget


def finetune_deadline(end: float | None, now: float, left: int, eval_s: float) -> float | None:
    """A fine-tune's training deadline: an equal share of the time left to the `left`
    stages still to run, less the expected evaluation time `eval_s`."""
    if end is None:
        return None
    return now + (end - now) / left - eval_s


def finetune_fits(end: float | None, now: float, eval_s: float) -> bool:
    """Whether a fine-tune may start: no budget, or time for at least its compile and its
    evaluation (taken as 2 × the last evaluation's duration) is left before `end`."""
    return end is None or now + 2 * eval_s < end
