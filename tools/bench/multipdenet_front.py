"""MultiPDENet on the cost–accuracy front of classical solvers, Navier–Stokes Re = 1000
(default) or 2-D Burgers (`--system=burgers`).

    python tools/bench/multipdenet_front.py \
        --workdir=workdirs/multipdenet/navier_stokes_quick/multipdenet
    python tools/bench/multipdenet_front.py --variant=tiny          # smoke run, seconds
    python tools/bench/multipdenet_front.py --system=burgers \
        --workdir=workdirs/multipdenet/burgers_quick --out=experiments/multipdenet/front_burgers.json \
        --readme=experiments/multipdenet/NOTES.md

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
rotated each round), one process pinned to `--cores` (default one core); each learned
point's HCT ratio is also computed round by round (`front.round_ratios`: the spread that
timing alone puts on it). Writes `--out` (JSON), `.md` and `.png` beside it, and
with `--readme` splices the table into that file's `front` (Burgers: `front_burgers`) block.

Burgers (`--system=burgers`; `configs/pde_data/burgers.py:front`: 10 test ICs of seed 1,
128² DNS saved at 64²; `front_tiny`: 32² -> 16², 2 ICs): the same, with the dataset's own
FD4 + RK4 solver (what `emulators.coarse_solver` runs for Burgers) and the pseudo-spectral
ETDRK4 solver (`lib.pde.burgers_spectral`) as classical families, grids 8²-64², the HCT on velocity correlation only and, since that saturates
at the horizon on every grid, a second front in velocity RMSE (what differs per system
is in `lib.multipdenet.front.SYSTEMS`).
"""
from __future__ import annotations

import math
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import app, flags

from lib.common import config as config_lib, pinning, report, workdir as wd
from lib.multipdenet import data as data_lib, emulators, front
from lib.multipdenet import model as mpn
from lib.multipdenet.runs import load_run
from lib.pde import burgers_spectral

flags.DEFINE_string("system", "navier_stokes", "navier_stokes or burgers (lib.multipdenet.front.SYSTEMS).")
flags.DEFINE_enum("variant", "full", ["full", "tiny"], "full: the front; tiny: a smoke run.")
flags.DEFINE_list("workdir", [], "Trained MultiPDENet (or FNO/UNet) run folders of --system.")
flags.DEFINE_list("grids", None, "Classical grids (default NS 32,48,64,80,96,128, tiny 16,32; "
                  "Burgers 8,12,16,24,32,48,64, tiny 12,16).")
flags.DEFINE_string("data_root", "data/pde", "Where the truth dataset is cached.")
flags.DEFINE_integer("timing_frames", 8, "Frames per timed rollout.")
flags.DEFINE_integer("repeats", 5, "Interleaved timed rounds (median reported).")
flags.DEFINE_list("cores", ["0"], "CPU cores the process is pinned to before JAX starts "
                  "(lib.common.pinning; one core also makes XLA's Eigen single-threaded); "
                  "empty (--cores=) pins nothing.")
flags.DEFINE_string("out", None, "Output JSON (default workdirs/bench/multipdenet_front"
                    "[_burgers][_tiny].json).")
flags.DEFINE_bool("render", False, "Only rewrite the .md, .png (and --readme) from an existing --out JSON.")
flags.DEFINE_string("readme", None, "Also splice the table into this markdown file's "
                    "`<!-- results:front:begin/end -->` block (Burgers: front_burgers; "
                    "lib.common.report.splice).")
FLAGS = flags.FLAGS
THRESHOLD = 0.8


def dataset_solver(meta: dict, n: int) -> tuple:
    """The dataset's own solver on an `n`² grid: spectral ETDRK4 (NS), FD4 + RK4 (Burgers)."""
    solver = emulators.coarse_solver(dict(meta, coarse_grid=n))
    return solver.rollout, {}


