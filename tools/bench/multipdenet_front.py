r"""MultiPDENet on the cost–accuracy front of tuned classical solvers, Navier–Stokes Re = 1000
(default) or 2-D Burgers (`--system=burgers`).

    python tools/bench/multipdenet_front.py --cores= --accuracy_only \
        --workdir=experiments/multipdenet/trained/front_64_dt2      # the accuracies (cached), both cores
    python tools/bench/multipdenet_front.py --out=experiments/multipdenet/front.json \
        --workdir=experiments/multipdenet/trained/front_64_dt2      # the timed front, one pinned core
    python tools/bench/multipdenet_front.py --stats --out=experiments/multipdenet/front.json
    python tools/bench/multipdenet_front.py --render --out=experiments/multipdenet/front.json \
        --readme=experiments/multipdenet/README.md                  # tables and figures from the JSON
    python tools/bench/multipdenet_front.py --truth=confirm --out=experiments/multipdenet/front_confirm.json \
        --costs_from=experiments/multipdenet/front.json --workdir=...   # a chosen model on fresh ICs
    python tools/bench/multipdenet_front.py --out=experiments/multipdenet/front_levers_large.json \
        --paired_with=experiments/multipdenet/front_levers_cnn.json --pairs=RUN:OTHER_RUN,...
                                                                    # two fronts' points, IC by IC
    python tools/bench/multipdenet_front.py --variant=tiny          # smoke run, seconds

Truth (`--truth`): `heldout` (default for Navier–Stokes), 30 attractor ICs of seeds 2, 3, 4
(`configs/pde_data/navier_stokes.py:heldout_*`), never used for training or for choosing a
model; `front`, the 10 ICs of seed 1 the models were chosen on. 256² DNS saved at 128², 10
time units. Burgers: `configs/pde_data/burgers.py:front`.

Points, all from the same ICs (the truth's first frame, spectrally truncated to each grid):
every classical family of `lib.multipdenet.classical.FAMILIES` (jax-cfd's when the `bench`
extra is installed; otherwise one line says it is skipped) at every `--grids` and every
`--dt_factors` (× the step that the initial fields' velocity bound allows: the sweep reaches
past the attractor's stability limit; a non-finite rollout is a point that is not on the
front); each `--workdir`'s trained model (`runs.load_run`); the fine DNS (cost only).
Accuracy: the HCT of each IC on vorticity correlation (Kochkov et al. 2021), threshold 0.8,
against the truth truncated to the point's grid; classical accuracies are cached under
`--cache` by truth, family, grid and step (`--accuracy_only` fills the cache and stops).
Cost: wall seconds per simulated time unit per trajectory of a jitted rollout of
`--timing_frames` frames of all ICs in one batch, compile excluded, median of `--repeats`
rounds interleaved over the points, one process pinned to `--cores`. Each learned point gets
its HCT ratio to the front at equal wall, the ratio per timed round (`front.round_ratios`)
and a paired bootstrap interval over ICs (`front.paired`); a target is "settled" when both
lie on one side of its bound. Writes `--out` (JSON), `.md` and `.png` beside it; `--readme`
splices the front points and the learned points into its `front` (Burgers: `front_burgers`)
block.

`--stats` (Navier–Stokes): the statistics front of the points in `--out` at their measured
costs: each rolls the 4 ICs of `configs/pde_data/navier_stokes.py:stats` out for 60 time
units; the error of the energy spectrum (log-spectrum L2 over shells 1-16) and of the
vorticity PDF, averaged over the last 50 units, against the 256² truth's
(`lib.multipdenet.statistics`). Writes `<out>_stats.json`, `.md`, `.png`.

Burgers: the dataset's FD4 + RK4 solver, the Physics Block and the pseudo-spectral ETDRK4
solver; the HCT on velocity saturates, so a second front in velocity RMSE.
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
from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from lib.common.cli import run_tool
from lib.common import config as config_lib, paths as paths_lib, report, workdir as wd
from lib.multipdenet import classical, emulators, fd4_tuning, front, front_plots
from lib.multipdenet import statistics as stats_lib
from lib.multipdenet.front import load_truth, truth_configs
from lib.multipdenet.runs import load_run
from lib.pde import dataset as dataset_lib
from lib.pde.data_config import spec_from_config
from tools.bench import pinning

flags.DEFINE_string("system", "navier_stokes", "navier_stokes or burgers (lib.multipdenet.front.SYSTEMS).")
flags.DEFINE_enum("variant", "full", ["full", "tiny"], "full: the front; tiny: a smoke run.")
flags.DEFINE_string("truth", None, "Test ICs: heldout (NS default: 30 ICs, seeds 2-4), front (10 ICs "
                    "of seed 1, on which models were chosen), or variants of configs/pde_data/<system>.py, "
                    "comma-separated.")
flags.DEFINE_list("workdir", [], "Trained MultiPDENet (or FNO/UNet) run folders of --system.")
flags.DEFINE_list("grids", None, "Classical grids (default NS 32,48,64,80,96,128, tiny 16,32; "
                  "Burgers 8,12,16,24,32,48,64, tiny 12,16).")
flags.DEFINE_list("dt_factors", None, "Time steps of every classical family as multiples of its "
                  "step at the data's velocity bound (default NS 1,1.25,1.5,2,3,4,6,10; Burgers 1,1.5,2; tiny 1).")
flags.DEFINE_list("families", None, "Classical families (default: all of classical.FAMILIES).")
flags.DEFINE_string("data_root", "data/pde", "Where the truth datasets are cached.")
flags.DEFINE_string("cache", "workdirs/bench/front_cache", "Where classical accuracies are cached.")
flags.DEFINE_bool("accuracy_only", False, "Compute (and cache) the classical accuracies, and "
                  "print each --workdir's (untimed), then stop.")
flags.DEFINE_integer("timing_frames", 8, "Frames per timed rollout.")
flags.DEFINE_integer("repeats", 5, "Interleaved timed rounds (median reported).")
flags.DEFINE_list("cores", [pinning.FIRST], "CPU cores the process is pinned to before JAX starts "
                  "(tools/bench/pinning.py; one core also makes XLA's Eigen single-threaded; default: the "
                  "first this process may use); "
                  "empty (--cores=) pins nothing.")
flags.DEFINE_string("out", None, "Output JSON (default workdirs/bench/multipdenet_front"
                    "[_burgers][_tiny].json).")
flags.DEFINE_string("costs_from", None, "A timed front JSON (e.g. experiments/multipdenet/front.json) "
                    "whose points' costs are used instead of timing: accuracy on --truth's ICs, cost "
                    "(s per time unit per trajectory, and each round's times) from that run.")
flags.DEFINE_bool("render", False, "Only rewrite the .md, .png (and --readme) from an existing --out JSON.")
flags.DEFINE_string("baseline", None, "With --render: another front JSON (e.g. the CPU run) whose costs "
                    "are set beside --out's, point by point, in the .md.")
flags.DEFINE_string("paired_with", None, "Another front JSON on the same test ICs: each --pairs "
                    "point of --out against its partner there, IC by IC; writes <out>_paired.md.")
flags.DEFINE_list("pairs", [], "With --paired_with: RUN:OTHER_RUN pairs (a point's name or run "
                  "folder basename in --out, then in --paired_with).")
flags.DEFINE_bool("stats", False, "The statistics front of --out's points (NS); with --accuracy_only, "
                  "only the statistics of the cached classical points and --workdir's runs (cached).")
flags.DEFINE_string("readme", None, "Also splice the table into this markdown file's "
                    "`<!-- results:front:begin/end -->` block (Burgers: front_burgers; "
                    "lib.common.report.splice).")
flags.DEFINE_bool("tune_fd4", False, "Tune the fd4_tuned family's stencil knobs per --grids and step "
                  "on --truth (default front: the ICs the models were chosen on; held-out and confirm "
                  "truths are refused): θ over --thetas, then φ over --dispersions; writes --tuning_out "
                  "(JSON and .md); no timing.")
flags.DEFINE_list("thetas", ["0", "-0.25", "-0.5", "-0.75", "-1", "-1.5", "-2", "-3", "-4", "-6"],
                  "With --tune_fd4: the hyperviscosities θ swept (∂xx stencil FD4's + θ·[1, −4, 6, −4, 1]).")
flags.DEFINE_list("dispersions", ["0", "0.01", "0.02", "0.03", "0.04", "0.06"],
                  "With --tune_fd4: the dispersion corrections φ swept (∂x stencil FD4's + φ·[1, −2, 0, 2, −1]).")
flags.DEFINE_string("tuning_out", None, "With --tune_fd4: the tuning file (default "
                    "lib.multipdenet.classical.TUNING_FILE, which the fd4_tuned family reads).")
FLAGS = flags.FLAGS
THRESHOLD = 0.8
DEFAULT_FACTORS = {"navier_stokes": (1, 1.25, 1.5, 2, 3, 4, 6, 10), "burgers": (1, 1.5, 2)}
STATS_FRAMES, STATS_START = 10, 10.0   # front frames per stats frame; statistics after t = 10


def point_name(label: str, n: int, steps: int, default: int) -> str:
    return f"{label} {n}²" + ("" if steps == default else f" Δt×{default / steps:.3g}")


def classical_specs(meta: dict, families, grids, factors, tuned: bool = True) -> list[dict]:
    """Every family × grid × distinct step of the sweep, named, without accuracy or cost.
    `fd4_tuned` points carry their tuned `knobs` (θ, φ); one line names each point it has none
    for (`tuned=False`: no knobs, for the tuning sweep itself)."""
    specs = []
    for n in grids:
        for family, label, _ in families:
            default = classical.default_steps(meta, family, n)
            for steps in sorted({classical.steps_for(meta, family, n, f) for f in factors}, reverse=True):
                spec = {"name": point_name(label, n, steps, default), "family": family, "grid": n,
                        "steps_per_frame": steps, "dt": meta["frame_dt"] / steps, "dt_factor": default / steps}
                if family == "fd4_tuned" and tuned:
                    try:
                        spec["knobs"] = list(classical.tuned_knobs(n, steps))
                    except ValueError as e:
                        print(f"{spec['name']} skipped: {e}", flush=True)
                        continue
                specs.append(spec)
    return specs


def classical_points(meta: dict, specs: list[dict], parts, cache: str, accuracy):
    """The classical points of `specs` (without cost), with their accuracy over all `parts`'
    ICs, each part's from the cache (`cache/<dataset>/<family>_<n>_<steps>.json`) or
    computed and cached."""
    points, trunc = [], {}
    for spec in specs:
        family, n, steps = spec["family"], spec["grid"], spec["steps_per_frame"]
        if trunc.get("grid") != n:
            trunc = {"grid": n}        # the parts' truths at one grid at a time
        fn, params = classical.build(meta, family, n, steps, knobs=spec.get("knobs"))
        records, how = [], "cached"
        for path, test in parts:
            file = fd4_tuning.cache_file(cache, path, spec)
            if not os.path.exists(file):
                if path not in trunc:
                    trunc[path] = front.resample(test, n)
                wd.write_json_atomic(file, accuracy(fn, params, trunc[path]))
                how = "computed"
            records.append(wd.read_json(file))
        p = {**spec, "fn": fn, "params": params, **front.merge_accuracies(records)}
        print(f"{p['name']}: HCT {p['hct']:.3g} ± {p['hct_std']:.2g}, "
              f"{p['nonfinite_ics']} non-finite ({how})", flush=True)
        points.append(p)
    return points


def publish_tuning(tuning: dict, out: str) -> None:
    """Write the tuning file `out` and its markdown table beside it (`.md`), and print it."""
    sweep_cell = lambda rows, k: " · ".join(  # noqa: E731
        f"{r[k]:+g}: {r['hct']:.3g}" + (f" ({r['nonfinite_ics']} non-finite)" if r["nonfinite_ics"] else "")
        for r in rows)
    rows = []
    for n, by_steps in tuning["sweep"].items():
        for steps, sweep in by_steps.items():
            theta, phi = tuning["theta"][n][steps], tuning["dispersion"][n][steps]
            best = next(r for r in sweep["dispersion"] if r["dispersion"] == phi)
            rows.append([f"{n}²", steps, f"{theta:+g}", f"{phi:+g}", f"{best['hct']:.3g}",
                         f"{sweep['theta'][0]['hct']:.3g}", sweep_cell(sweep["theta"], "theta"),
                         sweep_cell(sweep["dispersion"], "dispersion")])
    md = (f"fd4_tuned's stencil knobs per grid and step (θ hyperviscosity, then φ dispersion at that θ), "
          f"tuned on `{tuning['truth']}` ({tuning['n_ics']} ICs; mean vorticity HCT at threshold "
          f"{tuning['threshold']}):\n\n"
          + report.markdown_table(["grid", "steps per frame", "θ", "φ", "HCT at (θ, φ)", "HCT of FD4",
                                   "HCT per θ (φ = 0)", "HCT per φ (at θ)"], rows) + "\n")
    wd.write_json_atomic(out, tuning)
    wd.write_text_atomic(os.path.splitext(out)[0] + ".md", md)
    print(md)


def learned_name(workdir: str) -> str:
    """A learned point's name: `<model> (<workdir's folder>)`, from its config.json."""
    model = wd.read_json(os.path.join(workdir, wd.CONFIG))["model"]["name"]
    return f"{model} ({os.path.basename(os.path.normpath(workdir))})"


def timed_costs(path: str, names: list[str]) -> dict[str, dict]:
    """The `cost`, `times` and `compile_s` of every point named in `names` from a timed front
    JSON (costs do not depend on the ICs: s per time unit per trajectory). Raises ValueError
    naming the file and the first point it lacks."""
    timed = {p["name"]: p for p in wd.read_json(path)["points"]}
    missing = [n for n in names if n not in timed]
    if missing:
        raise ValueError(f"--costs_from={path}: no timed point {missing[0]!r} ({len(missing)} of "
                         f"{len(names)} missing); time it there first")
    return {n: {k: timed[n][k] for k in ("cost", "times", "compile_s")} for n in names}


def learned(workdir: str, meta: dict, data_root: str) -> tuple:
    """(fn, params, grid, run, every) of a trained run: `front.learned_rollout`."""
    run = load_run(workdir, data_root)
    try:
        fn, every = front.learned_rollout(run, meta)
    except ValueError as e:
        raise ValueError(f"{workdir}: {e}") from None
    return fn, run.params, run.data["metadata"]["coarse_grid"], run, every


def dns_name(meta: dict) -> str:
    return f"fine DNS {meta['fine_grid']}²"


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


def table(result: dict, compact: bool = False) -> str:
    """The markdown table: NS with vorticity and velocity HCTs; Burgers with the velocity HCT,
    the velocity RMSE, non-finite ICs and the learned points against both fronts. `compact`:
    only the front's points, the learned points and the DNS (every point is in the JSON and
    the `.md`)."""
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
             + " | front HCT at equal wall | HCT / front" + (" [95 % bootstrap over ICs]" if any(
                 "ratio_interval" in p.get("headline", {}) for p in result["points"]) else "")
             + (" (range over timed rounds)" if rounds else "")
             + " | front wall at equal HCT / wall "
             + "".join(f"| {e[0]} " for e in extra) + paired_head + "| speed-up vs fine DNS |",
             "|---" * (len(heads) + len(extra) + 7 + bool(paired_head)) + "|"]
    ratio = "{:.2f}" if vort else "{:.3g}"  # Burgers' ratios span 1e-3 to 1e3
    on_front = {f["name"] for f in result["front"]}
    shown = [p for p in result["points"] if not compact or p["name"] in on_front
             or p["family"] in ("learned", "dns")]
    for p in shown:
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
            + (f" [{h['ratio_interval'][0]:.2f}–{h['ratio_interval'][1]:.2f}]" if "ratio_interval" in h else "")
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
        + (f"; 95 % bootstrap interval over ICs {t['ratio_interval'][0]:.2f}–{t['ratio_interval'][1]:.2f}"
           if "ratio_interval" in t else "")
        + (f"; round by round {t['rounds_min']:.2f}–{t['rounds_max']:.2f}" if "rounds_min" in t else "")
        + (f"; the interval at every round's prices {t['ratio_interval_rounds'][0]:.2f}–"
           f"{t['ratio_interval_rounds'][1]:.2f}" if t.get("ratio_interval_rounds") else "")
        + (("; settled: the intervals and every round lie " + ("above" if t["met"] else "below")
            + " the bound" if t["settled"] else "; not settled: the intervals or the rounds reach "
            "across the bound") if "settled" in t else "") + "."
        for name, t in sorted(result.get("targets", {}).items(), key=lambda kv: -kv[1]["bound"]))
    return "\n".join(lines) + f"\n\n{result['note']}" + verdicts


def figure(result: dict, path: str) -> str:
    from lib.toolbox import plotting  # noqa: PLC0415
    return plotting.save(front_plots.front_figure(result), path)


def with_derived(result: dict, out: str) -> dict:
    """A NS `result` stored before `front.paired` (with its bootstrap interval) or
    `front.round_ratios` existed, with both in each learned point's headline and its targets
    recomputed (all from its stored points and
    their timed rounds), written back to `out`."""
    learned = [p for p in result["points"] if p["family"] == "learned"]
    keys = {"paired_diff", "hct_over_front_rounds", "ratio_interval", "ratio_interval_rounds"}
    if result_system(result)["accuracy"] != "vorticity" or all(keys <= set(p["headline"]) for p in learned):
        return result
    by_name = {p["name"]: p for p in result["points"]}
    front_pts = [by_name[f["name"]] for f in result["front"]]
    priced = [p for p in result["points"] if p["family"] in ("learned", "dns") or p["nonfinite_ics"] == 0]
    per_round, intervals = front.round_ratios(priced), front.round_intervals(priced)
    for p in learned:
        p["headline"] |= front.paired(p, front_pts) | {"hct_over_front_rounds": per_round[p["name"]],
                                                        "ratio_interval_rounds": intervals[p["name"]]}
    result["targets"] = front.targets(result["points"])
    wd.write_json_atomic(out, result)
    return result


def sweep_table(result: dict) -> str:
    """Markdown: per classical family and grid, the HCT at the default step, the largest step
    factor at which every IC stayed finite (and its HCT and cost), and the smallest factor at
    which one did not ("—": none within the sweep)."""
    rows = ["| family | grid | HCT at the default step | largest finite step × | its HCT | its wall s/unit "
            "| first non-finite step × |", "|---|---|---|---|---|---|---|"]
    classical_pts = [p for p in result["points"] if p["family"] not in ("learned", "dns") and "dt_factor" in p]
    for fam in dict.fromkeys(p["family"] for p in classical_pts):
        for n in sorted({p["grid"] for p in classical_pts if p["family"] == fam}):
            sweep = sorted((p for p in classical_pts if p["family"] == fam and p["grid"] == n),
                           key=lambda p: p["dt_factor"])
            ok = [p for p in sweep if p["nonfinite_ics"] == 0]
            bad = [p for p in sweep if p["nonfinite_ics"] > 0]
            top = ok[-1] if ok else None
            finite = (f"{top['dt_factor']:.3g} | {top['hct']:.3g} | {top['cost']:.3g}" if top else "— | — | —")
            first_bad = f"{bad[0]['dt_factor']:.3g} ({bad[0]['nonfinite_ics']} ICs)" if bad else "—"
            rows.append(f"| {fam} | {n}² | {sweep[0]['hct']:.3g} | {finite} | {first_bad} |")
    return "\n".join(rows)


def cost_ratios(result: dict, baseline: dict) -> str:
    """Markdown: each point both results hold, its cost in each and the ratio baseline / result
    (> 1: faster here), with both runs' devices."""
    base = {p["name"]: p for p in baseline["points"]}
    rows = [f"| {p['name']} | {p['cost']:.3g} | {base[p['name']]['cost']:.3g} | "
            f"{base[p['name']]['cost'] / p['cost']:.3g} |" for p in result["points"] if p["name"] in base]
    return ("| point | wall s per unit, this run | baseline | baseline / this |\n|---|---|---|---|\n"
            + "\n".join(rows) + f"\n\nThis run: {result['note']}\n\nBaseline: {baseline['note']}")


def publish(result: dict, out: str) -> None:
    """Write the table (`.md`, and `--readme`'s `front` / `front_burgers` block) and the
    figure beside `out`."""
    md = table(result)
    if any("dt_factor" in p for p in result["points"]):
        md += "\n\nThe step sweep (steps × the step at the data's velocity bound, 7):\n\n" + sweep_table(result)
    if FLAGS.baseline:
        md += "\n\n" + cost_ratios(result, wd.read_json(FLAGS.baseline))
    wd.write_text_atomic(os.path.splitext(out)[0] + ".md", md + "\n")
    if FLAGS.readme:
        report.splice(FLAGS.readme, result_system(result)["block"], table(result, compact=True))
    print(md)
    print(figure(result, os.path.splitext(out)[0] + ".png"))




def stats_front(result: dict | None, out: str) -> dict | None:
    """The statistics front: long rollouts from the `stats` truth's ICs, errors of their
    time-averaged spectra and vorticity PDFs after the HCT horizon against the truth's,
    each point's cached under `--cache` (`stats_<family>_<n>_<steps>.json`, steps per front
    frame; learned: `stats_<run>.json`). With `result` (the HCT front, for its points and
    their measured costs): the front in spectrum error, each learned point against it and
    the target (spectrum error ≤ ½ the front's at equal wall), written beside `out`.
    Without: the points are the cached classical accuracies of the held-out truth and
    `--workdir`'s runs; their statistics are cached and nothing is published."""
    meta, parts = load_truth(["configs/pde_data/navier_stokes.py:stats"], FLAGS.data_root)
    (path, test), = parts
    if result is None:
        names = set()
        for c in truth_configs("navier_stokes", False, FLAGS.truth):
            held = dataset_lib.dataset_path(paths_lib.resolve(FLAGS.data_root), dataset_lib.dataset_metadata(
                spec_from_config(config_lib.load_config(c))))
            folder = os.path.join(FLAGS.cache, os.path.basename(held))
            names |= set(os.listdir(folder)) if os.path.isdir(folder) else set()
        points = [dict(zip(("family", "knobs", "grid", "steps_per_frame"), (*fd4_tuning.parse_family_tag(f), int(n), int(k))),
                       name=name)
                  for name in sorted(names) if not name.startswith("stats_")
                  for f, n, k in [os.path.splitext(name)[0].rsplit("_", 2)]]
        points += [{"name": w, "family": "learned", "workdir": w} for w in FLAGS.workdir]
        frame_dt, horizon = meta["frame_dt"] / STATS_FRAMES, STATS_START
    else:
        points, frame_dt, horizon = result["points"], result["frame_dt"], result["horizon"]
    ratio = meta["frame_dt"] / frame_dt
    if abs(ratio - round(ratio)) > 1e-6:
        raise ValueError(f"the stats truth's frame interval {meta['frame_dt']:.4g} is not a multiple "
                         f"of the front's {frame_dt:.4g}")
    length, n_frames = meta["length"], test.shape[1] - 1
    start = int(round(horizon / meta["frame_dt"]))   # statistics after the HCT horizon
    truth_spec, truth_pdf = 0.0, 0.0
    for i in range(start + 1, n_frames + 1):
        e, h = stats_lib.frame_statistics(test[:, i], length)
        truth_spec, truth_pdf = truth_spec + e / len(test), truth_pdf + h
    truth_spec = truth_spec / (n_frames - start)
    rows, folder = [], os.path.join(FLAGS.cache, os.path.basename(path))
    for p in points:
        if p["family"] == "dns":
            continue
        learned_point = p["family"] == "learned"
        file = os.path.join(folder, f"stats_{os.path.basename(os.path.normpath(p['workdir']))}.json"
                            if learned_point else
                            f"stats_{fd4_tuning.family_tag(p['family'], p.get('knobs'))}_{p['grid']}_{p['steps_per_frame']}.json")
        t0 = time.perf_counter()
        if not os.path.exists(file):
            every = 1
            if learned_point:
                fn, params, n, _, every = learned(p["workdir"], meta, FLAGS.data_root)
            else:
                fn, params = classical.build(meta, p["family"], p["grid"], p["steps_per_frame"] * round(ratio),
                                             knobs=p.get("knobs"))
                n = p["grid"]
            st = stats_lib.long_run(fn, params, front.resample(test[:, 0], n), n_frames, start, length, every)
            wd.write_json_atomic(file, dict(st, grid=n))
        st = wd.read_json(file)
        row = {"name": p["name"], "family": p["family"], "grid": st["grid"], "cost": p.get("cost"),
               "spectrum_error": stats_lib.spectrum_error(st["spectrum"], truth_spec),
               "pdf_distance": stats_lib.pdf_distance(st["pdf"], truth_pdf), "nonfinite": st["nonfinite"],
               "spectrum": st["spectrum"][:stats_lib.K_HI + 1]}
        print(f"{p['name']}: spectrum error {row['spectrum_error']:.3g}, PDF L1 {row['pdf_distance']:.3g} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
        rows.append(row)
    if result is None:
        return None
    fr = front.error_front(rows)
    for r in rows:
        if r["family"] == "learned":
            at = front.hct_at(fr, r["cost"], "score")
            r["front_error_at_equal_wall"] = None if at is None else math.exp(-at)
            r["error_over_front"] = (None if at is None or not math.isfinite(r["spectrum_error"])
                                     else r["spectrum_error"] / math.exp(-at))
    per_round = front.error_ratio_rounds(rows, {p["name"]: p["times"] for p in points if p.get("times")})
    for r in rows:
        if per_round.get(r["name"]):
            r["error_over_front_rounds"] = per_round[r["name"]]
    ratios = [(r["error_over_front"], r["name"]) for r in rows if r.get("error_over_front") is not None]
    best = min(ratios) if ratios else (None, None)
    rounds = next((r.get("error_over_front_rounds", []) for r in rows if r["name"] == best[1]), [])
    settled = bool(rounds) and (max(rounds) <= 0.5 or min(rounds) > 0.5)
    stats = {"truth": path, "n_ics": len(test), "window": [result["horizon"], n_frames * meta["frame_dt"]],
             "k_hi": stats_lib.K_HI, "truth_spectrum": list(truth_spec[:stats_lib.K_HI + 1]),
             "points": rows, "front": [{"name": r["name"], "cost": r["cost"], "spectrum_error": r["spectrum_error"]}
                                       for r in fr],
             "targets": {"statistics": report.target(
                 best[0] is not None and best[0] <= 0.5 and settled, bound=0.5, best_error_over_front=best[0],
                 best_point=best[1], settled=settled,
                 **({"rounds_min": min(rounds), "rounds_max": max(rounds)} if rounds else {}))}}
    wd.write_json_atomic(stats_path(out), stats)
    return stats


def publish_paired(out: str, other: str, pairs: list[str]) -> None:
    """`--paired_with`: --out's points against another front's, IC by IC, into <out>_paired.md."""
    try:
        split = [tuple(p.split(":")) for p in pairs]
        if not split or any(len(p) != 2 or not all(p) for p in split):
            raise ValueError(f"--pairs={','.join(pairs)}: give RUN:OTHER_RUN pairs, comma-separated")
        rows = front.paired_points(wd.read_json(out), wd.read_json(other), split)
    except ValueError as e:
        sys.exit(str(e))
    md = front.paired_table(rows, f"[{os.path.basename(other)}]({os.path.basename(other)})") + "\n"
    path = os.path.splitext(out)[0] + "_paired.md"
    wd.write_text_atomic(path, md)
    print(md + path)


def stats_path(out: str) -> str:
    return os.path.splitext(out)[0] + "_stats.json"


def stats_table(stats: dict, compact: bool = False) -> str:
    """Markdown: every point's spectrum error, PDF distance, cost; learned against the front.
    `compact`: only the front's points and the learned points that stayed finite (the others
    are named in one line)."""
    cell = lambda x: "—" if x is None else f"{x:.3g}"  # noqa: E731
    on_front = {f["name"] for f in stats["front"]}
    blew_up = [r["name"] for r in stats["points"] if r["family"] == "learned" and r["nonfinite"]] if compact else []
    lines = ["| point | grid | wall s per time unit per trajectory | log-spectrum error (k ≤ "
             f"{stats['k_hi']}) | vorticity PDF L1 | on the front | front's error at equal wall | error / front |",
             "|---" * 8 + "|"]
    for r in sorted(stats["points"], key=lambda r: (r["family"] != "learned", r["cost"])):
        if compact and ((r["family"] != "learned" and r["name"] not in on_front) or r["name"] in blew_up):
            continue
        lines.append(f"| {r['name']} | {r['grid']}² | {r['cost']:.3g} | {cell(r['spectrum_error'])}"
                     f"{' (blew up)' if r['nonfinite'] else ''} | {r['pdf_distance']:.3g} | "
                     f"{'yes' if r['name'] in on_front else ''} | {cell(r.get('front_error_at_equal_wall'))} | "
                     f"{cell(r.get('error_over_front'))} |")
    t = stats["targets"]["statistics"]
    lo, hi = stats["window"]
    if blew_up:
        lines.append(f"\nBlew up within the window (every row: the `.md` beside the JSON): {', '.join(blew_up)}.")
    return ("\n".join(lines) + f"\n\n{stats['n_ics']} ICs of the `stats` truth (seed 5), statistics over "
            f"t = {lo:.3g}–{hi:.3g}; costs from the HCT front's timing.\n\nTarget statistics (spectrum error ≤ "
            f"½ the front's at equal wall): **{report.verdict(t)}**, best {cell(t['best_error_over_front'])}× "
            f"({t['best_point']})"
            + (f"; round by round {t['rounds_min']:.3g}–{t['rounds_max']:.3g}" if "rounds_min" in t else "")
            + ("" if "settled" not in t else "; settled: every round lies " + ("below" if t["met"] else "above")
               + " the bound" if t["settled"] else "; not settled: the rounds reach across the bound") + ".")


def stats_figure(stats: dict, path: str) -> str:
    from lib.toolbox import plotting  # noqa: PLC0415
    return plotting.save(front_plots.stats_figure(stats), path)


def publish_stats(stats: dict, out: str) -> None:
    md = stats_table(stats)
    wd.write_text_atomic(os.path.splitext(stats_path(out))[0] + ".md", md + "\n")
    if FLAGS.readme:
        report.splice(FLAGS.readme, "front_stats", stats_table(stats, compact=True))
    print(md)
    print(stats_figure(stats, os.path.splitext(stats_path(out))[0] + ".png"))


def main(_):
    try:
        spec = front.system(FLAGS.system)
        tiny, burgers = FLAGS.variant == "tiny", FLAGS.system == "burgers"
        if FLAGS.stats and burgers:
            raise ValueError("--stats is for --system=navier_stokes (Burgers has no attractor)")
        families = [f for f in classical.FAMILIES[FLAGS.system] if not FLAGS.families or f[0] in FLAGS.families]
        unknown = set(FLAGS.families or ()) - {f[0] for f in classical.FAMILIES[FLAGS.system]}
        if unknown:
            raise ValueError(f"--families: unknown {sorted(unknown)}; allowed: "
                             f"{', '.join(f[0] for f in classical.FAMILIES[FLAGS.system])}")
        factors = [float(f) for f in FLAGS.dt_factors] if FLAGS.dt_factors else (
            [1.0] if tiny else list(DEFAULT_FACTORS[FLAGS.system]))
        if any(not f >= 1 for f in factors):
            raise ValueError(f"--dt_factors={','.join(FLAGS.dt_factors)}: each must be >= 1")
        if FLAGS.tune_fd4:
            if burgers or tiny:
                raise ValueError("--tune_fd4 is for --system=navier_stokes, --variant=full")
            held = [t for t in (FLAGS.truth or "front").split(",") if t.startswith(("heldout", "confirm"))]
            if held:
                raise ValueError(f"--truth={FLAGS.truth}: {held[0]} holds test ICs; tune on the ICs models "
                                 "were chosen on (front)")
            thetas, dispersions = [float(t) for t in FLAGS.thetas], [float(d) for d in FLAGS.dispersions]
    except ValueError as e:
        sys.exit(str(e))  # one line, before any compute
    out = FLAGS.out or f"workdirs/bench/multipdenet_front{'_burgers' if burgers else ''}{'_tiny' if tiny else ''}.json"
    if FLAGS.paired_with:
        return publish_paired(out, FLAGS.paired_with, FLAGS.pairs)
    if FLAGS.render:
        publish(with_derived(wd.read_json(out), out), out)
        if FLAGS.stats:
            publish_stats(wd.read_json(stats_path(out)), out)
        return
    if FLAGS.stats and FLAGS.accuracy_only:
        return stats_front(None, out)
    if FLAGS.stats:
        return publish_stats(stats_front(wd.read_json(out), out), out)
    for family, _, _ in families:
        if not classical.available(family):
            print(classical.missing_message(family), flush=True)
    families = [f for f in families if classical.available(f[0])]
    try:
        pinned = pinning.pin(pinning.parse(FLAGS.cores))
    except (ValueError, RuntimeError) as e:
        sys.exit(f"--cores={','.join(FLAGS.cores)}: {e}")
    grids = [int(g) for g in FLAGS.grids] if FLAGS.grids else list(spec["tiny_grids" if tiny else "grids"])
    truth = FLAGS.truth or ("front" if FLAGS.tune_fd4 else None)
    meta, parts = load_truth(truth_configs(FLAGS.system, tiny, truth), FLAGS.data_root)
    paths, test = [p for p, _ in parts], np.concatenate([t for _, t in parts])
    n_ics = len(test)
    accuracy = lambda fn, params, truth, every=1: front.rollout_accuracy(  # noqa: E731
        fn, params, truth[:, 0], truth[:, 1:], meta, spec["accuracy"], THRESHOLD, every)
    if FLAGS.tune_fd4:
        fam = [f for f in classical.FAMILIES[FLAGS.system] if f[0] == "fd4_tuned"]
        tuning = fd4_tuning.tune_fd4(meta, parts, classical_specs(meta, fam, grids, factors, tuned=False),
                                     thetas, dispersions, FLAGS.cache, accuracy)
        return publish_tuning(tuning | {"threshold": THRESHOLD, "truth": truth},
                              FLAGS.tuning_out or classical.TUNING_FILE)
    specs = classical_specs(meta, families, grids, factors)
    costs = None
    if FLAGS.costs_from and not FLAGS.accuracy_only:
        try:     # every point's name is known before any compute: refuse a file that lacks one
            costs = timed_costs(FLAGS.costs_from, [s["name"] for s in specs]
                                + [learned_name(w) for w in FLAGS.workdir] + [dns_name(meta)])
        except (OSError, ValueError, KeyError) as e:
            sys.exit(" ".join(str(e).split()))
    points = classical_points(meta, specs, parts, FLAGS.cache, accuracy)
    if FLAGS.accuracy_only and not FLAGS.workdir:
        return print(f"{len(points)} classical accuracies in {FLAGS.cache}")
    for w in FLAGS.workdir:
        fn, params, n, run, every = learned(w, meta, FLAGS.data_root)
        if FLAGS.timing_frames % every:
            sys.exit(f"{w}: its ΔT is {every} truth frames; --timing_frames={FLAGS.timing_frames} "
                     f"must be a multiple of {every}")
        p = {"name": learned_name(w), "family": "learned", "grid": n, "workdir": w, "fn": fn, "params": params}
        p.update(accuracy(fn, params, front.resample(test, n), every))
        print(f"{p['name']}: HCT {p['hct']:.3g} ± {p['hct_std']:.2g}, {p['nonfinite_ics']} non-finite", flush=True)
        points.append(p)
    if FLAGS.accuracy_only:
        return print(f"{len(points) - len(FLAGS.workdir)} classical accuracies in {FLAGS.cache}; "
                     f"the learned points' accuracies above (untimed)")
    for p in points:
        p.update(u0=jnp.asarray(front.resample(test[:, 0], p["grid"])), n_ics=n_ics)
    dns_fn, _, dns_u0 = fine_dns(meta, min(n_ics, 10))
    points.append({"name": dns_name(meta), "family": "dns", "grid": meta["fine_grid"],
                   "fn": lambda p, u0, k: dns_fn(p, u0, k), "params": {}, "u0": dns_u0, "n_ics": len(dns_u0)})
    if costs is None:
        time_points(points, FLAGS.timing_frames, FLAGS.repeats, meta["frame_dt"])
    else:
        for p in points:
            for k in ("fn", "params", "u0", "n_ics"):
                p.pop(k)
            p.update(costs[p["name"]])
    timing = (f"{pinned}; {FLAGS.repeats} interleaved rounds of {FLAGS.timing_frames} frames" if costs is None
              else f"costs from {FLAGS.costs_from} (timed there, not here)")
    classical_pts = [p for p in points if p["family"] not in ("learned", "dns")]
    finite = [p for p in classical_pts if p["nonfinite_ics"] == 0]   # a blown-up run is not on the front
    front_pts = front.pareto(finite)
    dns_cost = points[-1]["cost"]
    rmse_pts = front.rmse_front(finite) if spec["accuracy"] == "velocity" else None
    kept = {id(p) for p in finite}
    priced = [p for p in points if p["family"] in ("learned", "dns") or id(p) in kept]
    per_round, intervals = front.round_ratios(priced), front.round_intervals(priced)
    for p in points:
        if p["family"] == "learned":
            p["headline"] = (front.headline(p, front_pts, dns_cost) | front.paired(p, front_pts)
                             | {"hct_over_front_rounds": per_round[p["name"]],
                                "ratio_interval_rounds": intervals[p["name"]]})
            if rmse_pts is not None:
                p["headline"] |= front.rmse_headline(p, rmse_pts)
    load = os.getloadavg()
    speeds = [classical.max_speed(test[i, 0]) for i in range(n_ics)]
    result = {
        "system": FLAGS.system, "variant": FLAGS.variant, "dataset": paths,
        "truth": "front_tiny" if tiny else FLAGS.truth or ("front" if burgers else "heldout"),
        "n_ics": n_ics, "frame_dt": meta["frame_dt"], "dt_factors": factors,
        **({"costs_from": FLAGS.costs_from} if costs is not None else {}),
        "ic_max_speed": [min(speeds), max(speeds)],
        "horizon": (test.shape[1] - 1) * meta["frame_dt"], "threshold": THRESHOLD, "points": points,
        "front": [{"name": p["name"], "cost": p["cost"], "hct": p["hct"]} for p in front_pts],
        **({"targets": front.targets(points)} if spec["accuracy"] == "vorticity" else {}),
        **({} if rmse_pts is None else {"front_rmse": [
            {"name": p["name"], "cost": p["cost"], "rmse": p["rmse"]} for p in rmse_pts]}),
        "title": f"{spec['title']}, {n_ics} ICs, truth {meta['fine_grid']}²",
        "note": (f"{n_ics} test ICs (seed {meta['seed']}; peak speed {min(speeds):.2f}–{max(speeds):.2f}), "
                 f"truth {meta['fine_grid']}² saved at {meta['coarse_grid']}², horizon "
                 f"{(test.shape[1] - 1) * meta['frame_dt']:.3g}; classical steps × {', '.join(f'{f:g}' for f in factors)} "
                 f"of the step at the data's velocity bound ({'non-finite runs are off the front'}); "
                 f"{jax.devices()[0].device_kind}, {os.cpu_count()} cores, load average at the end "
                 f"{load[0]:.1f}; {timing}. "
                 "Beyond the costliest classical point the front's HCT is that point's (a lower bound)."),
    }
    wd.write_json_atomic(out, result)
    publish(result, out)


if __name__ == "__main__":
    run_tool(main)
