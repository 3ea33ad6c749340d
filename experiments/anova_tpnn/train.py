"""ANOVA-TPNN vs NA²M / NB²M / MLP (/ EBM): prediction, component stability, recovery.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` only parses flags.

    config -> validate -> load every data set (train/validation/test split, feature
    checks, quantile transform, the interaction order against the feature count: all
    before any training)
    -> for each data set, replica mode ("seed": same data, different inits; "resample":
       80% subsamples of the training rows), model:
         R replicas trained at once: one jitted step vmapped over replicas
         (lib.common.train_loop: checkpoints, resume, metrics.jsonl per run), each
         replica's best-on-validation params kept in the train state (`make_task`)
         -> ANOVA-TPNN's identifiability constants computed on each replica's whole
            training sample for its selected params and frozen (frozen_constants.npz)
         -> components of every replica at all N rows (train then test), test predictions
    -> optional EBM replicas (interpret) -> test metric (RMSE / AUROC), stability scores,
       recovery error (synthetic sets), targets -> results.json, results.md, plots/

Rerunning the same command resumes every unfinished run from its checkpoint; finished runs
are restored and re-evaluated (seconds).
"""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from absl import logging

from lib.anova_tpnn import baselines, config_schema, data as data_lib, report, stability
from lib.anova_tpnn.model import component_names, output_from_components, penalty, stack_components
from lib.common import extras
from lib.common import config as config_lib, mesh as mesh_lib, report as common_report
from lib.common import guards, train_loop, workdir as wd
from lib.anova_tpnn.config_schema import optional_modules

validate = config_schema.validate


# ----------------------------------------------------------------------------- task


def effective_batch(batch_size: int, n_train: int, data_shards: int) -> int:
    """min(batch_size, n_train), rounded down to a multiple of the data-axis size."""
    b = min(batch_size, n_train)
    b -= b % data_shards
    if b < data_shards:
        raise ValueError(f"training set of {n_train} rows is too small for {data_shards} "
                         "data shards")
    return b


def pointwise_loss(out: jax.Array, y: jax.Array, classification: bool) -> jax.Array:
    """Per-row loss: BCE-with-logits (classification) or squared error, same shape as y."""
    return optax.sigmoid_binary_cross_entropy(out, y) if classification else (out - y) ** 2


