"""Similarities of embeddings in contrastive learning: theory with free embeddings, then SimCLR.

`train_and_evaluate(config, workdir)` is the whole experiment (importable from tests);
`main.py` only parses flags. Data flow:

    config -> validate -> for each part in config.parts:
      theory: free embeddings (n, d) optimised by Adam
              full batch, every loss with its default negatives (+ SigLIP with within-view
              negatives) -> mean positive / negative cosines vs the closed forms (Thm 5.1,
              5.3, spectral); SigLIP over a bias sweep (the excessive-separation threshold);
              Thm 5.2 along every trajectory; fixed mini-batches m (Thm 5.5 variance bounds)
              without and with VRNS -> plots
      ssl:    for each data set × batch size × VRNS off/on: a SimCLR run on the harness
              (lib.common.train_loop: checkpoints, resume) in <workdir>/runs/<name>/, then
              the linear probe and the similarity statistics -> <workdir>/runs/<name>/run.json
    -> workdir: config.json, results.json, results.md (tables), plots/*.png

Rerunning resumes: finished SSL runs (run.json present) are read back, an interrupted one
continues from its checkpoint; the theory part (about a minute) is recomputed.
"""
from __future__ import annotations

import json
import os
import time

import jax
import numpy as np
from absl import logging

from lib.cl_similarity import augment, config_schema, losses, report, ssl, theory
from lib.cl_similarity import free_embeddings as free
from lib.cl_similarity.encoder import SimCLRNet
from lib.common import config as config_lib
from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import plotting, train_loop
from lib.common import report as common_report
from lib.common import workdir as wd

validate = config_schema.validate

FULL_BATCH = (("infonce", "cross"), ("simclr", "both"), ("dcl", "both"), ("dhel", "within"),
              ("siglip", "cross"), ("siglip", "both"), ("spectral", "cross"))


# ----------------------------------------------------------------------------- theory


def _free_run(config, loss, objective, key_index: int):
    t = config.theory
    params = free.init_embeddings(jax.random.key(config.seed * 1000 + key_index), t.n, t.d)
    return free.optimise(objective, params, steps=t.steps, lr=t.lr, record_every=t.record_every)


def _trajectory_violation(run, n: int) -> float:
    """max over the recorded iterates of p − (1 + q + 1/(n−1)) (Thm 5.2; ≤ 0 if it holds)."""
    p, q = np.asarray(run.trace_pos), np.asarray(run.trace_neg)
    return float(np.max(p - theory.paper_alignment_bound(q, n)))


