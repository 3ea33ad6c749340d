"""The cost–accuracy front (Navier–Stokes, Burgers): HCTs per initial condition, the classical
front and where a learned point sits against it.

A point is `{"name", "family", "grid", "cost", "hct", ...}`: `cost` in wall seconds per
simulated time unit per trajectory, `hct` the mean over ICs of the HCT on the system's
accuracy field (`SYSTEMS`: vorticity correlation for Navier–Stokes, Kochkov et al. 2021;
velocity correlation for Burgers, which has no vorticity standard). The front is the upper
envelope of the classical points in (log cost, HCT): `pareto` keeps the points no cheaper
point beats, `hct_at` / `cost_at` interpolate it linearly in log cost (never extrapolated).
"""
from __future__ import annotations

import math
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from lib.common import cli, config as config_lib, paths as paths_lib, report
from lib.multipdenet import data as data_lib, metrics
from lib.pde import burgers, navier_stokes

# What differs between the systems of the front: the truth dataset (configs/pde_data/<pde>.py
# at `front` / `front_tiny`), the classical grids (default and tiny), the field of the
# headline HCT, the classical families (family, label of its points, marker), the markdown
# block that `--readme` splices and the figure's title.
SYSTEMS = {
    "navier_stokes": {
        # 80²: the front between 64² and 96² is interpolated in log cost; measured, 80² lies
        # below that line (HCT 5.44-5.53 against ~5.7), so it is a point, not an interpolation
        "grids": (32, 48, 64, 80, 96, 128), "tiny_grids": (16, 32), "accuracy": "vorticity",
        "families": (("spectral", "spectral", "o"), ("fd4_rk4", "FD4+RK4", "s")),
        "block": "front", "title": "NS Re = 1000"},
    "burgers": {
        "grids": (8, 12, 16, 24, 32, 48, 64), "tiny_grids": (12, 16), "accuracy": "velocity",
        # emulators.coarse_solver is the dataset's own solver: FD4 + RK4 (lib/pde/burgers.py)
        "families": (("solver", "FD4+RK4 solver", "o"), ("fd4_rk4", "FD4+RK4 Physics Block", "s"),
                     ("spectral", "spectral ETDRK4", "^")),   # lib/pde/burgers_spectral.py
        "block": "front_burgers", "title": "2-D Burgers ν = 0.005"},
}


def system(name: str) -> dict:
    """`SYSTEMS[name]`; a ValueError naming the allowed systems otherwise."""
    if name not in SYSTEMS:
        raise ValueError(f"--system={name!r} is not a system of the front; allowed: {', '.join(SYSTEMS)}")
    return SYSTEMS[name]


def random_fields(meta: dict, n_ics: int, n: int, key: jax.Array) -> jax.Array:
    """`n_ics` of the dataset's random initial fields on an `n`² grid, channels-last
    `(n_ics, n, n, 2)` velocity (the fine DNS's inputs, for its cost)."""
    keys = jax.random.split(key, n_ics)
    if meta["pde"] == "navier_stokes":
        length = meta["length"]
        omega = jax.vmap(lambda k: navier_stokes.random_initial_state(k, n, length))(keys)[:, 0]
        return jnp.moveaxis(navier_stokes.vorticity_to_velocity(omega, length), -3, -1)
    if meta["pde"] == "burgers":
        n_modes = meta["params"]["n_modes"]
        return jnp.moveaxis(jax.vmap(lambda k: burgers.random_initial_state(k, n, n_modes))(keys), 1, -1)
    raise ValueError(f"no front for pde = {meta['pde']!r}")


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


