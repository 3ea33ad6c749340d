"""Spurious correlations in ridge regression: theory against simulation, end to end.

`train_and_evaluate(config, workdir)` is the whole experiment (importable from tests and
notebooks); `main.py` only parses flags. Nothing is trained by gradient descent: every
model is a closed-form ridge fit. Data flow:

    config -> validate -> for each part in config.parts:
      gaussian: design per setting -> deterministic equivalents C^Σ, L^Σ (λ grid and a
                dense grid) -> ridge on num_seeds training sets -> relative errors, the
                trade-off (λ_L* vs where C increases) -> plots
      rf:       random-features ridge over widths × λ -> exact C, Monte-Carlo L, the
                equivalent λ̃ and linear ridge at λ̃ -> plots
      digits:   coloured 8×8 digits -> held-out Ĉ, L̂ for ridge (λ grid) and RF (widths),
                C^Σ, L^Σ from the distribution's moments -> plots
    -> workdir: config.json, results.json, results.md (the tables), plots/*.png

Rerunning on the same workdir recomputes (a few minutes at most) and overwrites.
"""
from __future__ import annotations

import os
import time
import zlib

import numpy as np
from absl import logging

from lib.common import config as config_lib, plotting, report as common_report, workdir as wd
from lib.spurious_ridge import config_schema, data as data_lib, report, simulate, theory

validate = config_schema.validate


def _grid(block) -> np.ndarray:
    return np.logspace(np.log10(block.lambda_min), np.log10(block.lambda_max), block.num_lambdas)


def _seed(config, *names: str) -> int:
    return config.seed * 2 ** 32 + zlib.crc32(":".join(names).encode())


