"""Nuisance learners for double machine learning, all behind one interface.

A `Learner` is a pure function

    fit_predict(x (n, p), y (n,), w (n,), x_pred (m, p), key) -> predictions (m,)

that fits on the rows of (x, y) with weight w > 0 (w ∈ {0, 1}: padding rows and, for the
IRM, the other treatment arm get 0) and predicts the rows of x_pred. Regression learners
return E[y | x]; classification learners return P(y = 1 | x) for y ∈ {0, 1}. Shapes are
static and the weights enter every loss term and statistic (including the
standardisation), so a JAX learner is vmappable over folds, sample splits and
replications (`vmappable=True`): cross-fitting K folds × S splits × R replications is one
batched call (lib/latent_ate/dml.py gathers each fold's training and prediction rows).

Learners:
  ridge(lambdas)        closed form; several λ -> generalised cross-validation (GCV) over
                        the λ grid from one eigendecomposition; λ = 0 is OLS.
  logistic(l2)          Newton–IRLS, L2 penalty on the slopes (not the intercept).
  lasso(alpha)          FISTA on (1/2Σw) Σ w (y − b − xβ)² + α‖β‖₁ (scikit-learn's scaling).
  mlp(...)              Flax MLP, full-batch or minibatch Adam (optax), L2 penalty and
                        (optional) early stopping,
                        both chosen inside the training rows: by cross-validation over a λ
                        grid and the stopping checkpoint (penalty="cv"), or a fixed /
                        1/n-scaled λ with early stopping on a held-out part (see `mlp`).
                        Regression: MSE on standardised y; classification: BCE.
  sklearn_learner(est)  any scikit-learn estimator (not vmappable; looped), for comparison.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim
from lib.nn.mlp import MLP

TASKS = ("regression", "classification")


class Learner(NamedTuple):
    """name; task ∈ TASKS; fit_predict(x, y, w, x_pred, key) -> (m,); vmappable (pure JAX)."""
    name: str
    task: str
    fit_predict: Callable[[jax.Array, jax.Array, jax.Array, jax.Array], jax.Array]
    vmappable: bool = True


def _weighted_moments(x, w):
    """Weighted mean (p,) and standard deviation (p,) of the rows of x (n, p); std 0 -> 1."""
    sw = jnp.maximum(w.sum(), 1.0)
    mean = (w[:, None] * x).sum(0) / sw
    var = (w[:, None] * (x - mean) ** 2).sum(0) / sw
    std = jnp.sqrt(var)
    return mean, jnp.where(std > 1e-8, std, 1.0)


# ----------------------------------------------------------------------------- ridge / OLS


def ridge_fit(x, y, w, lambdas: Sequence[float]):
    """Weighted ridge with an unpenalised intercept; returns (coef (p,), intercept, λ chosen).

    Minimises Σ_i w_i (y_i − b − x_i β)² + λ‖β‖². One λ: solve (XᶜᵀWXᶜ + λI)β = XᶜᵀW yᶜ
    (centred at the weighted means; λ = 0 is OLS). Several: GCV(λ) = (RSS/N)/(1 − df/N)²
    with df = Σ_j s_j/(s_j + λ), N = Σ w, evaluated for the whole grid from one
    eigendecomposition of XᶜᵀWXᶜ (p × p), or of W^½XᶜXᶜᵀW^½ (n × n) when n < p; the
    minimiser is used. λ = 0 alone (OLS) is the minimum-norm least-squares solution.
    """
    ols = len(lambdas) == 1 and float(np.asarray(lambdas)[0]) == 0.0
    lambdas = jnp.asarray(lambdas, dtype=x.dtype)
    sw = jnp.maximum(w.sum(), 1.0)
    xm = (w[:, None] * x).sum(0) / sw
    ym = (w * y).sum() / sw
    sq = jnp.sqrt(w)
    xc = (x - xm) * sq[:, None]
    yc = (y - ym) * sq
    gram = xc.T @ xc
    rhs = xc.T @ yc
    if ols:
        # λ = 0: the minimum-norm least-squares solution, defined also when XᶜᵀWXᶜ is
        # singular (constant "dead" features): scikit-learn's LinearRegression
        coef = jnp.linalg.lstsq(xc, yc)[0]
        return coef, ym - xm @ coef, lambdas[0]
    if lambdas.shape[0] == 1:
        lam = lambdas[0]
        coef = jnp.linalg.solve(gram + lam * jnp.eye(x.shape[1], dtype=x.dtype), rhs)
        return coef, ym - xm @ coef, lam
    if x.shape[0] < x.shape[1]:
        # dual: XᶜXᶜᵀ = U diag(s) Uᵀ (n × n, cheaper when n < p); the nonzero spectrum
        # and the projections c = Uᵀyᶜ·√s give the same GCV, β = Xᶜᵀ U (Uᵀyᶜ/(s + λ))
        s, u = jnp.linalg.eigh(xc @ xc.T)
        s = jnp.maximum(s, 0.0)
        uy = u.T @ yc
        c2 = s * uy ** 2
    else:
        s, v = jnp.linalg.eigh(gram)
        s = jnp.maximum(s, 0.0)
        c = v.T @ rhs                                        # (p,)
        c2 = c ** 2
    shrink = 1.0 / (s[None, :] + lambdas[:, None])           # (L, r)
    yy = yc @ yc
    rss = yy - 2 * (c2 * shrink).sum(1) + (s * c2 * shrink ** 2).sum(1)
    df = (s[None, :] * shrink).sum(1)
    gcv = (rss / sw) / jnp.maximum(1.0 - df / sw, 1e-6) ** 2
    j = jnp.argmin(gcv)
    if x.shape[0] < x.shape[1]:
        coef = xc.T @ (u @ (uy * shrink[j]))
    else:
        coef = v @ (c * shrink[j])
    return coef, ym - xm @ coef, lambdas[j]


def ridge(lambdas: Sequence[float] = (0.0,), name: str | None = None) -> Learner:
    """Ridge regression (OLS for λ = 0; GCV over λ when several are given)."""
    lambdas = tuple(float(v) for v in lambdas)
    if not lambdas or min(lambdas) < 0:
        raise ValueError(f"ridge lambdas must be a non-empty sequence of values >= 0, "
                         f"got {lambdas}")

    def fit_predict(x, y, w, x_pred, key):
        del key
        coef, intercept, _ = ridge_fit(x, y, w, lambdas)
        return x_pred @ coef + intercept

    default = "ols" if lambdas == (0.0,) else ("ridge" if len(lambdas) == 1 else "ridge_gcv")
    return Learner(name or default, "regression", fit_predict)


# ----------------------------------------------------------------------------- logistic


def logistic_fit(x, y, w, l2: float, num_iter: int = 30):
    """Weighted logistic regression by Newton–IRLS; returns (coef (p,), intercept).

    Minimises Σ_i w_i ℓ(y_i, b + x_i β) + (l2/2)‖β‖² (ℓ the log-loss; the same objective as
    scikit-learn's LogisticRegression with C = 1/l2). `num_iter` full Newton steps from 0,
    with a step halving guard so that the iteration is monotone on nearly separable data.
    """
    n, p = x.shape
    xa = jnp.concatenate([jnp.ones((n, 1), x.dtype), x], axis=1)
    pen = jnp.concatenate([jnp.zeros((1,), x.dtype), jnp.full((p,), l2, x.dtype)])

    def objective(beta):
        z = xa @ beta
        return (w * (jnp.logaddexp(0.0, z) - y * z)).sum() + 0.5 * (pen * beta ** 2).sum()

    def step(_, beta):
        z = xa @ beta
        prob = jax.nn.sigmoid(z)
        grad = xa.T @ (w * (prob - y)) + pen * beta
        hess = (xa * (w * prob * (1 - prob))[:, None]).T @ xa + jnp.diag(pen)
        hess = hess + 1e-10 * jnp.trace(hess) / (p + 1) * jnp.eye(p + 1, dtype=x.dtype)
        delta = jnp.linalg.solve(hess, grad)
        f0 = objective(beta)
        ts = 0.5 ** jnp.arange(12, dtype=x.dtype)
        fs = jax.vmap(lambda t: objective(beta - t * delta))(ts)
        ok = fs <= f0
        t = jnp.where(ok.any(), ts[jnp.argmax(ok)], 0.0)
        return beta - t * delta

    beta = jax.lax.fori_loop(0, num_iter, step, jnp.zeros((p + 1,), x.dtype))
    return beta[1:], beta[0]


def logistic(l2: float = 1.0, num_iter: int = 30, name: str | None = None) -> Learner:
    """L2-penalised logistic regression; predicts P(y = 1 | x)."""
    if l2 < 0 or num_iter < 1:
        raise ValueError(f"logistic needs l2 >= 0 and num_iter >= 1, got {l2}, {num_iter}")

    def fit_predict(x, y, w, x_pred, key):
        del key
        coef, intercept = logistic_fit(x, y, w, l2, num_iter)
        return jax.nn.sigmoid(x_pred @ coef + intercept)

    return Learner(name or "logistic", "classification", fit_predict)


# ----------------------------------------------------------------------------- lasso


def lasso_fit(x, y, w, alpha: float, num_iter: int = 500):
    """Weighted lasso by FISTA; returns (coef (p,), intercept).

    Objective (1/(2N)) Σ_i w_i (y_i − b − x_i β)² + α‖β‖₁, N = Σ w (scikit-learn's Lasso
    scaling); centred at the weighted means, step 1/L with L the largest eigenvalue of
    XᶜᵀWXᶜ/N (power iteration).
    """
    sw = jnp.maximum(w.sum(), 1.0)
    xm = (w[:, None] * x).sum(0) / sw
    ym = (w * y).sum() / sw
    xc = (x - xm) * jnp.sqrt(w)[:, None]
    yc = (y - ym) * jnp.sqrt(w)
    gram = xc.T @ xc / sw
    rhs = xc.T @ yc / sw

    def power(_, v):
        v = gram @ v
        return v / jnp.maximum(jnp.linalg.norm(v), 1e-30)

    v = jax.lax.fori_loop(0, 50, power, jnp.ones((x.shape[1],), x.dtype))
    lip = jnp.maximum(v @ gram @ v, 1e-12) * 1.01

    def soft(z, t):
        return jnp.sign(z) * jnp.maximum(jnp.abs(z) - t, 0.0)

    def step(_, carry):
        beta, z, t = carry
        beta_new = soft(z - (gram @ z - rhs) / lip, alpha / lip)
        t_new = (1 + jnp.sqrt(1 + 4 * t ** 2)) / 2
        z_new = beta_new + (t - 1) / t_new * (beta_new - beta)
        return beta_new, z_new, t_new

    zero = jnp.zeros((x.shape[1],), x.dtype)
    beta, _, _ = jax.lax.fori_loop(0, num_iter, step, (zero, zero, jnp.asarray(1.0, x.dtype)))
    return beta, ym - xm @ beta


def lasso(alpha: float, num_iter: int = 500, name: str | None = None) -> Learner:
    """Lasso regression with a fixed penalty α."""
    if alpha < 0 or num_iter < 1:
        raise ValueError(f"lasso needs alpha >= 0 and num_iter >= 1, got {alpha}, {num_iter}")

    def fit_predict(x, y, w, x_pred, key):
        del key
        coef, intercept = lasso_fit(x, y, w, alpha, num_iter)
        return x_pred @ coef + intercept

    return Learner(name or "lasso", "regression", fit_predict)


# ----------------------------------------------------------------------------- MLP


PENALTIES = ("cv", "scaled", "fixed")


def _losses(model, classify: bool):
    """(loss_fn(params, x, y, w), penalised(params, x, y, w, l2)): the w-weighted mean
    squared error (logistic loss when `classify`) and that plus (l2/2)·Σ‖kernel‖²."""
    def loss_fn(params, x, y, w):
        out = model.apply(params, x)[..., 0]
        per = optax.sigmoid_binary_cross_entropy(out, y) if classify else (out - y) ** 2
        return (w * per).sum() / jnp.maximum(w.sum(), 1.0)

    def penalised(params, x, y, w, l2):
        kernels = [v for path, v in jax.tree_util.tree_leaves_with_path(params)
                   if "kernel" in jax.tree_util.keystr(path)]
        return loss_fn(params, x, y, w) + 0.5 * l2 * sum((k ** 2).sum() for k in kernels)

    return loss_fn, penalised


def _standardise(x, y, tr, classify: bool):
    """(xs, ys, (mean, std, y_mean, y_std)): x (and y, for regression) standardised with
    the weighted moments of the rows tr."""
    mean, std = _weighted_moments(x, tr)
    if classify:
        return (x - mean) / std, y, (mean, std, 0.0, 1.0)
    y_mean = (tr * y).sum() / jnp.maximum(tr.sum(), 1.0)
    y_std = jnp.sqrt((tr * (y - y_mean) ** 2).sum() / jnp.maximum(tr.sum(), 1.0))
    y_std = jnp.where(y_std > 1e-8, y_std, 1.0)
    return (x - mean) / std, (y - y_mean) / y_std, (mean, std, y_mean, y_std)


def _keep_best(val_loss, chunk, stop_at: int, n_chunks: int):
    """Run `chunk(params, state, i) -> (params, state)` n_chunks times in a scan from
    (params, state), tracking the val loss after each: (best params, curve (n_chunks,)).
    stop_at < 0 keeps the lowest val loss so far (the initial parameters included);
    stop_at = t >= 0 keeps the parameters after chunk t + 1."""
    def run(params, state):
        def body(carry, i):
            params, state, best, best_loss = carry
            params, state = chunk(params, state, i)
            vloss = val_loss(params)
            keep = jnp.where(stop_at < 0, vloss < best_loss, i == stop_at)
            best = jax.tree.map(lambda a, b: jnp.where(keep, a, b), params, best)
            return (params, state, best, jnp.where(keep, vloss, best_loss)), vloss

        (_, _, best, _), curve = jax.lax.scan(body, (params, state, params, val_loss(params)),
                                              jnp.arange(n_chunks))
        return best, curve
    return run


def _mlp_trainer(model, lr: float, classify: bool, steps: int, eval_every: int):
    """train(x, y, tr, val, l2, key, stop_at) -> (params, (mean, std, y_mean, y_std), curve).

    Standardises x (and, for regression, y) with the weighted moments of the rows tr,
    initialises the network from `key`, runs `steps` full-batch Adam steps on
    mean loss(tr) + (l2/2)·Σ‖kernel‖² (biases unpenalised; l2 may be traced) and, after each
    of the T = steps // eval_every chunks, records the mean loss on the rows val (curve (T,)).
    stop_at < 0: keeps the parameters with the lowest val loss so far, the initial ones
    included (early stopping); stop_at = t >= 0: keeps the parameters after chunk t + 1.
    """
    opt = optax.adam(lr)
    n_chunks = max(steps // eval_every, 1)
    loss_fn, penalised = _losses(model, classify)

    def train(x, y, tr, val, l2, key, stop_at):
        xs, ys, moments = _standardise(x, y, tr, classify)
        params = model.init(key, xs[:1])

        def chunk(params, state, i):
            (params, state), _ = optim.descend(lambda p: penalised(p, xs, ys, tr, l2), params,
                                               state, opt, eval_every)
            return params, state

        best, curve = _keep_best(lambda p: loss_fn(p, xs, ys, val), chunk, stop_at,
                                 n_chunks)(params, opt.init(params))
        return best, moments, curve

    return train


def _mlp_minibatch_trainer(model, lr: float, classify: bool, epochs: int, batch_size: int):
    """The minibatch counterpart of `_mlp_trainer`, same signature and returns.

    Each of the `epochs` chunks is one pass over the rows tr in a fresh random order (drawn
    from `key`), in ⌈N/B⌉ minibatches of B = `batch_size` rows (N the number of row slots;
    the last batch of an epoch is smaller when the rows tr do not fill it, scikit-learn's
    `gen_batches`), one Adam step per minibatch on mean loss(batch) + (l2/2)·Σ‖kernel‖²;
    a batch with no row of tr (padding slots, the other IRM arm) makes no step. The curve
    records the mean loss on the rows val after every epoch; `stop_at` as in `_mlp_trainer`.
    """
    opt = optax.adam(lr)
    loss_fn, penalised = _losses(model, classify)
    grad_fn = jax.grad(penalised)

    def train(x, y, tr, val, l2, key, stop_at):
        n = x.shape[0]
        n_batches = -(-n // batch_size)
        xs, ys, moments = _standardise(x, y, tr, classify)
        k_order = jax.random.fold_in(key, 1)        # init from `key`, as `_mlp_trainer`
        params = model.init(key, xs[:1])
        n_fit = (tr > 0).sum()
        slots = jnp.arange(n_batches * batch_size).reshape(n_batches, batch_size)

        def epoch(params, state, i):
            # rows of tr first, in random order; slot j of the epoch holds row order[j]
            u = jax.random.uniform(jax.random.fold_in(k_order, i), (n,)) + 2.0 * (tr <= 0)
            order = jnp.argsort(u)
            rows = order[slots % n]                                       # (nb, B)
            live = (slots < n_fit) * tr[rows]

            def step(c, b):
                params, state = c
                wb = live[b]
                grads = grad_fn(params, xs[rows[b]], ys[rows[b]], wb, l2)
                updates, new_state = opt.update(grads, state, params)
                new_params = optax.apply_updates(params, updates)
                go = wb.sum() > 0
                pick = lambda a, b_: jax.tree.map(lambda u_, v_: jnp.where(go, u_, v_), a, b_)
                return (pick(new_params, params), pick(new_state, state)), None

            (params, state), _ = jax.lax.scan(step, (params, state), jnp.arange(n_batches))
            return params, state

        best, curve = _keep_best(lambda p: loss_fn(p, xs, ys, val), epoch, stop_at,
                                 epochs)(params, opt.init(params))
        return best, moments, curve

    return train


def mlp(task: str, hidden: Sequence[int] = (64, 64), lr: float = 1e-3, steps: int = 300,
        val_fraction: float = 0.2, l2: float = 1e-4, eval_every: int = 5,
        name: str | None = None, penalty: str = "fixed",
        l2_grid: Sequence[float] = (1e-3, 1e-2, 1e-1, 1.0), cv_folds: int = 3,
        batch_size: int = 0, epochs: int = 0, early_stopping: bool = True) -> Learner:
    """A Flax MLP nuisance trained by full-batch Adam with an L2 penalty and early stopping.

    Only the training rows (w > 0) are used; the cross-fitting evaluation fold (x_pred) is
    never seen. Inputs (and regression targets) are standardised on the rows trained on;
    the loss is MSE (regression) or BCE (classification) averaged over those rows, plus
    (λ/2)·Σ‖kernel‖². How λ and the stopping time are chosen (`penalty`):

      fixed   λ = `l2`; a random `val_fraction` of the training rows (drawn from `key`) is
              held out and the parameters with the lowest held-out loss over the
              `steps // eval_every` checkpoints are kept (early stopping).
      scaled  the same with λ = `l2` / n_fit, n_fit the number of rows trained on: the
              penalty of `l2`·(1/2)‖W‖² on the *summed* loss (scikit-learn's `alpha`
              convention), so the regularisation vanishes as n grows.
      cv      `cv_folds`-fold cross-validation inside the training rows: for every λ in
              `l2_grid` and every inner fold v, the network is trained on the other inner
              folds and its loss on fold v recorded at every checkpoint; (λ*, t*) minimise
              the loss averaged over the inner folds, and the network is refitted on all
              training rows with λ* and stopped at checkpoint t* (|grid|·V + 1 fits,
              vmapped). No held-out rows beyond the inner folds; `val_fraction` unused.

    Minibatch training (`batch_size` B > 0, the way scikit-learn's MLPRegressor trains):
    `epochs` passes over the rows in random minibatches of B (`_mlp_minibatch_trainer`)
    instead of `steps` full-batch steps, the checkpoints being the ends of epochs; `steps`
    and `eval_every` are then unused. `early_stopping=False` (penalty "fixed" or "scaled"
    only) trains on all the training rows and keeps the final parameters (no held-out
    part; scikit-learn's default `early_stopping=False`).

    Penalty conventions: λ multiplies (1/2)·Σ‖kernel‖² next to the *mean* loss on the
    standardised target. scikit-learn's MLPRegressor minimises (1/2)·mean squared error +
    (α/(2B))·Σ‖W‖² per batch, i.e. MSE + (α/B)·Σ‖W‖², so its α corresponds to λ = 2α/B
    (α = 1e-4, B = 200: λ = 1e-6), up to var(y), which the standardisation divides out.

    Every fit is a fixed-length `lax.scan` (early stopping keeps parameters instead of
    breaking the loop), so the learner stays vmappable.
    """
    if task not in TASKS:
        raise ValueError(f"mlp task must be one of {TASKS}, got {task!r}")
    if not 0.0 < val_fraction < 1.0 or steps < 1 or eval_every < 1 or lr <= 0 or l2 < 0:
        raise ValueError(f"mlp needs 0 < val_fraction < 1, steps >= 1, eval_every >= 1, lr > 0, "
                         f"l2 >= 0; got {val_fraction}, {steps}, {eval_every}, {lr}, {l2}")
    if penalty not in PENALTIES:
        raise ValueError(f"mlp penalty must be one of {PENALTIES}, got {penalty!r}")
    l2_grid = tuple(float(v) for v in l2_grid)
    if penalty == "cv" and (not l2_grid or min(l2_grid) < 0 or cv_folds < 2):
        raise ValueError(f"mlp penalty 'cv' needs a non-empty l2_grid of values >= 0 and "
                         f"cv_folds >= 2; got {l2_grid}, {cv_folds}")
    if batch_size < 0 or (batch_size > 0 and epochs < 1):
        raise ValueError(f"mlp minibatch training needs batch_size >= 1 and epochs >= 1 "
                         f"(batch_size = 0: full batch); got {batch_size}, {epochs}")
    if not early_stopping and penalty == "cv":
        raise ValueError("mlp early_stopping=False needs penalty 'fixed' or 'scaled' (the "
                         "'cv' penalty chooses the stopping checkpoint itself)")
    model = MLP(widths=tuple(hidden), out=1)          # (n, p) -> (n, 1)
    classify = task == "classification"
    if batch_size:
        train = _mlp_minibatch_trainer(model, lr, classify, epochs, batch_size)
        n_chunks = epochs
    else:
        train = _mlp_trainer(model, lr, classify, steps, eval_every)
        n_chunks = max(steps // eval_every, 1)

    def predict(params, moments, x_pred):
        mean, std, y_mean, y_std = moments
        out = model.apply(params, (x_pred - mean) / std)[..., 0]
        return jax.nn.sigmoid(out) if classify else out * y_std + y_mean

    def fit_holdout(x, y, w, x_pred, key):
        k_split, k_init = jax.random.split(key)
        if early_stopping:
            val = w * (jax.random.uniform(k_split, w.shape) < val_fraction)
        else:
            val = jnp.zeros_like(w)
        tr = w - val
        lam = l2 if penalty == "fixed" else l2 / jnp.maximum(tr.sum(), 1.0)
        params, moments, _ = train(x, y, tr, val, lam, k_init,
                                   -1 if early_stopping else n_chunks - 1)
        return predict(params, moments, x_pred)

    def fit_cv(x, y, w, x_pred, key):
        k_fold, k_cv, k_final = jax.random.split(key, 3)
        # balanced inner folds of the training rows (rows with w = 0 are ranked last)
        u = jax.random.uniform(k_fold, w.shape) + 2.0 * (w <= 0)
        inner = jnp.argsort(jnp.argsort(u)) % cv_folds
        grid = jnp.asarray(l2_grid, x.dtype)
        lams = jnp.repeat(grid, cv_folds)
        folds = jnp.tile(jnp.arange(cv_folds), len(l2_grid))

        def curve(lam, v, k):
            val = w * (inner == v)
            return train(x, y, w - val, val, lam, k, -1)[2]

        curves = jax.vmap(curve)(lams, folds, jax.random.split(k_cv, lams.shape[0]))
        cv_loss = curves.reshape(len(l2_grid), cv_folds, n_chunks).mean(1)      # (L, T)
        best = jnp.argmin(cv_loss.ravel())
        params, moments, _ = train(x, y, w, jnp.zeros_like(w), grid[best // n_chunks],
                                   k_final, best % n_chunks)
        return predict(params, moments, x_pred)

    fit_predict = fit_cv if penalty == "cv" else fit_holdout
    return Learner(name or f"mlp_{task[:5]}", task, fit_predict)


# ----------------------------------------------------------------------------- scikit-learn


def sklearn_learner(make_estimator: Callable[[], object], task: str,
                    name: str | None = None) -> Learner:
    """Wrap a scikit-learn estimator factory (fit on rows with w > 0, predict all rows).

    Classification uses `predict_proba(x_pred)[:, 1]`. Not vmappable: dml.py loops over folds.
    Needs scikit-learn (an optional dependency).
    """
    if task not in TASKS:
        raise ValueError(f"sklearn_learner task must be one of {TASKS}, got {task!r}")

    def fit_predict(x, y, w, x_pred, key):
        del key
        dtype = jnp.asarray(x).dtype
        x, y, w, x_pred = (np.asarray(a) for a in (x, y, w, x_pred))
        rows = w > 0
        est = make_estimator()
        est.fit(x[rows], y[rows])
        out = (est.predict_proba(x_pred)[:, 1] if task == "classification"
               else est.predict(x_pred))
        return jnp.asarray(out, dtype=dtype)

    label = name or f"sklearn_{type(make_estimator()).__name__}"
    return Learner(label, task, fit_predict, vmappable=False)
