"""The one train loop: sharded jit step, resume, checkpoints, metrics, progress, guards.

An experiment supplies a `Task` of pure pieces; `train` does the rest:

    state = restore newest intact checkpoint, or task.init_state(key)
    for step in [start, num_steps):
        stop on SIGTERM (after finishing the step), or when the next step would end after
          `deadline` (see below)
        batch = task.batch_fn(step, rows of this process)       # host numpy, deterministic
        state, metrics = train_step(state, batch, fold_in(key, step))   # jitted, sharded
        every log_every steps: NaN/Inf check, metrics.jsonl, progress
        every checkpoint_every steps: checkpoint (only after the NaN check passed)
        with a `Validation`: every `every` steps, evaluate; keep the best state
    final checkpoint (of exactly the completed steps, also after a stop)
    after a SIGTERM: raise `guards.Preempted` naming the step and the checkpoint folder

Preemption: SIGTERM during `train` (including its restore, compile and final save) only
sets a flag (`guards.PreemptionGuard`); the loop finishes the step in flight, writes the
metrics and the checkpoint of exactly the completed steps, and raises `guards.Preempted`
(`cli.run` exits 0 on it; the same command resumes). `train` never returns after a
SIGTERM, so nothing after it (evaluation, the next stage, results) runs, and `on_log` is
not called once the stop is decided. `train` refuses to start (`guards.check_preempted`)
in a process that has already seen a SIGTERM.

Because the batch and the step key are functions of the step alone and the state is
restored exactly, an interrupted run that is resumed ends with the same parameters as an
uninterrupted one (bit for bit on CPU).

Best-on-validation selection (`train(..., validation=Validation(...))`) evaluates the state
on held-out data at step 0 (so a misspelled metric fails before any training), every
`every` steps and at the end; the best state goes to `<workdir>/checkpoints_best/` and its
record (step, metric, value, all validation metrics) to `<workdir>/best.json`. The
validation metrics go to metrics.jsonl as `val_<name>`. `restore_best` loads that state.
Selection never changes the training trajectory, so resume stays exact; a resumed run
continues from the recorded best.

A wall-clock deadline (`train(..., deadline=t, clock=time.monotonic)`, t on `clock`'s
scale; None = none) stops the run at a step boundary, for a leased accelerator slot or a
budget shared between stages. Before each step the loop predicts when it would end: now +
the longest loop iteration measured so far in this call (step, logging, evaluation and
checkpoint included; the first iteration of a call, which compiles, is not measured). When
that is after the deadline it stops: the completed steps get their NaN check and metrics
(the last row carries `stopped_by_deadline: 1`), a checkpoint of exactly those steps
(whatever `checkpoint_every` is), and `TrainResult.stopped_by_deadline` is True. Rerunning
resumes exactly, as after SIGTERM. Until one iteration has been measured (the first two
steps of a call) a step runs unless the deadline has passed; a deadline already passed
runs no step and writes nothing (a fresh run returns the initial state at step 0). With a
deadline, steps are timed to completion (`jax.block_until_ready` on the step's metrics),
so the host no longer runs ahead of the device; the final checkpoint is written after the
last step, so leave a margin for it. On several processes the decision is joint (any
process out of time stops all).

`on_log(step)` is called on the host right after the training metrics of `step` have
passed the NaN check and been written (every `log_every` steps and at a stop): the place
for progressive results read back from metrics.jsonl.
"""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, NamedTuple

import jax
import numpy as np
import optax
from absl import logging
from jax.experimental import multihost_utils

from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import workdir as wd
from lib.common.checkpoint import Checkpointer, NoReadableCheckpoint
from lib.common.config import WorkdirError
from lib.common.guards import PreemptionGuard, assert_finite
from lib.common.metrics import MetricWriter
from lib.common.progress import Progress

State = Any
Batch = Any


class Task(NamedTuple):
    """The pure pieces of an experiment's training.

    init_state: key -> state pytree (e.g. {"params", "opt_state", "step"}).
    train_step: (state, batch, key) -> (state, {name: scalar}); pure, jitted by `train`.
    batch_fn: (step, rows: slice) -> this process's rows of the step's global batch, as
      host arrays; must depend on `step` only (that is what makes resume exact).
    global_batch_size: rows of the global batch (split over processes and "data").
    learning_rate: optional step -> learning rate (the optax schedule the optimiser uses);
      when given, each metrics row carries `lr`, the rate of the row's last update.
    """

    init_state: Callable[[jax.Array], State]
    train_step: Callable[[State, Batch, jax.Array], tuple[State, dict]]
    batch_fn: Callable[[int, slice], Batch]
    global_batch_size: int
    learning_rate: Callable[[int], Any] | None = None


