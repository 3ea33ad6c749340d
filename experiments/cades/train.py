"""CADES end to end: scenarios -> TPP (true / Hawkes MLE / neural) -> rescaling -> scores ->
conformal p-values -> AUROC per detectability, and FPR over many calibration/test splits.

`train_and_evaluate(config, workdir)` is the whole experiment (importable from tests);
`main.py` only parses flags. Data flow:

    config -> validate ->
      spp:          per family and seed: calibration / ID test / OOD(η) sequences, the true
                    model Λ(t) = t, statistics, two-sided conformal p-values, AUROC(−p)
      multivariate: per ID setting (server, latency): fit a Hawkes MLE and a neural TPP
                    (lib.common.train_loop, checkpoints in <workdir>/neural_<setting>/) on
                    n_train sequences; then AUROC as above for each scenario and model
      fpr:          per ID setting and model: num_blocks × block_size fresh ID sequences;
                    reps_per_block random calibration/test splits per block (vmapped); FPR
                    at each α for CADES (ε = 0 and calibration-conditional ε) and baselines
    -> workdir: config.json, results.json, results.md, plots/*.png

Rerunning on the same workdir resumes the neural training from its checkpoints and
recomputes the evaluation (the same numbers: every sample is a function of the seed).
"""
from __future__ import annotations

import os
import time
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import optax
from absl import logging

from lib.cades import baselines, conformal, config_schema, divergence, report, scenarios as scen_lib
from lib.common import config as config_lib, guards, mesh as mesh_lib, train_loop
from lib.common import report as common_report, workdir as wd
from lib.tpp import hawkes, neural
from lib.tpp.events import Events, trim

validate = config_schema.validate

METHODS, SINGLE = report.METHODS, report.SINGLE


def _key(config, *names: str):
    return jax.random.key(config.seed * 2 ** 31 + zlib.crc32(":".join(names).encode()) % 2 ** 31)


def bandwidths(config, scenario: str) -> tuple[float, float]:
    """(h_arr, h_int): the paper's per-scenario values, or the config's fixed ones."""
    if config.bandwidths.mode == "paper":
        return scen_lib.PAPER_BANDWIDTHS[scenario]
    return config.bandwidths.h_arr, config.bandwidths.h_int


def method_p_values(cal: dict, test: dict) -> dict[str, np.ndarray]:
    """Two-sided conformal p-values of every single statistic, and CADES's Bonferroni p."""
    out = {s: np.asarray(conformal.two_sided_p(jnp.asarray(cal[s]), jnp.asarray(test[s])))
           for s in SINGLE}
    out["cades"] = np.asarray(conformal.bonferroni(jnp.stack([out["kl_arr"], out["kl_int"]])))
    return out


# ----------------------------------------------------------------------------- AUROC


def auroc_sweep(config, scen: scen_lib.Scenario, scorer, block, tag: str) -> dict:
    """AUROC(−p) of every method, per seed and η: {"etas", "auroc": {method: (S, E)}}."""
    res = {m: np.zeros((block.num_seeds, len(block.etas))) for m in METHODS}
    for s in range(block.num_seeds):
        k_cal, k_id, k_ood = jax.random.split(_key(config, tag, scen.name, str(s)), 3)
        cal = scorer(trim(scen.sample_id(k_cal, block.n_cal)))
        id_p = method_p_values(cal, scorer(trim(scen.sample_id(k_id, block.n_test))))
        for e, eta in enumerate(block.etas):
            ood = trim(scen.sample_ood(jax.random.fold_in(k_ood, e), block.n_test, float(eta)))
            ood_p = method_p_values(cal, scorer(ood))
            for m in METHODS:
                res[m][s, e] = report.auroc(-id_p[m], -ood_p[m])
    return {"etas": list(block.etas), "auroc": {m: v.tolist() for m, v in res.items()},
            "summary": report.family_summary(res, np.asarray(block.etas))}


# ----------------------------------------------------------------------------- models


