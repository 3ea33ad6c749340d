"""Rates and last-iterate summaries from the records of many runs (numpy, host side).

Records are `lib.adam_abc.simulate.trajectory`'s: per run and segment (t_{k−1}, t_k] of
the record grid, the last, summed and largest squared gradient norm ‖∇f(θ_t)‖², each
(R runs, K record times).

* Non-asymptotic rate: for each horizon T, `avg` = (1/T) Σ_{t=1..T} E‖∇f(θ_t)‖² (every
  step), `min` = min_k E‖∇f(θ_{t_k})‖² over the record grid, `last` = E‖∇f(θ_T)‖², with E
  the mean over runs; the rate is the least-squares slope of log(stat) on log(T)
  (`loglog_slope`), with a bootstrap over runs (`bootstrap_slopes`).
* Asymptotic (last iterate): the L1 curve E‖∇f(θ_t)‖, the fraction of runs with
  ‖∇f(θ_t)‖ < δ, quantiles over runs of the tail supremum sup_{t <= s <= T} ‖∇f(θ_s)‖ over
  every step up to the horizon T (almost-sure convergence: every path's tail supremum
  tends to 0; a finite run can only show it falling on [t, T]).
"""
from __future__ import annotations

import numpy as np

QUANTILES = (0.5, 0.9, 0.99, 1.0)


def loglog_slope(x, y) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line log y = slope · log x + intercept."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if lx.shape != ly.shape or lx.size < 2:
        raise ValueError(f"need >= 2 matching points, got shapes {lx.shape} and {ly.shape}")
    slope, intercept = np.polyfit(lx, ly, 1)
    return float(slope), float(intercept)


def _per_run(records: dict, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """(time average over t = 1..T of ‖∇f(θ_t)‖² per run (R,), the grid values (R, K))."""
    total = np.sum(np.asarray(records["sum"], np.float64), axis=1) / horizon
    return total, np.asarray(records["last"], np.float64)


def horizon_stats(records: dict, horizon: int) -> dict[str, float]:
    """avg = (1/T) Σ_{t<=T} E‖∇f(θ_t)‖², min = min over the grid of E‖∇f(θ_{t_k})‖²,
    last = E‖∇f(θ_T)‖² (E: the mean over runs), from `trajectory` records (R, K)."""
    total, grid = _per_run(records, horizon)
    mean = grid.mean(axis=0)
    return {"avg": float(total.mean()), "min": float(mean.min()), "last": float(mean[-1])}


def bootstrap_slopes(horizons, records: list[dict], stat: str, num_boot: int,
                     seed: int = 0) -> np.ndarray:
    """Slopes of `stat` ("avg" | "min" | "last") vs T for `num_boot` resamples of the runs
    (each horizon's runs resampled independently, as they are independent), shape (B,)."""
    rng = np.random.default_rng(seed)
    per_t = []
    for horizon, rec in zip(horizons, records):
        total, grid = _per_run(rec, horizon)
        r = total.shape[0]
        weights = rng.multinomial(r, np.full(r, 1.0 / r), size=num_boot) / r   # (B, R)
        if stat == "avg":
            per_t.append(weights @ total)
        else:
            means = weights @ grid                                           # (B, K)
            per_t.append(means.min(axis=1) if stat == "min" else means[:, -1])
    logs = np.log(np.stack(per_t, axis=1))                                   # (B, H)
    lx = np.log(np.asarray(horizons, np.float64))
    lx = lx - lx.mean()
    return (logs - logs.mean(axis=1, keepdims=True)) @ lx / (lx @ lx)


def rate_summary(horizons, records: list[dict], num_boot: int = 200, seed: int = 0) -> dict:
    """Per-horizon avg / min / last and, for each, the log-log slope against T with a 95%
    bootstrap interval over runs; `records[i]` holds the runs of horizon T_i."""
    stats = [horizon_stats(r, t) for r, t in zip(records, horizons)]
    out = {"horizons": [int(t) for t in horizons],
           **{k: [s[k] for s in stats] for k in ("avg", "min", "last")},
           "finite_fraction": [float(np.mean(np.isfinite(r["sum"]).all(axis=1)))
                               for r in records]}
    for k in ("avg", "min", "last"):
        if not np.all(np.isfinite(out[k])) or min(out[k]) <= 0:
            out[f"slope_{k}"], out[f"slope_{k}_ci"] = float("nan"), [float("nan")] * 2
            continue
        out[f"slope_{k}"] = loglog_slope(horizons, out[k])[0]
        boot = bootstrap_slopes(horizons, records, k, num_boot, seed)
        out[f"slope_{k}_ci"] = [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))]
    return out


def tail_sup(values: np.ndarray) -> np.ndarray:
    """sup_{s >= t} over the time axis (axis 1) of (R, K) values: reverse running max."""
    return np.maximum.accumulate(np.asarray(values)[:, ::-1], axis=1)[:, ::-1]


def asymptotic_summary(times, records: dict, threshold: float, late_from: float = 0.1) -> dict:
    """Last-iterate summaries of `trajectory` records (R, K) at `times` (K,).

    Returns lists over the K times: `l1` E‖∇f(θ_t)‖, `frac_below` P(‖∇f(θ_t)‖ < δ),
    `tail_quantiles` {q: quantile over runs of sup_{s>=t_k}‖∇f(θ_s)‖} (the supremum over
    every step s from t_k to the last, from the segment maxima), `frac_tail_below`
    P(sup_{s>=t_k}‖∇f(θ_s)‖ < δ); and `late_slope`, the log-log slope of the L1 curve over
    t >= late_from · t_K (t > 0).
    """
    times = np.asarray(times, np.float64)
    norms = np.sqrt(np.asarray(records["last"], np.float64))
    seg_max = np.asarray(records["max"], np.float64)            # −inf on an empty segment
    seg_max = np.sqrt(np.maximum(np.where(np.isnan(seg_max), np.inf, seg_max), 0.0))
    # sup over s >= t_k = max(value at t_k, maxima of the later segments)
    later = np.concatenate([seg_max[:, 1:], np.full_like(seg_max[:, :1], -np.inf)], axis=1)
    sup = np.maximum(np.where(np.isfinite(norms), norms, np.inf), tail_sup(later))
    l1 = norms.mean(axis=0)
    late = (times >= late_from * times[-1]) & (times > 0)
    ok = late & np.isfinite(l1) & (l1 > 0)
    return {
        "times": [int(t) for t in times],
        "l1": l1.tolist(),
        "frac_below": np.mean(norms < threshold, axis=0).tolist(),
        "tail_quantiles": {str(q): np.quantile(sup, q, axis=0).tolist() for q in QUANTILES},
        "frac_tail_below": np.mean(sup < threshold, axis=0).tolist(),
        "late_slope": loglog_slope(times[ok], l1[ok])[0] if ok.sum() >= 2 else float("nan"),
        "finite_fraction": float(np.mean(np.isfinite(norms).all(axis=1))),
        "threshold": threshold,
    }