@dataclasses.dataclass(frozen=True)
class LoopConfig:
    num_steps: int
    log_every: int = 10
    checkpoint_every: int = 100
    keep_checkpoints: int = 3
    seed: int = 0
    progress_every_s: float = 10.0

    @classmethod
    def from_config(cls, train_cfg) -> "LoopConfig":
        """Read the shared `config.train` block (see `lib.common.config.TRAIN_SCHEMA`)."""
        return cls(num_steps=train_cfg.num_steps, log_every=train_cfg.log_every,
                   checkpoint_every=train_cfg.checkpoint_every,
                   keep_checkpoints=train_cfg.keep_checkpoints, seed=train_cfg.seed)


class Validation(NamedTuple):
    """Best-on-validation model selection for `train`.

    evaluate: state -> {name: scalar}, run on the host's view of the state (jit it
      yourself); it must not use the test data.
    every: steps between evaluations (the last step is always evaluated).
    metric: the key of `evaluate`'s output that selects the best state.
    mode: "min" (a loss) or "max" (an accuracy).
    """

    evaluate: Callable[[State], dict]
    every: int
    metric: str
    mode: str = "min"


BEST_CHECKPOINTS = "checkpoints_best"
BEST_RECORD = "best.json"


class TrainResult(NamedTuple):
    state: State
    step: int          # completed steps (a SIGTERM raises `guards.Preempted` instead)
    resumed_from: int  # step restored at start (0 for a fresh run)
    best: dict | None = None  # with a Validation: {"step", "metric", "value", "metrics"}
    stopped_by_deadline: bool = False  # the deadline stopped the run before cfg.num_steps


def apply_gradients(state: State, grads, opt: optax.GradientTransformation) -> State:
    """One optimiser update of a train state `{"params", "opt_state", "step", ...}`.

    Returns a new state with the params moved by `opt`'s update of `grads`, the new
    optimiser state and `step + 1`; any other entries (an EMA, a buffer) are carried over
    unchanged for the caller to update. The tail every `Task.train_step` shares.
    """
    updates, opt_state = opt.update(grads, state["opt_state"], state["params"])
    return {**state, "params": optax.apply_updates(state["params"], updates),
            "opt_state": opt_state, "step": state["step"] + 1}


def epoch_batches(data: dict[str, np.ndarray], batch_size: int, seed: int) -> Callable:
    """A `Task.batch_fn` over the rows of `data` (arrays of equal length n): step s takes
    batch k = s mod (n // batch_size) of epoch s // (n // batch_size), whose order is the
    permutation drawn from `[seed, epoch]` (a pure function of the step, so resumes match).
    The last n mod batch_size rows of each epoch's order are skipped."""
    n = len(next(iter(data.values())))
    per_epoch = n // batch_size

    def batch_fn(step, rows):
        epoch, k = divmod(step, per_epoch)
        perm = np.random.default_rng([seed, epoch]).permutation(n)
        idx = perm[k * batch_size:(k + 1) * batch_size][rows]
        return {key: v[idx] for key, v in data.items()}

    return batch_fn


def build_step(task: Task, mesh, state_sharding) -> Callable:
    """`jax.jit` of the task's step with named shardings and the state donated."""
    return jax.jit(
        task.train_step,
        in_shardings=(state_sharding, mesh_lib.batch_sharding(mesh), mesh_lib.replicated(mesh)),
        out_shardings=(state_sharding, mesh_lib.replicated(mesh)),
        donate_argnums=(0,),
    )


