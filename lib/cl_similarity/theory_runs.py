"""The theory part: free embeddings optimised by Adam against the closed forms.

    run(config) -> (results, siglip_run)
      full_batch:    every (loss, negatives) of FULL_BATCH -> final mean positive / negative
                     cosines p, q vs the optimum (Thm 5.1, 5.3, spectral)
      siglip_sweep:  SigLIP over `theory.siglip_biases`, cross-view negatives (vs p*, q*,
                     the excessive-separation condition, Eq. 10) and with within-view
                     negatives (vs the simplex ETF)
      minibatch:     fixed mini-batches m, without and with VRNS (Thm 5.5 variance bounds)
    Thm 5.2 (p ≤ 1 + q + 1/(n−1)) is checked at every recorded iterate of every run.
`siglip_run` (the SigLIP cross-view FreeRun) feeds `plots.theory_plots`.
"""
from __future__ import annotations

import jax
import numpy as np

from lib.cl_similarity import losses, theory
from lib.cl_similarity import free_embeddings as free

FULL_BATCH = (("infonce", "cross"), ("simclr", "both"), ("dcl", "both"), ("dhel", "within"),
              ("siglip", "cross"), ("siglip", "both"), ("spectral", "cross"))


def _free_run(config, objective, key_index: int):
    t = config.theory
    params = free.init_embeddings(jax.random.key(config.seed * 1000 + key_index), t.n, t.d)
    return free.optimise(objective, params, steps=t.steps, lr=t.lr, record_every=t.record_every)


def _trajectory_violation(run, n: int) -> float:
    """max over the recorded iterates of p − (1 + q + 1/(n−1)) (Thm 5.2; ≤ 0 if it holds)."""
    p, q = np.asarray(run.trace_pos), np.asarray(run.trace_neg)
    return float(np.max(p - theory.paper_alignment_bound(q, n)))


def _full_batch(config, violations: list) -> tuple[dict, object]:
    t = config.theory
    kw = dict(siglip_t=t.siglip_t, siglip_b=t.siglip_b)
    full, siglip_run = {}, None
    for i, (name, neg) in enumerate(FULL_BATCH):
        loss = losses.make_loss(name, temperature=t.temperature, negatives=neg, **kw)
        run = _free_run(config, free.full_batch_objective(loss), i)
        opt = theory.optimum(name, neg, t.n, t.d, **kw)
        p, q = float(run.final.pos_mean), float(run.final.neg_mean)
        violations.append(_trajectory_violation(run, t.n))
        full[f"{name}/{neg}"] = {"pos": p, "neg": q, "pos_theory": opt.pos, "neg_theory": opt.neg,
                                 "err": max(abs(p - opt.pos), abs(q - opt.neg)),
                                 "within_mean": float(run.final.within_mean),
                                 "thm52_max_violation": violations[-1]}
        if name == "siglip" and neg == "cross":
            siglip_run = run
    return full, siglip_run


def _siglip_sweep(config, violations: list) -> tuple[dict, float]:
    """The bias sweep and its largest deviation from the closed forms."""
    t = config.theory
    sweep = {"biases": list(t.siglip_biases), "pos": [], "neg": [], "pos_theory": [],
             "neg_theory": [], "excessive": [], "pos_within": [], "neg_within": []}
    for j, b in enumerate(t.siglip_biases):
        for neg in ("cross", "both"):
            loss = losses.make_loss("siglip", negatives=neg, siglip_t=t.siglip_t, siglip_b=b)
            run = _free_run(config, free.full_batch_objective(loss), 100 + 2 * j)
            violations.append(_trajectory_violation(run, t.n))
            if neg == "cross":
                opt = theory.optimum("siglip", "cross", t.n, t.d, siglip_t=t.siglip_t, siglip_b=b)
                sweep["pos"].append(float(run.final.pos_mean))
                sweep["neg"].append(float(run.final.neg_mean))
                sweep["pos_theory"].append(opt.pos)
                sweep["neg_theory"].append(opt.neg)
                sweep["excessive"].append(theory.siglip_excessive(t.siglip_t, b, t.n))
            else:
                sweep["pos_within"].append(float(run.final.pos_mean))
                sweep["neg_within"].append(float(run.final.neg_mean))
    etf = theory.etf(t.n)
    err = max(max(abs(a - b) for a, b in zip(sweep["pos"], sweep["pos_theory"])),
              max(abs(a - b) for a, b in zip(sweep["neg"], sweep["neg_theory"])),
              max(abs(a - etf.pos) for a in sweep["pos_within"]),
              max(abs(a - etf.neg) for a in sweep["neg_within"]))
    return sweep, err


def _minibatch(config) -> dict:
    t = config.theory
    mini = {"batch_sizes": list(t.batch_sizes), "var": [], "var_vrns": [], "neg_mean": [],
            "neg_mean_vrns": [], "lower": [], "upper": [], "in_bounds": []}
    loss = losses.make_loss(t.minibatch_loss, temperature=t.temperature,
                            siglip_t=t.siglip_t, siglip_b=t.siglip_b)
    for j, m in enumerate(t.batch_sizes):
        lo, hi = theory.minibatch_variance_bounds(t.n, m)
        plain = _free_run(config, free.fixed_minibatch_objective(loss, m), 200 + j)
        aux = _free_run(config, free.fixed_minibatch_objective(loss, m, t.vrns_weight), 200 + j)
        var = float(plain.final.neg_var)
        mini["var"].append(var)
        mini["var_vrns"].append(float(aux.final.neg_var))
        mini["neg_mean"].append(float(plain.final.neg_mean))
        mini["neg_mean_vrns"].append(float(aux.final.neg_mean))
        mini["lower"].append(lo)
        mini["upper"].append(hi)
        mini["in_bounds"].append(bool(lo - t.tolerance ** 2 <= var <= hi + t.tolerance ** 2))
    return mini


def run(config) -> tuple[dict, object]:
    """The theory results (see the module docstring) and the SigLIP cross-view run."""
    t = config.theory
    violations: list[float] = []
    full, siglip_run = _full_batch(config, violations)
    sweep, sweep_err = _siglip_sweep(config, violations)
    mini = _minibatch(config)
    out = {"n": t.n, "d": t.d, "steps": t.steps, "full_batch": full, "siglip_sweep": sweep,
           "minibatch": mini, "max_err_full_batch": max(v["err"] for v in full.values()),
           "max_err_siglip_sweep": sweep_err, "thm52_max_violation": max(violations),
           "threshold": -1.0 / (t.n - 1)}
    return out, siglip_run
