"""Which part of the MLP nuisance biases DML: the penalty (shrinkage) or the optimisation?

    python tools/latent_ate_nuisance_study.py --seeds=50 --out=workdirs/latent_ate/study.json
    python tools/latent_ate_nuisance_study.py --out=workdirs/latent_ate/study.json \
        --render_only --notes=experiments/latent_ate/NOTES.md

A partially linear design with nonlinear confounding, not one of the experiment's image
designs (`design`): n rows, p = 20 Gaussian covariates with Toeplitz correlation 0.5^|i−j|,

    m(X) = tanh(1.5 X0) + 0.5 (X1² − 1) + 0.5 X2,          D = m(X) + v,  v ~ N(0, 1)
    g(X) = 1.5 σ(3 X0) + sin(2 X1) + 0.5 X1 X3,            Y = θD + g(X) + ε,  ε ~ N(0, 1)

θ = 0.5, so l(X) = E[Y | X] = θ m(X) + g(X). Every learner below fits both nuisances
(ml_l on Y, ml_m on D, both regressions) and enters the PLR partialling-out estimator with
K = 2 folds (lib/latent_ate/dml.py) on the same data and folds per seed. Learners
(`LEARNERS`): the experiment's former default (`cv_h32`: hidden 32, 200 full-batch Adam
steps, λ and the stopping time by 2-fold CV over λ ∈ {0.01, …, 1}); the same optimisation
with the official penalty λ = 1e-6 (`h32_l1e-6`, early stopping on 20 %), which isolates
the penalty; the official optimisation (MLP (100, 50), Adam 1e-3, minibatches of 200,
500 epochs = scikit-learn's max_iter, no early stopping) with λ = 1e-6 (`official`) and
with a CV-grid λ = 0.1 (`official_l0.1`), which isolates the optimisation at a shrinking
penalty; OLS; scikit-learn random forests (`rf`, the official notebooks' reference
learner, 100 trees, a reference only: not vmappable, looped). Per learner: bias (± Monte
Carlo s.e.), coverage of the 95 % interval, |bias|/half-width, sd θ̂ / mean se, the
nuisances' RMSE against the true l and m, and the bias predicted from the nuisance errors
by the partialling-out score, mean[(m − m̂)(l − l̂) − θ(m − m̂)²] / mean[(D − m̂)²] (its
average over seeds; the rest of θ̂ − θ is mean-zero noise).
"""
from __future__ import annotations

import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.common.cli import run_tool
from lib.common import report as common_report  # noqa: E402
from lib.latent_ate import dml  # noqa: E402
from lib.latent_ate import learners as lrn  # noqa: E402

_SEEDS = flags.DEFINE_integer("seeds", 50, "Replications (one data set and split each).")
_N = flags.DEFINE_integer("n", 1000, "Rows per replication.")
_P = flags.DEFINE_integer("p", 20, "Covariates.")
_ONLY = flags.DEFINE_string("only", "", "Comma-separated learner names (default: all).")
_OUT = flags.DEFINE_string("out", None, "JSON file; learners already in it are kept.")
_NOTES = flags.DEFINE_string("notes", None, "Markdown file to splice the table into.")
_TAG = flags.DEFINE_string("tag", "nuisance_study", "Splice tag in --notes.")
_RENDER = flags.DEFINE_bool("render_only", False, "Only render --out (no fitting).")
_BATCH = flags.DEFINE_integer("rep_batch", 10, "Replications vmapped together.")
_MERGE = flags.DEFINE_string("merge", "", "Further JSON files (comma-separated) whose learners "
                             "are added to the table (e.g. runs of --only in parallel).")

THETA = 0.5
CV_GRID = (1e-2, 3e-2, 1e-1, 3e-1, 1.0)


def design(key, n: int, p: int):
    """(x (n, p), y (n,), d (n,), l (n,), m (n,)) of the study's partially linear design."""
    kx, kv, ke = jax.random.split(key, 3)
    idx = jnp.arange(p)
    cov = 0.5 ** jnp.abs(idx[:, None] - idx[None, :])
    x = jax.random.normal(kx, (n, p)) @ jnp.linalg.cholesky(cov).T
    m = jnp.tanh(1.5 * x[:, 0]) + 0.5 * (x[:, 1] ** 2 - 1) + 0.5 * x[:, 2]
    g = 1.5 * jax.nn.sigmoid(3 * x[:, 0]) + jnp.sin(2 * x[:, 1]) + 0.5 * x[:, 1] * x[:, 3]
    d = m + jax.random.normal(kv, (n,))
    y = THETA * d + g + jax.random.normal(ke, (n,))
    return x, y, d, THETA * m + g, m


def _rf():
    from sklearn.ensemble import RandomForestRegressor
    return lrn.sklearn_learner(lambda: RandomForestRegressor(n_estimators=100, n_jobs=1,
                                                             random_state=0), "regression", "rf")


def _official(l2):
    return lrn.mlp("regression", (100, 50), 1e-3, penalty="fixed", l2=l2, batch_size=200,
                   epochs=500, early_stopping=False)


