"""Stability of estimated components across replicas, and recovery of known components.

Stability (the official code's `cal_UoC`, models/ensemble.py): for each component S,
evaluate f̂_S at all N data points for R replicas (seeds or resamples), normalise each
replica's vector, take the across-replica variance at each point and average over points.
Lower is more stable.

Normalisation (a stated deviation). The notes report that the official code divides each
component vector v by Σ_i v_i² (the squared norm), which makes the score depend on the
component's scale (a component twice as large gets a 4× smaller normalised vector). We
divide by the root-mean-square, u = v / sqrt(mean_i v_i²) = √N · v/‖v‖₂: the ℓ2
normalisation the notes recommend, rescaled so that u has unit RMS and the score does not
shrink with N. The score is then scale-free and lies in [0, 1]: averaged over points the
variance of unit-RMS vectors is 1 − mean_i (mean_r u_ri)², 0 when all replicas agree up
to a positive factor and 1 when they cancel on average. A vector with ‖v‖ = 0 stays 0.

On synthetic data the judged stability of purified components is instead
`signal_variance_ratio`: the across-replica variance divided by the true component's
variance, averaged over the components that carry signal (at least 0.1 % of the true
variance; components without signal, whose unit-RMS score is noise, do not enter).

Shapes: comps (R, N, C) — replicas × points × components.
"""
from __future__ import annotations

import numpy as np


def normalise(comps: np.ndarray) -> np.ndarray:
    """u = v / RMS_i(v) per replica and component; (R, N, C) -> (R, N, C)."""
    comps = np.asarray(comps, np.float64)
    rms = np.sqrt(np.mean(comps ** 2, axis=1, keepdims=True))
    return np.divide(comps, rms, out=np.zeros_like(comps), where=rms > 0)


def stability_scores(comps: np.ndarray) -> dict[str, np.ndarray]:
    """Per component (C,): "var" = mean_i Var_r(u_ri) (the notes' score, population
    variance over replicas), "mad" = mean_i mean_r |u_ri − median_r u_ri|."""
    u = normalise(comps)
    var = np.mean(np.var(u, axis=0), axis=0)
    mad = np.mean(np.mean(np.abs(u - np.median(u, axis=0, keepdims=True)), axis=0), axis=0)
    return {"var": var, "mad": mad}


def centre(comps: np.ndarray, train_rows: slice) -> np.ndarray:
    """Subtract each replica's and component's mean over the training rows (a post-hoc fix
    of the intercept shifts of unconstrained models); (R, N, C) -> (R, N, C)."""
    comps = np.asarray(comps, np.float64)
    return comps - np.mean(comps[:, train_rows], axis=1, keepdims=True)


def importance(comps: np.ndarray) -> np.ndarray:
    """Mean over replicas of each component's mean square, (C,)."""
    return np.mean(np.mean(np.asarray(comps, np.float64) ** 2, axis=1), axis=0)


SIGNAL_SHARE = 1e-3


def signal_variance_ratio(est: np.ndarray, truth: np.ndarray, share: float = SIGNAL_SHARE
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(ratios (S,), columns (S,)) on the components that carry signal (mean square of the
    truth at least `share` of the sum over components; a near-null component would put its
    noise over a vanishing denominator): mean_i Var_r f̂_S(x_i) / mean_i f_S(x_i)², the
    across-replica variance (population, over replicas) relative to the true component's
    variance (its mean square: the true components are centred).

    est (R, N, C), truth (N, C) on the same points and component columns, same units."""
    est, truth = np.asarray(est, np.float64), np.asarray(truth, np.float64)
    if est.ndim != 3 or truth.shape != est.shape[1:]:
        raise ValueError(f"est must be (R, N, C) and truth (N, C) on the same points and "
                         f"columns, got {est.shape} and {truth.shape}")
    power = np.mean(truth ** 2, axis=0)
    cols = (np.flatnonzero(power >= share * power.sum()) if power.sum() > 0
            else np.array([], int))
    var = np.mean(np.var(est[:, :, cols], axis=0), axis=0)
    return var / power[cols], cols


def recovery_error(est: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Relative component error per replica, (R,):

        Σ_S mean_i (f̂_S(x_i) − f_S(x_i))² / Σ_S mean_i f_S(x_i)²,

    est (R, N, C), truth (N, C) on the same points and component columns (a true
    component the model cannot represent is a column of zeros in `est`)."""
    est, truth = np.asarray(est, np.float64), np.asarray(truth, np.float64)
    num = np.sum(np.mean((est - truth[None]) ** 2, axis=1), axis=-1)
    return num / np.sum(np.mean(truth ** 2, axis=0))