def make_task(model, name: str, ds: data_lib.Dataset, weights: np.ndarray, config,
              batch: int, seed: int) -> train_loop.Task:
    """A `train_loop.Task` training R = weights.shape[1] replicas of `model` at once.

    State: {"params", "opt_state"} stacked over replicas (leading axis R), "step"; with a
    validation split (ds.x_val non-empty) also "best_params" (R-stacked like params),
    "best_val" (R,) and "best_step" (R,), the best-on-validation selection.
    Batch (rows × ...): x (B, p), y (B,), w (B, R) — every replica sees the same rows,
    weighted by its own resample weights (all ones in "seed" mode).
    Loss per replica: weighted MSE (regression) or BCE-with-logits (classification),
    plus optim.output_penalty · mean Σ_S f_S² for component models.

    Selection: after every `eval.val_every`-th update and after the last one, each
    replica's validation loss (mean MSE / BCE on ds.x_val) is computed with the model as
    it will be evaluated — ANOVA-TPNN's constants on the replica's whole weighted
    training sample, not on a minibatch — and a replica whose loss is below its best so
    far gets its params copied into best_params. Everything is inside the jitted step, so
    it is checkpointed with the state and a resumed run selects exactly what an
    uninterrupted run does. The test split is never used.
    """
    o = config.optim
    opt = optax.adam(o.lr[name], b1=o.b1, b2=o.b2)
    x_tr, y_tr = ds.x_train, ds.y_train
    x_init = np.sort(x_tr, axis=0)      # data-aware init reads sorted columns
    has_comps = baselines.HAS_COMPONENTS[name]
    classification = ds.task == "classification"
    replicas = weights.shape[1]
    select = len(ds.x_val) > 0
    every, last = config.eval.val_every, config.train.num_steps

    def init_one(key):
        params = baselines.init_params(model, key, x_init)
        return params, opt.init(params)

    def init_state(key):
        params, opt_state = jax.vmap(init_one)(jax.random.split(key, replicas))
        state = {"params": params, "opt_state": opt_state, "step": jnp.int32(0)}
        if select:
            state.update(best_params=jax.tree.map(jnp.copy, params),
                         best_val=jnp.full((replicas,), jnp.inf, jnp.float32),
                         best_step=jnp.zeros((replicas,), jnp.int32))
        return state

    def loss_one(params, x, y, w):
        consts = model.apply(params, x, w, method=model.constants)
        if has_comps:
            comps = model.apply(params, x, consts, method=model.components)
            out = output_from_components(comps)
            reg = o.output_penalty * penalty(comps) if o.output_penalty > 0 else 0.0
        else:
            out, reg = model.apply(params, x, consts), 0.0
        per_row = pointwise_loss(out, y, classification)
        return jnp.sum(w * per_row) / jnp.maximum(jnp.sum(w), 1.0) + reg

    def val_loss_one(params, w):
        consts = model.apply(params, jnp.asarray(x_tr), w, method=model.constants)
        out = model.apply(params, jnp.asarray(ds.x_val), consts)
        return jnp.mean(pointwise_loss(out, jnp.asarray(ds.y_val), classification))

    def update_best(state, params):
        def check(_):
            val = jax.vmap(val_loss_one, in_axes=(0, 1))(params, jnp.asarray(weights))
            better = val < state["best_val"]                  # NaN never wins

            def pick(new, old):
                return jnp.where(better.reshape((-1,) + (1,) * (new.ndim - 1)), new, old)

            return (jax.tree.map(pick, params, state["best_params"]),
                    jnp.where(better, val, state["best_val"]),
                    jnp.where(better, state["step"] + 1, state["best_step"]))

        def keep(_):
            return state["best_params"], state["best_val"], state["best_step"]

        step = state["step"] + 1
        best = jax.lax.cond((step % every == 0) | (step == last), check, keep, None)
        return dict(zip(("best_params", "best_val", "best_step"), best))

    def train_step(state, batch_, key):
        del key

        def one(params, opt_state, w):
            loss, grads = jax.value_and_grad(loss_one)(params, batch_["x"], batch_["y"], w)
            updates, opt_state = opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

        params, opt_state, loss = jax.vmap(one, in_axes=(0, 0, 1))(
            state["params"], state["opt_state"], batch_["w"])
        new = {"params": params, "opt_state": opt_state, "step": state["step"] + 1}
        if select:
            new.update(update_best(state, params))
        return new, {"loss": jnp.mean(loss), "loss_max": jnp.max(loss)}

    def batch_fn(step, rows):
        idx = np.random.default_rng([seed, step]).choice(len(x_tr), batch, replace=False)
        return {"x": x_tr[idx][rows], "y": y_tr[idx][rows], "w": weights[idx][rows]}

    return train_loop.Task(init_state, train_step, batch_fn, batch)


def selected_params(state: dict) -> Any:
    """The params every evaluation uses: each replica's best-on-validation params when the
    run had a validation split, else the last step's."""
    return state["best_params"] if "best_params" in state else state["params"]


# ----------------------------------------------------------------------------- evaluation


def frozen_constants(model, params, x_train: np.ndarray, weights: np.ndarray) -> Any:
    """Each replica's identifiability constants on its whole training sample (R-stacked)."""
    fn = jax.jit(jax.vmap(lambda p, w: model.apply(p, jnp.asarray(x_train), w,
                                                   method=model.constants)))
    return fn(params, jnp.asarray(weights.T))