def _neural_task(config, train_ev: Events, num_marks: int, norm) -> train_loop.Task:
    n = config.neural
    opt = optax.chain(optax.clip_by_global_norm(n.grad_clip), optax.adam(n.learning_rate))
    data = {k: np.asarray(v) for k, v in train_ev._asdict().items()}
    N, seed = data["times"].shape[0], config.train.seed

    def init_state(key):
        params = neural.init_params(key, num_marks, n.hidden, n.mark_dim, n.num_components)
        return {"params": params, "opt_state": opt.init(params), "step": jnp.int32(0)}

    def loss_fn(params, batch):
        ev = Events(batch["times"], batch["marks"], batch["mask"], batch["t_max"])
        return -neural.log_likelihood(params, ev, norm, num_marks).sum() / ev.t_max.sum()

    def train_step(state, batch, key):
        del key
        loss, grads = jax.value_and_grad(loss_fn)(state["params"], batch)
        return train_loop.apply_gradients(state, grads, opt), {"nll_per_time": loss}

    def batch_fn(step, rows):
        idx = np.random.default_rng([seed, step]).choice(N, n.batch_size, replace=False)
        return {k: v[idx][rows] for k, v in data.items()}

    return train_loop.Task(init_state, train_step, batch_fn, n.batch_size)


def fit_models(config, setting: str, scen: scen_lib.Scenario, workdir: str, mesh) -> dict:
    """{model: (compensator fn, info)} fitted on n_train ID sequences of `setting`."""
    mv = config.multivariate
    train_ev = trim(scen.sample_id(_key(config, "train", setting), mv.n_train))
    K = scen.num_marks
    out = {}
    if "hawkes" in mv.models:
        t0 = time.perf_counter()
        params, losses = hawkes.fit_mle(train_ev, K, num_steps=config.hawkes.num_steps,
                                        learning_rate=config.hawkes.learning_rate)
        divergence.check_history(f"hawkes MLE ({setting})", np.asarray(losses),
                                 f"lower hawkes.learning_rate (now {config.hawkes.learning_rate:g})")
        info = {"params": jax.tree.map(lambda a: np.asarray(a).tolist(), params),
                "nll_per_time_first_last": [float(losses[0]), float(losses[-1])],
                "fit_s": time.perf_counter() - t0}
        out["hawkes"] = (lambda ev, p=params: hawkes.compensator(p, ev), info)
    if "neural" in mv.models:
        t0 = time.perf_counter()
        norm = neural.gap_normaliser(train_ev)
        task = _neural_task(config, train_ev, K, norm)
        sub = os.path.join(workdir, f"neural_{setting}")
        init = task.init_state(jax.random.key(config.train.seed))["params"]   # the loop's init
        guard = divergence.LogGuard(
            f"neural TPP ({setting})", os.path.join(sub, wd.METRICS), "nll_per_time",
            float(-neural.log_likelihood(init, train_ev, norm, K).sum() / train_ev.t_max.sum()),
            primary=mesh_lib.is_primary(),
            hint=f"lower neural.learning_rate (now {config.neural.learning_rate:g})")
        result = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                                  workdir=sub, mesh=mesh, on_log=guard)
        params = jax.tree.map(jnp.asarray, jax.device_get(result.state["params"]))
        ll = neural.log_likelihood(params, train_ev, norm, K)
        info = {"steps": result.step, "resumed_from": result.resumed_from,
                "train_nll_per_time": float(-ll.sum() / train_ev.t_max.sum()),
                "fit_s": time.perf_counter() - t0, "norm": list(norm)}
        out["neural"] = (lambda ev, p=params: neural.compensator(p, ev, norm, K), info)
    return out


# ----------------------------------------------------------------------------- FPR


def fpr_study(config, setting: str, scen: scen_lib.Scenario, scorer) -> dict:
    """FPR at each α over num_blocks × reps_per_block calibration/test splits."""
    f = config.fpr
    alphas = tuple(f.alphas)
    eps = [conformal.conditional_epsilon(f.n_cal, a, f.delta, strict=False) for a in alphas]
    rows = {m: [] for m in ("cades", "cades_conditional") + SINGLE}
    for b in range(f.num_blocks):
        k_data, k_perm = jax.random.split(_key(config, "fpr", setting, str(b)))
        sc = scorer(trim(scen.sample_id(k_data, f.block_size)))
        perms = jax.vmap(lambda k: jax.random.permutation(k, f.block_size))(
            jax.random.split(k_perm, f.reps_per_block))
        both = jnp.asarray(np.stack([sc["kl_arr"], sc["kl_int"]]))
        r = conformal.split_fpr(both, perms, f.n_cal, f.n_test, alphas, [0.0] + eps)
        rows["cades"].append(np.asarray(r[:, 0, :]))
        rows["cades_conditional"].append(np.asarray(r[:, 1 + np.arange(len(alphas)),
                                                      np.arange(len(alphas))]))
        for s in SINGLE:
            one = conformal.split_fpr(jnp.asarray(sc[s])[None], perms, f.n_cal, f.n_test, alphas,
                                      [0.0])
            rows[s].append(np.asarray(one[:, 0, :]))
    out = {"alphas": list(alphas), "epsilon_conditional": eps, "delta": f.delta,
           "repetitions": f.num_blocks * f.reps_per_block, "methods": {}}
    for m, blocks in rows.items():
        per_block = np.stack([blk.mean(0) for blk in blocks])                 # (G, A)
        mean = per_block.mean(0)
        se = per_block.std(0, ddof=1) / np.sqrt(f.num_blocks)
        out["methods"][m] = {"fpr": mean.tolist(), "se": se.tolist(),
                             "within_3se": (mean <= np.asarray(alphas) + 3 * se).tolist()}
    return out