def init_or_restore(task: Task, cfg: LoopConfig, mesh, ckpt: Checkpointer | None):
    """(state, state_sharding, start_step): the newest readable checkpoint, else a fresh init.

    A fresh init in a workdir that holds progress no checkpoint restores (unreadable steps,
    a best state or results while no checkpoint restores) raises
    `lib.common.workdir.RestartRequired` on every rerun until `--restart`, which moves
    the old run aside first (`lib.common.workdir.check_fresh_start`); the metrics rows of
    a run stopped before its first checkpoint are moved aside without asking. A checkpoint whose
    tree differs from the model raises `CheckpointMismatch` and moves nothing.
    """
    key = jax.random.key(cfg.seed)
    abstract, sharding = _abstract_state(task, key, mesh)
    restored = None
    if ckpt is not None:
        try:
            restored = ckpt.restore_latest(abstract)
        except NoReadableCheckpoint:          # every step moved aside: decided below
            restored = None
    if restored is not None:
        state, start = restored
        logging.info("resumed from checkpoint step %d", start)
        return state, sharding, start
    if ckpt is not None and os.path.basename(ckpt.directory) == wd.CHECKPOINTS:
        _check_fresh_start(os.path.dirname(ckpt.directory))
    state = jax.jit(task.init_state, out_shardings=sharding)(key)
    return state, sharding, 0


def _abstract_state(task: Task, key, mesh):
    """(abstract state with target shardings, the shardings) of `task.init_state(key)`."""
    abstract = jax.eval_shape(task.init_state, key)
    sharding = mesh_lib.param_sharding(abstract, mesh)
    abstract = jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s),
                            abstract, sharding)
    return abstract, sharding


def _check_fresh_start(workdir: str) -> None:
    """`workdir.check_fresh_start`, decided jointly by all processes; with `--restart` the
    primary moves the old run aside while the others wait."""
    found = wd.lost_progress(workdir)
    if not _any_process(bool(found)):
        return
    if _any_process(wd.needs_restart_flag(found)) and not wd.restart_allowed():
        raise wd.RestartRequired(wd.restart_message(
            workdir, found or ["another process found it"]))
    wd.check_fresh_start(workdir, archive=mesh_lib.is_primary())
    if jax.process_count() > 1:
        multihost_utils.sync_global_devices(f"restart {workdir}")


def restore_trained(task: Task, workdir: str, seed: int = 0, mesh=None,
                    step: int | None = None) -> tuple[State, int]:
    """(state, step) of the newest readable checkpoint in `<workdir>/checkpoints` (for
    evaluation, notebooks, benchmarks), or of the kept `step`; `WorkdirError` (a ValueError)
    when the workdir holds none (a ValueError naming the kept steps when `step` is not one),
    `CheckpointMismatch` when it does not fit `task`."""
    directory = os.path.join(workdir, wd.CHECKPOINTS)
    if not os.path.isdir(directory):
        raise WorkdirError(f"{workdir!r} has no {wd.CHECKPOINTS}/ folder; train there first")
    mesh = mesh or mesh_lib.make_mesh()
    abstract, _ = _abstract_state(task, jax.random.key(seed), mesh)
    ckpt = Checkpointer(directory, save_every=1)
    try:
        restored = ckpt.restore_latest(abstract) if step is None else (ckpt.restore_step(abstract, step), step)
    finally:
        ckpt.close()
    if restored is None:
        raise WorkdirError(f"{workdir!r} holds no checkpoint")
    return restored


def restore_best(task: Task, workdir: str, seed: int = 0, mesh=None) -> tuple[State, dict]:
    """(state, record) of the best-on-validation state a `train(..., validation=...)` run
    kept in `workdir`; `WorkdirError` (a ValueError) when it kept none or the record and
    the checkpoint disagree, `CheckpointMismatch` when it does not fit `task`."""
    record_path = os.path.join(workdir, BEST_RECORD)
    if not os.path.exists(record_path):
        raise WorkdirError(f"{workdir!r} has no {BEST_RECORD}; train there with a Validation "
                           "first")
    record = wd.read_json(record_path)
    mesh = mesh or mesh_lib.make_mesh()
    abstract, _ = _abstract_state(task, jax.random.key(seed), mesh)
    ckpt = Checkpointer(os.path.join(workdir, BEST_CHECKPOINTS), save_every=1, keep=1)
    try:
        restored = ckpt.restore_latest(abstract)
    finally:
        ckpt.close()
    step = restored[1] if restored is not None else None
    if step != record["step"]:
        raise WorkdirError(f"{workdir!r}: {BEST_RECORD} names step {record['step']} but "
                           f"{BEST_CHECKPOINTS}/ holds {f'step {step}' if step is not None else 'none'}")
    return restored[0], record