def accuracy(pred: np.ndarray, truth: np.ndarray, meta: dict, field: str, threshold: float = 0.8) -> dict:
    """HCTs of a rollout `pred` against `truth` (both `(n_ics, T, n, n, 2)` velocity at the
    dataset's frame interval): `hct` (mean), `hct_std`, `hct_per_ic` on `field`
    ("vorticity" or "velocity"); a vorticity system also gets `hct_velocity(_std)`, a
    velocity system `rmse(_std)` over ICs of `metrics.rmse` (all frames, where its HCT
    saturates at the horizon)."""
    if field not in ("vorticity", "velocity"):
        raise ValueError(f"accuracy field = {field!r}; allowed: vorticity, velocity")
    dt = meta["frame_dt"]
    vel = hcts(pred, truth, dt, threshold)
    if field == "velocity":
        rmse = np.asarray([float(metrics.rmse(jnp.asarray(p), jnp.asarray(t))) for p, t in zip(pred, truth)])
        return {"hct": float(vel.mean()), "hct_std": float(vel.std()), "hct_per_ic": vel.tolist(),
                "rmse": float(rmse.mean()), "rmse_std": float(rmse.std()), "rmse_per_ic": rmse.tolist()}
    length = meta["length"]
    vort = hcts(vorticity(pred, length), vorticity(truth, length), dt, threshold)
    return {"hct": float(vort.mean()), "hct_std": float(vort.std()), "hct_per_ic": vort.tolist(),
            "hct_velocity": float(vel.mean()), "hct_velocity_std": float(vel.std()),
            "hct_velocity_per_ic": vel.tolist()}


def merge_accuracies(parts: list[dict]) -> dict:
    """`accuracy`/`rollout_accuracy` records of disjoint sets of ICs (the same horizon) as one
    record over all of them: per-IC lists concatenated, means and stds over all ICs."""
    out = dict(parts[0])
    for key in ("hct", "hct_velocity", "rmse"):
        if f"{key}_per_ic" in out:
            per_ic = np.concatenate([p[f"{key}_per_ic"] for p in parts])
            out |= {key: float(per_ic.mean()), f"{key}_std": float(per_ic.std()), f"{key}_per_ic": per_ic.tolist()}
    if "nonfinite_ics" in out:
        out["nonfinite_ics"] = sum(p["nonfinite_ics"] for p in parts)
    return out


def rollout_accuracy(fn, params, u0: np.ndarray, truth: np.ndarray, meta: dict, field: str,
                     threshold: float = 0.8, every: int = 1) -> dict:
    """`accuracy` of `fn(params, u0, k)`'s rollout (k truth frames, `(k // every, n_ics, ...)`)
    over the truth's horizon, `truth` `(n_ics, T, n, n, 2)` compared at every `every`-th frame
    (a model whose ΔT spans `every` truth frames), plus non-finite ICs and the horizon."""
    n_frames = truth.shape[1] // every * every
    pred = np.swapaxes(np.asarray(jax.jit(fn, static_argnums=2)(params, jnp.asarray(u0), n_frames)), 0, 1)
    coarse = dict(meta, frame_dt=meta["frame_dt"] * every)
    return accuracy(pred, truth[:, every - 1:n_frames:every], coarse, field, threshold) | {
        "nonfinite_ics": int((~np.isfinite(pred.reshape(len(pred), -1))).any(1).sum()),
        "horizon": n_frames * meta["frame_dt"]}


def pareto(points: list[dict], key: str = "hct") -> list[dict]:
    """The points, cheapest first, that have a higher `key` (HCT) than every cheaper point."""
    out: list[dict] = []
    for p in sorted(points, key=lambda p: (p["cost"], -p[key])):
        if not out or p[key] > out[-1][key]:
            out.append(p)
    return out


def hct_at(front: list[dict], cost: float, key: str = "hct") -> float | None:
    """The front's HCT (`key`) at wall cost `cost` (linear in log cost between its points;
    beyond the costliest point its HCT, which that budget affords: a lower bound; None below
    the cheapest)."""
    if front and cost >= front[-1]["cost"]:
        return front[-1][key]
    a, b, s = _bracket(front, cost)
    return None if a is None else a[key] + s * (b[key] - a[key])


def _bracket(front: list[dict], cost: float) -> tuple:
    """(a, b, s): the front's neighbouring points around `cost` and its position between them
    in log cost; (None, None, None) outside them."""
    for a, b in zip(front, front[1:]):
        if a["cost"] <= cost <= b["cost"]:
            return a, b, (math.log(cost) - math.log(a["cost"])) / (math.log(b["cost"]) - math.log(a["cost"]))
    return None, None, None