def spectral_burgers(meta: dict, n: int) -> tuple:
    """The pseudo-spectral ETDRK4 Burgers solver (`lib.pde.burgers_spectral`) on an `n`² grid,
    5 % under its stable step at |u| <= 2; channels-last in and out, like the others."""
    nu, frame_dt = meta["params"]["viscosity"], meta["frame_dt"]
    per_frame = max(1, math.ceil(frame_dt / (0.95 * burgers_spectral.max_stable_dt(n, nu, 2.0))))
    step = jax.vmap(burgers_spectral.make_step(n, frame_dt / per_frame, nu, 2.0))

    def rollout(params_unused, u0, k):
        def frame(state, _):
            state = jax.lax.fori_loop(0, per_frame, lambda _, x: step(x), state)
            return state, jnp.moveaxis(state, 1, -1)
        return jax.lax.scan(frame, jnp.moveaxis(u0, -1, 1), None, length=k)[1]
    return rollout, {}


def classical(meta: dict, family: str, n: int) -> tuple:
    """(fn, params) of a classical family (`front.SYSTEMS[...]["families"]`) on an `n`² grid."""
    if family == "fd4_rk4":
        return fd4_rk4(meta, n)
    if family == "spectral" and meta["pde"] == "burgers":
        return spectral_burgers(meta, n)
    return dataset_solver(meta, n)   # NS "spectral", Burgers "solver": the dataset's own


def fd4_rk4(meta: dict, n: int) -> tuple:
    """The Physics Block without networks: FD4 stencils (+ spectral projection for NS) + RK4,
    at its stable step (`front.physics_block_steps`)."""
    model = mpn.make_model(
        meta["pde"], h=meta["length"] / n, macro_dt=meta["frame_dt"],
        n_micro=front.physics_block_steps(meta, n),
        coefficients=emulators.physics_coefficients(meta["pde"], meta["params"]),
        filter_mode="frozen", corrector=None, micro_net=None, macro_net=None)
    params = model.init(jax.random.key(0), jnp.zeros((1, n, n, 2)))
    return (lambda p, u0, k: mpn.rollout(model, p, u0, k)), params


def learned(workdir: str, meta: dict, data_root: str) -> tuple:
    """(fn, params, grid, run, every) of a trained run: `front.learned_rollout`."""
    run = load_run(workdir, data_root)
    try:
        fn, every = front.learned_rollout(run, meta)
    except ValueError as e:
        raise ValueError(f"{workdir}: {e}") from None
    return fn, run.params, run.data["metadata"]["coarse_grid"], run, every


def fine_dns(meta: dict, n_ics: int) -> tuple:
    """The DNS that made the data, from random fields of its own grid (cost only)."""
    solver = emulators.coarse_solver(dict(meta, coarse_grid=meta["fine_grid"]), meta["save_every"])
    return solver.rollout, {}, front.random_fields(meta, n_ics, meta["fine_grid"], jax.random.key(0))


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


def result_system(result: dict) -> dict:
    """The `front.SYSTEMS` entry of a result (results written before Burgers are NS)."""
    return front.system(result.get("system", "navier_stokes"))


