"""ANOVA-TPNN vs NA²M / NB²M / MLP (/ EBM): prediction, component stability, recovery.

    config -> validate -> load every data set (splits, feature checks, the interaction
    order against the feature count: all before any training)
    -> for each data set, replica mode ("seed": different inits; "resample": 80 %
       subsamples of the training rows), model: R vmapped replicas trained in the stage
       runs/<set>/<mode>/<model> (lib/anova_tpnn/runs.py; checkpoints, resume), each
       replica's best-on-validation params selected, evaluated with frozen constants
    -> optional EBM replicas -> test metric, stability, recovery, targets
    -> results.json, results.md (after every data set), plots/

Rerunning the same command resumes every unfinished run from its checkpoint; finished runs
are restored and re-evaluated (seconds).
"""
from __future__ import annotations

import os
import time

from lib.anova_tpnn import config_schema, data as data_lib, report
from lib.anova_tpnn.config_schema import optional_modules
from lib.anova_tpnn.model import component_names
from lib.anova_tpnn.runs import load_datasets, run_ebm, run_model
from lib.common import config as config_lib, mesh as mesh_lib, report as common_report
from lib.common import extras, guards, workdir as wd
from lib.common.stages import Stages

validate = config_schema.validate


def run_mode(config, stages: Stages, mesh, ds, mode: str) -> tuple[dict, dict]:
    """Every model of the config (and the EBM in seed mode) on one data set and replica mode;
    returns ({model: summary}, {model: components (R, N, C) or None})."""
    weights = data_lib.resample_weights(len(ds.x_train), config.replicas.num, mode,
                                        config.replicas.resample_fraction,
                                        config.seed + data_lib.RESAMPLE_STREAM)
    models, comps_by_model = {}, {}
    for name in config.models:
        if name == "mlp" and mode != "seed":
            continue                      # accuracy only: one set of replicas
        guards.check_preempted(f"{ds.name}/{mode}/{name}")
        models[name], comps_by_model[name] = run_model(config, stages, mesh, ds, mode, name,
                                                       weights)
    if config.ebm.enabled and mode == "seed":     # a CPU reference: seeds only
        guards.check_preempted(f"{ds.name}/{mode}/ebm")
        models["ebm"], comps_by_model["ebm"] = run_ebm(config, stages, ds, mode, weights)
    return models, comps_by_model


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    t0 = time.time()
    datasets = load_datasets(config)
    config_schema.check_purify(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    stages = Stages(workdir, "runs")
    results: dict = {"datasets": {}}
    plot_dir = os.path.join(workdir, wd.PLOTS)
    for ds in datasets.values():
        names = component_names(ds.num_features, config.model.max_order)
        entry = {"task": ds.task, "n_train": len(ds.x_train), "n_val": len(ds.x_val),
                 "n_test": len(ds.x_test), "num_features": ds.num_features,
                 "num_components": len(names), "modes": {}}
        for mode in config.replicas.modes:
            entry["modes"][mode], comps_by_model = run_mode(config, stages, mesh, ds, mode)
            if primary and config.eval.plots and mode == "seed":
                report.component_plot(
                    os.path.join(plot_dir, f"{ds.name}_components.png"), ds,
                    {k: v for k, v in comps_by_model.items() if v is not None},
                    names, config.eval.plot_components)
        results["datasets"][ds.name] = entry
        complete = ds.name == list(datasets)[-1]
        guards.check_preempted("writing results.json")
        if primary:                         # after every data set: a partial run is readable
            write_results(workdir, results, t0, complete)
    return results


def write_results(workdir: str, results: dict, t0: float, complete: bool) -> None:
    """Targets over the data sets done so far, machine line, wall time and
    `complete` (False while data sets of the config are still to come) into `results`,
    then results.json and results.md in the workdir."""
    results.update(targets=report.targets(results), machine=common_report.machine(),
                   wall_s=time.time() - t0, complete=complete)
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