def cost_at(front: list[dict], hct: float, key: str = "hct") -> float | None:
    """The wall cost at which the front reaches HCT (`key`) `hct` (the inverse of `hct_at`)."""
    for a, b in zip(front, front[1:]):
        if a[key] <= hct <= b[key]:
            s = (hct - a[key]) / (b[key] - a[key])
            return math.exp(math.log(a["cost"]) + s * (math.log(b["cost"]) - math.log(a["cost"])))
    if len(front) == 1 and front[0][key] == hct:
        return front[0]["cost"]
    return None


def rmse_front(points: list[dict]) -> list[dict]:
    """The front in velocity RMSE (lower is better): `pareto` on `score = −log rmse`, so
    `hct_at` / `cost_at` with `key="score"` interpolate it log-log. Non-finite RMSEs (a
    rollout that blew up) are left out."""
    finite = [{"name": p["name"], "cost": p["cost"], "rmse": p["rmse"], "score": -math.log(p["rmse"])}
              for p in points if math.isfinite(p["rmse"]) and p["rmse"] > 0]
    return pareto(finite, "score")


def rmse_headline(point: dict, front: list[dict]) -> dict:
    """A learned point against `rmse_front`: the front's RMSE at the point's wall cost, the
    point's RMSE over it (< 1: the point is more accurate), and the front's wall cost at
    the point's RMSE over the point's (> 1: the point is faster). A point less accurate
    than the front's cheapest point gets, as `wall_ratio_at_equal_rmse_bound`, that point's
    cost over its own: the front reaches its RMSE cheaper still (an upper bound)."""
    at_cost = hct_at(front, point["cost"], "score")
    finite = math.isfinite(point["rmse"]) and point["rmse"] > 0
    at_rmse = cost_at(front, -math.log(point["rmse"]), "score") if finite else None
    front_rmse = None if at_cost is None else math.exp(-at_cost)
    worse = bool(front) and (not finite or point["rmse"] > front[0]["rmse"])
    return {"front_rmse_at_equal_wall": front_rmse,
            "rmse_over_front_at_equal_wall": None if front_rmse is None else point["rmse"] / front_rmse,
            "wall_ratio_at_equal_rmse": None if at_rmse is None else at_rmse / point["cost"],
            "wall_ratio_at_equal_rmse_bound": front[0]["cost"] / point["cost"] if worse else None}


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


def front_per_ic(front: list[dict], cost: float) -> np.ndarray | None:
    """The front's HCT per IC at wall cost `cost`: `hct_per_ic` of the two front points around
    it interpolated as `hct_at` (beyond the costliest, that point's); None below the cheapest."""
    if not front or cost < front[0]["cost"]:
        return None
    a, b, s = _bracket(front, cost)
    if a is None:                                   # beyond the costliest point: its HCTs
        return np.asarray(front[-1]["hct_per_ic"], float)
    lo, hi = np.asarray(a["hct_per_ic"], float), np.asarray(b["hct_per_ic"], float)
    return lo + s * (hi - lo)


def paired(point: dict, front: list[dict]) -> dict:
    """The point's HCT against the front's at its wall cost, initial condition by initial
    condition (`front_per_ic`): the mean difference `paired_diff`, its standard error over
    ICs `paired_se`, `ics_above`, and `ratio_interval`, the 95 % paired bootstrap interval of
    the ratio of mean HCTs (`bootstrap_ratio`). {} below the front's cheapest cost."""
    per_ic = front_per_ic(front, point["cost"])
    if per_ic is None:
        return {}
    return paired_stats(point["hct_per_ic"], per_ic) | {
        "ratio_interval": bootstrap_ratio(point["hct_per_ic"], per_ic)}


