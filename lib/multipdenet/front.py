"""The cost–accuracy front on Navier–Stokes: HCTs per initial condition, the classical front
and where a learned point sits against it (issue 33 §1).

A point is `{"name", "family", "grid", "cost", "hct", ...}`: `cost` in wall seconds per
simulated time unit per trajectory, `hct` the mean over ICs of the vorticity-correlation
HCT (Kochkov et al. 2021). The front is the upper envelope of the classical points in
(log cost, HCT): `pareto` keeps the points no cheaper point beats, `hct_at` / `cost_at`
interpolate it linearly in log cost (never extrapolated).
"""
from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from lib.multipdenet import metrics
from lib.pde import navier_stokes


def resample(u: np.ndarray, m: int) -> np.ndarray:
    """Spectral truncation of channels-last fields `(..., n, n, C)` to `(..., m, m, C)`
    (m <= n, any m: modes with |k_x|, |k_y| < m/2 kept, the rest dropped)."""
    n = u.shape[-2]
    if m == n:
        return u
    if m > n:
        raise ValueError(f"cannot resample a {n}² field to the finer {m}²")
    f = np.fft.fft2(np.moveaxis(u, -1, -3), axes=(-2, -1))
    k = np.fft.fftfreq(n, 1.0 / n).astype(int)
    k = k[np.abs(k) < m / 2]
    src, dst = k % n, k % m
    out = np.zeros(f.shape[:-2] + (m, m), complex)
    out[..., dst[:, None], dst[None, :]] = f[..., src[:, None], src[None, :]]
    return np.moveaxis(np.real(np.fft.ifft2(out, axes=(-2, -1))) * (m / n) ** 2, -3, -1).astype(u.dtype)


def vorticity(u: np.ndarray, length: float) -> np.ndarray:
    """Channels-last velocity `(..., n, n, 2)` -> vorticity `(..., n, n)`."""
    flat = jnp.asarray(u).reshape((-1,) + u.shape[-3:])
    w = jax.vmap(lambda v: navier_stokes.velocity_to_vorticity(jnp.moveaxis(v, -1, 0), length))(flat)
    return np.asarray(w).reshape(u.shape[:-1])


def hcts(pred: np.ndarray, truth: np.ndarray, dt: float, threshold: float = 0.8) -> np.ndarray:
    """`(n_ics, T, ...)` prediction and truth -> `(n_ics,)` HCT of each IC's rollout
    (`metrics.high_correlation_time` of `metrics.correlation_per_step`)."""
    return np.asarray([float(metrics.high_correlation_time(
        metrics.correlation_per_step(jnp.asarray(p), jnp.asarray(t)), dt, threshold))
        for p, t in zip(pred, truth)])


def pareto(points: list[dict]) -> list[dict]:
    """The points, cheapest first, that have a higher HCT than every cheaper point."""
    out: list[dict] = []
    for p in sorted(points, key=lambda p: (p["cost"], -p["hct"])):
        if not out or p["hct"] > out[-1]["hct"]:
            out.append(p)
    return out


def hct_at(front: list[dict], cost: float) -> float | None:
    """The front's HCT at wall cost `cost` (linear in log cost between its points; beyond
    the costliest point its HCT, which that budget affords: a lower bound; None below the
    cheapest)."""
    if front and cost >= front[-1]["cost"]:
        return front[-1]["hct"]
    for a, b in zip(front, front[1:]):
        if a["cost"] <= cost <= b["cost"]:
            s = (math.log(cost) - math.log(a["cost"])) / (math.log(b["cost"]) - math.log(a["cost"]))
            return a["hct"] + s * (b["hct"] - a["hct"])
    return None


def cost_at(front: list[dict], hct: float) -> float | None:
    """The wall cost at which the front reaches HCT `hct` (the inverse of `hct_at`)."""
    for a, b in zip(front, front[1:]):
        if a["hct"] <= hct <= b["hct"]:
            s = (hct - a["hct"]) / (b["hct"] - a["hct"])
            return math.exp(math.log(a["cost"]) + s * (math.log(b["cost"]) - math.log(a["cost"])))
    if len(front) == 1 and front[0]["hct"] == hct:
        return front[0]["cost"]
    return None


def headline(point: dict, front: list[dict], dns_cost: float | None) -> dict:
    """A learned point against the front: HCT ratio at equal wall time, wall-time ratio at
    equal HCT (front cost / the point's cost: > 1 means the point is faster), and the
    paper-protocol speed-up against the fine DNS (its cost / the point's)."""
    at_cost, at_hct = hct_at(front, point["cost"]), cost_at(front, point["hct"])
    return {"hct_over_front_at_equal_wall": None if at_cost is None else point["hct"] / at_cost,
            "front_hct_at_equal_wall": at_cost,
            "wall_ratio_at_equal_hct": None if at_hct is None else at_hct / point["cost"],
            "front_cost_at_equal_hct": at_hct,
            "speedup_vs_fine_dns": None if dns_cost is None else dns_cost / point["cost"]}


def interleaved_rounds(cases: list[dict], repeats: int) -> None:
    """Time `repeats` rounds of every case's `compiled(params, u0)`, one call of each case per
    round, the order rotated each round (a change of the machine's load hits all cases
    alike); appends each call's wall seconds to `case["times"]`."""
    for r in range(repeats):
        k = r % len(cases)
        for case in cases[k:] + cases[:k]:
            t0 = time.perf_counter()
            jax.block_until_ready(case["compiled"](case["params"], case["u0"]))
            case.setdefault("times", []).append(time.perf_counter() - t0)
