"""Where ANOVA-TPNN's null-component leakage comes from: the null-sum RMS of its components on
synth_reg under set-ups that differ in one thing each from the `official` config.

    python3 tools/anova_tpnn_null_leakage.py [--setups=ours,smooth,beta1,full_batch,smooth_full,official]
        [--replicas=5] [--epochs=1000] [--out=FILE.json]

The null-sum RMS of a model is the RMS, over the evaluation points, of the sum of its
components that carry no signal (true mean square below `stability.SIGNAL_SHARE` of the
total: 28 of synth_reg's 36 components), in standardised target units, averaged over the
replicas. It is reported on the purified components at the μ_M design rows (the official
block's measure; `lib.anova_tpnn.purify`) and on the raw components at the test rows, each
at initialisation, at the best-on-validation step (the reported model) and after the last
step. Set-ups (one change each against `ours`, the `official` config's ANOVA-TPNN):

  ours        data-aware init as in lib/anova_tpnn/basis.py: temperature γ_j = the
              U(0.1, 0.9)-quantile of |x_j − b_j|; β ~ N(0, 1/(K·C)); batch 512, per-replica
              order.
  smooth      γ_j = max_i |x_ij − b_j| (the official code's threshold_init_cutoff = 1: the
              100th percentile), so every sigmoid is near-linear over the data at init.
  beta1       β ~ N(0, 1) per unit (the official code's nn.init.normal_ response).
  full_batch  batch = every training row (the official code's batch 2,048/4,096 ≥ 1,400
              rows): the constants of every step are those of the whole training sample.
  smooth_full smooth + full_batch.
  official    smooth + beta1 + full_batch (the official code's set-up).

Trains the replicas with `lib.anova_tpnn.training.make_task` (the experiment's own step and
selection), only the init replaced; prints one table and writes the numbers as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from lib.anova_tpnn import baselines, basis, data as data_lib, evaluation, purify, runs, stability  # noqa: E402,E501
from lib.anova_tpnn.model import component_names  # noqa: E402
from lib.anova_tpnn.training import budget, make_task  # noqa: E402
from lib.anova_tpnn.config_schema import config as make_config  # noqa: E402

SETUPS = {
    "ours": dict(smooth=False, beta1=False, full_batch=False),
    "smooth": dict(smooth=True, beta1=False, full_batch=False),
    "beta1": dict(smooth=False, beta1=True, full_batch=False),
    "full_batch": dict(smooth=False, beta1=False, full_batch=True),
    "smooth_full": dict(smooth=True, beta1=False, full_batch=True),
    "official": dict(smooth=True, beta1=True, full_batch=True),
}


def official_config(epochs: float, replicas: int):
    """The `official` variant's keys (configs/anova_tpnn/anova_tpnn.py), synth_reg only."""
    return make_config({"tag": "anova_tpnn_official", "batch_size": 512, "epochs": epochs,
                        "replicas.num": replicas, "replicas.batch_order": "per_replica",
                        "eval.val_every": 1, "eval.val_every_epochs": 4.0,
                        "train.num_steps": 1, "datasets": ("synth_reg",)})


def smooth_gamma(params: dict, x_train: np.ndarray, model) -> dict:
    """log γ of every factor replaced by log max_i |x_ij − b_j| over the training rows."""
    p = dict(params["params"])
    for o in model_orders(p):
        idx = jnp.asarray(basis.component_index(x_train.shape[1], o))
        x_sel = jnp.asarray(x_train)[:, idx]                        # (n, C, o)
        dist = jnp.abs(x_sel[..., None] - p[f"b_{o}"][None])        # (n, C, o, K)
        p[f"log_gamma_{o}"] = jnp.log(jnp.maximum(dist.max(axis=0), 1e-6))
    return {"params": p}


def model_orders(p: dict) -> list[int]:
    return sorted(int(k.split("_")[1]) for k in p if k.startswith("beta_"))


def unit_beta(params: dict, key: jax.Array) -> dict:
    """β ~ N(0, 1) per unit."""
    p = dict(params["params"])
    for o in model_orders(p):
        p[f"beta_{o}"] = jax.random.normal(jax.random.fold_in(key, o), p[f"beta_{o}"].shape)
    return {"params": p}


def null_sum_rms(comps: np.ndarray, null_cols: np.ndarray) -> float:
    """RMS over points of Σ_{null S} f̂_S, averaged over replicas; comps (R, N, C)."""
    s = np.asarray(comps, np.float64)[:, :, null_cols].sum(axis=2)
    return float(np.mean(np.sqrt(np.mean(s ** 2, axis=1))))


