"""MultiPDENet on the cost–accuracy front of classical solvers, Navier–Stokes Re = 1000.

    python tools/bench/multipdenet_front.py \
        --workdir=workdirs/multipdenet/navier_stokes_quick/multipdenet
    python tools/bench/multipdenet_front.py --variant=tiny          # smoke run, seconds

Truth: `configs/pde_data/navier_stokes.py:front` (10 test ICs of seed 1, never used for
training, on the attractor, 256² DNS saved at 128²; `front_tiny`: 64² -> 32², 2 ICs).
Points, all from the same ICs (the truth's first frame, spectrally truncated to each grid):
the spectral ETDRK4 solver and the FD4 + RK4 solver (MultiPDENet's Physics Block with no
networks and frozen 4th-order stencils) at `--grids`, each at the largest step 5 % under
the spectral solver's CFL limit; each `--workdir`'s trained model (`runs.load_run`); and
the fine DNS that made the data (cost only: it is the truth). Accuracy: the HCT of each IC
on vorticity correlation (Kochkov et al. 2021) and on velocity correlation, threshold 0.8,
against the truth truncated to the point's grid. Cost: wall seconds per simulated time unit
per trajectory of a jitted rollout of `--timing_frames` frames of all ICs in one batch,
compile excluded, median of `--repeats` rounds interleaved over the points (the order
rotated each round), one process. Writes `--out` (JSON), `.md` and `.png` beside it, and
with `--readme` splices the table into that file's `front` block.
"""
from __future__ import annotations

import math
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import app, flags

from lib.common import config as config_lib, report, workdir as wd
from lib.multipdenet import data as data_lib, emulators, front
from lib.multipdenet import model as mpn
from lib.multipdenet.runs import load_run
from lib.pde import navier_stokes

flags.DEFINE_enum("variant", "full", ["full", "tiny"], "full: the front; tiny: a smoke run.")
flags.DEFINE_list("workdir", [], "Trained MultiPDENet (or FNO/UNet) Navier–Stokes run folders.")
flags.DEFINE_list("grids", None, "Classical grids (default 32,48,64,96,128; tiny: 16,32).")
flags.DEFINE_string("data_root", "data/pde", "Where the truth dataset is cached.")
flags.DEFINE_integer("timing_frames", 8, "Frames per timed rollout.")
flags.DEFINE_integer("repeats", 5, "Interleaved timed rounds (median reported).")
flags.DEFINE_string("out", None, "Output JSON (default workdirs/bench/multipdenet_front[_tiny].json).")
flags.DEFINE_bool("render", False, "Only rewrite the .md, .png (and --readme) from an existing --out JSON.")
flags.DEFINE_string("readme", None, "Also splice the table into this markdown file's "
                    "`<!-- results:front:begin/end -->` block (lib.common.report.splice).")
FLAGS = flags.FLAGS
THRESHOLD = 0.8


def spectral(meta: dict, n: int) -> tuple:
    solver = emulators.coarse_solver(dict(meta, coarse_grid=n))
    return solver.rollout, {}


def fd4_rk4(meta: dict, n: int) -> tuple:
    """The Physics Block without networks: FD4 stencils + spectral projection + RK4, with as
    many micro steps per frame as the spectral solver takes (its stable step)."""
    steps = max(1, math.ceil(meta["frame_dt"] / (0.95 * 0.9 * (meta["length"] / n)
                                                 / meta["params"]["max_velocity"])))
    model = mpn.make_model(
        "navier_stokes", h=meta["length"] / n, macro_dt=meta["frame_dt"], n_micro=steps,
        coefficients=emulators.physics_coefficients("navier_stokes", meta["params"]),
        filter_mode="frozen", corrector=None, micro_net=None, macro_net=None)
    params = model.init(jax.random.key(0), jnp.zeros((1, n, n, 2)))
    return (lambda p, u0, k: mpn.rollout(model, p, u0, k)), params


def learned(workdir: str, meta: dict, data_root: str) -> tuple:
    run = load_run(workdir, data_root)
    stride = meta["frame_dt"] / run.data["metadata"]["frame_dt"]
    if abs(stride - round(stride)) > 1e-6 or run.data["metadata"]["pde"] != "navier_stokes":
        raise ValueError(f"{workdir}: a {run.data['metadata']['pde']} model with ΔT = "
                         f"{run.data['metadata']['frame_dt']:.4g} cannot be compared at the "
                         f"truth's frame interval {meta['frame_dt']:.4g}")
    s = int(round(stride))
    fn = lambda p, u0, k: run.emulator.rollout(p, u0, k * s)[s - 1::s]  # noqa: E731
    return fn, run.params, run.data["metadata"]["coarse_grid"], run


