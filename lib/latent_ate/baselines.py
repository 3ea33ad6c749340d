"""The paper's non-DML baselines: naive difference, oracle OLS, S-learners.

All are pure JAX on one replication and vmappable over replications:

  naive       OLS of Y on (1, D); θ̂ = the difference of arm means; classical OLS se
              (statsmodels' `bse`, as in the paper's notebooks).
  oracle      OLS of Y on (1, D, C) with C the true confounder (label or latent U).
  s_linear    S-learner with a linear model: OLS of Y on (1, D, Z) — the coefficient of D,
              with its classical se (= the oracle formula with Z in place of C).
  s_learner   S-learner with any regression learner f on (D, Z) fitted on all rows:
              θ̂ = mean_i f(1, Z_i) − f(0, Z_i); no standard error (the paper's causalml
              S-learner intervals come from a bootstrap we do not run).
"""
from __future__ import annotations

import jax.numpy as jnp

from lib.latent_ate.learners import Learner


def ols_coefficient(y, design, j: int = 1):
    """Coefficient j of the OLS of y (n,) on design (n, q) and its classical se
    sqrt(σ̂² [(XᵀX)⁺]_jj), σ̂² = RSS/(n − rank). The pseudo-inverse makes constant
    columns (dead ReLU units of a latent) harmless: they are dropped, not NaN."""
    n = design.shape[0]
    gram = design.T @ design
    inv = jnp.linalg.pinv(gram, hermitian=True)
    beta = inv @ (design.T @ y)
    resid = y - design @ beta
    rank = jnp.linalg.matrix_rank(gram)
    sigma2 = resid @ resid / (n - rank)
    return beta[j], jnp.sqrt(sigma2 * inv[j, j])


def naive(y, d):
    """θ̂, se of OLS Y ~ 1 + D."""
    return ols_coefficient(y, jnp.stack([jnp.ones_like(d), d], axis=1))


def oracle(y, d, confounder):
    """θ̂, se of OLS Y ~ 1 + D + C; confounder (n,) or (n, q)."""
    c = confounder[:, None] if confounder.ndim == 1 else confounder
    return ols_coefficient(y, jnp.concatenate([jnp.ones_like(d)[:, None], d[:, None], c], 1))


def s_linear(y, d, z):
    """θ̂, se of OLS Y ~ 1 + D + Z (the linear S-learner)."""
    return oracle(y, d, z)


def s_learner(learner: Learner, y, d, z, key):
    """θ̂ = mean f(1, Z) − f(0, Z) with f fitted on (D, Z) -> Y over all rows."""
    if learner.task != "regression":
        raise ValueError(f"the S-learner needs a regression learner, got {learner.name!r}")
    n = y.shape[0]
    x = jnp.concatenate([d[:, None], z], axis=1)
    x_pred = jnp.concatenate([x.at[:, 0].set(1.0), x.at[:, 0].set(0.0)], axis=0)
    pred = learner.fit_predict(x, y, jnp.ones_like(y), x_pred, key)
    return (pred[:n] - pred[n:]).mean()
