"""EARTH experiment: every (dataset, model) is trained through `lib.common.train_loop`.

For one dataset and one model, the horizons × seeds independent copies are trained side
by side: parameters and optimiser states carry a leading copy axis and the step is
`vmap`ped over it (each copy sees its own batch of its own horizon; Adam, clipping and
weight decay act per copy, so this equals separate runs but compiles once). The batch is
[B, copies, W, N], split over the mesh's "data" axis on B.

Workdir layout: <workdir>/runs/<dataset>/<model>/{checkpoints, metrics.jsonl}, and at the
top results.json, results.md, predictions.npz, plots/forecast_<dataset>_h<h>.png.
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from absl import logging

from lib.common import config as config_lib
from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import paths
from lib.common import plotting, report, train_loop
from lib.common import workdir as wd
from lib.earth import baselines, data as data_lib, gltg, metrics as metrics_lib, model as model_lib
from lib.earth import simulator
from lib.earth.config_schema import BENCHMARKS, check_files, validate


# ----------------------------------------------------------------------------- data


def load_dataset(name: str, config) -> tuple[np.ndarray, np.ndarray]:
    """(series [T, N], adjacency [N, N]) of a dataset name (simulated, benchmark, custom)."""
    if name == "simulated":
        s = config.sim
        out = simulator.simulate(simulator.SimConfig(
            num_regions=s.num_regions, num_weeks=s.num_weeks, mobility=s.mobility,
            seasonal_amp=s.seasonal_amp, report_rate=s.report_rate, dispersion=s.dispersion,
            seed=s.seed))
        return out["counts"], out["adjacency"]
    if name == "custom":
        return data_lib.load_files(config.data.custom_series, config.data.custom_adjacency,
                                   config.data.negative_counts)
    series, adj = BENCHMARKS[name]
    root = paths.resolve(config.data.root)
    return data_lib.load_files(os.path.join(root, series), os.path.join(root, adj),
                               config.data.negative_counts)


def build_model(name: str, config, prep: data_lib.Prepared):
    """The forecaster `name` with the dataset's graphs baked in."""
    geo = gltg.geo_graph(prep.adjacency)
    m = config.model
    if name in model_lib.VARIANTS:
        sem = gltg.fused_graph(prep.adjacency, gltg.semantic_graph(
            prep.scaled[:prep.train_end], config.data.semantic_k, config.data.semantic_select))
        return model_lib.Earth(geo, sem, hidden=m.hidden, heads=m.heads, ar_lags=m.ar_lags,
                               variant=name, solver=m.solver, adjoint=m.adjoint, dt=m.dt,
                               alpha=m.alpha)
    return baselines.Baseline(name, geo, hidden=m.baseline_hidden)


def copies(config) -> list[tuple[int, int]]:
    """(horizon, seed) of each independently trained copy."""
    return [(h, s) for h in config.data.horizons for s in range(config.num_seeds)]


# ----------------------------------------------------------------------------- training


def make_task(forecaster, prep: data_lib.Prepared, config) -> train_loop.Task:
    """A Task whose state holds stacked params/opt states of all copies."""
    cps = copies(config)
    w, bs = config.data.window, config.optim.batch_size
    train_t = {h: prep.targets("train", w, h) for h in config.data.horizons}
    x_example = jnp.zeros((w, prep.series.shape[1]), jnp.float32)
    opt = optax.chain(optax.clip_by_global_norm(config.optim.clip_norm),
                      optax.adamw(config.optim.lr, weight_decay=config.optim.weight_decay))

    def init_state(key):
        keys = jnp.stack([jax.random.fold_in(key, 1000 * h + s) for h, s in cps])
        params = jax.vmap(forecaster.init, (0, None))(keys, x_example)
        return {"params": params, "opt_state": jax.vmap(opt.init)(params), "step": jnp.int32(0)}

    def loss_one(params, x, y):
        pred = jax.vmap(forecaster.apply, (None, 0))(params, x)
        return jnp.mean(jnp.abs(pred - y))                       # L1 on scaled targets

    def train_step(state, batch, key):
        del key
        x = jnp.swapaxes(batch["x"], 0, 1)                       # [copies, B, W, N]
        y = jnp.swapaxes(batch["y"], 0, 1)
        loss, grads = jax.vmap(jax.value_and_grad(loss_one))(state["params"], x, y)
        upd, opt_state = jax.vmap(opt.update)(grads, state["opt_state"], state["params"])
        params = jax.vmap(optax.apply_updates)(state["params"], upd)
        out = {"loss": jnp.mean(loss)}
        for h in config.data.horizons:
            idx = [k for k, (hh, _) in enumerate(cps) if hh == h]
            out[f"loss_h{h}"] = jnp.mean(loss[jnp.asarray(idx)])
        return {"params": params, "opt_state": opt_state, "step": state["step"] + 1}, out

    def batch_fn(step, rows):
        xs, ys = [], []
        for k, (h, s) in enumerate(cps):
            rng = np.random.default_rng([config.train.seed, s, k, step])
            t = rng.choice(train_t[h], size=bs, replace=len(train_t[h]) < bs)
            xs.append(data_lib.windows(prep.scaled, t, w, h))
            ys.append(prep.scaled[t])
        x = np.stack(xs, 1).astype(np.float32)                   # [B, copies, W, N]
        y = np.stack(ys, 1).astype(np.float32)
        return {"x": x[rows], "y": y[rows]}

    return train_loop.Task(init_state, train_step, batch_fn, bs)