def bootstrap_ratio(a, b, n_boot: int = 4000, level: float = 0.95, seed: int = 0) -> list[float]:
    """Percentile bootstrap interval of `mean(a) / mean(b)` over ICs, resampled in pairs
    (the same ICs for both): `[lo, hi]` at `level`."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    idx = np.random.default_rng(seed).integers(0, len(a), size=(n_boot, len(a)))
    ratios = a[idx].mean(1) / b[idx].mean(1)
    tail = (1 - level) / 2 * 100
    return [float(np.percentile(ratios, tail)), float(np.percentile(ratios, 100 - tail))]


def paired_stats(a, b) -> dict:
    """IC-by-IC difference of two equal-length HCT lists `a − b`: its mean `paired_diff`, the
    standard error of that mean over ICs `paired_se` and `ics_above` (how many a > b)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    return {"paired_diff": float(d.mean()), "paired_se": float(d.std(ddof=1) / math.sqrt(len(d))),
            "ics_above": int((d > 0).sum())}


def point_of(result: dict, run: str) -> dict:
    """The point of a front JSON named `run`: its `name`, or its run folder's basename.
    ValueError naming the points there when none is."""
    for p in result["points"]:
        if run in (p["name"], os.path.basename(os.path.normpath(p.get("workdir") or ""))):
            return p
    names = [os.path.basename(os.path.normpath(p["workdir"])) for p in result["points"] if p.get("workdir")]
    raise ValueError(f"no point {run!r}; the learned points are {names}")


def paired_points(result: dict, other: dict, pairs: list[tuple[str, str]]) -> list[dict]:
    """Points of two front JSONs on the same test ICs, IC by IC: for each `(run, other_run)`
    the HCT of `result`'s point minus `other`'s (`paired_stats`) and the paired bootstrap
    interval of the ratio of their means. ValueError when the two JSONs' test ICs differ
    (their truth datasets or their count) or a point is not found."""
    ics = lambda r: ([os.path.basename(d) for d in r["dataset"]], r["n_ics"])  # noqa: E731
    if ics(result) != ics(other):
        raise ValueError(f"the two fronts are on different test ICs: {ics(result)} vs {ics(other)}")
    rows = []
    for run, other_run in pairs:
        a, b = point_of(result, run), point_of(other, other_run)
        rows.append({"point": a["name"], "other": b["name"], "hct": a["hct"], "other_hct": b["hct"],
                     "n_ics": len(a["hct_per_ic"]),
                     **paired_stats(a["hct_per_ic"], b["hct_per_ic"]),
                     "ratio_interval": bootstrap_ratio(a["hct_per_ic"], b["hct_per_ic"])})
    return rows


def paired_table(rows: list[dict], other_label: str) -> str:
    """Markdown of `paired_points`' rows against the front JSON `other_label`."""
    lines = [f"IC by IC against the points of {other_label} (the same test ICs):", "",
             "| point | HCT | against | its HCT | difference, IC by IC (mean ± s.e.; ICs above) "
             "| ratio of means [95 % paired bootstrap] |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['point']} | {r['hct']:.2f} | {r['other']} | {r['other_hct']:.2f} | "
                     f"{r['paired_diff']:+.2f} ± {r['paired_se']:.2f} ({r['ics_above']} of {r['n_ics']}) | "
                     f"{r['hct'] / r['other_hct']:.3f} [{r['ratio_interval'][0]:.3f}–{r['ratio_interval'][1]:.3f}] |")
    return "\n".join(lines)


