"""Evaluate a DSL run's newest checkpoints (each replica's best-validation params so far)
when the run was cut before its last step, and write a results.json the results tool reads.

    python tools/dsl_selected_eval.py --workdir=workdirs/dsl/official \
        --mlp_workdir=workdirs/dsl/official_mlp --out=workdirs/dsl/official_eval \
        [--wait_pid=PID]

For every data set of `--workdir`'s config.json: the DSL stage of `--workdir` and the MLP
stage of `--mlp_workdir` (default `--workdir`; a `--config.models="('mlp',)"` run of the
same config) are restored at their newest checkpoint, and every replica's selected params
(`lib.dsl.training.selected_params`) are scored on the test rows by the experiment's own
`summarise`. With `--wait_pid` the evaluation runs once on the checkpoints present (so the
predict functions are compiled while the run still trains), then again after that process
has exited (stopped by SIGTERM, it checkpoints the completed steps). The output results.json
has `complete: False` and each model's `steps` is the step its checkpoint holds (a run cut
at step N selected among the checks up to N). train_s is NaN (not measured here).
"""
from __future__ import annotations

import os
import shutil
import time

from absl import app, flags, logging

from experiments.dsl import train
from lib.common import config as config_lib, report as common_report, train_loop
from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.dsl import report
from lib.dsl.training import effective_batch, make_plan

_WORKDIR = flags.DEFINE_string("workdir", None, "The cut run's directory.", required=True)
_MLP = flags.DEFINE_string("mlp_workdir", None, "Where the MLP stage is (default --workdir).")
_OUT = flags.DEFINE_string("out", None, "Directory for results.json and config.json.",
                           required=True)
_PID = flags.DEFINE_integer("wait_pid", 0, "Evaluate again once this process has exited.")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def evaluate(config, warm_up: bool = False) -> dict:
    """results.json of the newest checkpoints; `warm_up`: skip a stage with no checkpoint
    yet (the pass that only compiles)."""
    results: dict = {"datasets": {}}
    for ds in train.load_datasets(config):
        plan = make_plan(ds.y_train, config.data.fractions, config.data.num_seeds,
                         config.data.min_per_class, config.seed)
        batch = effective_batch(config.optim.batch_size, 1)
        entry = {"n_train": len(ds.x_train), "n_test": len(ds.x_test), "dim": ds.dim,
                 "n_val": 0 if ds.x_val is None else len(ds.x_val),
                 "num_classes": ds.num_classes, "models": {}}
        for kind, root in (("dsl", _WORKDIR.value), ("mlp", _MLP.value or _WORKDIR.value)):
            model, task, seed = train.run_task(config, ds, plan, kind, batch)
            stage = Stages(root, "runs").dir(f"{ds.name}/{kind}")
            try:
                state, step = train_loop.restore_trained(task, stage, seed=seed)
            except ValueError as err:             # WorkdirError: no checkpoint yet
                if not warm_up:
                    raise
                logging.info("warm-up: %s", err)
                continue
            entry["models"][kind] = train.summarise(config, model, ds, plan, state, int(step),
                                                    batch, float("nan"))
        results["datasets"][ds.name] = entry
    if warm_up:
        return results
    results["targets"] = report.targets(results)
    results.update(machine=common_report.machine(), complete=False)
    return results


def main(_):
    config = config_lib.load_config_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    t0 = time.time()
    results = evaluate(config, warm_up=bool(_PID.value))
    while _PID.value and _alive(_PID.value):
        time.sleep(10)
    if _PID.value:
        logging.info("process %d exited: evaluating the final checkpoints", _PID.value)
        results = evaluate(config)
    results["wall_s"] = time.time() - t0
    os.makedirs(_OUT.value, exist_ok=True)
    shutil.copy(os.path.join(_WORKDIR.value, wd.CONFIG), os.path.join(_OUT.value, wd.CONFIG))
    wd.write_json_atomic(os.path.join(_OUT.value, wd.RESULTS), results)
    print(report.tables(results))


if __name__ == "__main__":
    app.run(main)
