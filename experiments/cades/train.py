"""CADES end to end: scenarios -> TPP (true / Hawkes MLE / neural) -> rescaling -> scores ->
conformal p-values -> AUROC per detectability, and FPR over many calibration/test splits.

    config -> validate ->
      spp:          per family and seed: calibration / ID test / OOD(η) sequences, the true
                    model Λ(t) = t, statistics, two-sided conformal p-values, AUROC(−p)
      multivariate: per ID setting (server, latency): fit a Hawkes MLE and a neural TPP
                    (lib.common.train_loop, checkpoints in <workdir>/neural_<setting>/) on
                    n_train sequences; then AUROC as above for each scenario and model
      fpr:          per ID setting and model: FPR at each α for CADES (ε = 0 and
                    calibration-conditional ε) and the baselines (lib.cades.evaluation)
    -> workdir: config.json, plots/*.png, results.md, then results.json (last)

Rerunning on the same workdir resumes the neural training from its checkpoints and
recomputes the evaluation (the same numbers: every sample is a function of the seed).
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.cades import config_schema, divergence, report, scenarios as scen_lib, training
from lib.cades.evaluation import Scorers, auroc_sweep, fpr_study, run_key
from lib.common import config as config_lib, guards, mesh as mesh_lib, train_loop
from lib.common import report as common_report, workdir as wd
from lib.common.stages import Stages
from lib.tpp import hawkes, neural
from lib.tpp.events import trim

validate = config_schema.validate


def fit_models(config, setting: str, scen: scen_lib.Scenario, workdir: str, mesh) -> dict:
    """{model: (compensator fn, info)} fitted on n_train ID sequences of `setting`."""
    mv = config.multivariate
    train_ev = trim(scen.sample_id(run_key(config, "train", setting), mv.n_train))
    K = scen.num_marks
    out = {}
    if "hawkes" in mv.models:
        t0 = time.perf_counter()
        params, losses = hawkes.fit_mle(train_ev, K, num_steps=config.hawkes.num_steps,
                                        lr=config.hawkes.lr)
        divergence.check_history(f"hawkes MLE ({setting})", np.asarray(losses),
                                 f"lower hawkes.lr (now {config.hawkes.lr:g})")
        info = {"params": jax.tree.map(lambda a: np.asarray(a).tolist(), params),
                "nll_per_time_first_last": [float(losses[0]), float(losses[-1])],
                "fit_s": time.perf_counter() - t0}
        out["hawkes"] = (lambda ev, p=params: hawkes.compensator(p, ev), info)
    if "neural" in mv.models:
        t0 = time.perf_counter()
        norm = neural.gap_normaliser(train_ev)
        task = training.make_task(config, train_ev, K, norm)
        sub = Stages(workdir, folder="").dir(f"neural_{setting}")     # the older layout
        init = task.init_state(jax.random.key(config.train.seed))["params"]   # the loop's init
        guard = divergence.LogGuard(
            f"neural TPP ({setting})", os.path.join(sub, wd.METRICS), "nll_per_time",
            float(training.nll_per_time(init, train_ev, norm, K)),
            primary=mesh_lib.is_primary(),
            hint=f"lower neural.lr (now {config.neural.lr:g})")
        result = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                                  workdir=sub, mesh=mesh, on_log=guard)
        params = jax.tree.map(jnp.asarray, jax.device_get(result.state["params"]))
        info = {"steps": result.step, "resumed_from": result.resumed_from,
                "train_nll_per_time": float(training.nll_per_time(params, train_ev, norm, K)),
                "fit_s": time.perf_counter() - t0, "norm": list(norm)}
        out["neural"] = (lambda ev, p=params: neural.compensator(p, ev, norm, K), info)
    return out


# ----------------------------------------------------------------------------- parts


def spp_part(config, scorers: Scorers) -> dict:
    """AUROC of every method on each univariate family, against the true Poisson model."""
    t0, sp, part = time.perf_counter(), config.spp, {}
    for fam in sp.families:
        scen = scen_lib.make(fam, sp.t_max, sp.max_len_hawkes if fam == "hawkes" else sp.max_len)
        part[fam] = auroc_sweep(config, scen, scorers.get(
            fam, scen_lib.standard_poisson_compensator, "true"), sp, "spp")
        logging.info("spp %s: %s", fam, part[fam]["summary"]["mean"])
    return {"families": part, "wall_s": time.perf_counter() - t0}


def fit_settings(config, workdir: str, mesh) -> dict:
    """{setting: fit_models(...)} for every ID setting the multivariate or FPR part needs."""
    mv = config.multivariate
    settings = {"server": "server_stop", "latency": "latency"}
    wanted = {scen_lib.make(s, mv.t_max, mv.max_len).id_setting for s in mv.scenarios} if \
        "multivariate" in config.parts else set()
    if "fpr" in config.parts:
        wanted |= {s for s in config.fpr.settings if s != "spp"}
    models = {}
    for setting in sorted(wanted):
        guards.check_preempted(f"fitting the {setting} models")
        scen = scen_lib.make(settings[setting], mv.t_max, mv.max_len)
        models[setting] = fit_models(config, setting, scen, workdir, mesh)
    return models


def multivariate_part(config, models: dict, scorers: Scorers) -> dict:
    """AUROC of every method on each multivariate scenario, per fitted model."""
    t0, mv, part = time.perf_counter(), config.multivariate, {}
    for name in mv.scenarios:
        scen = scen_lib.make(name, mv.t_max, mv.max_len)
        for model, (comp, _) in models[scen.id_setting].items():
            scorer = scorers.get(name, comp, f"{scen.id_setting}/{model}")
            part[f"{name}/{model}"] = auroc_sweep(config, scen, scorer, mv, f"mv:{model}")
            logging.info("%s/%s: %s", name, model, part[f"{name}/{model}"]["summary"]["mean"])
    return {"scenarios": part, "wall_s": time.perf_counter() - t0}


def fpr_part(config, models: dict, scorers: Scorers) -> dict:
    """The FPR study of every configured setting and model."""
    t0, sp, mv, part = time.perf_counter(), config.spp, config.multivariate, {}
    for setting in config.fpr.settings:
        if setting == "spp":
            name = "hawkes"           # its bandwidths (0.1, 1.0); the ID law is Poisson(1)
            scen = scen_lib.make(name, sp.t_max, sp.max_len)
            cases = {"true": scen_lib.standard_poisson_compensator}
        else:
            name = "server_stop" if setting == "server" else "latency"
            scen = scen_lib.make(name, mv.t_max, mv.max_len)
            cases = {m: c for m, (c, _) in models[setting].items()}
        for model, comp in cases.items():
            tag = "true" if setting == "spp" else f"{setting}/{model}"
            part[f"{setting}/{model}"] = fpr_study(config, setting, scen,
                                                   scorers.get(name, comp, tag))
            logging.info("fpr %s/%s: %s", setting, model,
                         part[f"{setting}/{model}"]["methods"]["cades"]["fpr"])
    return {"settings": part, "wall_s": time.perf_counter() - t0}


def publish(config, workdir: str, results: dict) -> None:
    """Plots and results.md, then results.json last (atomically): a workdir holding
    results.json holds every table of the run."""
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        if config.eval.plots:
            results["plots"] = report.write_plots(os.path.join(workdir, wd.PLOTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               renamed=config_schema.RENAMED_KEYS)
    t_start = time.perf_counter()
    results: dict = {"tag": config.tag, "machine": common_report.machine(), "parts": {}}
    scorers = Scorers(config)
    if "spp" in config.parts:
        results["parts"]["spp"] = spp_part(config, scorers)
    models: dict = {}
    if "multivariate" in config.parts or (
            "fpr" in config.parts and any(s != "spp" for s in config.fpr.settings)):
        t0 = time.perf_counter()
        models = fit_settings(config, workdir, mesh)
        results["models"] = {s: {m: info for m, (_, info) in v.items()} for s, v in models.items()}
        results["models_wall_s"] = time.perf_counter() - t0
    if "multivariate" in config.parts:
        results["parts"]["multivariate"] = multivariate_part(config, models, scorers)
    if "fpr" in config.parts:
        results["parts"]["fpr"] = fpr_part(config, models, scorers)
    results["targets"] = report.targets(results)
    results["wall_s"] = time.perf_counter() - t_start
    publish(config, workdir, results)
    return results
