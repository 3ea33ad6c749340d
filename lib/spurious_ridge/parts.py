"""The three parts of the spurious-ridge experiment; every model is a closed-form ridge fit.

    gaussian: design per setting -> deterministic equivalents C^Σ, L^Σ (λ grid and a dense
              grid) -> ridge on num_seeds training sets -> relative errors, the trade-off
              (λ_L* vs where C increases)
    rf:       random-features ridge over widths × λ -> exact C, Monte-Carlo L, the
              equivalent λ̃ and linear ridge at λ̃
    digits:   coloured 8×8 digits -> held-out Ĉ, L̂ for ridge (λ grid) and RF (widths),
              C^Σ, L^Σ from the distribution's moments
Each `run_<part>(config, plot_dir)` returns its results block (numpy arrays inside) and
draws its figures into `plot_dir` when given.
"""
from __future__ import annotations

import time
import zlib

import numpy as np
from absl import logging

from lib.spurious_ridge import data as data_lib, plots, simulate, theory


def _grid(block) -> np.ndarray:
    return np.logspace(np.log10(block.lambda_min), np.log10(block.lambda_max), block.num_lambdas)


def _seed(config, *names: str) -> int:
    return config.seed * 2 ** 32 + zlib.crc32(":".join(names).encode())


def _mean_se(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over axis 0."""
    return a.mean(axis=0), a.std(axis=0, ddof=1) / np.sqrt(a.shape[0])


def _rel(a, b) -> np.ndarray:
    return np.abs(np.asarray(a) - np.asarray(b)) / np.maximum(np.abs(np.asarray(b)), 1e-300)



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
        plots.gaussian_setting(plot_dir, name, g, out, lams, dense, de_dense)
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
        plots.rf(plot_dir, r, design, out, lam_tilde, k, j_grid, j_sweep, c, c_se, l, l_se)
    return out



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
        plots.digits(plot_dir, dg, out, sims.n_train, dense, de_dense)
    return out