def measure(model, params, ds, weights, pur, names, truth_grid, null_cols, chunk) -> dict:
    consts = evaluation.frozen_constants(model, params, ds.x_train, weights)
    x_all = np.concatenate([ds.x_test, pur[2]])
    out, comps, icpt = evaluation.evaluate_replicas(model, params, consts, x_all, chunk, True)
    n_test = len(ds.x_test)
    pure, _ = purify.purify(comps[:, n_test:], pur[1], names, icpt[:, n_test])
    ratio, _ = stability.signal_variance_ratio(pure, truth_grid)
    rmse = evaluation.test_metric(ds.task, out[:, :n_test], ds.y_test, 1.0)
    return {"null_rms_purified": null_sum_rms(pure, null_cols),
            "null_rms_raw_test": null_sum_rms(comps[:, :n_test], null_cols),
            "signal_var_ratio": float(ratio.mean()),
            "test_rmse_std_units": float(rmse.mean())}


def run_setup(name: str, flags: dict, config, ds, pur, names, truth_grid, null_cols) -> dict:
    model = baselines.build("tpnn", ds.num_features, config.model)
    weights = np.ones((len(ds.x_train), config.replicas.num), np.float32)
    batch = len(ds.x_train) if flags["full_batch"] else min(config.batch_size, len(ds.x_train))
    seed = config.train.seed + 7919 * config.seed
    task = make_task(model, "tpnn", ds, weights, config, batch, seed)
    steps, every = budget(config, len(ds.x_train), batch)
    base_init = task.init_state

    def init_state(key):
        state = base_init(key)
        params = state["params"]
        if flags["smooth"]:
            params = jax.vmap(lambda p: smooth_gamma(p, ds.x_train, model))(params)
        if flags["beta1"]:
            keys = jax.random.split(jax.random.fold_in(key, 1), config.replicas.num)
            params = jax.vmap(unit_beta)(params, keys)
        state["params"] = params
        state["best_params"] = jax.tree.map(jnp.copy, params)
        return state

    key = jax.random.key(seed)
    state = init_state(key)
    res = {"setup": name, **flags, "batch": batch, "steps": steps, "val_every": every}
    args = (model, None, ds, weights, pur, names, truth_grid, null_cols, config.eval.chunk)
    res["init"] = measure(*args[:1], state["params"], *args[2:])
    step_fn = jax.jit(task.train_step)
    t0 = time.time()
    for step in range(steps):
        state, _ = step_fn(state, task.batch_fn(step, slice(None)), jax.random.fold_in(key, step))
    res["train_s"] = time.time() - t0
    res["selected"] = measure(model, state["best_params"], *args[2:])
    res["last"] = measure(model, state["params"], *args[2:])
    res["selected_step"] = np.asarray(state["best_step"]).tolist()
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setups", default=",".join(SETUPS))
    ap.add_argument("--replicas", type=int, default=5)
    ap.add_argument("--epochs", type=float, default=1000.0)
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    chosen = [s for s in a.setups.split(",") if s]
    bad = [s for s in chosen if s not in SETUPS]
    if bad:
        print(f"unknown setup(s) {bad}; choose from {sorted(SETUPS)}", file=sys.stderr)
        return 2
    config = official_config(a.epochs, a.replicas)
    ds = runs.load_datasets(config)["synth_reg"]
    pur = runs.purification_rows(config, ds)
    names = component_names(ds.num_features, config.model.max_order)
    raw_grid = purify.quantile_grid(ds.x_train_raw, len(pur[0]))
    _, truth = data_lib.true_components(purify.design_points(raw_grid, pur[1]), raw_grid)
    truth_grid = np.stack([np.asarray(truth.get(k, np.zeros(len(pur[2])))) / ds.y_std
                           for k in names], axis=1)
    power = np.mean(truth_grid ** 2, axis=0)
    null_cols = np.flatnonzero(power < stability.SIGNAL_SHARE * power.sum())
    results = []
    print(f"synth_reg: {len(null_cols)} null components of {len(names)}; "
          f"{a.replicas} replicas, {a.epochs:g} epochs")
    print("| setup | at | null-sum RMS, purified (grid) | null-sum RMS, raw (test) | "
          "signal var / true var | test RMSE (std units) |")
    print("|---|---|---|---|---|---|")
    for name in chosen:
        r = run_setup(name, SETUPS[name], config, ds, pur, names, truth_grid, null_cols)
        results.append(r)
        for at in ("init", "selected", "last"):
            m = r[at]
            print(f"| {name} | {at} | {m['null_rms_purified']:.4f} | "
                  f"{m['null_rms_raw_test']:.4f} | {m['signal_var_ratio']:.4f} | "
                  f"{m['test_rmse_std_units']:.4f} |", flush=True)
        print(f"<!-- {name}: batch {r['batch']}, {r['steps']} steps, selected steps "
              f"{r['selected_step']}, {r['train_s']:.0f} s -->", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
