"""Similarities of embeddings in contrastive learning: theory with free embeddings, then SimCLR.

    theory: free embeddings optimised by Adam vs the closed forms (lib/cl_similarity/theory_runs.py)
    ssl:    per data set × batch size × VRNS off/on, a SimCLR run on the harness in
            <workdir>/runs/<name>/ (checkpoints, resume), then the linear probe and the
            similarity statistics -> <workdir>/runs/<name>/run.json
    -> workdir: config.json, results.json, results.md (tables), plots/*.png

Rerunning resumes: finished SSL runs (run.json present) are read back, an interrupted one
continues from its checkpoint; the theory part (about a minute) is recomputed.
"""
from __future__ import annotations

import json
import os
import time

from absl import logging

from lib.cl_similarity import (augment, config_schema, evaluation, losses, plots, report,
                               theory_runs, training)
from lib.cl_similarity.encoder import SimCLRNet
from lib.common import config as config_lib
from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import train_loop
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.common.stages import Stages

validate = config_schema.validate


# ----------------------------------------------------------------------------- ssl


def run_spec(config, name: str, batch: int, aux: bool) -> training.RunSpec:
    s, a, m = config.ssl, config.augment, config.model
    return training.RunSpec(
        batch_size=batch, epochs=s.epochs,
        loss=losses.make_loss(s.loss, temperature=s.temperature),
        aux_weight=s.aux_weight if aux else 0.0, optimizer=s.optimizer, base_lr=s.lr,
        lr_scaling=s.lr_scaling, weight_decay=s.weight_decay, warmup_epochs=s.warmup_epochs,
        augment=augment.AugmentConfig(a.min_scale, config[name].flip_prob, a.jitter_prob,
                                      a.brightness, a.contrast, a.noise_std),
        net=SimCLRNet(tuple(m.stage_widths), m.blocks_per_stage, m.head_hidden, m.proj_dim),
        seed=config.seed)


def load_dataset(config, name: str) -> training.SSLData:
    block = config[name]
    return training.load_data(name, test_fraction=config.ssl.test_fraction, seed=config.seed,
                              num_images=block.num_images,
                              downsample=block.downsample if name == "fashion_mnist" else 1,
                              path=block.path if name == "fashion_mnist" else None)


def run_one(config, data: training.SSLData, batch: int, aux: bool, run_dir: str, mesh) -> dict:
    """One SimCLR run (resumable); returns and writes its run.json."""
    path = os.path.join(run_dir, "run.json")
    if os.path.exists(path):
        return wd.read_json(path)
    spec = run_spec(config, data.name, batch, aux)
    wd.prepare(run_dir, {"dataset": data.name, "batch_size": batch, "aux": aux,
                         "parent": config_lib.to_json_dict(config)},
               primary=mesh_lib.is_primary())
    t0 = time.perf_counter()
    task, num_steps = training.make_task(data.train_x, spec, mesh)
    tr = config.train
    loop = train_loop.LoopConfig(num_steps=num_steps, log_every=tr.log_every,
                                 checkpoint_every=tr.checkpoint_every,
                                 keep_checkpoints=tr.keep_checkpoints, seed=config.seed)
    result = train_loop.train(task, loop, workdir=run_dir, mesh=mesh)   # Preempted on SIGTERM
    train_s = time.perf_counter() - t0
    out = evaluation.evaluate(result.state["params"], spec, data, probe_steps=config.probe.steps,
                              probe_lr=config.probe.lr, probe_wd=config.probe.weight_decay,
                              max_pairs=config.eval.max_pairs,
                              eval_seed=config.seed + evaluation.EVAL_STREAM)
    last = _last_metrics(run_dir)
    guards.check_preempted(f"writing {path}")
    out.update(dataset=data.name, batch_size=batch, aux=aux, aux_weight=spec.aux_weight,
               steps=num_steps, peak_lr=training.peak_lr(spec), train_s=train_s,
               eval_s=time.perf_counter() - t0 - train_s, final_train_loss=last.get("loss"),
               final_train_neg_var=last.get("neg_var"))
    if mesh_lib.is_primary():
        wd.write_json_atomic(path, out)
    return out


def _last_metrics(run_dir: str) -> dict:
    path = os.path.join(run_dir, wd.METRICS)
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    return json.loads(lines[-1]) if lines else {}


def run_ssl(config, workdir: str, plot_dir: str | None, mesh) -> dict:
    """Per data set × batch size × VRNS off/on: one SimCLR run in <workdir>/runs/<name>/."""
    stages = Stages(workdir, "runs")
    out = {}
    for name in config.ssl.datasets:
        data = load_dataset(config, name)
        rows = []
        for batch in config.ssl.batch_sizes:
            for aux in (False, True):
                run_dir = stages.dir(f"{name}_b{batch}_{'vrns' if aux else 'base'}")
                guards.check_preempted(f"run {run_dir}")
                r = run_one(config, data, batch, aux, run_dir, mesh)
                logging.info("%s B=%d aux=%s: probe %.4f, Var[s_neg] %.4f (%.0f s)", name, batch,
                             aux, r["probe_test_acc"], r["neg_var"], r["train_s"] + r["eval_s"])
                rows.append(r)
        out[name] = {"num_train": int(data.train_x.shape[0]), "num_test": int(data.test_x.shape[0]),
                     "image_shape": list(data.train_x.shape[1:]), "runs": rows}
        if plot_dir:
            plots.ssl_plots(plot_dir, name, rows, config)
    return out


# ----------------------------------------------------------------------------- entry point


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the parts of `config`; write results.json, results.md and plots/ to `workdir`."""
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    plot_dir = os.path.join(workdir, wd.PLOTS) if (config.eval.plots and primary) else None
    t0 = time.perf_counter()
    results: dict = {}
    if "theory" in config.parts:
        start = time.perf_counter()
        results["theory"], siglip_run = theory_runs.run(config)
        if plot_dir:
            plots.theory_plots(plot_dir, results["theory"], siglip_run, config.theory)
        results["theory"]["wall_s"] = time.perf_counter() - start
        logging.info("theory done in %.1f s", results["theory"]["wall_s"])
    if "ssl" in config.parts:
        start = time.perf_counter()
        results["ssl"] = run_ssl(config, workdir, plot_dir, mesh)
        results["ssl_wall_s"] = time.perf_counter() - start
    results["targets"] = report.targets(results, config)
    results["wall_s"] = time.perf_counter() - t0
    results["machine"] = common_report.machine()
    guards.check_preempted("writing results.json")
    if primary:
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results