def evaluate_replicas(model, params, consts, x: np.ndarray, chunk: int, has_comps: bool
                      ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(outputs (R, N), components (R, N, C) or None, intercepts (R, N) or None) at rows x,
    with the frozen constants, in chunks of rows (the last chunk padded with copies of
    the last row and the padding dropped: every chunk has one shape, so one compile; rows
    do not interact once the constants are frozen)."""
    if has_comps:
        def one(p, c, xc):
            comps = model.apply(p, xc, c, method=model.components)
            return output_from_components(comps), stack_components(comps), comps[0]
    else:
        def one(p, c, xc):
            out = model.apply(p, xc, c)
            return out, out[:, None], out
    fn = jax.jit(jax.vmap(one, in_axes=(0, 0, None)))
    n = len(x)
    chunk = min(chunk, n)
    padded = np.concatenate([x, np.repeat(x[-1:], -n % chunk, axis=0)])
    parts = [jax.device_get(fn(params, consts, jnp.asarray(padded[i:i + chunk])))
             for i in range(0, len(padded), chunk)]
    out, comps, icpt = (np.concatenate([p[k] for p in parts], axis=1)[:, :n]
                        for k in range(3))
    return (out, comps, icpt) if has_comps else (out, None, None)


def test_metric(task: str, pred: np.ndarray, y: np.ndarray, y_std: float) -> np.ndarray:
    """Per replica (R,): RMSE in the target's original units, or AUROC."""
    if task == "regression":
        return np.sqrt(np.mean((pred - y[None]) ** 2, axis=1)) * y_std
    from sklearn.metrics import roc_auc_score
    return np.array([roc_auc_score(y, p) for p in pred])


def truth_matrix(ds: data_lib.Dataset, names: list) -> tuple[np.ndarray, int]:
    """True components as (n_test, C') on `names` plus any true component the model cannot
    represent (appended); returns (matrix, number of appended columns)."""
    extra = [k for k in ds.truth if k not in names]
    cols = [ds.truth.get(k, np.zeros(len(ds.x_test), np.float32)) for k in names + extra]
    return np.stack(cols, axis=1), len(extra)


def summarise(ds: data_lib.Dataset, metric: np.ndarray, comps: np.ndarray | None,
              names: list) -> dict:
    """Metric mean/SE and, for component models, stability and recovery numbers."""
    r = len(metric)
    out = {"metric": float(metric.mean()), "metric_se": float(metric.std(ddof=1) / np.sqrt(r)),
           "metric_per_replica": metric}
    if comps is None:
        return out
    n_train = len(ds.x_train)
    train_rows = slice(0, n_train)
    raw = stability.stability_scores(comps)
    cen = stability.stability_scores(stability.centre(comps, train_rows))
    order = np.array([len(k) for k in names])
    out.update({
        "stability": float(raw["var"].mean()),
        "stability_mad": float(raw["mad"].mean()),
        "stability_mains": float(raw["var"][order == 1].mean()),
        "stability_centred": float(cen["var"].mean()),
        "stability_weighted": float(np.average(raw["var"], weights=stability.importance(comps)
                                               + 1e-30)),
        "stability_per_component": raw["var"],
    })
    if ds.truth is not None:
        truth, extra = truth_matrix(ds, names)
        test = comps[:, n_train:]
        pad = np.zeros(test.shape[:2] + (extra,))
        for key, block in (("recovery", test),
                           ("recovery_centred",
                            stability.centre(comps, train_rows)[:, n_train:])):
            err = stability.recovery_error(np.concatenate([block, pad], axis=2), truth)
            out[key] = float(err.mean())
            out[key + "_se"] = float(err.std(ddof=1) / np.sqrt(r))
    return out


# ----------------------------------------------------------------------------- driver


def load_datasets(config) -> dict[str, data_lib.Dataset]:
    """Every data set of the config, checked against the interaction order (before compute)."""
    out = {}
    for name in config.datasets:
        ds = data_lib.load(name, config.data, config.seed)
        if config.model.max_order > ds.num_features:
            raise ValueError(f"model.max_order = {config.model.max_order} exceeds the "
                             f"{ds.num_features} features of data set {name!r}")
        out[name] = ds
    return out


def run_model(config, workdir: str, mesh, ds: data_lib.Dataset, mode: str, name: str,
              weights: np.ndarray) -> tuple[dict, np.ndarray | None]:
    """Train (or resume) R replicas of one model and evaluate them; returns (summary,
    components (R, N, C) or None); `guards.Preempted` on SIGTERM."""
    model = baselines.build(name, ds.num_features, config.model)
    run_dir = os.path.join(workdir, "runs", ds.name, mode, name)
    os.makedirs(run_dir, exist_ok=True)
    batch = effective_batch(config.batch_size, len(ds.x_train), mesh.shape[mesh_lib.DATA])
    seed = config.train.seed + 7919 * config.seed + (0 if mode == "seed" else 1)
    task = make_task(model, name, ds, weights, config, batch, seed)
    loop = dataclasses.replace(train_loop.LoopConfig.from_config(config.train), seed=seed)
    t0 = time.time()
    result = train_loop.train(task, loop, workdir=run_dir, mesh=mesh)
    params = selected_params(result.state)
    consts = frozen_constants(model, params, ds.x_train, weights)
    if mesh_lib.is_primary() and jax.tree.leaves(consts):
        np.savez(os.path.join(run_dir, "frozen_constants.npz"),
                 **{f"order_{k}": np.asarray(v) for k, v in jax.device_get(consts).items()})
    x_all = np.concatenate([ds.x_train, ds.x_test])
    has_comps = baselines.HAS_COMPONENTS[name]
    out, comps, _ = evaluate_replicas(model, params, consts, x_all, config.eval.chunk, has_comps)
    metric = test_metric(ds.task, out[:, len(ds.x_train):], ds.y_test, ds.y_std)
    names = component_names(ds.num_features, config.model.max_order)
    summary = summarise(ds, metric, comps, names)
    summary.update(train_s=time.time() - t0, steps=result.step, batch=batch,
                   final_loss=_last_loss(run_dir))
    if "best_step" in result.state:
        best_step, best_val = jax.device_get((result.state["best_step"],
                                              result.state["best_val"]))
        summary.update(selected_step=float(np.mean(best_step)),
                       selected_step_per_replica=np.asarray(best_step),
                       val_loss=float(np.mean(best_val)))
    logging.info("%s/%s/%s: metric %.4f, stability %s, recovery %s", ds.name, mode, name,
                 summary["metric"], summary.get("stability"), summary.get("recovery"))
    return summary, comps


def _last_loss(run_dir: str) -> float | None:
    path = os.path.join(run_dir, wd.METRICS)
    if not os.path.exists(path):
        return None
    import json
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    losses = [entry["loss"] for entry in lines if "loss" in entry]
    return float(losses[-1]) if losses else None


def run_ebm(config, workdir: str, ds: data_lib.Dataset, mode: str, weights: np.ndarray
            ) -> tuple[dict, np.ndarray]:
    """`ebm.num_replicas` interpretML EBMs, replica i on the training rows of weights[:, i]
    (the validation rows are not used: the EBM early-stops on its own inner split of its
    training rows); each replica's prediction and components at all N rows are saved in
    runs/<set>/<mode>/ebm/replica_<i>.npz and reused when the command is rerun."""
    names = component_names(ds.num_features, config.model.max_order)
    run_dir = os.path.join(workdir, "runs", ds.name, mode, "ebm")
    os.makedirs(run_dir, exist_ok=True)
    x_all = np.concatenate([ds.x_train, ds.x_test])
    t0 = time.time()
    preds, comps = [], []
    for i in range(config.ebm.num_replicas):
        path = os.path.join(run_dir, f"replica_{i}.npz")
        if os.path.exists(path):
            saved = np.load(path)
            pred, comp = saved["pred"], saved["components"]
        else:
            keep = weights[:, i] > 0
            pred, comp, _ = baselines.fit_ebm(ds.x_train[keep], ds.y_train[keep], x_all,
                                              names, ds.task, config.ebm,
                                              seed=config.seed * 1000 + i)
            if mesh_lib.is_primary():
                np.savez(path, pred=pred, components=comp)
        preds.append(pred)
        comps.append(comp)
    preds, comps = np.stack(preds), np.stack(comps)
    metric = test_metric(ds.task, preds[:, len(ds.x_train):], ds.y_test, ds.y_std)
    summary = summarise(ds, metric, comps, names)
    summary["train_s"] = time.time() - t0
    logging.info("%s/%s/ebm: metric %.4f, stability %s", ds.name, mode, summary["metric"],
                 summary.get("stability"))
    return summary, comps


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    t0 = time.time()
    datasets = load_datasets(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    results: dict = {"datasets": {}}
    plot_dir = os.path.join(workdir, wd.PLOTS)
    for ds in datasets.values():
        entry = {"task": ds.task, "n_train": len(ds.x_train), "n_val": len(ds.x_val),
                 "n_test": len(ds.x_test),
                 "num_features": ds.num_features,
                 "num_components": len(component_names(ds.num_features,
                                                       config.model.max_order)),
                 "modes": {}}
        for mode in config.replicas.modes:
            weights = data_lib.resample_weights(len(ds.x_train), config.replicas.num, mode,
                                                config.replicas.resample_fraction,
                                                config.seed + 101)
            models, comps_by_model = {}, {}
            for name in config.models:
                if name == "mlp" and mode != "seed":
                    continue                      # accuracy only: one set of replicas
                guards.check_preempted(f"{ds.name}/{mode}/{name}")
                models[name], comps_by_model[name] = run_model(config, workdir, mesh, ds, mode,
                                                               name, weights)
            if config.ebm.enabled and mode == "seed":     # a CPU reference: seeds only
                guards.check_preempted(f"{ds.name}/{mode}/ebm")
                models["ebm"], comps_by_model["ebm"] = run_ebm(config, workdir, ds, mode,
                                                                weights)
            entry["modes"][mode] = models
            if primary and config.eval.plots and mode == "seed":
                report.component_plot(
                    os.path.join(plot_dir, f"{ds.name}_components.png"), ds,
                    {k: v for k, v in comps_by_model.items() if v is not None},
                    component_names(ds.num_features, config.model.max_order),
                    config.eval.plot_components)
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
