"""Figures of the cl_similarity run: the theory part and the SimCLR ± VRNS sweep."""
from __future__ import annotations

import os

import numpy as np

from lib.cl_similarity import theory
from lib.toolbox import plotting


def theory_plots(plot_dir: str, out: dict, siglip_run, t) -> None:
    """theory_siglip_threshold.png, theory_alignment_bound.png, theory_minibatch_variance.png."""
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


def ssl_plots(plot_dir: str, name: str, rows: list, config) -> None:
    """ssl_<name>_variance.png and ssl_<name>_accuracy.png against the batch size."""
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
