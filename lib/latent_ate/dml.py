"""Double machine learning for the ATE: PLR (partialling-out, IV-type) and IRM (AIPW).

    from lib.latent_ate import dml, learners
    res = dml.fit(y, d, z, {"ml_l": learners.ridge(), "ml_m": learners.logistic()})
    res.estimate, res.se, res.ci                      # θ̂, its standard error, 95% interval

Models (Chernozhukov et al. 2018; the paper's §DML and the DoubleML package's scores):

  PLR   Y = θD + g(Z) + ε,  D = m(Z) + v.  Nuisances l(Z) = E[Y|Z] (`ml_l`), m(Z) = E[D|Z]
        (`ml_m`), and for the IV-type score g(Z) = E[Y − θD | Z] (`ml_g`).
        partialling out:  ψ = (Y − l̂ − θ(D − m̂))(D − m̂)      ψ_a = −v̂²,   ψ_b = v̂ û
        IV-type:          ψ = (Y − θD − ĝ)(D − m̂)             ψ_a = −v̂ D,  ψ_b = v̂ (Y − ĝ)
        (ĝ is fitted on Y − θ̃D with θ̃ the partialling-out estimate of the same split, as
        DoubleML does.)
  IRM   binary D; nuisances g(d, Z) = E[Y | D = d, Z] (`ml_g`, fitted on each arm of the
        training folds) and the propensity m(Z) = P(D = 1 | Z) (`ml_m`), clipped to
        [clip, 1 − clip] (DoubleML's default threshold 0.01):
        ψ_b = ĝ1 − ĝ0 + D(Y − ĝ1)/m̂ − (1 − D)(Y − ĝ0)/(1 − m̂),  ψ_a = −1   (AIPW).

Every score is linear in θ, ψ = ψ_a θ + ψ_b, so θ̂ = −Σψ_b / Σψ_a over all n rows (DML2),
J = mean(ψ_a), σ̂² = mean(ψ²)/J², se = σ̂/√n; the interval is θ̂ ± z_{(1+level)/2}·se.

Cross-fitting: `folds` (S, n) assigns every row of each of S sample splits to one of K
folds; the nuisance for fold k is fitted on the other folds and predicts fold k only
(`crossfit`). With S > 1 repeated splits the estimates are aggregated by the median:
`aggregation="median_ci"` (DoubleML ≥ 0.9: θ̂ = median θ_s, se = (median(θ_s + 1.96 se_s)
− θ̂)/1.96) or "median_var" (Chernozhukov et al. 2018, eq. 3.7 analogue: se² =
median(se_s² + (θ_s − θ̂)²)).

`fit` validates its inputs (lengths, NaN/inf, a one-class or non-binary treatment where a
binary one is needed, folds without both treatment arms) with a `ValueError` naming the
problem before any fitting. `estimator(...)` returns the pure batched core that the
experiment vmaps over replications.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from lib.latent_ate.learners import Learner

MODELS = ("plr", "irm")
SCORES = {"plr": ("partialling_out", "iv_type"), "irm": ("ate",)}
AGGREGATIONS = ("median_ci", "median_var")
DOUBLEML_CRITICAL = 1.96      # DoubleML's fixed constant in its median-of-upper-bounds rule


class DMLResult(NamedTuple):
    estimate: float
    se: float
    ci: tuple[float, float]
    thetas: np.ndarray          # (S,) per sample split
    ses: np.ndarray             # (S,)
    folds: np.ndarray           # (S, n) fold of every row in every split
    predictions: dict           # nuisance name -> (S, n) cross-fitted predictions


def required_learners(model: str, score: str) -> tuple[str, ...]:
    if model == "plr":
        return ("ml_l", "ml_m", "ml_g") if score == "iv_type" else ("ml_l", "ml_m")
    return ("ml_g", "ml_m")


# ----------------------------------------------------------------------------- folds


def draw_folds(key: jax.Array, n: int, n_folds: int, n_rep: int = 1) -> jax.Array:
    """(n_rep, n) int32: row i of split s is in fold folds[s, i]; fold sizes differ by ≤ 1."""
    def one(k):
        perm = jax.random.permutation(k, n)
        return jnp.zeros((n,), jnp.int32).at[perm].set(jnp.arange(n, dtype=jnp.int32) % n_folds)
    return jax.vmap(one)(jax.random.split(key, n_rep))


# ----------------------------------------------------------------------------- cross-fitting


def balanced_sizes(n: int, n_folds: int) -> tuple[int, int]:
    """(smallest, largest) fold size of `draw_folds`: n // K and ⌈n / K⌉."""
    return n // n_folds, -(-n // n_folds)


