"""Dynamic token aggregation vs dense / top-k / foreground-selection DETR encoders.

1. Train the dense detector (`train.num_steps`) on freshly rendered images every step.
2. From that checkpoint fine-tune every variant for `sparse.finetune_steps`: the dense
   encoder itself (so all rows have the same number of updates), top-k, focus and dynamic
   at each budget in `sparse.budgets`, and each dynamic ablation at `sparse.ablation_budget`.
   Dynamic runs use the frozen dense checkpoint as the teacher of the centre-distance term.
3. Evaluate each on the same held-out images: COCO AP (pycocotools), encoder FLOPs (XLA
   cost analysis) and encoder throughput; write results.md, results.json (after every
   stage) and plots/ap_vs_flops.png.

Every stage is a `train_loop.train` run in the stage folder `<workdir>/runs/<name>`
(`lib.common.stages`); a rerun resumes or skips finished stages. `run.time_budget_s` splits
a wall-clock budget over the stages (`lib.dynamic_detr.runs`); what each stage got is
recorded in results.json ("stages").
"""
from __future__ import annotations

import os
import time

import jax

from lib.common import config as config_lib, extras, mesh as mesh_lib, report
from lib.common import guards, workdir as wd
from lib.common.stages import Stages
from lib.dynamic_detr import evaluation, precompile, prefetch, runs
from lib.dynamic_detr import report as detr_report
from lib.dynamic_detr.config_schema import KEYS, RENAMED_KEYS, optional_modules, validate
from lib.dynamic_detr.model import token_layout
from lib.dynamic_detr.spec import EncoderSpec
from lib.dynamic_detr.training import (data_kwargs, detector, make_finetune_task, make_task,
                                       variants, zero_params)


def start_precompile(config, workdir: str, mesh) -> precompile.Precompiler:
    """`run.precompile`: turn the persistent compilation cache on (`run.compile_cache_dir`,
    default `<workdir>/xla_cache`) and compile every fine-tune stage's train step in a
    background thread (placeholder zero parameters: a step depends on their shapes only)."""
    precompile.enable_cache(config.run.compile_cache_dir or os.path.join(workdir, "xla_cache"))
    zeros = zero_params(config)
    return precompile.Precompiler(
        {v.name: make_finetune_task(config, v, zeros) for v in variants(config)},
        mesh, config.train.seed)


def train_and_evaluate(config, workdir: str):
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    data = config.data
    with prefetch.Prefetcher(data.workers, data.prefetch_per_worker * data.workers,
                             seed=config.train.seed, count=config.data.batch_size,
                             **data_kwargs(config)) as batches:
        return _train_and_evaluate(config, workdir, batches)


class _Publisher:
    """results.md, plots/ and results.json (last) of the rows measured so far."""

    def __init__(self, config, workdir: str, names: list[str], start: float):
        self.config, self.workdir, self.names, self.start = config, workdir, names, start
        self.primary = mesh_lib.is_primary()
        self.rows, self.stages = [], {}

    def __call__(self, pretrained: dict, tokens: int) -> dict:
        results = detr_report.summary(self.config, self.rows, self.names, pretrained, tokens,
                                      self.stages, report.machine(), time.time() - self.start)
        guards.check_preempted("writing results.json")
        if self.primary:                  # after every stage, so a killed run can still be read
            if self.config.eval.plots and self.rows:
                detr_report.plot(self.rows, os.path.join(self.workdir, "plots", "ap_vs_flops.png"))
            wd.write_text_atomic(os.path.join(self.workdir, "results.md"), detr_report.tables(results) + "\n")
            wd.write_json_atomic(os.path.join(self.workdir, wd.RESULTS), results)
        return results


def _train_and_evaluate(config, workdir: str, batches):
    start = time.time()
    end, pre_end = runs.deadlines(config, start)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    # the `run` block (wall-clock budget, precompile) is stored but not compared on resume;
    # sparse.holistic / compare_holistic_kept were added after the first runs: a workdir
    # made before them ran the "kept" design without the comparison row
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               added={"sparse.holistic": "kept", "sparse.compare_holistic_kept": False,
                      **config_lib.added_of(KEYS)},
               renamed=RENAMED_KEYS)
    stages = Stages(workdir, "runs")           # runs/<stage>: the layout of older workdirs
    pre = start_precompile(config, workdir, mesh) if config.run.precompile else None

    dense_task = make_task(config, EncoderSpec(), lr=config.optim.lr, steps=config.train.num_steps,
                           batches=batches)
    res, pre_record = runs.run_stage(dense_task, config, config.train.num_steps,
                                     stages.dir("pretrain"), mesh, pre_end)
    dense_params = jax.device_get(res.state["params"])
    val, gt = evaluation.validation_set(config)
    pre_ap = evaluation.average_precision(detector(config), dense_params, val, gt,
                                          batch_size=config.eval.batch_size,
                                          area_scale=config.eval.area_scale)
    n = len(token_layout(config.data.image_size, len(config.model.widths))[0])   # tokens
    todo = variants(config)
    publish = _Publisher(config, workdir, [t.name for t in todo], start)
    publish.stages["pretrain"] = pre_record
    results = publish(pre_ap, n)
    eval_s = config.run.eval_reserve_s
    for i, v in enumerate(todo):
        guards.check_preempted(f"fine-tune {v.name}")
        task = make_finetune_task(config, v, dense_params, batches)
        compiled_s = pre.wait(v.name) if pre is not None else None
        deadline = runs.finetune_deadline(end, time.time(), len(todo) - i, eval_s)
        if not runs.finetune_fits(end, time.time(), eval_s):
            print(f"time budget spent: {', '.join(t.name for t in todo[i:])} not run", flush=True)
            break
        r, record = runs.run_stage(task, config, config.sparse.finetune_steps,
                                   stages.dir(v.name), mesh, deadline)
        t_eval = time.time()
        row = evaluation.variant_row(config, v, detector(config, v.spec),
                                     jax.device_get(r.state["params"]), val, gt, record["steps"], n)
        eval_s = time.time() - t_eval     # the next share leaves room for an evaluation this long
        record["eval_s"] = eval_s
        if compiled_s is not None:
            record["precompile_s"] = compiled_s
        publish.stages[v.name] = record
        publish.rows.append(row)
        print(detr_report.variant_line(v.name, record["steps"], row), flush=True)
        results = publish(pre_ap, n)
    return results
