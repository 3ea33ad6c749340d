"""Pass@K and Best@K from M rollouts per instance (SWE-Gym §4.1.1, App. B.1).

    resolved (N, M) bool   rollout j of instance i resolves it
    scores   (N, M) float  the verifier's p(YES) of that rollout

Pass@K: some rollout of a size-K subset resolves. Best@K: the subset's rollout with the
highest score resolves (ties: the lowest rollout index in the subset). The estimator is
the notes' (after Lightman et al.): S = 100 random size-K subsets (drawn independently
per instance, without replacement) of the M rollouts; the rate of each draw s is the
mean over instances, and we report the mean and the standard deviation over s.
`pass_at_k_exact` is the unbiased closed form 1 - C(M - c, K) / C(M, K) (Chen et al.),
which the subsampled Pass@K estimates.
"""
from __future__ import annotations

import math

import numpy as np


def _check(resolved: np.ndarray, scores: np.ndarray | None, k: int) -> None:
    if resolved.ndim != 2:
        raise ValueError(f"resolved must be (instances, rollouts), got shape {resolved.shape}")
    if scores is not None and scores.shape != resolved.shape:
        raise ValueError(f"scores shape {scores.shape} != resolved shape {resolved.shape}")
    if not 1 <= k <= resolved.shape[1]:
        raise ValueError(f"K = {k} must be in 1..M = {resolved.shape[1]}")


def subsample_at_k(resolved, scores, k: int, num_subsamples: int = 100,
                   seed: int = 0) -> dict[str, float]:
    """{pass_mean, pass_std, best_mean, best_std} at K (module docstring)."""
    resolved = np.asarray(resolved, bool)
    scores = np.asarray(scores, float)
    _check(resolved, scores, k)
    n, m = resolved.shape
    rng = np.random.default_rng([seed, k])
    pass_rates, best_rates = [], []
    for _ in range(num_subsamples):
        idx = np.sort(np.argsort(rng.random((n, m)), axis=1)[:, :k], axis=1)   # (N, K)
        r = np.take_along_axis(resolved, idx, 1)
        s = np.take_along_axis(scores, idx, 1)
        pass_rates.append(r.any(1).mean())
        best_rates.append(r[np.arange(n), np.argmax(s, 1)].mean())
    return {"pass_mean": float(np.mean(pass_rates)), "pass_std": float(np.std(pass_rates)),
            "best_mean": float(np.mean(best_rates)), "best_std": float(np.std(best_rates))}


def pass_at_k_exact(resolved, k: int) -> float:
    """Mean over instances of 1 - C(M - c, K) / C(M, K), c = resolved rollouts."""
    resolved = np.asarray(resolved, bool)
    _check(resolved, None, k)
    m = resolved.shape[1]
    vals = [1.0 - math.comb(m - int(c), k) / math.comb(m, k) for c in resolved.sum(1)]
    return float(np.mean(vals))


def curves(resolved, scores, ks, num_subsamples: int = 100, seed: int = 0) -> dict:
    """{K: subsample_at_k(...) + pass_exact} for each K of `ks`."""
    out = {}
    for k in ks:
        out[int(k)] = {**subsample_at_k(resolved, scores, int(k), num_subsamples, seed),
                       "pass_exact": pass_at_k_exact(resolved, int(k))}
    return out