def crossfit(learner: Learner, x, y, folds, n_folds: int, key, w=None,
             fold_sizes: tuple[int, int] | None = None) -> jax.Array:
    """Cross-fitted predictions (n,): row i is predicted by the model fitted on the rows
    j with folds[j] ≠ folds[i] (and w[j] > 0, e.g. one treatment arm), never on itself.

    x (n, p), y (n,), folds (n,) int in [0, K), w (n,) optional training restriction.
    For static shapes, fold k's training rows are gathered into n − min_size slots and its
    rows to predict into max_size slots (`fold_sizes`, default balanced); surplus slots
    get weight 0 / are discarded. A vmappable learner fits the K folds in one vmap.
    """
    n = y.shape[0]
    lo, hi = fold_sizes or balanced_sizes(n, n_folds)
    base = jnp.ones_like(y) if w is None else w

    def rows(k):
        train = jnp.argsort((folds == k).astype(jnp.int32), stable=True)[:n - lo]
        pred = jnp.argsort((folds != k).astype(jnp.int32), stable=True)[:hi]
        return train, base[train] * (folds[train] != k), pred, folds[pred] == k

    train, w_train, pred, keep = jax.vmap(rows)(jnp.arange(n_folds))
    keys = jax.random.split(key, n_folds)
    if learner.vmappable:
        preds = jax.vmap(learner.fit_predict)(x[train], y[train], w_train, x[pred], keys)
    else:
        preds = jnp.stack([learner.fit_predict(x[train[k]], y[train[k]], w_train[k],
                                               x[pred[k]], keys[k]) for k in range(n_folds)])
    return jnp.zeros((n,), preds.dtype).at[pred.ravel()].add(
        jnp.where(keep, preds, 0.0).ravel())


# ----------------------------------------------------------------------------- scores


def solve_linear_score(psi_a, psi_b):
    """θ̂, se for a score ψ = ψ_a θ + ψ_b (arrays (n,)): θ̂ = −mean ψ_b / mean ψ_a,
    se = sqrt(mean(ψ²) / J² / n), J = mean ψ_a."""
    n = psi_a.shape[0]
    j = psi_a.mean()
    theta = -psi_b.mean() / j
    psi = psi_a * theta + psi_b
    se = jnp.sqrt((psi ** 2).mean() / j ** 2 / n)
    return theta, se


def plr_score(y, d, l_hat, m_hat, g_hat=None):
    """(ψ_a, ψ_b) of the PLR; partialling-out when g_hat is None, else IV-type."""
    v = d - m_hat
    if g_hat is None:
        return -v * v, v * (y - l_hat)
    return -v * d, v * (y - g_hat)


def irm_score(y, d, g0, g1, m_hat, clip: float):
    """(ψ_a, ψ_b) of the AIPW (doubly robust) ATE score with m̂ clipped to [clip, 1 − clip]."""
    m = jnp.clip(m_hat, clip, 1.0 - clip)
    psi_b = g1 - g0 + d * (y - g1) / m - (1.0 - d) * (y - g0) / (1.0 - m)
    return -jnp.ones_like(y), psi_b


def aggregate(thetas, ses, how: str = "median_ci"):
    """Median aggregation over repeated sample splits (S,) -> (θ̂, se); see module doc."""
    theta = jnp.median(thetas)
    if how == "median_ci":
        upper = jnp.median(thetas + DOUBLEML_CRITICAL * ses)
        return theta, (upper - theta) / DOUBLEML_CRITICAL
    if how == "median_var":
        return theta, jnp.sqrt(jnp.median(ses ** 2 + (thetas - theta) ** 2))
    raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {how!r}")


