"""Compare lib/latent_ate's DML with the DoubleML package on the same folds and learners.

    python3 -m pip install doubleml          # optional extra, not a workspace dependency
    python tools/latent_ate_vs_doubleml.py [--n=800] [--p=8] [--n_rep=3] [--seed=0] [--out=...json]

On a simulated confounded data set (binary D, linear outcome), both implementations get
identical sample splits (our `draw_folds`, passed to DoubleML via `set_sample_splitting`)
and the same linear learners in float64: OLS (scikit-learn `LinearRegression` vs our
`ridge((0.0,))`) and L2 logistic regression (`LogisticRegression(C=1, newton-cholesky,
tol=1e-12)` vs our Newton `logistic(l2=1)`). Cases: PLR partialling-out with an OLS and
with a logistic propensity, PLR IV-type, IRM (AIPW, clipping 0.01), each with n_rep = 1 and
n_rep > 1 (median aggregation). Prints a table of θ̂, se and their relative differences
and exits non-zero when one exceeds --tol (1e-6). tests/latent_ate runs `compare`.
"""
from __future__ import annotations

import json
import sys

import jax
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.latent_ate import dml
from lib.latent_ate import learners as lrn
from lib.latent_ate.report import doubleml_table as table

CASES = (  # name, model, score, propensity learner kind
    ("plr_po_ols", "plr", "partialling_out", "ols"),
    ("plr_po_logistic", "plr", "partialling_out", "logistic"),
    ("plr_iv_ols", "plr", "iv_type", "ols"),
    ("irm_logistic", "irm", "ate", "logistic"),
)


def simulate(n: int, p: int, seed: int):
    """y (n,), d (n,) in {0,1}, x (n, p): confounding through x[:, 0] and x[:, 1]."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p))
    d = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.8 * x[:, 0] - 0.5 * x[:, 1])))).astype(float)
    y = 2.0 * d + x @ np.linspace(1.0, -0.5, p) + rng.normal(size=n)
    return y, d, x


def _smpls(folds: np.ndarray, n_folds: int):
    """Our (n_rep, n) fold ids as DoubleML's list (reps) of lists of (train, test) indices."""
    return [[(np.flatnonzero(f != k), np.flatnonzero(f == k)) for k in range(n_folds)]
            for f in folds]


def _doubleml(case, y, d, x, folds, n_folds):
    import doubleml
    from sklearn.linear_model import LinearRegression, LogisticRegression
    _, model, score, prop = case
    data = doubleml.DoubleMLData.from_arrays(x, y, d)
    logit = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    ml_m = logit if prop == "logistic" else LinearRegression()
    n_rep = folds.shape[0]
    if model == "plr":
        kw = {"ml_g": LinearRegression()} if score == "iv_type" else {}
        obj = doubleml.DoubleMLPLR(data, LinearRegression(), ml_m, n_folds=n_folds,
                                   n_rep=n_rep, score=score.replace("_", " ").replace(
                                       "iv type", "IV-type"),
                                   draw_sample_splitting=False, **kw)
    else:
        obj = doubleml.DoubleMLIRM(data, LinearRegression(), ml_m, n_folds=n_folds,
                                   n_rep=n_rep, draw_sample_splitting=False)
    obj.set_sample_splitting(_smpls(folds, n_folds))
    obj.fit()
    return float(obj.coef[0]), float(obj.se[0])


def _ours(case, y, d, x, folds, n_folds):
    _, model, score, prop = case
    ml_m = lrn.logistic(l2=1.0, num_iter=50) if prop == "logistic" else lrn.ridge((0.0,))
    if model == "plr":
        learners = {"ml_l": lrn.ridge((0.0,)), "ml_m": ml_m, "ml_g": lrn.ridge((0.0,))}
    else:
        learners = {"ml_g": lrn.ridge((0.0,)), "ml_m": ml_m}
    res = dml.fit(y, d, x, learners, model=model, score=score, n_folds=n_folds,
                  n_rep=folds.shape[0], folds=folds, clip=0.01, aggregation="median_ci")
    return res.estimate, res.se


def compare(n: int = 800, p: int = 8, n_reps=(1, 3), n_folds: int = 2, seed: int = 0) -> list:
    """Rows {case, n_rep, theta_ours, theta_doubleml, se_ours, se_doubleml, rel_theta,
    rel_se}, computed in float64."""
    y, d, x = simulate(n, p, seed)
    rows = []
    with jax.enable_x64(True):
        for n_rep in n_reps:
            folds = np.asarray(dml.draw_folds(jax.random.key(seed + 17), n, n_folds, n_rep))
            for case in CASES:
                t_o, s_o = _ours(case, y, d, x, folds, n_folds)
                t_d, s_d = _doubleml(case, y, d, x, folds, n_folds)
                rows.append({"case": case[0], "n_rep": n_rep, "theta_ours": t_o,
                             "theta_doubleml": t_d, "se_ours": s_o, "se_doubleml": s_d,
                             "rel_theta": abs(t_o - t_d) / abs(t_d),
                             "rel_se": abs(s_o - s_d) / abs(s_d)})
    return rows


_N = flags.DEFINE_integer("n", 800, "Rows.")
_P = flags.DEFINE_integer("p", 8, "Covariates.")
_NREP = flags.DEFINE_integer("n_rep", 3, "Repeated splits of the second comparison.")
_SEED = flags.DEFINE_integer("seed", 0, "Data and fold seed.")
_TOL = flags.DEFINE_float("tol", 1e-6, "Largest allowed relative difference.")
_OUT = flags.DEFINE_string("out", None, "Optional JSON file for the rows.")


def main(_):
    rows = compare(_N.value, _P.value, (1, _NREP.value), seed=_SEED.value)
    print(table(rows))
    worst = max(max(r["rel_theta"], r["rel_se"]) for r in rows)
    print(f"\nlargest relative difference {worst:.2e} (tolerance {_TOL.value:g})")
    if _OUT.value:
        with open(_OUT.value, "w") as f:
            json.dump({"rows": rows, "worst": worst, "tol": _TOL.value}, f, indent=2)
    sys.exit(0 if worst <= _TOL.value else 1)


if __name__ == "__main__":
    run_tool(main)