def run_theory(config, plot_dir: str | None) -> dict:
    t = config.theory
    n, d = t.n, t.d
    kw = dict(siglip_t=t.siglip_t, siglip_b=t.siglip_b)
    full = {}
    violations = []
    for i, (name, neg) in enumerate(FULL_BATCH):
        loss = losses.make_loss(name, temperature=t.temperature, negatives=neg, **kw)
        run = _free_run(config, loss, free.full_batch_objective(loss), i)
        opt = theory.optimum(name, neg, n, d, **kw)
        p, q = float(run.final.pos_mean), float(run.final.neg_mean)
        violations.append(_trajectory_violation(run, n))
        full[f"{name}/{neg}"] = {"pos": p, "neg": q, "pos_theory": opt.pos, "neg_theory": opt.neg,
                                 "err": max(abs(p - opt.pos), abs(q - opt.neg)),
                                 "within_mean": float(run.final.within_mean),
                                 "thm52_max_violation": violations[-1]}
        if name == "siglip" and neg == "cross":
            siglip_run = run
    sweep = {"biases": list(t.siglip_biases), "pos": [], "neg": [], "pos_theory": [],
             "neg_theory": [], "excessive": [], "pos_within": [], "neg_within": []}
    for j, b in enumerate(t.siglip_biases):
        for neg in ("cross", "both"):
            loss = losses.make_loss("siglip", negatives=neg, siglip_t=t.siglip_t, siglip_b=b)
            run = _free_run(config, loss, free.full_batch_objective(loss), 100 + 2 * j)
            violations.append(_trajectory_violation(run, n))
            if neg == "cross":
                opt = theory.optimum("siglip", "cross", n, d, siglip_t=t.siglip_t, siglip_b=b)
                sweep["pos"].append(float(run.final.pos_mean))
                sweep["neg"].append(float(run.final.neg_mean))
                sweep["pos_theory"].append(opt.pos)
                sweep["neg_theory"].append(opt.neg)
                sweep["excessive"].append(theory.siglip_excessive(t.siglip_t, b, n))
            else:
                sweep["pos_within"].append(float(run.final.pos_mean))
                sweep["neg_within"].append(float(run.final.neg_mean))
    etf = theory.etf(n)
    sweep_err = max(max(abs(a - b) for a, b in zip(sweep["pos"], sweep["pos_theory"])),
                    max(abs(a - b) for a, b in zip(sweep["neg"], sweep["neg_theory"])),
                    max(abs(a - etf.pos) for a in sweep["pos_within"]),
                    max(abs(a - etf.neg) for a in sweep["neg_within"]))
    mini = {"batch_sizes": list(t.batch_sizes), "var": [], "var_vrns": [], "neg_mean": [],
            "neg_mean_vrns": [], "lower": [], "upper": [], "in_bounds": []}
    loss = losses.make_loss(t.minibatch_loss, temperature=t.temperature, **kw)
    for j, m in enumerate(t.batch_sizes):
        lo, hi = theory.minibatch_variance_bounds(n, m)
        plain = _free_run(config, loss, free.fixed_minibatch_objective(loss, m), 200 + j)
        aux = _free_run(config, loss, free.fixed_minibatch_objective(loss, m, t.vrns_weight),
                        200 + j)
        var = float(plain.final.neg_var)
        mini["var"].append(var)
        mini["var_vrns"].append(float(aux.final.neg_var))
        mini["neg_mean"].append(float(plain.final.neg_mean))
        mini["neg_mean_vrns"].append(float(aux.final.neg_mean))
        mini["lower"].append(lo)
        mini["upper"].append(hi)
        mini["in_bounds"].append(bool(lo - t.tolerance ** 2 <= var <= hi + t.tolerance ** 2))
    out = {"n": n, "d": d, "steps": t.steps, "full_batch": full, "siglip_sweep": sweep,
           "minibatch": mini, "max_err_full_batch": max(v["err"] for v in full.values()),
           "max_err_siglip_sweep": sweep_err, "thm52_max_violation": max(violations),
           "threshold": -1.0 / (n - 1)}
    if plot_dir:
        _theory_plots(plot_dir, out, siglip_run, t)
    return out


def _theory_plots(plot_dir: str, out: dict, siglip_run, t) -> None:
    n = out["n"]
    s = out["siglip_sweep"]
    dense = np.linspace(min(s["biases"]), max(s["biases"]), 200)
    opt = [theory.optimum("siglip", "cross", n, out["d"], siglip_t=t.siglip_t, siglip_b=b)
           for b in dense]
    zeros = np.zeros(len(s["biases"]))
    plotting.curves_and_points(
        os.path.join(plot_dir, "theory_siglip_threshold.png"),
        curves={"p* closed form (cross-view only)": (dense, [o.pos for o in opt]),
                "q* closed form (cross-view only)": (dense, [o.neg for o in opt]),
                "−1/(n−1) (ETF)": (dense, np.full(dense.shape, -1 / (n - 1)))},
        points={"p free embeddings (cross)": (s["biases"], s["pos"], zeros),
                "q free embeddings (cross)": (s["biases"], s["neg"], zeros),
                "p free embeddings (+ within-view)": (s["biases"], s["pos_within"], zeros),
                "q free embeddings (+ within-view)": (s["biases"], s["neg_within"], zeros)},
        xlabel="SigLIP bias b", ylabel="mean cosine", logx=False,
        title=f"SigLIP (t = {t.siglip_t:g}), n = {n}: excessive separation and its remedy")
    q = np.asarray(siglip_run.trace_neg)
    grid = np.linspace(-1.0, 0.2, 100)
    plotting.line_plot(
        os.path.join(plot_dir, "theory_alignment_bound.png"),
        {"free-embedding trajectory (SigLIP, cross)": (q, np.asarray(siglip_run.trace_pos)),
         "Thm 5.2: p ≤ 1 + q + 1/(n−1)": (grid, np.minimum(1.0, theory.paper_alignment_bound(grid, n)))},
        xlabel="mean negative cosine q", ylabel="mean positive cosine p",
        title=f"Thm 5.2 along the optimisation, n = {n}")
    mb = out["minibatch"]
    zeros = np.zeros(len(mb["batch_sizes"]))
    plotting.curves_and_points(
        os.path.join(plot_dir, "theory_minibatch_variance.png"),
        curves={"Thm 5.5 lower bound": (mb["batch_sizes"], mb["lower"]),
                "Thm 5.5 upper bound": (mb["batch_sizes"], mb["upper"])},
        points={"free embeddings": (mb["batch_sizes"], mb["var"], zeros),
                f"free embeddings + VRNS (λ = {t.vrns_weight:g})": (mb["batch_sizes"],
                                                                     mb["var_vrns"], zeros)},
        xlabel="mini-batch size m", ylabel="Var[s_neg] over all pairs", logy=True,
        title=f"fixed mini-batches, n = {n}")