def fine_dns(meta: dict, n_ics: int) -> tuple:
    """The DNS that made the data, from random fields of its own grid (cost only)."""
    n, length = meta["fine_grid"], meta["length"]
    solver = emulators.coarse_solver(dict(meta, coarse_grid=n), meta["save_every"])
    keys = jax.random.split(jax.random.key(0), n_ics)
    omega = jax.vmap(lambda k: navier_stokes.random_initial_state(k, n, length))(keys)[:, 0]
    u0 = jnp.moveaxis(navier_stokes.vorticity_to_velocity(omega, length), -3, -1)
    return solver.rollout, {}, u0


def accuracy(fn, params, u0: np.ndarray, truth: np.ndarray, meta: dict) -> dict:
    """HCTs per IC of `fn`'s rollout over the truth's horizon; `truth`: `(n_ics, T, n, n, 2)`."""
    n_frames = truth.shape[1]
    pred = np.swapaxes(np.asarray(jax.jit(fn, static_argnums=2)(params, jnp.asarray(u0), n_frames)), 0, 1)
    dt, length = meta["frame_dt"], meta["length"]
    vort = front.hcts(front.vorticity(pred, length), front.vorticity(truth, length), dt, THRESHOLD)
    vel = front.hcts(pred, truth, dt, THRESHOLD)
    return {"hct": float(vort.mean()), "hct_std": float(vort.std()), "hct_per_ic": vort.tolist(),
            "hct_velocity": float(vel.mean()), "hct_velocity_std": float(vel.std()),
            "nonfinite_ics": int((~np.isfinite(pred.reshape(len(pred), -1))).any(1).sum()),
            "horizon": n_frames * dt}


def time_points(points: list[dict], frames: int, repeats: int, frame_dt: float) -> None:
    """Fill `cost` (s per time unit per trajectory) of every point: interleaved medians."""
    for p in points:
        run = jax.jit(lambda prm, u0, fn=p.pop("fn"): fn(prm, u0, frames))
        t0 = time.perf_counter()
        p["compiled"] = run.lower(p["params"], p["u0"]).compile()
        p["compile_s"], p["times"] = time.perf_counter() - t0, []
        jax.block_until_ready(p["compiled"](p["params"], p["u0"]))
    front.interleaved_rounds(points, repeats)
    for p in points:
        del p["compiled"], p["params"], p["u0"]
        p["cost"] = statistics.median(p["times"]) / (frames * frame_dt) / p.pop("n_ics")


def table(result: dict) -> str:
    lines = ["| point | grid | wall s per time unit per trajectory | HCT vorticity (mean ± std over ICs) "
             "| HCT velocity | front HCT at equal wall | HCT / front | front wall at equal HCT / wall "
             "| speed-up vs fine DNS |", "|---|---|---|---|---|---|---|---|---|"]
    for p in result["points"]:
        h = p.get("headline", {})
        cell = lambda x, f="{:.3g}": "—" if x is None else f.format(x)  # noqa: E731
        lines.append(
            f"| {p['name']} | {p['grid']}² | {p['cost']:.3g} | "
            + ("(truth)" if p["family"] == "dns" else f"{p['hct']:.3g} ± {p['hct_std']:.2g}")
            + " | " + ("—" if p["family"] == "dns" else f"{p['hct_velocity']:.3g} ± {p['hct_velocity_std']:.2g}")
            + f" | {cell(h.get('front_hct_at_equal_wall'))} | {cell(h.get('hct_over_front_at_equal_wall'), '{:.2f}')}"
            f" | {cell(h.get('wall_ratio_at_equal_hct'), '{:.2f}')} | {cell(h.get('speedup_vs_fine_dns'), '{:.2f}')} |")
    return "\n".join(lines) + f"\n\n{result['note']}"


