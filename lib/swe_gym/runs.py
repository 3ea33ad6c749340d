"""The run context every phase of a SWE-Gym run shares: its folders, caches, limits and stages.

    ctx = Context.open(config, workdir)
    recs = ctx.stages.run("search", lambda d: ctx.collect(insts, make_policy, graded=False))

Under the workdir: `store/` (git repositories), `test_cache/` (pytest outcomes by tree
hash), `grade_cache/` (verdicts by instance and patch), `stages/<name>.json` (each phase's
records; `Stages(workdir, "stages")`), `models/<name>/` (train_loop checkpoints of each
fine-tune; `Stages(workdir, "models")`, `models/tokenizer.json`).
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import Any

from absl import logging

from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.swe_gym import agent, grader, records, rft, runtime

LEGACY_WALL = "_wall_s.json"     # stage wall times written before lib.common.stages


@dataclasses.dataclass
class Context:
    config: Any
    workdir: str
    stages: Stages
    models: Stages
    store: str
    cache: runtime.TestCache
    grades: grader.GradeCache
    limits: Any
    caps: agent.Caps
    bash_cache: dict = dataclasses.field(default_factory=dict)
    memo: dict = dataclasses.field(default_factory=dict)   # run_episode memo (LM workflow)

    @classmethod
    def open(cls, config, workdir: str) -> Context:
        s, a = config.sandbox, config.agent
        return cls(config=config, workdir=workdir,
                   stages=Stages(workdir, "stages", log_name="swe_gym"),
                   models=Stages(workdir, "models", log_name="swe_gym"),
                   store=os.path.abspath(os.path.join(workdir, "store")),
                   cache=runtime.TestCache(os.path.join(workdir, "test_cache")),
                   grades=grader.GradeCache(os.path.join(workdir, "grade_cache")),
                   limits=dataclasses.replace(runtime.DEFAULT_LIMITS, wall_s=s.wall_s,
                                              cpu_s=s.cpu_s, memory_mb=s.memory_mb),
                   caps=agent.Caps(max_turns=a.max_turns, max_context=a.max_context,
                                   loop_window=a.loop_window))

    def collect(self, insts: Sequence[dict], make_policy: Callable[[int, int], Any], *,
                rollouts: int = 1, caps: agent.Caps | None = None, graded: bool = True,
                memo: bool = True, progress: str | None = None) -> list[dict]:
        """`rft.collect` with this run's caches, slimmed. `graded`: through the on-disk
        grade cache (else a fresh in-memory one); `memo`: the episode memo (only for the
        deterministic LM workflow); `progress`: a name to log every 50 rollouts under."""
        return records.slim(rft.collect(
            insts, make_policy, self.store, rollouts=rollouts, caps=caps or self.caps,
            cache=self.cache, limits=self.limits, bash_cache=self.bash_cache,
            grade_cache=self.grades if graded else None, memo=self.memo if memo else None,
            progress=_progress(progress) if progress else None))

    def stage_wall_s(self) -> dict[str, float]:
        """Seconds per finished stage: those of `stages/_wall_s.json` (runs before the move
        onto lib.common.stages), then those the stage index records."""
        path = os.path.join(self.stages.root, LEGACY_WALL)
        out = dict(wd.read_json(path)) if os.path.exists(path) else {}
        out.update({k: v["wall_s"] for k, v in self.stages.index.items()
                    if v.get("wall_s") is not None})
        return out


def _progress(name: str) -> Callable[[int, int], None]:
    def log(i: int, n: int) -> None:
        if i % 50 == 0 or i == n:
            logging.info("swe_gym: %s %d/%d rollouts", name, i, n)
    return log