LEARNERS = {
    "cv_h32": lambda: lrn.mlp("regression", (32,), 3e-3, 200, eval_every=10, penalty="cv",
                              l2_grid=CV_GRID, cv_folds=2),
    "h32_l1e-6": lambda: lrn.mlp("regression", (32,), 3e-3, 200, eval_every=10,
                                 penalty="fixed", l2=1e-6),
    "official": lambda: _official(1e-6),
    "official_l0.1": lambda: _official(0.1),
    "ols": lambda: lrn.ridge((0.0,)),
    "rf": _rf,
}


def run_learner(name: str, seeds: int, n: int, p: int, rep_batch: int) -> dict:
    learner = LEARNERS[name]()
    core = dml.estimator({"ml_l": learner, "ml_m": learner}, "plr", None, 2)

    def one(seed):
        key = jax.random.key(seed)
        x, y, d, l, m = design(jax.random.fold_in(key, 0), n, p)
        folds = dml.draw_folds(jax.random.fold_in(key, 1), n, 2, 1)
        out = core(y, d, x, folds, jax.random.fold_in(key, 2))
        lh, mh = out["preds"]["ml_l"][0], out["preds"]["ml_m"][0]
        pred_bias = ((m - mh) * (l - lh) - THETA * (m - mh) ** 2).mean() / ((d - mh) ** 2).mean()
        return (out["theta"], out["se"], jnp.sqrt(((lh - l) ** 2).mean()),
                jnp.sqrt(((mh - m) ** 2).mean()), pred_bias, l.std(), m.std())

    t0 = time.perf_counter()
    if learner.vmappable:
        outs = jax.jit(lambda s: jax.lax.map(one, s, batch_size=rep_batch))(jnp.arange(seeds))
    else:
        per = [one(s) for s in range(seeds)]
        outs = tuple(jnp.stack(a) for a in zip(*per))
    theta, se, rl, rm, pb, sl, sm = (np.asarray(a, np.float64) for a in outs)
    z = 1.959964
    half = z * se
    bias = theta.mean() - THETA
    return {"seeds": seeds, "n": n, "p": p, "bias": bias,
            "bias_mc_se": theta.std(ddof=1) / np.sqrt(seeds),
            "coverage": float(np.mean(np.abs(theta - THETA) <= half)),
            "bias_over_half_width": abs(bias) / half.mean(),
            "sd_over_se": theta.std(ddof=1) / se.mean(),
            "rmse_l": rl.mean(), "rmse_m": rm.mean(), "sd_l": sl.mean(), "sd_m": sm.mean(),
            "predicted_bias": pb.mean(), "seconds": time.perf_counter() - t0}


def coverage_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson interval of a binomial proportion k / n."""
    from scipy import stats
    a = 1 - level
    lo = stats.beta.ppf(a / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a / 2, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def render(data: dict) -> str:
    rows = data["learners"]
    first = next(iter(rows.values()))
    lines = [f"**Nuisance study** (partially linear design with nonlinear confounding, "
             f"n = {first['n']}, p = {first['p']}, θ = {THETA}, PLR partialling-out, K = 2; "
             f"{first['seeds']} seeds per learner, the same data and folds for every learner)",
             "",
             "| learner | bias (± MC s.e.) | predicted bias | coverage (95 % CI) | "
             "\\|bias\\|/half-width | sd/se | RMSE l (sd l) | RMSE m (sd m) | s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        k = round(r["coverage"] * r["seeds"])
        lo, hi = coverage_interval(k, r["seeds"])
        lines.append(
            f"| {name} | {r['bias']:+.3f} ± {r['bias_mc_se']:.3f} | {r['predicted_bias']:+.3f} "
            f"| {100 * r['coverage']:.0f}% ({100 * lo:.0f}–{100 * hi:.0f}) "
            f"| {r['bias_over_half_width']:.2f} | {r['sd_over_se']:.2f} "
            f"| {r['rmse_l']:.3f} ({r['sd_l']:.2f}) | {r['rmse_m']:.3f} ({r['sd_m']:.2f}) "
            f"| {r['seconds']:.0f} |")
    lines += ["", f"Measured on {data.get('machine', '?')}."]
    return "\n".join(lines)


def main(_):
    data = {"learners": {}}
    if _OUT.value and os.path.exists(_OUT.value):
        with open(_OUT.value) as f:
            data = json.load(f)
    for path in (s for s in _MERGE.value.split(",") if s):
        with open(path) as f:
            data["learners"].update(json.load(f)["learners"])
    if not _RENDER.value:
        names = [s for s in _ONLY.value.split(",") if s] or list(LEARNERS)
        unknown = [s for s in names if s not in LEARNERS]
        if unknown:
            raise app.UsageError(f"unknown learners {unknown}; known: {list(LEARNERS)}")
        for name in names:
            data["learners"][name] = run_learner(name, _SEEDS.value, _N.value, _P.value,
                                                 _BATCH.value)
            print(name, json.dumps(data["learners"][name]), flush=True)
            data["machine"] = common_report.machine()
            if _OUT.value:
                os.makedirs(os.path.dirname(os.path.abspath(_OUT.value)), exist_ok=True)
                with open(_OUT.value, "w") as f:
                    json.dump(data, f, indent=1)
    text = render(data)
    print(text)
    if _NOTES.value:
        common_report.splice(_NOTES.value, _TAG.value, text)


if __name__ == "__main__":
    run_tool(main)
