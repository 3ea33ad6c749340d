"""Evaluation of trained replicas: frozen identifiability constants, outputs and components
at every row, the test metric, and the stability / recovery summary of one model."""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from lib.anova_tpnn import data as data_lib, purify, stability
from lib.anova_tpnn.model import output_from_components, stack_components


def frozen_constants(model, params, x_train: np.ndarray, weights: np.ndarray) -> Any:
    """Each replica's identifiability constants on its whole training sample (R-stacked)."""
    fn = jax.jit(jax.vmap(lambda p, w: model.apply(p, jnp.asarray(x_train), w,
                                                   method=model.constants)))
    return fn(params, jnp.asarray(weights.T))


def evaluate_replicas(model, params, consts, x: np.ndarray, chunk: int, has_comps: bool
                      ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(outputs (R, N), components (R, N, C) or None, intercepts (R, N) or None) at rows x,
    with the frozen constants, in chunks of rows (the last chunk padded with copies of
    the last row and the padding dropped: every chunk has one shape, so one compile; rows
    do not interact once the constants are frozen)."""
    if has_comps:
        def one(p, c, xc):
            comps = model.apply(p, xc, c, method=model.components)
            return output_from_components(comps), stack_components(comps), comps[0]
    else:
        def one(p, c, xc):
            out = model.apply(p, xc, c)
            return out, out[:, None], out
    fn = jax.jit(jax.vmap(one, in_axes=(0, 0, None)))
    n = len(x)
    chunk = min(chunk, n)
    padded = np.concatenate([x, np.repeat(x[-1:], -n % chunk, axis=0)])
    parts = [jax.device_get(fn(params, consts, jnp.asarray(padded[i:i + chunk])))
             for i in range(0, len(padded), chunk)]
    out, comps, icpt = (np.concatenate([p[k] for p in parts], axis=1)[:, :n]
                        for k in range(3))
    return (out, comps, icpt) if has_comps else (out, None, None)


def test_metric(task: str, pred: np.ndarray, y: np.ndarray, y_std: float) -> np.ndarray:
    """Per replica (R,): RMSE in the target's original units, or AUROC."""
    if task == "regression":
        return np.sqrt(np.mean((pred - y[None]) ** 2, axis=1)) * y_std
    from sklearn.metrics import roc_auc_score
    return np.array([roc_auc_score(y, p) for p in pred])


def truth_matrix(ds: data_lib.Dataset, names: list) -> tuple[np.ndarray, int]:
    """True components as (n_test, C') on `names` plus any true component the model cannot
    represent (appended); returns (matrix, number of appended columns)."""
    extra = [k for k in ds.truth if k not in names]
    cols = [ds.truth.get(k, np.zeros(len(ds.x_test), np.float32)) for k in names + extra]
    return np.stack(cols, axis=1), len(extra)


def summarise(ds: data_lib.Dataset, metric: np.ndarray, comps: np.ndarray | None,
              names: list) -> dict:
    """Metric mean/SE and, for component models, stability and recovery numbers."""
    r = len(metric)
    out = {"metric": float(metric.mean()), "metric_se": float(metric.std(ddof=1) / np.sqrt(r)),
           "metric_per_replica": metric}
    if comps is None:
        return out
    n_train = len(ds.x_train)
    train_rows = slice(0, n_train)
    raw = stability.stability_scores(comps)
    cen = stability.stability_scores(stability.centre(comps, train_rows))
    order = np.array([len(k) for k in names])
    out.update({
        "stability": float(raw["var"].mean()),
        "stability_mad": float(raw["mad"].mean()),
        "stability_mains": float(raw["var"][order == 1].mean()),
        "stability_centred": float(cen["var"].mean()),
        "stability_weighted": float(np.average(raw["var"], weights=stability.importance(comps)
                                               + 1e-30)),
        "stability_per_component": raw["var"],
    })
    if ds.truth is not None:
        truth, extra = truth_matrix(ds, names)
        test = comps[:, n_train:]
        pad = np.zeros(test.shape[:2] + (extra,))
        for key, block in (("recovery", test),
                           ("recovery_centred",
                            stability.centre(comps, train_rows)[:, n_train:])):
            err = stability.recovery_error(np.concatenate([block, pad], axis=2), truth)
            out[key] = float(err.mean())
            out[key + "_se"] = float(err.std(ddof=1) / np.sqrt(r))
    return out


def purified_scores(ds: data_lib.Dataset, pur: tuple, comps: np.ndarray,
                    intercept: np.ndarray | None, names: list) -> dict:
    """Stability and recovery of the purified components (`lib.anova_tpnn.purify`).

    pur = (grid (M, p), design indices (M², p), design rows (M², p)) of
    `runs.purification_rows`; comps (R, M², C) the model's components at the design rows.
    Every model's components are projected onto the functional ANOVA of its own output
    under μ_M (mains μ-centred, pairs with zero marginals, the rest moved to lower orders)
    and scored on the design rows, whose mean is the μ_M integral: "stability_purified"
    (unit-RMS score averaged uniformly over all components, as "stability"),
    "stability_purified_mains", and for the synthetic sets, against the exact
    decomposition of the true f under the same μ_M in standardised units,
    "stability_purified_signal" (across-replica variance / true variance, averaged over
    the components that carry signal; per component in "..._per_component" with their
    names in "stability_purified_signal_components") and "recovery_purified" (± SE). The
    quantile transform is monotone, so the raw training values at the grid's order
    statistics are the grid's preimages and `data.true_components(raw design rows, raw
    grid)` is that decomposition."""
    grid, idx, rows = pur
    pure, _ = purify.purify(comps, idx, names, intercept)
    order = np.array([len(k) for k in names])
    score = stability.stability_scores(pure)["var"]
    out = {"stability_purified": float(score.mean()),
           "stability_purified_mains": float(score[order == 1].mean()),
           "stability_purified_per_component": score}
    if ds.truth is not None:
        raw_grid = purify.quantile_grid(ds.x_train_raw, len(grid))
        _, truth = data_lib.true_components(purify.design_points(raw_grid, idx), raw_grid)
        cols = [np.asarray(truth.get(k, np.zeros(len(rows)))) / ds.y_std for k in names]
        extra = [np.asarray(v) / ds.y_std for k, v in truth.items() if k not in names]
        t = np.stack(cols + extra, axis=1)
        est = np.concatenate([pure, np.zeros(pure.shape[:2] + (len(extra),))], axis=2)
        err = stability.recovery_error(est, t)
        ratio, cols = stability.signal_variance_ratio(pure, t[:, :len(names)])
        out.update(recovery_purified=float(err.mean()),
                   recovery_purified_se=float(err.std(ddof=1) / np.sqrt(len(err))),
                   stability_purified_signal=float(ratio.mean()) if len(cols) else None,
                   stability_purified_signal_per_component=ratio,
                   stability_purified_signal_components=["-".join(map(str, names[c]))
                                                         for c in cols])
    return out