def figure(result: dict, path: str) -> str:
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from lib.common import plotting  # noqa: PLC0415
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    f = result["front"]
    ax.plot([p["cost"] for p in f], [p["hct"] for p in f], "k-", lw=1.5, label="classical front")
    for family, marker in (("spectral", "o"), ("fd4_rk4", "s")):
        pts = [p for p in result["points"] if p["family"] == family]
        ax.plot([p["cost"] for p in pts], [p["hct"] for p in pts], marker, ls=":", label=family)
        for p in pts:
            ax.annotate(f"{p['grid']}²", (p["cost"], p["hct"]), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
    learned = [p for p in result["points"] if p["family"] == "learned"]
    for p, (colour, marker) in zip(learned, zip(("C3", "C2", "C4", "C5", "C6", "C8"), "*PDXhv")):
        ax.errorbar(p["cost"], p["hct"], yerr=p["hct_std"], fmt=marker, color=colour, ms=10,
                    capsize=3, label=f"{p['name']} ({p['grid']}²)")
    ax.set(xscale="log", xlabel="wall s per simulated time unit per trajectory",
           ylabel="HCT on vorticity (mean ± std over ICs)", title=result["title"])
    ax.legend(fontsize=7)
    return plotting.save(fig, path)


def publish(result: dict, out: str) -> None:
    """Write the table (`.md`, and `--readme`'s `front` block) and the figure beside `out`."""
    md = table(result)
    wd.write_text_atomic(os.path.splitext(out)[0] + ".md", md + "\n")
    if FLAGS.readme:
        report.splice(FLAGS.readme, "front", md)
    print(md)
    print(figure(result, os.path.splitext(out)[0] + ".png"))


def main(_):
    tiny = FLAGS.variant == "tiny"
    out = FLAGS.out or f"workdirs/bench/multipdenet_front{'_tiny' if tiny else ''}.json"
    if FLAGS.render:
        return publish(wd.read_json(out), out)
    grids = [int(g) for g in (FLAGS.grids or (["16", "32"] if tiny else ["32", "48", "64", "96", "128"]))]
    dataset = config_lib.load_config(f"configs/pde_data/navier_stokes.py:{'front_tiny' if tiny else 'front'}")
    data = data_lib.load_or_generate(dataset, FLAGS.data_root)
    meta, test = data["metadata"], data["test"]  # test: (n_ics, T + 1, n, n, 2)
    n_ics = len(test)
    points, makers = [], []
    for n in grids:
        makers += [(f"spectral {n}²", "spectral", n, *spectral(meta, n)),
                   (f"FD4+RK4 {n}²", "fd4_rk4", n, *fd4_rk4(meta, n))]
    for w in FLAGS.workdir:
        fn, params, n, run = learned(w, meta, FLAGS.data_root)
        makers.append((f"{run.config.model.name} ({os.path.basename(os.path.normpath(w))})",
                       "learned", n, fn, params))
    for name, family, n, fn, params in makers:
        truth = front.resample(test, n)
        p = {"name": name, "family": family, "grid": n, "fn": fn, "params": params,
             "u0": jnp.asarray(truth[:, 0]), "n_ics": n_ics}
        p.update(accuracy(fn, params, truth[:, 0], truth[:, 1:], meta))
        print(f"{name}: HCT {p['hct']:.3g} ± {p['hct_std']:.2g} (velocity {p['hct_velocity']:.3g})", flush=True)
        points.append(p)
    dns_fn, _, dns_u0 = fine_dns(meta, n_ics)
    points.append({"name": f"fine DNS {meta['fine_grid']}²", "family": "dns", "grid": meta["fine_grid"],
                   "fn": lambda p, u0, k: dns_fn(p, u0, k), "params": {}, "u0": dns_u0, "n_ics": n_ics})
    time_points(points, FLAGS.timing_frames, FLAGS.repeats, meta["frame_dt"])
    classical = [p for p in points if p["family"] in ("spectral", "fd4_rk4")]
    front_pts = front.pareto(classical)
    dns_cost = points[-1]["cost"]
    for p in points:
        if p["family"] == "learned":
            p["headline"] = front.headline(p, front_pts, dns_cost)
    load = os.getloadavg()
    result = {
        "variant": FLAGS.variant, "dataset": data["path"], "n_ics": n_ics, "frame_dt": meta["frame_dt"],
        "horizon": (test.shape[1] - 1) * meta["frame_dt"], "threshold": THRESHOLD, "points": points,
        "front": [{"name": p["name"], "cost": p["cost"], "hct": p["hct"]} for p in front_pts],
        "title": f"NS Re = 1000, {n_ics} ICs, truth {meta['fine_grid']}²",
        "note": (f"{n_ics} test ICs (seed {meta['seed']}), truth {meta['fine_grid']}² saved at "
                 f"{meta['coarse_grid']}², horizon {(test.shape[1] - 1) * meta['frame_dt']:.3g}; "
                 f"{jax.devices()[0].device_kind}, {os.cpu_count()} cores, load average at the end "
                 f"{load[0]:.1f}; {FLAGS.repeats} interleaved rounds of {FLAGS.timing_frames} frames. "
                 "Beyond the costliest classical point the front's HCT is that point's (a lower bound)."),
    }
    wd.write_json_atomic(out, result)
    publish(result, out)


if __name__ == "__main__":
    app.run(main)