def _mean_se(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over axis 0."""
    return a.mean(axis=0), a.std(axis=0, ddof=1) / np.sqrt(a.shape[0])


def _rel(a, b) -> np.ndarray:
    return np.abs(np.asarray(a) - np.asarray(b)) / np.maximum(np.abs(np.asarray(b)), 1e-300)


# ----------------------------------------------------------------------------- gaussian


def run_setting(config, name: str, plot_dir: str | None) -> dict:
    """One Gaussian setting: theory on the grid and a dense grid, ridge simulations, checks."""
    g = config.gaussian
    design = data_lib.gaussian_design(data_lib.SETTINGS[name], g.d, g.noise,
                                      np.random.default_rng(_seed(config, "design", name)))
    lams = _grid(g)
    dense = np.logspace(np.log10(g.lambda_min), np.log10(g.lambda_max), g.theory_points)
    de = theory.deterministic_equivalents(design.sigma, design.d_x, design.theta_x, g.noise,
                                          design.n, lams)
    de_dense = theory.deterministic_equivalents(design.sigma, design.d_x, design.theta_x,
                                                g.noise, design.n, dense)
    sims = simulate.simulate_ridge(design, lams, g.num_seeds, _seed(config, "ridge", name))
    (c, c_se), (l, l_se) = _mean_se(sims.spurious), _mean_se(sims.loss)
    (cc, cc_se), (lc, lc_se) = _mean_se(sims.spurious_cond), _mean_se(sims.loss_cond)
    rel_c, rel_l = _rel(cc, de.spurious), _rel(lc, de.loss)
    out = {
        "description": data_lib.SETTINGS[name].description,
        "n": design.n, "d": g.d, "D": 2 * g.d, "num_seeds": g.num_seeds,
        "lambdas": lams, "tau": de.tau,
        "C_theory": de.spurious, "L_theory": de.loss,
        "C_sim": c, "C_sim_se": c_se, "L_sim": l, "L_sim_se": l_se,
        "C_cond": cc, "C_cond_se": cc_se, "L_cond": lc, "L_cond_se": lc_se,
        "rel_err_C_cond": rel_c, "rel_err_L_cond": rel_l,
        "max_rel_err_C_cond": float(rel_c.max()), "max_rel_err_L_cond": float(rel_l.max()),
        "max_rel_err_C": float(_rel(c, de.spurious).max()),
        "max_rel_err_L": float(_rel(l, de.loss).max()),
        "max_abs_z_C": float(np.max(np.abs(c - de.spurious) / c_se)),
        "max_abs_z_L": float(np.max(np.abs(l - de.loss) / l_se)),
        "target_applies": bool(g.d >= 500 and design.n >= 500),
        "target_met": bool(rel_c.max() <= g.target_rel_err and rel_l.max() <= g.target_rel_err),
        "tradeoff_theory": theory.trade_off(dense, de_dense.spurious, de_dense.loss)._asdict(),
        "tradeoff_sim": theory.trade_off(lams, cc, lc)._asdict(),
        "schur_trace_ratio": float(np.trace(theory.schur_complement(design.sigma, design.d_x))
                                   / np.trace(design.sigma[design.d_x:, design.d_x:])),
    }
    if plot_dir:
        t = out["tradeoff_theory"]
        marks = {"λ_L* (theory)": t["lambda_loss_opt"], "max C (theory)": t["lambda_spurious_peak"]}
        title = f"{name}: {out['description']}, d = {g.d}"
        plotting.curves_and_points(
            os.path.join(plot_dir, f"gaussian_{name}_C.png"),
            curves={"C^Σ(λ) (deterministic equivalent)": (dense, de_dense.spurious)},
            points={f"ridge, mean ± 2 s.e. ({g.num_seeds} sets)": (lams, c, 2 * c_se),
                    "ridge, label-noise averaged": (lams, cc, 2 * cc_se)},
            xlabel="λ", ylabel="spurious correlation C", title=title, vlines=marks)
        plotting.curves_and_points(
            os.path.join(plot_dir, f"gaussian_{name}_L.png"),
            curves={"L^Σ(λ) (deterministic equivalent)": (dense, de_dense.loss)},
            points={f"ridge, mean ± 2 s.e. ({g.num_seeds} sets)": (lams, l, 2 * l_se),
                    "ridge, label-noise averaged": (lams, lc, 2 * lc_se)},
            xlabel="λ", ylabel="test loss L", title=title, vlines=marks)
    return out


def run_gaussian(config, plot_dir: str | None) -> dict:
    settings = {}
    for name in config.gaussian.settings:
        t0 = time.perf_counter()
        settings[name] = run_setting(config, name, plot_dir)
        logging.info("gaussian %s: max rel. err. C %.3g, L %.3g (%.1f s)", name,
                     settings[name]["max_rel_err_C_cond"], settings[name]["max_rel_err_L_cond"],
                     time.perf_counter() - t0)
    return {"settings": settings}


# ----------------------------------------------------------------------------- random features


def run_rf(config, plot_dir: str | None) -> dict:
    """RF ridge widths × λ on one Gaussian setting; the equivalence and the width sweep."""
    r = config.rf
    design = data_lib.gaussian_design(data_lib.SETTINGS[r.setting], r.d, config.gaussian.noise,
                                      np.random.default_rng(_seed(config, "design", r.setting)))
    grid = _grid(r)
    lams = np.unique(np.append(grid, r.width_sweep_lambda))
    j_sweep = int(np.flatnonzero(lams == r.width_sweep_lambda)[0])
    j_grid = np.searchsorted(lams, grid)
    widths = list(r.widths)
    sims = simulate.simulate_random_features(design, widths, lams, r.activation, r.num_seeds,
                                             r.n_test, _seed(config, "rf", r.setting))
    (c, c_se), (l, l_se) = _mean_se(sims.spurious_cond), _mean_se(sims.loss)   # (W, L)
    c_plain, c_plain_se = _mean_se(sims.spurious)
    c_lin, l_lin = sims.spurious_linear.mean(axis=0), sims.loss_linear.mean(axis=0)
    lam_tilde = sims.lam_tilde.mean(axis=0)
    de = [theory.deterministic_equivalents(design.sigma, design.d_x, design.theta_x,
                                           design.noise, design.n, lt) for lt in lam_tilde]
    c_th = np.array([e.spurious for e in de])
    l_th = np.array([e.loss for e in de])
    k = widths.index(r.equiv_width)
    sweep = {"lam_tilde": lam_tilde[:, j_sweep], "C_rf": c[:, j_sweep], "C_rf_se": c_se[:, j_sweep],
             "C_rf_plain": c_plain[:, j_sweep], "C_rf_plain_se": c_plain_se[:, j_sweep],
             "C_linear": c_lin[:, j_sweep], "C_theory": c_th[:, j_sweep], "L_rf": l[:, j_sweep],
             "L_rf_se": l_se[:, j_sweep], "L_linear": l_lin[:, j_sweep],
             "L_theory": l_th[:, j_sweep]}
    equiv = {"width": r.equiv_width, "lambdas": grid, "lam_tilde": lam_tilde[k, j_grid],
             "C_rf": c[k, j_grid], "C_rf_se": c_se[k, j_grid], "C_linear": c_lin[k, j_grid],
             "C_theory": c_th[k, j_grid], "L_rf": l[k, j_grid], "L_rf_se": l_se[k, j_grid],
             "L_theory": l_th[k, j_grid],
             "max_rel_gap_C_linear": float(_rel(c[k, j_grid], c_lin[k, j_grid]).max()),
             "max_rel_gap_C_theory": float(_rel(c[k, j_grid], c_th[k, j_grid]).max()),
             "max_rel_gap_L_theory": float(_rel(l[k, j_grid], l_th[k, j_grid]).max())}
    out = {"setting": r.setting, "activation": r.activation, "n": design.n, "D": 2 * r.d,
           "num_seeds": r.num_seeds, "widths": widths, "width_sweep_lambda": r.width_sweep_lambda,
           "width_sweep": sweep, "equivalence": equiv,
           "max_rel_gap_C_theory_all": float(_rel(c, c_th).max())}
    if plot_dir:
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
    return out


# ----------------------------------------------------------------------------- digits


def run_digits(config, plot_dir: str | None) -> dict:
    """Coloured digits: held-out Ĉ and L̂ for ridge and RF; C^Σ, L^Σ from the moments."""
    dg = config.digits
    images, digits = data_lib.load_digits_images()
    lams = _grid(dg)
    kwargs = dict(rho=dg.rho, colour=dg.colour, tint=dg.tint, noise=dg.noise)
    sims = simulate.simulate_digits(
        images, digits, **kwargs, train_fraction=dg.train_fraction, lams=lams,
        widths=list(dg.widths), rf_lam=dg.rf_lambda, activation=dg.activation,
        num_seeds=dg.num_seeds, num_permutations=dg.num_permutations,
        seed=_seed(config, "digits"))
    sigma, cross, var_g = simulate.digits_moments(images, digits, **kwargs, draws=dg.moment_draws,
                                                  seed=_seed(config, "digits-moments"))
    de = theory.misspecified_equivalents(sigma, images.shape[1], cross, var_g, sims.n_train, lams)
    dense = np.logspace(np.log10(dg.lambda_min), np.log10(dg.lambda_max), 200)
    de_dense = theory.misspecified_equivalents(sigma, images.shape[1], cross, var_g,
                                               sims.n_train, dense)
    (c, c_se), (l, l_se) = _mean_se(sims.spurious), _mean_se(sims.loss)
    (rc, rc_se), (rl, rl_se) = _mean_se(sims.rf_spurious), _mean_se(sims.rf_loss)
    out = {"colour": dg.colour, "rho": dg.rho, "n_train": sims.n_train, "num_seeds": dg.num_seeds,
           "lambdas": lams, "C": c, "C_se": c_se, "L": l, "L_se": l_se,
           "C_theory": de.spurious, "L_theory": de.loss,
           "tradeoff_sim": theory.trade_off(lams, c, l)._asdict(),
           "tradeoff_theory": theory.trade_off(dense, de_dense.spurious, de_dense.loss)._asdict(),
           "rf_lambda": dg.rf_lambda, "widths": list(dg.widths),
           "rf_C": rc, "rf_C_se": rc_se, "rf_L": rl, "rf_L_se": rl_se}
    if plot_dir:
        t = out["tradeoff_sim"]
        title = f"coloured digits ({dg.colour}, ρ = {dg.rho}), n = {sims.n_train}"
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
            vlines={"p = n": float(sims.n_train)})
    return out


# ----------------------------------------------------------------------------- entry point


def targets(results: dict) -> dict:
    """The issue's targets, met or missed, from the parts that ran."""
    out = {}
    if "gaussian" in results:
        s = results["gaussian"]["settings"]
        out["de_within_tolerance"] = {k: v["target_met"] for k, v in s.items()}
        out["de_target_applies"] = {k: v["target_applies"] for k, v in s.items()}
        out["tradeoff_visible_theory"] = {
            k: v["tradeoff_theory"]["spurious_increasing_at_opt"] for k, v in s.items()}
        out["tradeoff_visible_sim"] = {
            k: v["tradeoff_sim"]["spurious_increasing_at_opt"] for k, v in s.items()}
    if "digits" in results:
        out["tradeoff_visible_digits"] = results["digits"]["tradeoff_sim"]["spurious_increasing_at_opt"]
    return out


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the parts of `config`; write results.json, results.md and plots/ to `workdir`."""
    validate(config)
    wd.prepare(workdir, config_lib.to_json_dict(config))
    plot_dir = os.path.join(workdir, wd.PLOTS) if config.eval.plots else None
    t0 = time.perf_counter()
    runners = {"gaussian": run_gaussian, "rf": run_rf, "digits": run_digits}
    results: dict = {}
    for part in config.parts:
        start = time.perf_counter()
        results[part] = runners[part](config, plot_dir)
        results[part]["wall_s"] = time.perf_counter() - start
        logging.info("%s done in %.1f s", part, results[part]["wall_s"])
    results["targets"] = targets(results)
    results["wall_s"] = time.perf_counter() - t0
    results["machine"] = common_report.machine()
    results = _jsonable(results)
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return obj.item()
    return obj