def table(result: dict) -> str:
    """The markdown table: NS with vorticity and velocity HCTs; Burgers with the velocity HCT,
    the velocity RMSE, non-finite ICs and the learned points against both fronts."""
    vort = result_system(result)["accuracy"] == "vorticity"
    cell = lambda x, f="{:.3g}": "—" if x is None else f.format(x)  # noqa: E731
    if vort:
        heads = ["HCT vorticity (mean ± std over ICs)", "HCT velocity"]
        extra = []
    else:
        heads = ["HCT velocity (mean ± std over ICs)", "velocity RMSE (mean ± std over ICs)",
                 "ICs with a non-finite state"]
        bound = lambda h: f"< {h['wall_ratio_at_equal_rmse_bound']:.3g}"  # noqa: E731  (less accurate than the cheapest)
        extra = [("front RMSE at equal wall", lambda h: cell(h.get("front_rmse_at_equal_wall"))),
                 ("RMSE / front", lambda h: cell(h.get("rmse_over_front_at_equal_wall"))),
                 ("front wall at equal RMSE / wall", lambda h: bound(h) if h.get(
                     "wall_ratio_at_equal_rmse_bound") is not None else cell(h.get("wall_ratio_at_equal_rmse")))]
    pair = lambda h: (f"{h['paired_diff']:+.2f} ± {h['paired_se']:.2f} ({h['ics_above']} of "  # noqa: E731
                      f"{result['n_ics']})" if "paired_diff" in h else "—")
    rounds = any(p.get("headline", {}).get("hct_over_front_rounds") for p in result["points"])
    paired_head = "| HCT − front's, IC by IC (mean ± s.e.; ICs above) " if vort else ""
    lines = ["| point | grid | wall s per time unit per trajectory | " + " | ".join(heads)
             + " | front HCT at equal wall | HCT / front" + (" (range over timed rounds)" if rounds else "")
             + " | front wall at equal HCT / wall "
             + "".join(f"| {e[0]} " for e in extra) + paired_head + "| speed-up vs fine DNS |",
             "|---" * (len(heads) + len(extra) + 7 + bool(paired_head)) + "|"]
    ratio = "{:.2f}" if vort else "{:.3g}"  # Burgers' ratios span 1e-3 to 1e3
    for p in result["points"]:
        h, dns = p.get("headline", {}), p["family"] == "dns"
        if vort:
            cells = ["—" if dns else f"{p['hct_velocity']:.3g} ± {p['hct_velocity_std']:.2g}"]
        else:
            cells = ["—", "—"] if dns else [f"{p['rmse']:.3g} ± {p['rmse_std']:.2g}",
                                            f"{p['nonfinite_ics']} of {result['n_ics']}"]
        lines.append(
            f"| {p['name']} | {p['grid']}² | {p['cost']:.3g} | "
            + ("(truth)" if dns else f"{p['hct']:.3g} ± {p['hct_std']:.2g}")
            + "".join(f" | {c}" for c in cells)
            + f" | {cell(h.get('front_hct_at_equal_wall'))} | {cell(h.get('hct_over_front_at_equal_wall'), '{:.2f}')}"
            + (f" ({min(r):.2f}–{max(r):.2f})" if (r := h.get("hct_over_front_rounds")) else "")
            + f" | {cell(h.get('wall_ratio_at_equal_hct'), ratio)}"
            + "".join(f" | {fmt(h)}" for _, fmt in extra)
            + (f" | {pair(h)}" if vort else "")
            + f" | {cell(h.get('speedup_vs_fine_dns'), '{:.2f}')} |")
    verdicts = "".join(
        f"\n\nTarget {name} (HCT ≥ {t['bound']:g}× the front's at equal wall time): "
        f"**{report.verdict(t)}**, best {cell(t['best_hct_over_front'], '{:.2f}')} ({t['best_point']})"
        + (f"; IC by IC its HCT − the front's is {t['paired_diff']:+.2f} ± {t['paired_se']:.2f} (s.e.), "
           f"above on {t['ics_above']} of {result['n_ics']}" if "paired_diff" in t else "")
        + (f"; round by round {t['rounds_min']:.2f}–{t['rounds_max']:.2f}"
           f"{'' if t['settled'] else ', on both sides of the bound: not settled by this run'}"
           if "rounds_min" in t else "") + "."
        for name, t in sorted(result.get("targets", {}).items(), key=lambda kv: -kv[1]["bound"]))
    return "\n".join(lines) + f"\n\n{result['note']}" + verdicts