def estimator(learners: Mapping[str, Learner], model: str = "plr",
              score: str | None = None, n_folds: int = 2, clip: float = 0.01,
              aggregation: str = "median_ci",
              fold_sizes: tuple[int, int] | None = None) -> Callable:
    """The pure DML core: (y (n,), d (n,), x (n, p), folds (S, n), key) ->
    {"theta", "se" (aggregated), "thetas", "ses" (S,), "preds": {name: (S, n)}}.

    Inputs are assumed valid (see `fit`); vmappable over a leading replication axis when
    every learner is. `fold_sizes` = (smallest, largest) fold over all splits (default:
    balanced folds as `draw_folds` makes them).
    """
    score = SCORES.get(model, ("",))[0] if score is None else score
    _check_options(learners, model, score, n_folds, clip, aggregation)

    def one_split(y, d, x, folds, key):
        keys = jax.random.split(key, 4)
        if model == "plr":
            l_hat = crossfit(learners["ml_l"], x, y, folds, n_folds, keys[0], None, fold_sizes)
            m_hat = crossfit(learners["ml_m"], x, d, folds, n_folds, keys[1], None, fold_sizes)
            preds = {"ml_l": l_hat, "ml_m": m_hat}
            psi_a, psi_b = plr_score(y, d, l_hat, m_hat)
            if score == "iv_type":
                theta0, _ = solve_linear_score(psi_a, psi_b)
                g_hat = crossfit(learners["ml_g"], x, y - theta0 * d, folds, n_folds, keys[2],
                                 None, fold_sizes)
                preds["ml_g"] = g_hat
                psi_a, psi_b = plr_score(y, d, l_hat, m_hat, g_hat)
        else:
            g0 = crossfit(learners["ml_g"], x, y, folds, n_folds, keys[0], 1.0 - d, fold_sizes)
            g1 = crossfit(learners["ml_g"], x, y, folds, n_folds, keys[2], d, fold_sizes)
            m_hat = crossfit(learners["ml_m"], x, d, folds, n_folds, keys[1], None, fold_sizes)
            preds = {"ml_g0": g0, "ml_g1": g1, "ml_m": m_hat}
            psi_a, psi_b = irm_score(y, d, g0, g1, m_hat, clip)
        theta, se = solve_linear_score(psi_a, psi_b)
        return theta, se, preds

    all_vmappable = all(learners[k].vmappable for k in required_learners(model, score))

    def core(y, d, x, folds, key):
        keys = jax.random.split(key, folds.shape[0])
        if all_vmappable:
            thetas, ses, preds = jax.vmap(one_split, in_axes=(None, None, None, 0, 0))(
                y, d, x, folds, keys)
        else:
            outs = [one_split(y, d, x, folds[s], keys[s]) for s in range(folds.shape[0])]
            thetas = jnp.stack([o[0] for o in outs])
            ses = jnp.stack([o[1] for o in outs])
            preds = jax.tree.map(lambda *a: jnp.stack(a), *[o[2] for o in outs])
        theta, se = aggregate(thetas, ses, aggregation)
        return {"theta": theta, "se": se, "thetas": thetas, "ses": ses, "preds": preds}

    return core


# ----------------------------------------------------------------------------- validation


def _check_options(learners, model, score, n_folds, clip, aggregation) -> None:
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if score not in SCORES[model]:
        raise ValueError(f"score {score!r} is not a {model} score; allowed: {SCORES[model]}")
    missing = [k for k in required_learners(model, score) if k not in learners]
    if missing:
        raise ValueError(f"{model} with score {score!r} needs learners {missing} "
                         f"(given: {sorted(learners)})")
    for k in required_learners(model, score):
        if model == "irm" and k == "ml_m" and learners[k].task != "classification":
            raise ValueError(f"learner 'ml_m' of the IRM must be a classifier (propensity), "
                             f"got {learners[k].name!r} ({learners[k].task})")
        if k != "ml_m" and learners[k].task != "regression":
            raise ValueError(f"learner {k!r} must be a regression learner, got "
                             f"{learners[k].name!r} ({learners[k].task})")
    if not isinstance(n_folds, int) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if not 0.0 <= clip < 0.5:
        raise ValueError(f"propensity clip must be in [0, 0.5), got {clip!r}")
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")


