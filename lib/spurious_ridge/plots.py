"""Figures of the spurious-ridge parts (theory curves against simulated points ± 2 s.e.)."""
from __future__ import annotations

import os

import numpy as np

from lib.toolbox import plotting
from lib.spurious_ridge import theory


def gaussian_setting(plot_dir: str, name: str, g, out: dict, lams, dense, de_dense) -> None:
    """gaussian_<name>_C.png and gaussian_<name>_L.png: theory curves, simulated points."""
    t = out["tradeoff_theory"]
    marks = {"λ_L* (theory)": t["lambda_loss_opt"], "max C (theory)": t["lambda_spurious_peak"]}
    title = f"{name}: {out['description']}, d = {g.d}"
    for key, curve, ylabel in (("C", de_dense.spurious, "spurious correlation C"),
                               ("L", de_dense.loss, "test loss L")):
        plotting.curves_and_points(
            os.path.join(plot_dir, f"gaussian_{name}_{key}.png"),
            curves={f"{key}^Σ(λ) (deterministic equivalent)": (dense, curve)},
            points={f"ridge, mean ± 2 s.e. ({g.num_seeds} sets)":
                        (lams, out[f"{key}_sim"], 2 * out[f"{key}_sim_se"]),
                    "ridge, label-noise averaged":
                        (lams, out[f"{key}_cond"], 2 * out[f"{key}_cond_se"])},
            xlabel="λ", ylabel=ylabel, title=title, vlines=marks)


def rf(plot_dir: str, r, design, out: dict, lam_tilde, k: int, j_grid, j_sweep, c, c_se, l,
       l_se) -> None:
    """rf_equivalence_{C,L}.png (RF against linear ridge at λ̃) and rf_width_sweep.png."""
    widths, sweep = out["widths"], out["width_sweep"]
    lt_dense = np.logspace(np.log10(lam_tilde.min()) - 0.3, np.log10(lam_tilde.max()) + 0.3, 120)
    curve = theory.deterministic_equivalents(design.sigma, design.d_x, design.theta_x,
                                             design.noise, design.n, lt_dense)
    for key, ylabel, mean, se, th in (("C", "spurious correlation C", c, c_se, curve.spurious),
                                      ("L", "test loss L", l, l_se, curve.loss)):
        plotting.curves_and_points(
            os.path.join(plot_dir, f"rf_equivalence_{key}.png"),
            curves={"linear ridge, deterministic equivalent at λ̃": (lt_dense, th)},
            points={f"RF p = {r.equiv_width}, λ grid (± 2 s.e.)":
                        (lam_tilde[k, j_grid], mean[k, j_grid], 2 * se[k, j_grid]),
                    f"RF at λ = {r.width_sweep_lambda:g}, p = {widths[0]}..{widths[-1]}":
                        (lam_tilde[:, j_sweep], mean[:, j_sweep], 2 * se[:, j_sweep])},
            xlabel="equivalent linear penalty λ̃", ylabel=ylabel,
            title=f"random features ({r.activation}) vs linear ridge, n = {design.n}")
    ratio = np.asarray(widths) / design.n
    plotting.curves_and_points(
        os.path.join(plot_dir, "rf_width_sweep.png"),
        curves={"C^Σ(λ̃(p))": (ratio, sweep["C_theory"]), "L^Σ(λ̃(p))": (ratio, sweep["L_theory"])},
        points={"C (RF, label-noise averaged) ± 2 s.e.": (ratio, sweep["C_rf"],
                                                          2 * sweep["C_rf_se"]),
                "L (RF) ± 2 s.e.": (ratio, sweep["L_rf"], 2 * sweep["L_rf_se"])},
        xlabel="p / n", ylabel="C and L", logy=True,
        title=f"over-parameterisation: RF at λ = {r.width_sweep_lambda:g}, n = {design.n}",
        vlines={"p = n": 1.0})


def digits(plot_dir: str, dg, out: dict, n_train: int, dense, de_dense) -> None:
    """digits_C.png, digits_L.png (ridge vs the moment theory) and digits_rf_width.png."""
    lams, c, c_se, l, l_se = out["lambdas"], out["C"], out["C_se"], out["L"], out["L_se"]
    rc, rc_se, rl, rl_se = out["rf_C"], out["rf_C_se"], out["rf_L"], out["rf_L_se"]
    t = out["tradeoff_sim"]
    title = f"coloured digits ({dg.colour}, ρ = {dg.rho}), n = {n_train}"
    marks = {"λ_L* (held-out)": t["lambda_loss_opt"], "max Ĉ": t["lambda_spurious_peak"]}
    plotting.curves_and_points(
        os.path.join(plot_dir, "digits_C.png"),
        curves={"C^Σ from the moments (Gaussian theory)": (dense, de_dense.spurious)},
        points={f"ridge Ĉ ± 2 s.e. ({dg.num_seeds} splits)": (lams, c, 2 * c_se)},
        xlabel="λ", ylabel="spurious correlation C", title=title, vlines=marks)
    plotting.curves_and_points(
        os.path.join(plot_dir, "digits_L.png"),
        curves={"L^Σ from the moments (Gaussian theory)": (dense, de_dense.loss)},
        points={f"ridge L̂ ± 2 s.e. ({dg.num_seeds} splits)": (lams, l, 2 * l_se)},
        xlabel="λ", ylabel="test loss L", title=title, vlines=marks)
    plotting.curves_and_points(
        os.path.join(plot_dir, "digits_rf_width.png"), curves={},
        points={"Ĉ (RF) ± 2 s.e.": (list(dg.widths), rc, 2 * rc_se),
                "L̂ (RF) ± 2 s.e.": (list(dg.widths), rl, 2 * rl_se)},
        xlabel="width p", ylabel="C and L", title=f"{title}: RF at λ = {dg.rf_lambda:g}",
        vlines={"p = n": float(n_train)})
