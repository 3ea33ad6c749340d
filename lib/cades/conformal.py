"""Split-conformal p-values, the Bonferroni combination, the calibration-conditional ε, and
the CADES detector API.

Two-sided conformal p-value of a test score s against n calibration scores (CADES code):

    p_right = (#{cal >= s} + 1)/(n + 1),  p_left = (#{cal <= s} + 1)/(n + 1),
    p = min(2 p_right, 2 p_left, 1)

(the code writes #{cal > s} for p_right; counting ties, as here, keeps p valid when scores
tie and is identical otherwise). Bonferroni over M scores (paper: M = 2):

    p_cor = min(M (1 + ε) min_s p_s, 1);   reject (anomaly) iff p_cor <= α

ε = 0 gives marginal FPR <= α (Prop. 3.3). `conditional_epsilon` chooses the smallest
ε >= 0 with P_{D_cal}(FPR | D_cal > α) <= δ (the calibration-conditional guarantee,
Thm 3.4). Our derivation, since the paper's exact condition is not in the notes: the
two-sided test of score s rejects iff s is beyond the k-th most extreme calibration score
on either side, k = ⌊α(n+1)/(2M(1+ε))⌋, so FPR_s | D_cal ~ Beta(2k, n + 1 − 2k) for
continuous scores (Dirichlet aggregation of the two tails); a union bound over the M scores
gives the condition Beta.ppf(1 − δ/M; 2k, n + 1 − 2k) <= α/M.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np


def two_sided_p(cal: jnp.ndarray, test: jnp.ndarray) -> jnp.ndarray:
    """cal (n,), test (m,) -> two-sided conformal p-values (m,). jit/vmap friendly."""
    n = cal.shape[-1]
    srt = jnp.sort(cal)
    n_le = jnp.searchsorted(srt, test, side="right")          # #{cal <= s}
    n_ge = n - jnp.searchsorted(srt, test, side="left")       # #{cal >= s}
    p_right = (n_ge + 1) / (n + 1)
    p_left = (n_le + 1) / (n + 1)
    return jnp.minimum(jnp.minimum(2 * p_right, 2 * p_left), 1.0)


def one_sided_p(cal: jnp.ndarray, test: jnp.ndarray) -> jnp.ndarray:
    """Right-tailed conformal p-value (#{cal >= s} + 1)/(n + 1), (m,)."""
    n = cal.shape[-1]
    return (n - jnp.searchsorted(jnp.sort(cal), test, side="left") + 1) / (n + 1)


def bonferroni(ps: jnp.ndarray, epsilon: float = 0.0) -> jnp.ndarray:
    """ps (M, m) -> p_cor (m,) = min(M (1 + ε) min_s p_s, 1)."""
    M = ps.shape[0]
    return jnp.minimum(M * (1.0 + epsilon) * ps.min(axis=0), 1.0)


def conditional_epsilon(n: int, alpha: float, delta: float, num_scores: int = 2,
                        strict: bool = True) -> float:
    """Smallest ε >= 0 with P(FPR | D_cal > α) <= δ for the Bonferroni test (see module doc).

    When n is too small for (α, δ) no finite ε works: ValueError if `strict`, else inf (the
    test then never rejects, which trivially holds the level).
    """
    from scipy import stats      # 0.8 s to import; only these two bounds need it
    M = num_scores
    k_best = 0
    for k in range(1, (n + 1) // 2 + 1):
        if stats.beta.ppf(1.0 - delta / M, 2 * k, n + 1 - 2 * k) <= alpha / M:
            k_best = k
        else:
            break
    if k_best == 0:
        if not strict:
            return float("inf")
        raise ValueError(f"n = {n} calibration sequences are too few for a calibration-"
                         f"conditional guarantee at alpha = {alpha}, delta = {delta} "
                         f"({M} scores); use more calibration data or larger alpha/delta")
    return float(max(0.0, alpha * (n + 1) / (2 * M * (k_best + 0.5)) - 1.0))


def conditional_fpr_quantile(n: int, alpha: float, delta: float, epsilon: float,
                             num_scores: int = 2) -> float:
    """The (1 − δ/M) quantile bound M · Beta.ppf(1 − δ/M; 2k, n+1−2k) on FPR | D_cal."""
    from scipy import stats
    M = num_scores
    k = int(np.floor(alpha * (n + 1) / (2 * M * (1.0 + epsilon))))
    if k == 0:
        return 0.0
    return float(M * stats.beta.ppf(1.0 - delta / M, 2 * k, n + 1 - 2 * k))


# ----------------------------------------------------------------------------- detector


class CADES:
    """fit on in-distribution sequences, calibrate on a held-out split, then test.

        det = CADES(fit_fn, statistics)      # fit_fn(train Events) -> compensator fn
        det.fit(train).calibrate(cal)
        p = det.p_values(test)               # (m,) Bonferroni-combined p-values
        flags = det.detect(test, alpha=0.05)

    `statistics` = {name: fn(Rescaled) -> (B,)} are the non-conformity scores (CADES:
    s_arr and s_int, `lib.cades.baselines.statistic_fns`); with one statistic the test is
    that statistic's two-sided conformal test (M = 1).
    """

    def __init__(self, fit_fn: Callable, statistics: Mapping[str, Callable], epsilon: float = 0.0):
        self.fit_fn, self.statistics, self.epsilon = fit_fn, dict(statistics), float(epsilon)
        self.scorer = None
        self.cal_scores = None

    def fit(self, train) -> "CADES":
        from lib.cades.baselines import make_scorer  # noqa: PLC0415
        self.scorer = make_scorer(self.fit_fn(train), self.statistics)
        return self

    def scores(self, ev) -> dict[str, np.ndarray]:
        if self.scorer is None:
            raise ValueError("CADES: call fit(train) before scoring sequences")
        return self.scorer(ev)

    def calibrate(self, cal) -> "CADES":
        self.cal_scores = self.scores(cal)
        return self

    def score_p_values(self, ev) -> dict[str, np.ndarray]:
        if self.scorer is None:
            raise ValueError("CADES: call fit(train) before computing p-values")
        if self.cal_scores is None:
            raise ValueError("CADES: call calibrate(cal) before computing p-values")
        test = self.scores(ev)
        return {k: np.asarray(two_sided_p(jnp.asarray(self.cal_scores[k]), jnp.asarray(v)))
                for k, v in test.items()}

    def p_values(self, ev) -> np.ndarray:
        ps = self.score_p_values(ev)
        return np.asarray(bonferroni(jnp.asarray(np.stack(list(ps.values()))), self.epsilon))

    def detect(self, ev, alpha: float) -> np.ndarray:
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha = {alpha!r} must be in (0, 1)")
        return self.p_values(ev) <= alpha


# ----------------------------------------------------------------------------- many splits


def split_fpr(scores: jnp.ndarray, perms: jnp.ndarray, n_cal: int, n_test: int,
              alphas: Sequence[float], epsilons: Sequence[float]) -> jnp.ndarray:
    """Empirical FPR of the Bonferroni test for many calibration/test splits at once.

    scores (M, P): M statistics of P in-distribution sequences; perms (R, P): one
    permutation per repetition (first n_cal -> calibration, next n_test -> test).
    Returns (R, len(epsilons), len(alphas)) fractions of test sequences flagged.
    """
    alphas = jnp.asarray(alphas)
    eps = jnp.asarray(epsilons)

    def one(perm):
        cal = scores[:, perm[:n_cal]]
        test = scores[:, perm[n_cal:n_cal + n_test]]
        ps = jax.vmap(two_sided_p)(cal, test)                          # (M, n_test)
        pmin = ps.min(axis=0)
        M = scores.shape[0]
        pcor = jnp.minimum(M * (1.0 + eps)[:, None] * pmin[None, :], 1.0)   # (E, n_test)
        return (pcor[:, None, :] <= alphas[None, :, None]).mean(-1)

    return jax.vmap(one)(perms)