def predict(forecaster, params, prep: data_lib.Prepared, config) -> tuple[np.ndarray, int]:
    """Scaled forecasts [copies, E, N] for the windows ending at rows first..T-1 (E of them),
    and `first`; copies share the window, each uses its own params."""
    w, chunk = config.data.window, config.eval.chunk
    first = max(w - 1, prep.train_end - max(config.data.horizons))
    ends = np.arange(first, prep.series.shape[0])
    idx = ends[:, None] + np.arange(-w + 1, 1)[None, :]
    xs = prep.scaled[idx].astype(np.float32)
    n_copies = len(copies(config))
    one = jax.vmap(forecaster.apply, (None, 0))
    if jax.tree.leaves(params):
        fn = jax.jit(jax.vmap(one, (0, None)))
    else:  # no parameters (persistence): every copy gives the same forecast
        fn = jax.jit(lambda p, x: jnp.broadcast_to(one(p, x), (n_copies, *x.shape[::2])))
    out = []
    for a in range(0, len(xs), chunk):
        part = xs[a:a + chunk]
        pad = chunk - len(part)
        part = np.concatenate([part, np.repeat(part[-1:], pad, 0)]) if pad else part
        out.append(np.asarray(fn(params, part))[:, :chunk - pad])
    return np.concatenate(out, 1), first


def evaluate(forecaster, params, prep, config) -> tuple[dict, dict]:
    """Metrics per split, horizon and seed on de-normalised values, and the test forecasts."""
    preds, first = predict(forecaster, params, prep, config)
    w = config.data.window
    train_mean = prep.series[:prep.train_end].mean(0)
    res, forecasts = {}, {}
    for k, (h, s) in enumerate(copies(config)):
        for split in ("val", "test"):
            t = prep.targets(split, w, h)
            p = prep.unscale(preds[k, t - h - first])
            m = metrics_lib.all_metrics(prep.series[t], p, train_mean)
            res.setdefault(split, {}).setdefault(str(h), []).append(m)
            if split == "test" and s == 0:
                forecasts[h] = (t, p)
    out = {}
    for split, by_h in res.items():
        out[split] = {}
        for h, runs in by_h.items():
            mean = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
            mean["rmse_seeds"] = [r["rmse"] for r in runs]
            out[split][h] = mean
    return out, forecasts


def run_one(name: str, forecaster, prep, config, workdir: str, mesh) -> tuple[dict, dict, float]:
    """Train (or resume) one (dataset, model) in its own sub-workdir and evaluate it."""
    t0 = time.time()
    if getattr(forecaster, "trainable", True):
        os.makedirs(workdir, exist_ok=True)
        task = make_task(forecaster, prep, config)
        result = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                                  workdir=workdir, mesh=mesh)
        params = jax.device_get(result.state["params"])
    else:
        params = {}
    res, fc = evaluate(forecaster, params, prep, config)
    return res, fc, time.time() - t0


# ----------------------------------------------------------------------------- report