# ----------------------------------------------------------------------------- ssl


def run_spec(config, name: str, batch: int, aux: bool) -> ssl.RunSpec:
    s, a, m = config.ssl, config.augment, config.model
    return ssl.RunSpec(
        batch_size=batch, epochs=s.epochs,
        loss=losses.make_loss(s.loss, temperature=s.temperature),
        aux_weight=s.aux_weight if aux else 0.0, optimizer=s.optimizer, base_lr=s.lr,
        lr_scaling=s.lr_scaling, weight_decay=s.weight_decay, warmup_epochs=s.warmup_epochs,
        augment=augment.AugmentConfig(a.min_scale, config[name].flip_prob, a.jitter_prob,
                                      a.brightness, a.contrast, a.noise_std),
        net=SimCLRNet(tuple(m.stage_widths), m.blocks_per_stage, m.head_hidden, m.proj_dim),
        seed=config.seed)


def load_dataset(config, name: str) -> ssl.SSLData:
    block = config[name]
    return ssl.load_data(name, test_fraction=config.ssl.test_fraction, seed=config.seed,
                         num_images=block.num_images,
                         downsample=block.downsample if name == "fashion_mnist" else 1,
                         path=block.path if name == "fashion_mnist" else None)


def run_one(config, data: ssl.SSLData, batch: int, aux: bool, run_dir: str, mesh) -> dict:
    """One SimCLR run (resumable); returns and writes its run.json."""
    path = os.path.join(run_dir, "run.json")
    if os.path.exists(path):
        return wd.read_json(path)
    spec = run_spec(config, data.name, batch, aux)
    wd.prepare(run_dir, {"dataset": data.name, "batch_size": batch, "aux": aux,
                         "parent": config_lib.to_json_dict(config)},
               primary=mesh_lib.is_primary())
    t0 = time.perf_counter()
    task, num_steps = ssl.make_task(data.train_x, spec, mesh)
    tr = config.train
    loop = train_loop.LoopConfig(num_steps=num_steps, log_every=tr.log_every,
                                 checkpoint_every=tr.checkpoint_every,
                                 keep_checkpoints=tr.keep_checkpoints, seed=config.seed)
    result = train_loop.train(task, loop, workdir=run_dir, mesh=mesh)   # Preempted on SIGTERM
    train_s = time.perf_counter() - t0
    out = ssl.evaluate(result.state["params"], spec, data, probe_steps=config.probe.steps,
                       probe_lr=config.probe.lr, probe_wd=config.probe.weight_decay,
                       max_pairs=config.eval.max_pairs, eval_seed=config.seed + 7)
    last = _last_metrics(run_dir)
    guards.check_preempted(f"writing {path}")
    out.update(dataset=data.name, batch_size=batch, aux=aux, aux_weight=spec.aux_weight,
               steps=num_steps, peak_lr=ssl.peak_lr(spec), train_s=train_s,
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
    out = {}
    for name in config.ssl.datasets:
        data = load_dataset(config, name)
        rows = []
        for batch in config.ssl.batch_sizes:
            for aux in (False, True):
                run_dir = os.path.join(workdir, "runs", f"{name}_b{batch}_{'vrns' if aux else 'base'}")
                guards.check_preempted(f"run {run_dir}")
                r = run_one(config, data, batch, aux, run_dir, mesh)
                logging.info("%s B=%d aux=%s: probe %.4f, Var[s_neg] %.4f (%.0f s)", name, batch,
                             aux, r["probe_test_acc"], r["neg_var"], r["train_s"] + r["eval_s"])
                rows.append(r)
        out[name] = {"num_train": int(data.train_x.shape[0]), "num_test": int(data.test_x.shape[0]),
                     "image_shape": list(data.train_x.shape[1:]), "runs": rows}
        if plot_dir:
            _ssl_plots(plot_dir, name, rows, config)
    return out


def _ssl_plots(plot_dir: str, name: str, rows: list, config) -> None:
    for key, ylabel, fname in (("neg_var", "Var[s_neg] (test views)", "variance"),
                               ("probe_test_acc", "linear-probe accuracy (test)", "accuracy")):
        pts = {}
        vrns_label = f"{config.ssl.loss} + VRNS (λ = {config.ssl.aux_weight:g})"
        for aux, label in ((False, config.ssl.loss), (True, vrns_label)):
            sel = [r for r in rows if r["aux"] == aux]
            pts[label] = ([r["batch_size"] for r in sel], [r[key] for r in sel],
                          np.zeros(len(sel)))
        plotting.curves_and_points(os.path.join(plot_dir, f"ssl_{name}_{fname}.png"), curves={},
                                   points=pts, xlabel="batch size", ylabel=ylabel,
                                   title=f"{name}: {config.ssl.epochs} epochs")


# ----------------------------------------------------------------------------- entry point


def targets(results: dict, config) -> dict:
    """The issue's targets, met or missed, from the parts that ran."""
    out = {}
    if "theory" in results:
        th = results["theory"]
        tol = config.theory.tolerance
        out["free_embeddings_match_closed_form"] = bool(
            th["max_err_full_batch"] <= tol and th["max_err_siglip_sweep"] <= tol)
        out["thm52_holds_on_trajectories"] = bool(th["thm52_max_violation"] <= 1e-6)
        out["minibatch_variance_in_thm55_bounds"] = all(th["minibatch"]["in_bounds"])
        out["minibatch_vrns_lowers_variance"] = all(
            a < b for a, b in zip(th["minibatch"]["var_vrns"], th["minibatch"]["var"]))
    if "ssl" in results:
        for name, block in results["ssl"].items():
            base = {r["batch_size"]: r for r in block["runs"] if not r["aux"]}
            aux = {r["batch_size"]: r for r in block["runs"] if r["aux"]}
            out[f"{name}_variance_drops_every_batch"] = all(
                aux[b]["neg_var"] < base[b]["neg_var"] for b in base)
            small = [b for b in base if b <= 64]
            out[f"{name}_probe_improves_batch_le_64"] = bool(small) and all(
                aux[b]["probe_test_acc"] > base[b]["probe_test_acc"] for b in small)
    return out


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
        results["theory"] = run_theory(config, plot_dir)
        results["theory"]["wall_s"] = time.perf_counter() - start
        logging.info("theory done in %.1f s", results["theory"]["wall_s"])
    if "ssl" in config.parts:
        start = time.perf_counter()
        results["ssl"] = run_ssl(config, workdir, plot_dir, mesh)
        results["ssl_wall_s"] = time.perf_counter() - start
    results["targets"] = targets(results, config)
    results["wall_s"] = time.perf_counter() - t0
    results["machine"] = common_report.machine()
    guards.check_preempted("writing results.json")
    if primary:
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results
