"""The experiment's estimators, each batched over replications in one jitted call.

Every estimator maps one replication (y (n,), d (n,), x (n, p) its adjustment set, c its
true confounder, truth = (m, g) the true propensity and outcome confounding term (n,),
key) to (θ̂, se, rmse) with rmse {nuisance: RMSE of its cross-fitted predictions against
the true nuisance} (NaN for nuisances the estimator has not); `run` maps that over R
replications with `lax.map` (chunks of `rep_batch` vmapped replications, so memory stays
bounded while the nuisance fits of all folds × splits × replications in a chunk are one
batched computation). The true nuisances are used for this diagnostic only, never in
fitting or tuning.

True nuisances (θ the true effect): ml_m = m(Z) = P(D = 1 | C), ml_l = E[Y | C] = θm + g,
ml_g = g = E[Y − θD | C] (IV-type; fitted on Y − θ̃D, θ̃ the partialling-out estimate),
ml_g0 = g, ml_g1 = θ + g (IRM arms).

MLP nuisances choose their penalty and stopping time as `mlp.penalty` says (learners.mlp):
"fixed" (the l2_outcome / l2_propensity values; the configs' default λ = 1e-6 with early
stopping), "cv" (cross-validation inside the training folds) or "scaled" (λ = c/n_fit);
`mlp.batch_size` > 0 trains on minibatches for `mlp.epochs` (the official set-up).

  naive              OLS Y ~ D                                       (no adjustment)
  oracle             OLS Y ~ D + C, C the true confounder            (label / U)
  s_linear_latent    OLS Y ~ D + Z                                   (S-learner, linear)
  s_mlp_latent       MLP S-learner on (D, Z); no se                  (S-learner, NN)
  dml_linear_pixels  PLR, ridge (GCV) nuisances on raw pixels        (no pre-training)
  dml_mlp_pixels     PLR, MLP nuisances on raw pixels
  dml_linear_latent  PLR, ridge (GCV) outcome + logistic propensity on Z
  dml_ols_latent     PLR, OLS outcome + logistic propensity on Z     (the official linear row)
  dml_mlp_logit_latent  PLR, MLP outcome + logistic propensity on Z  (the official pairing)
  dml_lasso_latent   PLR, lasso outcome + logistic propensity on Z
  dml_mlp_latent     PLR, MLP outcome + MLP propensity on Z          (the paper's method)
  dml_iv_mlp_latent  PLR with the IV-type score, MLP nuisances on Z
  irm_mlp_latent     IRM/AIPW, MLP outcome per arm + MLP propensity on Z
  dml_mlp_ae         PLR, MLP nuisances on the low-dimensional pixel-autoencoder code

Z is the standardised penultimate layer of the pre-trained CNN (features.py).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from lib.latent_ate import baselines, dml
from lib.latent_ate import learners as lrn


class Spec(NamedTuple):
    adjust: str | None     # adjustment set: None, "confounder", "cnn", "pixels", "pixel_ae"
    has_se: bool
    build: Callable        # config -> fn (y, d, x, c, truth, key) -> (θ̂, se, rmse)


NUISANCES = ("ml_l", "ml_m", "ml_g", "ml_g0", "ml_g1")


def _mlp(cfg, task):
    m = cfg.mlp
    if m.penalty == "scaled":
        l2 = m.l2_scale
    else:
        l2 = m.l2_outcome if task == "regression" else m.l2_propensity
    return lrn.mlp(task, tuple(m.hidden), m.lr, m.steps, m.val_fraction, l2, m.eval_every,
                   penalty=m.penalty, l2_grid=tuple(m.l2_grid), cv_folds=m.cv_folds,
                   batch_size=m.get("batch_size", 0), epochs=m.get("epochs", 0),
                   early_stopping=m.get("early_stopping", True))


def true_nuisances(theta: float, m, g) -> dict:
    """{nuisance name: its true value (n,)} from the true propensity m and term g."""
    return {"ml_l": theta * m + g, "ml_m": m, "ml_g": g, "ml_g0": g, "ml_g1": theta + g}


def nuisance_rmse(preds: dict, truth: dict) -> dict:
    """{name: sqrt(mean over splits and rows of (pred − truth)²)} for every name in
    NUISANCES; NaN where `preds` (name -> (S, n)) has no such nuisance."""
    return {k: (jnp.sqrt(((preds[k] - truth[k][None]) ** 2).mean()) if k in preds
                else jnp.asarray(jnp.nan)) for k in NUISANCES}


def _no_rmse():
    return {k: jnp.asarray(jnp.nan) for k in NUISANCES}


def _dml(make_learners, model="plr", score=None):
    def build(cfg):
        core = dml.estimator(make_learners(cfg), model, score, cfg.dml.n_folds, cfg.dml.clip,
                             cfg.dml.aggregation)

        def fn(y, d, x, c, truth, key):
            del c
            k_f, k_c = jax.random.split(key)
            folds = dml.draw_folds(k_f, y.shape[0], cfg.dml.n_folds, cfg.dml.n_rep)
            out = core(y, d, x, folds, k_c)
            rmse = nuisance_rmse(out["preds"], true_nuisances(cfg.sim.theta, *truth))
            return out["theta"], out["se"], rmse
        return fn
    return build


def _ridge(cfg):
    return lrn.ridge(tuple(cfg.dml.ridge_lambdas))


def _simple(f):
    """A (y, d, x, c, key) -> (θ̂, se) baseline as an estimator without nuisances."""
    return lambda cfg: (lambda y, d, x, c, truth, key: (*f(y, d, x, c, key), _no_rmse()))


ESTIMATORS: dict[str, Spec] = {
    "naive": Spec(None, True, _simple(lambda y, d, x, c, key: baselines.naive(y, d))),
    "oracle": Spec("confounder", True,
                   _simple(lambda y, d, x, c, key: baselines.oracle(y, d, c))),
    "s_linear_latent": Spec("cnn", True,
                            _simple(lambda y, d, x, c, key: baselines.s_linear(y, d, x))),
    "s_mlp_latent": Spec("cnn", False, lambda cfg: _simple(
        lambda y, d, x, c, key: (baselines.s_learner(_mlp(cfg, "regression"), y, d, x, key),
                                 jnp.nan))(cfg)),
    "dml_linear_pixels": Spec("pixels", True, _dml(lambda cfg: {
        "ml_l": _ridge(cfg), "ml_m": _ridge(cfg)})),
    "dml_mlp_pixels": Spec("pixels", True, _dml(lambda cfg: {
        "ml_l": _mlp(cfg, "regression"), "ml_m": _mlp(cfg, "classification")})),
    "dml_linear_latent": Spec("cnn", True, _dml(lambda cfg: {
        "ml_l": _ridge(cfg), "ml_m": lrn.logistic(cfg.dml.logistic_l2)})),
    "dml_ols_latent": Spec("cnn", True, _dml(lambda cfg: {
        "ml_l": lrn.ridge((0.0,)), "ml_m": lrn.logistic(cfg.dml.logistic_l2)})),
    "dml_mlp_logit_latent": Spec("cnn", True, _dml(lambda cfg: {
        "ml_l": _mlp(cfg, "regression"), "ml_m": lrn.logistic(cfg.dml.logistic_l2)})),
    "dml_lasso_latent": Spec("cnn", True, _dml(lambda cfg: {
        "ml_l": lrn.lasso(cfg.dml.lasso_alpha), "ml_m": lrn.logistic(cfg.dml.logistic_l2)})),
    "dml_mlp_latent": Spec("cnn", True, _dml(lambda cfg: {
        "ml_l": _mlp(cfg, "regression"), "ml_m": _mlp(cfg, "classification")})),
    "dml_iv_mlp_latent": Spec("cnn", True, _dml(lambda cfg: {
        "ml_l": _mlp(cfg, "regression"), "ml_m": _mlp(cfg, "classification"),
        "ml_g": _mlp(cfg, "regression")}, score="iv_type")),
    "irm_mlp_latent": Spec("cnn", True, _dml(lambda cfg: {
        "ml_g": _mlp(cfg, "regression"), "ml_m": _mlp(cfg, "classification")}, model="irm")),
    "dml_mlp_ae": Spec("pixel_ae", True, _dml(lambda cfg: {
        "ml_l": _mlp(cfg, "regression"), "ml_m": _mlp(cfg, "classification")})),
}


def run(name: str, cfg, x_pool, c_pool, reps, key, rep_batch: int):
    """(θ̂ (R,), se (R,), rmse {nuisance: (R,)}) of estimator `name` over the replications
    `reps` (semisynthetic.Replications); x_pool (N, p) its adjustment set (None: unused),
    c_pool the true confounder of the pool ((N,) or (N, q))."""
    fn = ESTIMATORS[name].build(cfg)
    x_pool = jnp.zeros((c_pool.shape[0], 1)) if x_pool is None else jnp.asarray(x_pool)
    c_pool = jnp.asarray(c_pool)
    keys = jax.random.split(key, reps.y.shape[0])

    @functools.partial(jax.jit, static_argnums=())
    def go(x_pool, c_pool, idx, y, d, m, g, keys):
        def one(args):
            i, yy, dd, mm, gg, k = args
            return fn(yy, dd, x_pool[i], c_pool[i], (mm, gg), k)
        return jax.lax.map(one, (idx, y, d, m, g, keys), batch_size=rep_batch)

    return go(x_pool, c_pool, reps.idx, reps.y, reps.d, reps.propensity, reps.g, keys)