# ----------------------------------------------------------------------------- main


def _scorer(config, cache: dict, scen_name: str, compensator, model: str):
    """One jitted scorer per (model, bandwidths) in a run (shared by the AUROC and FPR parts,
    so each compiles once per sequence length)."""
    h = bandwidths(config, scen_name)
    if (model, h) not in cache:
        stats = baselines.statistic_fns(SINGLE, *h)
        cache[(model, h)] = baselines.make_scorer(compensator, stats, config.eval.chunk)
    return cache[(model, h)]


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary())
    t_start = time.perf_counter()
    results: dict = {"tag": config.tag, "machine": common_report.machine(), "parts": {}}
    sp, mv = config.spp, config.multivariate
    scorers: dict = {}

    if "spp" in config.parts:
        t0 = time.perf_counter()
        part = {}
        for fam in sp.families:
            scen = scen_lib.make(fam, sp.t_max, sp.max_len)
            part[fam] = auroc_sweep(config, scen, _scorer(
                config, scorers, fam, scen_lib.standard_poisson_compensator, "true"), sp, "spp")
            logging.info("spp %s: %s", fam, part[fam]["summary"]["mean"])
        results["parts"]["spp"] = {"families": part, "wall_s": time.perf_counter() - t0}

    need_models = "multivariate" in config.parts or (
        "fpr" in config.parts and any(s != "spp" for s in config.fpr.settings))
    models: dict = {}
    if need_models:
        t0 = time.perf_counter()
        settings = {"server": "server_stop", "latency": "latency"}
        wanted = {scen_lib.make(s, 1.0, 8).id_setting for s in mv.scenarios} if \
            "multivariate" in config.parts else set()
        if "fpr" in config.parts:
            wanted |= {s for s in config.fpr.settings if s != "spp"}
        for setting in sorted(wanted):
            guards.check_preempted(f"fitting the {setting} models")
            scen = scen_lib.make(settings[setting], mv.t_max, mv.max_len)
            models[setting] = fit_models(config, setting, scen, workdir, mesh)
        results["models"] = {s: {m: info for m, (_, info) in v.items()} for s, v in models.items()}
        results["models_wall_s"] = time.perf_counter() - t0

    if "multivariate" in config.parts:
        t0 = time.perf_counter()
        part = {}
        for name in mv.scenarios:
            scen = scen_lib.make(name, mv.t_max, mv.max_len)
            for model, (comp, _) in models[scen.id_setting].items():
                scorer = _scorer(config, scorers, name, comp, f"{scen.id_setting}/{model}")
                part[f"{name}/{model}"] = auroc_sweep(config, scen, scorer, mv, f"mv:{model}")
                logging.info("%s/%s: %s", name, model, part[f"{name}/{model}"]["summary"]["mean"])
        results["parts"]["multivariate"] = {"scenarios": part, "wall_s": time.perf_counter() - t0}

    if "fpr" in config.parts:
        t0 = time.perf_counter()
        part = {}
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
                                                       _scorer(config, scorers, name, comp, tag))
                logging.info("fpr %s/%s: %s", setting, model,
                             part[f"{setting}/{model}"]["methods"]["cades"]["fpr"])
        results["parts"]["fpr"] = {"settings": part, "wall_s": time.perf_counter() - t0}

    results["targets"] = report.targets(results)
    results["wall_s"] = time.perf_counter() - t_start
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        if config.eval.plots:
            results["plots"] = report.write_plots(os.path.join(workdir, wd.PLOTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    return results
