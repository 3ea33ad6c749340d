"""Monte Carlo over fresh training sets: ridge and random-features fits, their C and L.

Each function draws `num_seeds` independent training sets (seed streams
`np.random.default_rng([seed, k])`) and returns per-seed arrays; the experiment averages
them and compares with the deterministic equivalents.

For ridge on Gaussian data two per-seed numbers are returned for C and L:
- plain: C(θ̂) and L(θ̂) of the ridge fitted on the noisy labels;
- label-noise averaged ("cond"): E_ε[C(θ̂) | Z] = C(θ̂ fitted on the clean labels) (C is
  linear in the labels and ε has mean 0) and E_ε[L(θ̂) | Z] = L(θ̂_clean) + σ² tr(ΣAAᵀ)
  (`estimates.ridge_noise_trace`). Same expectation over (Z, ε), without the label-noise
  variance; both are exact functions of the sampled design, no test set involved.
Random features get the same label-noise-averaged C (their L is a Monte Carlo estimate
on fresh test inputs, with the noise variance added exactly).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lib.spurious_ridge import data as data_lib
from lib.spurious_ridge import estimates as est
from lib.spurious_ridge import random_features as rf


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, *stream])


class RidgeSims(NamedTuple):
    """Per-seed results on a λ grid; each (num_seeds, L)."""
    spurious: np.ndarray
    loss: np.ndarray
    spurious_cond: np.ndarray
    loss_cond: np.ndarray


def simulate_ridge(design: data_lib.Design, lams: np.ndarray, num_seeds: int, seed: int
                   ) -> RidgeSims:
    """Ridge on `num_seeds` Gaussian training sets of `design.n` samples (see module doc)."""
    theta = data_lib.theta_star(design)
    cov_yg = design.sigma[design.d_x:, :design.d_x] @ design.theta_x
    out = {k: [] for k in RidgeSims._fields}
    for k in range(num_seeds):
        z, clean, g = data_lib.sample(design, design.n, _rng(seed, k))
        eig = est.gram_eig(z)
        noisy_fit, clean_fit = est.ridge_path(z, g, lams, eig), est.ridge_path(z, clean, lams, eig)
        out["spurious"].append(est.spurious_correlation(noisy_fit, design.d_x, cov_yg))
        out["loss"].append(est.test_loss(noisy_fit, design.sigma, theta, design.noise))
        out["spurious_cond"].append(est.spurious_correlation(clean_fit, design.d_x, cov_yg))
        out["loss_cond"].append(est.test_loss(clean_fit, design.sigma, theta, design.noise)
                                + design.noise ** 2 * est.ridge_noise_trace(z, design.sigma, lams, eig))
    return RidgeSims(**{k: np.asarray(v) for k, v in out.items()})


class FeatureSims(NamedTuple):
    """Per-seed random-features results; each (num_seeds, num_widths, L)."""
    spurious: np.ndarray      # exact C of the RF fit (Stein's lemma)
    spurious_cond: np.ndarray  # the same, label-noise averaged (fit on the clean labels)
    loss: np.ndarray          # L of the RF fit (Monte Carlo on n_test inputs, exact noise)
    lam_tilde: np.ndarray     # equivalent linear ridge penalty λ̃
    spurious_linear: np.ndarray  # C of linear ridge at λ̃ on the same training set (noise avg.)
    loss_linear: np.ndarray      # L of linear ridge at λ̃ on the same training set (noise avg.)


def simulate_random_features(design: data_lib.Design, widths, lams: np.ndarray, activation: str,
                             num_seeds: int, n_test: int, seed: int) -> FeatureSims:
    """RF ridge (widths × λ) on `num_seeds` Gaussian training sets, and its linear equivalent."""
    theta = data_lib.theta_star(design)
    cov_yg = design.sigma[design.d_x:, :design.d_x] @ design.theta_x
    dim, n, trace = design.sigma.shape[0], design.n, float(np.trace(design.sigma))
    out = {k: [] for k in FeatureSims._fields}
    for k in range(num_seeds):
        rng = _rng(seed, k)
        z, clean, g = data_lib.sample(design, n, rng)
        z_test, clean_test, _ = data_lib.sample(design, n_test, rng)
        eig = est.gram_eig(z)
        rows = {key: [] for key in FeatureSims._fields}
        for p in widths:
            w = rf.draw_weights(rng, p, dim)
            phi = rf.features(z, w, activation)
            rf_eig = est.gram_eig(phi)
            a, a_clean = est.ridge_path(phi, g, lams, rf_eig), est.ridge_path(phi, clean, lams, rf_eig)
            pred = rf.features(z_test, w, activation) @ a.T                    # (n_test, L)
            for key, coef in (("spurious", a), ("spurious_cond", a_clean)):
                rows[key].append(rf.rf_spurious_correlation(coef, w, design.sigma, design.d_x,
                                                            cov_yg, activation))
            rows["loss"].append(est.empirical_test_loss(pred, clean_test) + design.noise ** 2)
            _, lam_tilde = rf.equivalent_ridge(lams, p, eig.evals, n, dim, trace, activation)
            linear = est.ridge_path(z, clean, lam_tilde, eig)                  # label-noise avg.
            rows["lam_tilde"].append(lam_tilde)
            rows["spurious_linear"].append(est.spurious_correlation(linear, design.d_x, cov_yg))
            rows["loss_linear"].append(
                est.test_loss(linear, design.sigma, theta, design.noise)
                + design.noise ** 2 * est.ridge_noise_trace(z, design.sigma, lam_tilde, eig))
        for key, value in rows.items():
            out[key].append(value)
    return FeatureSims(**{key: np.asarray(v) for key, v in out.items()})


class DigitsSims(NamedTuple):
    """Per-seed held-out estimates on coloured digits."""
    spurious: np.ndarray      # (num_seeds, L) ridge Ĉ
    loss: np.ndarray          # (num_seeds, L) ridge L̂
    rf_spurious: np.ndarray   # (num_seeds, num_widths) RF Ĉ at λ_rf
    rf_loss: np.ndarray       # (num_seeds, num_widths) RF L̂ at λ_rf
    n_train: int


def digits_split(images, digits, rho, colour, tint, noise, train_fraction, rng):
    """One coloured draw and a random train/test split, centred with the training means.

    Returns (z_train (n, 128), g_train (n,), x_test, y_test, g_test)."""
    x, y, g = data_lib.coloured_digits(images, digits, rho, colour, tint, noise, rng)
    order = rng.permutation(len(g))
    n = int(round(train_fraction * len(g)))
    tr, te = order[:n], order[n:]
    z = np.concatenate([x, y], axis=1)
    mean_z, mean_g = z[tr].mean(axis=0), g[tr].mean()
    z, g = z - mean_z, g - mean_g
    d_x = x.shape[1]
    return z[tr], g[tr], z[te, :d_x], z[te, d_x:], g[te]


def simulate_digits(images: np.ndarray, digits: np.ndarray, *, rho: float, colour: str,
                    tint: float, noise: float, train_fraction: float, lams: np.ndarray,
                    widths, rf_lam: float, activation: str, num_seeds: int,
                    num_permutations: int, seed: int) -> DigitsSims:
    """Ridge (λ grid) and RF (widths at λ_rf) on coloured digits; Ĉ and L̂ on the held-out split."""
    out = {k: [] for k in ("spurious", "loss", "rf_spurious", "rf_loss")}
    n_train = 0
    for k in range(num_seeds):
        rng = _rng(seed, k)
        z, g, x_test, y_test, g_test = digits_split(images, digits, rho, colour, tint, noise,
                                                    train_fraction, rng)
        n_train = len(g)
        z_test = np.concatenate([x_test, y_test], axis=1)
        thetas = est.ridge_path(z, g, lams)
        out["spurious"].append(est.empirical_spurious_correlation(
            lambda u: u @ thetas.T, x_test, y_test, g_test, rng, num_permutations))
        out["loss"].append(est.empirical_test_loss(z_test @ thetas.T, g_test))
        rf_c, rf_l = [], []
        for p in widths:
            w = rf.draw_weights(rng, p, z.shape[1])
            a = est.ridge_path(rf.features(z, w, activation), g, rf_lam)[0]
            predict = lambda u, w=w, a=a: rf.features(u, w, activation) @ a  # noqa: E731
            rf_c.append(est.empirical_spurious_correlation(predict, x_test, y_test, g_test, rng,
                                                           num_permutations))
            rf_l.append(est.empirical_test_loss(predict(z_test), g_test))
        out["rf_spurious"].append(rf_c)
        out["rf_loss"].append(rf_l)
    return DigitsSims(**{k: np.asarray(v) for k, v in out.items()}, n_train=n_train)


def digits_moments(images: np.ndarray, digits: np.ndarray, *, rho: float, colour: str,
                   tint: float, noise: float, draws: int, seed: int
                   ) -> tuple[np.ndarray, np.ndarray, float]:
    """Population moments of the coloured-digits distribution: Σ (128, 128), E[zg] (128,), E[g²].

    "Population" = every image of the dataset with `draws` independent colour and noise
    draws each; moments are centred."""
    zs, gs = [], []
    for k in range(draws):
        x, y, g = data_lib.coloured_digits(images, digits, rho, colour, tint, noise,
                                           _rng(seed, 10_000 + k))
        zs.append(np.concatenate([x, y], axis=1))
        gs.append(g)
    z, g = np.concatenate(zs), np.concatenate(gs)
    z, g = z - z.mean(axis=0), g - g.mean()
    return z.T @ z / len(g), z.T @ g / len(g), float(g @ g / len(g))