def learned_rollout(run, meta: dict, max_frames: int = 4) -> tuple:
    """(fn, every) of a loaded run (`runs.load_run`) against a truth with metadata `meta`:
    `fn(params, u0, k)` covers k truth frames (k a multiple of `every`), compared at every
    `every`-th of them. With a model steps = b truth frames (the smallest such integers,
    b ≤ `max_frames`), the model steps (k // b) · a times and every a-th state is kept, so
    `every` = b: ΔT = 2 truth frames gives a = 1, b = 2; ΔT = half a frame a = 2, b = 1;
    ΔT = 0.4 frames a = 5, b = 2. ValueError for another PDE or a ΔT with no such pair."""
    dt, pair = run.data["metadata"]["frame_dt"], None
    for b in range(1, max_frames + 1):
        steps = b * meta["frame_dt"] / dt         # model steps in b truth frames
        if round(steps) >= 1 and abs(steps - round(steps)) <= 1e-6 * b:
            pair = round(steps), b
            break
    if pair is None or run.data["metadata"]["pde"] != meta["pde"]:
        raise ValueError(f"a {run.data['metadata']['pde']} model with ΔT = {dt:.4g} cannot be "
                         f"compared at the truth's frame interval {meta['frame_dt']:.4g}")
    a, b = pair
    if a == 1:
        return (lambda p, u0, k: run.emulator.rollout(p, u0, k // b)), b
    return (lambda p, u0, k: run.emulator.rollout(p, u0, k // b * a)[a - 1::a]), b


def _priced_rounds(points: list[dict]):
    """Per timed round r: (every point with its cost re-priced by round r, as `cost` ×
    `times[r]` / median(`times`), and the classical front of those prices). Classical points:
    those whose family is neither "learned" nor "dns"."""
    rounds = min((len(p["times"]) for p in points if p.get("times")), default=0)
    for r in range(rounds):
        priced = [{**p, "cost": p["cost"] * p["times"][r] / float(np.median(p["times"]))} for p in points]
        yield priced, pareto([p for p in priced if p["family"] not in ("learned", "dns")])


def round_ratios(points: list[dict]) -> dict[str, list[float]]:
    """Each learned point's HCT over the front's at its wall cost, once per timed round
    (`_priced_rounds`): the point and the front are priced by calls of the same round, not by
    medians over the whole run (the spread is the timing's alone: the HCTs are fixed). A round
    in which a point falls below the front's cheapest cost is left out of that point's list."""
    out: dict[str, list[float]] = {p["name"]: [] for p in points if p["family"] == "learned"}
    for priced, front_r in _priced_rounds(points):
        for p in priced:
            at = hct_at(front_r, p["cost"]) if p["family"] == "learned" else None
            if at is not None:
                out[p["name"]].append(p["hct"] / at)
    return out


def round_intervals(points: list[dict]) -> dict[str, list[float]]:
    """Each learned point's paired bootstrap interval of its HCT ratio (`paired`) at every timed
    round's prices (`_priced_rounds`): `[lowest lo, highest hi]` over the rounds, so that
    neither the ICs nor the timing alone can move a verdict across a bound. Near a steep
    segment of the front a small timing difference moves the front's HCT a lot; this interval
    shows it where the one at the median costs does not. Empty if no round prices the point
    within the front's range."""
    intervals: dict[str, list] = {p["name"]: [] for p in points if p["family"] == "learned"}
    for priced, front_r in _priced_rounds(points):
        for p in priced:
            if p["family"] == "learned" and (iv := paired(p, front_r).get("ratio_interval")):
                intervals[p["name"]].append(iv)
    return {name: [min(lo for lo, _ in ivs), max(hi for _, hi in ivs)] if ivs else []
            for name, ivs in intervals.items()}


def error_front(rows: list[dict]) -> list[dict]:
    """The statistics front: classical rows (family neither "learned" nor "dns") with a finite
    `spectrum_error`, scored `score` = −log(error), cheapest first (`pareto` on the score)."""
    return pareto([dict(r, score=-math.log(r["spectrum_error"])) for r in rows
                   if r["family"] not in ("learned", "dns") and math.isfinite(r["spectrum_error"])], "score")


def error_ratio_rounds(rows: list[dict], times: dict[str, list[float]]) -> dict[str, list[float]]:
    """Each learned row's spectrum error over the statistics front's at its wall cost, once per
    timed round: in round r a row's cost is its `cost` × `times[name][r]` / median (rows
    without times keep their cost), as `round_ratios` does for HCT. Rows with an infinite
    error, and rounds that price a row below the front's cheapest cost, give no ratio."""
    out: dict[str, list[float]] = {r["name"]: [] for r in rows if r["family"] == "learned"}
    for k in range(min((len(t) for t in times.values()), default=0)):
        priced = [dict(r, cost=r["cost"] * times[r["name"]][k] / float(np.median(times[r["name"]])))
                  if r["name"] in times else r for r in rows]
        fr = error_front(priced)
        for r in priced:
            if r["family"] == "learned" and math.isfinite(r["spectrum_error"]):
                at = hct_at(fr, r["cost"], "score")
                if at is not None:
                    out[r["name"]].append(r["spectrum_error"] / math.exp(-at))
    return out


MOONSHOT, FLOOR = 1.5, 1.0   # HCT / the front's at equal wall time


def targets(points: list[dict]) -> dict:
    """The front's targets on the learned points' `headline`s (Navier–Stokes): "moonshot", some
    point's HCT ≥ 1.5× the front's at equal wall time, and "floor", some point on or above
    the front (≥ 1×). Each record names the best point, its ratio, its `paired` difference
    and bootstrap interval over ICs, the range of its per-round ratios (`round_ratios`,
    headline "hct_over_front_rounds") and of its intervals at every round's prices
    (`round_intervals`, "ratio_interval_rounds", where stored); `settled` when all of these
    fall on the same side of the bound (a record without rounds or interval is never settled).
    A target is met only when its best point's ratio is at or above the bound, settled.
    (None: no point lies within the front's cost range.)"""
    ratios = [(p["headline"]["hct_over_front_at_equal_wall"], p["name"], p["headline"]) for p in points
              if p.get("headline", {}).get("hct_over_front_at_equal_wall") is not None]
    best, name, h = max(ratios, key=lambda r: r[0]) if ratios else (None, None, {})
    pair = {k: h[k] for k in ("paired_diff", "paired_se", "ics_above", "ratio_interval",
                              "ratio_interval_rounds") if k in h}
    rounds = h.get("hct_over_front_rounds") or []
    spread = {"rounds_min": min(rounds), "rounds_max": max(rounds)} if rounds else {}

    def settled(bound):
        lo_hi = [*rounds, *h.get("ratio_interval", []), *h.get("ratio_interval_rounds", [])]
        if not rounds or "ratio_interval" not in h:
            return False
        return min(lo_hi) >= bound or max(lo_hi) < bound

    return {key: report.target(best is not None and best >= bound and settled(bound), bound=bound,
                               best_hct_over_front=best, best_point=name, **pair, **spread,
                               **({"settled": settled(bound)} if rounds else {}))
            for key, bound in (("moonshot", MOONSHOT), ("floor", FLOOR))}


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


def truth_configs(system: str, tiny: bool, truth: str | None) -> list[str]:
    """The dataset configs whose test ICs, concatenated, are the front's truth."""
    base = f"configs/pde_data/{system}.py"
    if tiny:
        return [f"{base}:front_tiny"]
    truth = truth or ("heldout" if system == "navier_stokes" else "front")
    if truth == "heldout" and system == "navier_stokes":
        _, variants = cli.file_variants(paths_lib.resolve(base))
        return [f"{base}:{v}" for v in variants if v.startswith("heldout_")]
    return [f"{base}:{v}" for v in truth.split(",")]


def load_truth(configs: list[str], data_root: str) -> tuple[dict, list[tuple[str, np.ndarray]]]:
    """(metadata, [(dataset path, test trajectories `(n_ics, T + 1, n, n, 2)`)]) of the
    configs' test splits; their metadata must agree but for the seed."""
    metas, parts = [], []
    for c in configs:
        data = data_lib.load_or_generate(config_lib.load_config(c), data_root)
        metas.append(data["metadata"])
        parts.append((data["path"], data["test"]))
    strip = lambda m: {k: v for k, v in m.items() if k != "seed"}  # noqa: E731
    if any(strip(m) != strip(metas[0]) for m in metas):
        raise ValueError(f"the truth datasets {configs} differ in more than their seed")
    return dict(metas[0], seed=[m["seed"] for m in metas] if len(metas) > 1 else metas[0]["seed"]), parts