def forecast_plot(path: str, prep, dataset: str, h: int, forecasts: dict) -> None:
    """One panel per region: test truth vs each model's h-step forecast."""
    import matplotlib.pyplot as plt

    n = prep.series.shape[1]
    cols = min(n, 7)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols, 1.8 * rows), squeeze=False)
    any_model = next(iter(forecasts.values()))
    t = any_model[h][0]
    for v in range(rows * cols):
        ax = axes[v // cols, v % cols]
        if v >= n:
            ax.axis("off")
            continue
        ax.plot(t, prep.series[t, v], "k-", lw=1.2, label="truth")
        for model, fc in forecasts.items():
            ax.plot(fc[h][0], fc[h][1][:, v], lw=0.9, label=model,
                    ls="-" if model == "earth" else "--")
        ax.set_title(f"region {v}", fontsize=7)
        ax.tick_params(labelsize=5)
    axes[0, 0].legend(fontsize=5)
    fig.suptitle(f"{dataset}: test-period forecasts at horizon {h}", fontsize=9)
    fig.tight_layout()
    plotting.save(fig, path)


def targets_check(results: dict, config) -> dict:
    """Issue targets: EARTH beats every baseline in test RMSE at every horizon (per dataset);
    each ablation costs accuracy (higher RMSE than EARTH) at every horizon."""
    out = {}
    for ds, models in results.items():
        if "earth" not in models:
            continue
        e = models["earth"]["test"]
        rows = {}
        for other, r in models.items():
            if other == "earth":
                continue
            margins = {h: r["test"][h]["rmse"] - e[h]["rmse"] for h in e}
            rows[other] = {"margins": margins, "earth_better_all": all(m > 0 for m in margins.values())}
        base = [m for m in rows if m in baselines.BASELINES]
        abl = [m for m in rows if m in model_lib.VARIANTS]
        out[ds] = {"vs": rows,
                   "beats_all_baselines": all(rows[m]["earth_better_all"] for m in base) if base else None,
                   "every_ablation_costs": all(rows[m]["earth_better_all"] for m in abl) if abl else None}
    return out


def results_markdown(results: dict, config) -> str:
    lines = ["| dataset | model | " + " | ".join(f"RMSE h={h}" for h in config.data.horizons)
             + " | " + " | ".join(f"MAE h={h}" for h in config.data.horizons)
             + " | " + " | ".join(f"PCC h={h}" for h in config.data.horizons)
             + " | " + " | ".join(f"peak-MAE h={h}" for h in config.data.horizons) + " |"]
    k = len(config.data.horizons)
    lines.append("|" + "---|" * (2 + 4 * k))
    for ds, models in results.items():
        best = {str(h): min(r["test"][str(h)]["rmse"] for r in models.values())
                for h in config.data.horizons}
        for name, r in models.items():
            cells = []
            for key in ("rmse", "mae", "pcc", "peak_mae"):
                for h in config.data.horizons:
                    v = r["test"][str(h)][key]
                    c = report.cell(v, 3 if key == "pcc" else 4)
                    cells.append(f"**{c}**" if key == "rmse" and v == best[str(h)] else c)
            lines.append(f"| {ds} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- entry point


def train_and_evaluate(config, workdir: str):
    validate(config)
    check_files(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    results, timing, info, saved = {}, {}, {}, {}
    t_start = time.time()
    for ds in config.datasets:
        series, adj = load_dataset(ds, config)
        prep = data_lib.prepare(series, adj, train_frac=config.data.train_frac,
                                val_frac=config.data.val_frac, window=config.data.window,
                                horizons=config.data.horizons,
                                negative=config.data.negative_counts)
        info[ds] = dict(steps=int(series.shape[0]), regions=int(series.shape[1]),
                        train_end=prep.train_end, val_end=prep.val_end)
        results[ds], timing[ds], fcs = {}, {}, {}
        for name in config.models:
            if name in model_lib.VARIANTS[1:] and ds not in config.ablation_datasets:
                continue
            guards.check_preempted(f"{ds}/{name}")
            forecaster = build_model(name, config, prep)
            res, fc, secs = run_one(name, forecaster, prep, config,
                                    os.path.join(workdir, "runs", ds, name), mesh)
            results[ds][name], timing[ds][name], fcs[name] = res, secs, fc
            logging.info("%s / %s: test RMSE %s (%.0f s)", ds, name,
                         {h: round(v["rmse"], 3) for h, v in res["test"].items()}, secs)
            for h, (t, p) in fc.items():
                saved[f"{ds}/{name}/h{h}"] = p
                saved[f"{ds}/targets/h{h}"] = t
        saved[f"{ds}/series"] = series
        if primary and config.eval.plots:
            for h in config.data.horizons:
                forecast_plot(os.path.join(workdir, wd.PLOTS, f"forecast_{ds}_h{h}.png"), prep, ds,
                              h, fcs)
        done = len(results) == len(config.datasets)
        out = {"tag": config.tag, "machine": report.machine(), "wall_s": time.time() - t_start,
               "complete": done, "datasets": info, "results": results,
               "train_eval_seconds": timing, "targets": targets_check(results, config),
               "horizons": list(config.data.horizons), "num_seeds": config.num_seeds,
               "num_steps": config.train.num_steps}
        guards.check_preempted("writing results.json")
        if primary:  # written after every dataset, so an interrupted run still has a table
            tmp = os.path.join(workdir, ".tmp_predictions.npz")   # never half-written
            np.savez_compressed(tmp, **saved)
            os.replace(tmp, os.path.join(workdir, "predictions.npz"))
            wd.write_text_atomic(os.path.join(workdir, "results.md"), results_markdown(results, config))
            wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), out)
    return out