class _BestKeeper:
    """Evaluates, compares and saves the best state for `train` (see `Validation`)."""

    @staticmethod
    def check(validation: Validation) -> None:
        if validation.every < 1:
            raise ValueError(f"Validation.every={validation.every} must be >= 1")
        if validation.mode not in ("min", "max"):
            raise ValueError(f"Validation.mode={validation.mode!r} must be 'min' or 'max'")

    def __init__(self, validation: Validation, workdir: str, writer: MetricWriter):
        self.v = validation
        self.writer = writer
        self.record_path = os.path.join(workdir, BEST_RECORD)
        self.ckpt = Checkpointer(os.path.join(workdir, BEST_CHECKPOINTS), save_every=1, keep=1)
        self.record = None
        if os.path.exists(self.record_path):
            self.record = wd.read_json(self.record_path)
            if self.record.get("metric") != validation.metric:
                raise WorkdirError(
                    f"{self.record_path} selects on {self.record.get('metric')!r} but this run "
                    f"selects on {validation.metric!r}; use a new --workdir")
            if self.ckpt.latest_step() != self.record["step"]:
                # Killed between the checkpoint and the record: the record is stale.
                logging.warning("%s names step %s but %s holds step %s; re-selecting",
                                self.record_path, self.record["step"], BEST_CHECKPOINTS,
                                self.ckpt.latest_step())
                self.record = None

    def _better(self, value: float) -> bool:
        if not np.isfinite(value):
            return False
        if self.record is None:
            return True
        best = self.record["value"]
        return value < best if self.v.mode == "min" else value > best

    def __call__(self, step: int, state: State) -> None:
        metrics = {k: float(v) for k, v in jax.device_get(self.v.evaluate(state)).items()}
        if self.v.metric not in metrics:
            raise KeyError(f"Validation.metric {self.v.metric!r} is not among the validation "
                           f"metrics {sorted(metrics)}")
        self.writer.write_scalars(step, {f"val_{k}": v for k, v in metrics.items()})
        if self._better(metrics[self.v.metric]):
            self.ckpt.save(step, state, wait=True)
            self.record = {"step": step, "metric": self.v.metric,
                           "value": metrics[self.v.metric], "metrics": metrics}
            if mesh_lib.is_primary():
                wd.write_json_atomic(self.record_path, self.record)

    def close(self) -> None:
        self.ckpt.close()


class _DeadlineClock:
    """Predicts, at the top of each loop iteration, whether one more iteration ends by the
    deadline (see the module docstring); `deadline=None` always fits."""

    def __init__(self, deadline: float | None, clock: Callable[[], float]):
        self.deadline, self.clock = deadline, clock
        self.top: float | None = None    # clock at the top of the previous iteration
        self.measured = 0                # iterations ended in this call
        self.longest: float | None = None

    def next_fits(self) -> bool:
        if self.deadline is None:
            return True
        now = self.clock()
        if self.top is not None:
            self.measured += 1
            if self.measured > 1:        # the first iteration of a call compiles: not timed
                self.longest = max(self.longest or 0.0, now - self.top)
        self.top = now
        if self.longest is None:
            return now < self.deadline
        return now + self.longest <= self.deadline


def _any_process(flag: bool) -> bool:
    if jax.process_count() == 1:
        return flag
    return bool(np.any(multihost_utils.process_allgather(np.array([flag]))))