def figure(result: dict, path: str) -> str:
    """The front as a line, each classical family's points, each learned point with its
    spread over ICs; for a velocity system a second panel in velocity RMSE."""
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from lib.common import plotting  # noqa: PLC0415
    spec = result_system(result)
    panels = [("hct", "front", f"HCT on {spec['accuracy']} (mean ± std over ICs)")]
    if "front_rmse" in result:
        panels.append(("rmse", "front_rmse", "velocity RMSE over the horizon (mean; learned: min-max over ICs)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    for ax, (key, front_key, ylabel) in zip(axes[0], panels):
        f = result[front_key]
        ax.plot([p["cost"] for p in f], [p[key] for p in f], "k-", lw=1.5, label="classical front")
        for family, label, marker in spec["families"]:
            pts = [p for p in result["points"] if p["family"] == family]
            ax.plot([p["cost"] for p in pts], [p[key] for p in pts], marker, ls=":",
                    label=family if spec["accuracy"] == "vorticity" else label)
            for p in pts:
                ax.annotate(f"{p['grid']}²", (p["cost"], p[key]), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
        learned = [p for p in result["points"] if p["family"] == "learned"]
        top = 1.0  # the RMSE panel's ceiling: a rollout that blows up is drawn there, marked
        for p, (colour, marker) in zip(learned, zip(("C3", "C2", "C4", "C5", "C6", "C8"), "*PDXhv")):
            label = f"{p['name']} ({p['grid']}²)"
            if key == "hct":
                ax.errorbar(p["cost"], p[key], yerr=p[f"{key}_std"], fmt=marker, color=colour, ms=10,
                            capsize=3, label=label)
                continue
            per_ic = np.minimum(np.asarray(p["rmse_per_ic"], float), top)  # spread: min to max over ICs
            y = min(p["rmse"], top)
            ax.errorbar(p["cost"], y, yerr=[[y - np.nanmin(per_ic)], [np.nanmax(per_ic) - y]], fmt=marker,
                        color=colour, ms=10, capsize=3, label=label + (" off scale" if p["rmse"] > top else ""))
            if p["rmse"] > top:
                ax.annotate(f"mean {p['rmse']:.1e}", (p["cost"], y), fontsize=7, xytext=(5, -10),
                            textcoords="offset points")
        ax.set(xscale="log", xlabel="wall s per simulated time unit per trajectory",
               ylabel=ylabel, title=result["title"])
        if key == "rmse":
            ax.set(yscale="log", ylim=(min(p["rmse"] for p in f) / 3, 2 * top))
        ax.legend(fontsize=7)
    return plotting.save(fig, path)


def with_derived(result: dict, out: str) -> dict:
    """A NS `result` stored before `front.paired` or `front.round_ratios` existed, with both in
    each learned point's headline and its targets recomputed (all from its stored points and
    their timed rounds), written back to `out`."""
    learned = [p for p in result["points"] if p["family"] == "learned"]
    if result_system(result)["accuracy"] != "vorticity" or all(
            "paired_diff" in p["headline"] and "hct_over_front_rounds" in p["headline"] for p in learned):
        return result
    by_name = {p["name"]: p for p in result["points"]}
    front_pts = [by_name[f["name"]] for f in result["front"]]
    per_round = front.round_ratios(result["points"])
    for p in learned:
        p["headline"] |= front.paired(p, front_pts) | {"hct_over_front_rounds": per_round[p["name"]]}
    result["targets"] = front.targets(result["points"])
    wd.write_json_atomic(out, result)
    return result


def publish(result: dict, out: str) -> None:
    """Write the table (`.md`, and `--readme`'s `front` / `front_burgers` block) and the
    figure beside `out`."""
    md = table(result)
    wd.write_text_atomic(os.path.splitext(out)[0] + ".md", md + "\n")
    if FLAGS.readme:
        report.splice(FLAGS.readme, result_system(result)["block"], md)
    print(md)
    print(figure(result, os.path.splitext(out)[0] + ".png"))


def main(_):
    try:
        spec = front.system(FLAGS.system)
    except ValueError as e:
        sys.exit(str(e))  # one line, before any compute
    tiny, burgers = FLAGS.variant == "tiny", FLAGS.system == "burgers"
    out = FLAGS.out or f"workdirs/bench/multipdenet_front{'_burgers' if burgers else ''}{'_tiny' if tiny else ''}.json"
    if FLAGS.render:
        return publish(with_derived(wd.read_json(out), out), out)
    try:
        pinned = pinning.pin([int(c) for c in FLAGS.cores])
    except (ValueError, RuntimeError) as e:
        sys.exit(f"--cores={','.join(FLAGS.cores)}: {e}")
    grids = [int(g) for g in FLAGS.grids] if FLAGS.grids else list(spec["tiny_grids" if tiny else "grids"])
    dataset = config_lib.load_config(f"configs/pde_data/{FLAGS.system}.py:{'front_tiny' if tiny else 'front'}")
    data = data_lib.load_or_generate(dataset, FLAGS.data_root)
    meta, test = data["metadata"], data["test"]  # test: (n_ics, T + 1, n, n, 2)
    n_ics = len(test)
    points, makers = [], []
    for n in grids:
        makers += [(f"{label} {n}²", family, n, *classical(meta, family, n))
                   for family, label, _ in spec["families"]]
    for w in FLAGS.workdir:
        fn, params, n, run, every = learned(w, meta, FLAGS.data_root)
        if FLAGS.timing_frames % every:
            sys.exit(f"{w}: its ΔT is {every} truth frames; --timing_frames={FLAGS.timing_frames} "
                     f"must be a multiple of {every}")
        makers.append((f"{run.config.model.name} ({os.path.basename(os.path.normpath(w))})",
                       "learned", n, fn, params, every))
    for name, family, n, fn, params, *every in makers:
        truth = front.resample(test, n)
        p = {"name": name, "family": family, "grid": n, "fn": fn, "params": params,
             "u0": jnp.asarray(truth[:, 0]), "n_ics": n_ics}
        p.update(front.rollout_accuracy(fn, params, truth[:, 0], truth[:, 1:], meta, spec["accuracy"],
                                        THRESHOLD, *every))
        print(f"{name}: HCT {p['hct']:.3g} ± {p['hct_std']:.2g} ({spec['accuracy']}), "
              f"{p['nonfinite_ics']} non-finite", flush=True)
        points.append(p)
    dns_fn, _, dns_u0 = fine_dns(meta, n_ics)
    points.append({"name": f"fine DNS {meta['fine_grid']}²", "family": "dns", "grid": meta["fine_grid"],
                   "fn": lambda p, u0, k: dns_fn(p, u0, k), "params": {}, "u0": dns_u0, "n_ics": n_ics})
    time_points(points, FLAGS.timing_frames, FLAGS.repeats, meta["frame_dt"])
    classical_pts = [p for p in points if p["family"] not in ("learned", "dns")]
    front_pts = front.pareto(classical_pts)
    dns_cost = points[-1]["cost"]
    rmse_pts = front.rmse_front(classical_pts) if spec["accuracy"] == "velocity" else None
    per_round = front.round_ratios(points)
    for p in points:
        if p["family"] == "learned":
            p["headline"] = (front.headline(p, front_pts, dns_cost) | front.paired(p, front_pts)
                             | {"hct_over_front_rounds": per_round[p["name"]]})
            if rmse_pts is not None:
                p["headline"] |= front.rmse_headline(p, rmse_pts)
    load = os.getloadavg()
    result = {
        "system": FLAGS.system,
        "variant": FLAGS.variant, "dataset": data["path"], "n_ics": n_ics, "frame_dt": meta["frame_dt"],
        "horizon": (test.shape[1] - 1) * meta["frame_dt"], "threshold": THRESHOLD, "points": points,
        "front": [{"name": p["name"], "cost": p["cost"], "hct": p["hct"]} for p in front_pts],
        **({"targets": front.targets(points)} if spec["accuracy"] == "vorticity" else {}),
        **({} if rmse_pts is None else {"front_rmse": [
            {"name": p["name"], "cost": p["cost"], "rmse": p["rmse"]} for p in rmse_pts]}),
        "title": f"{spec['title']}, {n_ics} ICs, truth {meta['fine_grid']}²",
        "note": (f"{n_ics} test ICs (seed {meta['seed']}), truth {meta['fine_grid']}² saved at "
                 f"{meta['coarse_grid']}², horizon {(test.shape[1] - 1) * meta['frame_dt']:.3g}; "
                 f"{jax.devices()[0].device_kind}, {os.cpu_count()} cores, load average at the end "
                 f"{load[0]:.1f}; {pinned}; {FLAGS.repeats} interleaved rounds of {FLAGS.timing_frames} frames. "
                 "Beyond the costliest classical point the front's HCT is that point's (a lower bound)."),
    }
    wd.write_json_atomic(out, result)
    publish(result, out)


if __name__ == "__main__":
    app.run(main)