def check_inputs(y, d, x, learners, model: str, n_folds: int, folds=None) -> None:
    """ValueError naming the problem: shapes, lengths, NaN/inf, treatment classes, folds."""
    y, d, x = np.asarray(y), np.asarray(d), np.asarray(x)
    if y.ndim != 1 or d.ndim != 1 or x.ndim != 2:
        raise ValueError(f"expected y (n,), d (n,), features (n, p); got shapes {y.shape}, "
                         f"{d.shape}, {x.shape}")
    if not y.shape[0] == d.shape[0] == x.shape[0]:
        raise ValueError(f"mismatched lengths: y has {y.shape[0]} rows, d {d.shape[0]}, "
                         f"features {x.shape[0]}")
    for name, a in (("y", y), ("d", d), ("features", x)):
        bad = ~np.isfinite(a)
        if bad.any():
            rows = np.unique(np.nonzero(bad)[0])
            raise ValueError(f"{name} has {int(bad.sum())} NaN/inf values (first rows "
                             f"{rows[:5].tolist()}); impute or drop them first")
    values = np.unique(d)
    if values.size < 2:
        raise ValueError(f"the treatment d takes the single value {values.tolist()}: the "
                         "effect is not identified (need treated and untreated rows)")
    binary = values.size == 2 and set(values.tolist()) <= {0.0, 1.0}
    needs_binary = model == "irm" or learners["ml_m"].task == "classification"
    if needs_binary and not binary:
        raise ValueError(f"{model} with a {learners['ml_m'].task} propensity needs a binary "
                         f"0/1 treatment; d takes values {values[:10].tolist()}")
    n = y.shape[0]
    if n_folds > n // 2:
        raise ValueError(f"n_folds = {n_folds} is too many for n = {n} rows")
    if folds is not None:
        folds = np.asarray(folds)
        if folds.ndim != 2 or folds.shape[1] != n:
            raise ValueError(f"folds must be (n_rep, n = {n}), got shape {folds.shape}")
        if folds.min() < 0 or folds.max() >= n_folds or any(
                np.unique(f).size != n_folds for f in folds):
            raise ValueError(f"every split in folds must use each fold 0..{n_folds - 1}")
        if model == "irm":
            for s, f in enumerate(folds):
                for k in range(n_folds):
                    arms = np.unique(d[f != k])
                    if arms.size < 2:
                        raise ValueError(f"split {s}: the training folds for fold {k} hold "
                                         f"only treatment {arms.tolist()}; g(0, Z) and "
                                         "g(1, Z) need both arms")


def fit(y, d, features, learners: Mapping[str, Learner], *, model: str = "plr",
        score: str | None = None, n_folds: int = 2, n_rep: int = 1,
        clip: float = 0.01, level: float = 0.95, aggregation: str = "median_ci",
        folds=None, seed: int = 0) -> DMLResult:
    """DML estimate of θ (the ATE under a constant effect / the AIPW ATE).

    y (n,), d (n,) treatment, features (n, p) adjustment set; learners: {"ml_l", "ml_m"}
    (PLR partialling-out), + "ml_g" (PLR IV-type), {"ml_g", "ml_m"} (IRM). `folds`
    (n_rep, n) fixes the sample splits (e.g. to match another package); otherwise they are
    drawn from `seed`. `score` defaults to the model's first (partialling-out, ATE).
    Returns estimate, se, ci (level) and the per-split details.
    """
    score = SCORES.get(model, ("",))[0] if score is None else score
    _check_options(learners, model, score, n_folds, clip, aggregation)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if not isinstance(n_rep, int) or n_rep < 1:
        raise ValueError(f"n_rep must be an integer >= 1, got {n_rep!r}")
    check_inputs(y, d, features, learners, model, n_folds, folds)
    dtype = jnp.asarray(np.zeros(1, np.float64)).dtype          # float64 under enable_x64
    y, d, x = (jnp.asarray(np.asarray(a, np.float64), dtype) for a in (y, d, features))
    key = jax.random.key(seed)
    if folds is None:
        folds = draw_folds(jax.random.fold_in(key, 1), y.shape[0], n_folds, n_rep)
        if model == "irm":
            check_inputs(y, d, x, learners, model, n_folds, np.asarray(folds))
    folds_np = np.asarray(folds)
    counts = np.stack([np.bincount(f, minlength=n_folds) for f in folds_np])
    sizes = (int(counts.min()), int(counts.max()))
    folds = jnp.asarray(folds_np, jnp.int32)
    core = estimator(learners, model, score, n_folds, clip, aggregation, sizes)
    if all(learners[k].vmappable for k in required_learners(model, score)):
        core = jax.jit(core)
    out = core(y, d, x, folds, jax.random.fold_in(key, 2))
    theta, se = float(out["theta"]), float(out["se"])
    z = float(stats.norm.ppf(0.5 + level / 2))
    return DMLResult(theta, se, (theta - z * se, theta + z * se), np.asarray(out["thetas"]),
                     np.asarray(out["ses"]), np.asarray(folds),
                     {k: np.asarray(v) for k, v in out["preds"].items()})