def train(task: Task, cfg: LoopConfig, *, workdir: str, mesh,
          writer: MetricWriter | None = None,
          validation: Validation | None = None,
          deadline: float | None = None,
          clock: Callable[[], float] = time.monotonic,
          on_log: Callable[[int], None] | None = None) -> TrainResult:
    """Run (or resume) training in `workdir`; see the module docstring.

    deadline: stop at the last step boundary whose next step would end after it (on
      `clock`'s scale, e.g. `time.monotonic() + 300`; `clock=time.time` for wall time);
      None = no deadline.
    on_log: `on_log(step)` after each written row of training metrics (not once a SIGTERM
      has stopped the loop).
    Raises `guards.Preempted` after a SIGTERM, once the checkpoint of the completed steps
    is saved.
    """
    guards.check_preempted(f"training in {workdir}")
    mesh_lib.check_batch_divisible(task.global_batch_size, mesh)
    if validation is not None:
        _BestKeeper.check(validation)
    ckpt = Checkpointer(os.path.join(workdir, wd.CHECKPOINTS), cfg.checkpoint_every,
                        cfg.keep_checkpoints)
    own_writer = writer is None
    keeper = None
    preempted = False
    try:
        with PreemptionGuard() as guard:   # SIGTERM from here to the final save: a flag
            state, sharding, start = init_or_restore(task, cfg, mesh, ckpt)
            if own_writer:
                writer = MetricWriter(workdir, primary=mesh_lib.is_primary(), resume_step=start)
            if validation is not None:
                keeper = _BestKeeper(validation, workdir, writer)
                if start == 0 or keeper.record is None:
                    keeper(start, state)
            step_fn = build_step(task, mesh, sharding)
            rows = mesh_lib.process_slice(task.global_batch_size)
            base_key = jax.random.key(cfg.seed + 1)
            progress = Progress(cfg.num_steps, start, every_s=cfg.progress_every_s)
            pending: list[tuple[int, dict]] = []
            last_good = ckpt.latest_step()

            def check_and_log(step: int, extra: dict | None = None) -> None:
                fetched = jax.device_get(pending)
                pending.clear()
                for s, m in fetched:
                    assert_finite(s, m, last_good)
                if fetched:
                    mean = {k: float(np.mean([m[k] for _, m in fetched])) for k in fetched[-1][1]}
                    mean["steps_per_sec"] = progress.rate(step)
                    if task.learning_rate is not None:
                        mean["lr"] = float(task.learning_rate(max(step - 1, 0)))
                    writer.write_scalars(step, {**mean, **(extra or {})})
                    if on_log is not None and not preempted:   # nothing published after SIGTERM
                        on_log(step)
                elif extra:
                    writer.write_scalars(step, extra)

            step = start
            stopped = False
            timer = _DeadlineClock(deadline, clock)
            while step < cfg.num_steps:
                if _any_process(guard.requested):
                    preempted = True
                    break
                if deadline is not None and _any_process(not timer.next_fits()):
                    stopped = True
                    break
                batch = mesh_lib.to_global(task.batch_fn(step, rows), mesh)
                if step == start:
                    logging.info("compiling the train step (the first step of this call waits "
                                 "for XLA) ...")
                    t_first = time.perf_counter()
                state, metrics = step_fn(state, batch, jax.random.fold_in(base_key, step))
                if step == start:
                    jax.block_until_ready(metrics)
                    logging.info("first step (with compilation) took %.1f s",
                                 time.perf_counter() - t_first)
                step += 1
                pending.append((step, metrics))
                progress.update(step)
                is_ckpt = step % cfg.checkpoint_every == 0
                if step % cfg.log_every == 0 or is_ckpt or step == cfg.num_steps:
                    check_and_log(step)
                is_eval = keeper is not None and step % validation.every == 0
                if is_eval and not (step % cfg.log_every == 0 or is_ckpt):
                    check_and_log(step)        # never select a state that failed the check
                if is_eval:
                    keeper(step, state)
                if is_ckpt:
                    ckpt.save(step, state)
                    last_good = step
                if deadline is not None:
                    jax.block_until_ready(metrics)     # time the step, not its dispatch
            check_and_log(step, {"stopped_by_deadline": 1} if stopped and step > start else None)
            if keeper is not None and step % validation.every != 0 and not (preempted or stopped):
                keeper(step, state)
            if not (stopped and step == start):        # a stop before any step: nothing new
                ckpt.save(step, state, wait=True)
        # A SIGTERM during the last step or the final save stops the run too (what follows
        # train, an evaluation or the next stage, must not start).
        if preempted or _any_process(guard.requested):
            guards.raise_preempted(
                f"SIGTERM: saved checkpoint at step {step} of {cfg.num_steps} in "
                f"{ckpt.directory}; rerun the same command to resume")
        if stopped and step == start:
            logging.warning("deadline: no step run (the deadline passed, or the next step "
                            "would end after it) at step %d of %d", step, cfg.num_steps)
        elif stopped:
            logging.warning("deadline: stopped after step %d of %d (this call ran %d); saved "
                            "checkpoint at step %d; rerun to resume", step, cfg.num_steps,
                            step - start, step)
        progress.update(step, force=True)
        return TrainResult(state, step, start, keeper.record if keeper is not None else None,
                           stopped)
    finally:
        ckpt.close()
        if keeper is not None:
            keeper.close()
        if own_writer and writer is not None:
            writer.close()
