"""MultiPDENet's cost per macro step on Navier–Stokes, part by part, against the spectral solver.

    python tools/bench/multipdenet_cost.py                      # quick config: 32² and 64²
    python tools/bench/multipdenet_cost.py --variant=tiny --repeats=2 --macro_steps=2  # smoke

Every configuration rolls `--batch` trajectories forward `--macro_steps` macro steps of the
config's ΔT in one jitted call (batch as the leading axis, `lax.scan` over the steps),
compiled before timing; the time per macro step is the call's wall time over
`--macro_steps`, median over `--repeats` calls. The repeats are interleaved (one call of
every configuration per round, the order rotated each round), so a change of the machine's
load hits every configuration alike and the ratios, taken within this one run, stay
comparable; the load average is recorded at the start and the end. The process is pinned to
`--cores` before JAX starts (default one core, XLA's Eigen single-threaded:
`tools/bench/pinning.py`; `--cores=` leaves threads as XLA sets them).

Configurations (untrained parameters: the cost does not depend on their values, and no
workdir or dataset is needed; only the config's metadata):

- Physics Block (no networks, M RK4 micro steps of the learnable filters + Poisson block),
  old path (`stencil_impl="conv"`, `projection="composed"`, `fused_laplacian=False`), the
  new path ("shifted", "fused", True) and, at the coarse grid, the new path with each lever
  undone in turn; at the coarse grid and at twice it.
- the full model with `corrector_every` = stage (the paper's), micro, macro; the model
  without the corrector (MiNN + MaNN only); and the full model on the old path.
- the reference pseudo-spectral ETDRK4 solver (`lib.pde.navier_stokes` through
  `emulators.coarse_solver`, the dataset's CFL number: ceil(save_every·n/fine) steps per ΔT)
  on the same grids.

Targets: the new Physics Block no slower than the spectral solver on the
same grid; the full model at most 3× the new Physics Block (per corrector frequency).
Initial states: `navier_stokes.random_initial_state` (max speed 7) per trajectory. The
old and new Physics Block rollouts are compared (max |difference| relative to max |u|).
Writes `--out` (JSON) and the markdown table beside it (`.md`). Not a test.
"""
from __future__ import annotations

import math
import os
import statistics
import sys
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from lib.common.cli import run_tool
from lib.common import config as config_lib
from lib.common import report
from lib.common import workdir as wd
from lib.multipdenet import emulators, front
from lib.multipdenet import model as mpn
from lib.multipdenet import training
from lib.multipdenet.runs import setup
from lib.pde import navier_stokes
from tools.bench import pinning

flags.DEFINE_string("config", "configs/multipdenet/navier_stokes.py", "MultiPDENet config file.")
flags.DEFINE_string("variant", "quick", "Config variant (tiny: a smoke run).")
flags.DEFINE_list("override", [], "Config overrides key=value (e.g. model.fno_width=6,model.n_micro=3), "
                  "applied to the variant before measuring.")
flags.DEFINE_string("out", "workdirs/bench/multipdenet_cost.json", "Output JSON (and .md beside it).")
flags.DEFINE_integer("batch", 10, "Trajectories per call.")
flags.DEFINE_integer("macro_steps", 10, "Macro steps per timed call.")
flags.DEFINE_integer("repeats", 7, "Interleaved timed rounds (median reported).")
flags.DEFINE_bool("render", False, "Only rewrite the markdown from an existing --out JSON.")
flags.DEFINE_list("cores", [pinning.FIRST], "CPU cores the process is pinned to before JAX starts "
                  "(tools/bench/pinning.py; default: the first this process may use); empty (--cores=) pins nothing.")
flags.DEFINE_integer("grid_factor", 2, "The second grid is this multiple of the coarse grid "
                     "(Physics Block and spectral solver only; 1: coarse grid only).")
FLAGS = flags.FLAGS

PB_OLD = {"stencil_impl": "conv", "projection": "composed", "fused_laplacian": False}
PB_NEW = {"stencil_impl": "shifted", "projection": "fused", "fused_laplacian": True}


def initial_velocity(n: int, length: float, batch: int, max_velocity: float) -> jax.Array:
    """`(batch, n, n, 2)` random divergence-free velocities (channels-last)."""
    keys = jax.random.split(jax.random.key(0), batch)
    omega = jax.vmap(lambda k: navier_stokes.random_initial_state(
        k, n, length, max_velocity=max_velocity))(keys)[:, 0]
    return jnp.moveaxis(navier_stokes.vorticity_to_velocity(omega, length), -3, -1)


def model_rollout(config, meta: dict, n: int, *, nets: bool, corrector: bool = True,
                  corrector_every: str = "stage", stencil_impl: str, projection: str,
                  fused_laplacian: bool) -> tuple[Callable, Any]:
    """(`u0 -> frames`, params) of MultiPDENet on an n² grid with the config's networks."""
    m = config.model
    spec = (lambda kind: training.net_spec(kind, m)) if nets else (lambda kind: None)
    model = mpn.make_model(
        "navier_stokes", h=meta["length"] / n, macro_dt=meta["frame_dt"], n_micro=m.n_micro,
        integrator=m.integrator,
        coefficients=emulators.physics_coefficients("navier_stokes", meta["params"])
        | {"projection": projection},
        filter_mode=m.filter_mode, filter_layout=m.filter_layout,
        corrector=spec(m.corrector) if corrector else None, micro_net=spec(m.micro_net),
        macro_net=spec(m.macro_net), corrector_every=corrector_every, stencil_impl=stencil_impl,
        fused_laplacian=fused_laplacian)
    u = initial_velocity(n, meta["length"], 1, meta["params"]["max_velocity"])
    params = model.init(jax.random.key(config.train.seed), u)  # eager: a jitted init compiles for minutes
    return (lambda p, u0: mpn.rollout(model, p, u0, FLAGS.macro_steps)), params


def solver_rollout(meta: dict, n: int) -> tuple[Callable, dict, int]:
    """(`u0 -> frames`, {}, steps per ΔT) of the spectral solver on an n² grid."""
    steps = max(1, math.ceil(meta["save_every"] * n / meta["fine_grid"]))
    solver = emulators.coarse_solver(dict(meta, coarse_grid=n), steps)
    return (lambda p, u0: solver.rollout(p, u0, FLAGS.macro_steps)), {}, steps


def measure(cases: list[dict]) -> None:
    """Compile every case, then time `--repeats` interleaved rounds; fills each case in place."""
    for case in cases:
        t0 = time.perf_counter()
        case["compiled"] = jax.jit(case["fn"]).lower(case["params"], case["u0"]).compile()
        case["compile_s"] = time.perf_counter() - t0
        out = np.asarray(jax.block_until_ready(case["compiled"](case["params"], case["u0"])))
        case["final"] = out[-1]
        case["nonfinite_trajectories"] = int((~np.isfinite(out.reshape(out.shape[0], out.shape[1], -1))
                                              ).any(axis=(0, 2)).sum())
        case["times"] = []
        print(f"compiled {case['name']} ({case['compile_s']:.1f} s)", flush=True)
    front.interleaved_rounds(cases, FLAGS.repeats)
    for case in cases:
        per_step = [t / FLAGS.macro_steps * 1e3 for t in case["times"]]
        case["ms_per_macro_step"] = statistics.median(per_step)
        case["ms_runs"] = per_step


def _override(item: str) -> tuple[str, object]:
    """`key=value` -> (key, parsed value); ValueError naming the item without an '='."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise ValueError(f"--override item {item!r} is not key=value")
    return key.strip(), config_lib.parse_value(value.strip())


def benchmarked_config() -> tuple[str, Any, dict]:
    """(description, config, dataset metadata) of `--config`, `--variant` and `--override`;
    ValueError (a `ConfigError` for a key the config lacks) naming what is wrong."""
    source = f"{FLAGS.config}:{FLAGS.variant}"
    overrides = dict(_override(item) for item in FLAGS.override)
    config = config_lib.apply_overrides(config_lib.load_config(source), overrides, flag="--override=")
    if overrides:
        source += " with " + ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    meta = setup(config, load_data=False).metadata
    if meta["pde"] != "navier_stokes" or config.model.name != "multipdenet":
        raise ValueError(f"{source}: the benchmark needs a MultiPDENet config on navier_stokes, "
                         f"got model {config.model.name!r} on {meta['pde']!r}")
    return source, config, meta


def benchmark(source: str, config, meta: dict) -> dict:
    t_start = time.perf_counter()
    load_start = os.getloadavg()
    coarse = meta["coarse_grid"]
    grids = [coarse] + ([coarse * FLAGS.grid_factor] if FLAGS.grid_factor > 1 else [])
    starts = {n: initial_velocity(n, meta["length"], FLAGS.batch, meta["params"]["max_velocity"])
              for n in grids}

    cases: list[dict] = []

    def add(name, kind, n, fn_params, **info):
        fn, params = fn_params[:2]
        cases.append({"name": name, "kind": kind, "grid": n, "fn": fn, "params": params,
                      "u0": starts[n], **info})

    for n in grids:
        add(f"physics_old_{n}", "physics", n, model_rollout(config, meta, n, nets=False, **PB_OLD),
            path="old", **PB_OLD)
        add(f"physics_new_{n}", "physics", n, model_rollout(config, meta, n, nets=False, **PB_NEW),
            path="new", **PB_NEW)
        if n == coarse:
            for impl, proj, lap in (("shifted", "composed", True), ("conv", "fused", True),
                                    ("shifted", "fused", False)):
                name = f"physics_{impl}_{proj}" + ("" if lap else "_xxyy")
                add(f"{name}_{n}", "physics", n,
                    model_rollout(config, meta, n, nets=False, stencil_impl=impl, projection=proj,
                                  fused_laplacian=lap),
                    path="lever", stencil_impl=impl, projection=proj, fused_laplacian=lap)
            for every in mpn.CORRECTOR_EVERY:
                add(f"full_{every}_{n}", "full", n, model_rollout(
                    config, meta, n, nets=True, corrector_every=every, **PB_NEW),
                    corrector_every=every, path="new", **PB_NEW)
            add(f"no_corrector_{n}", "no_corrector", n, model_rollout(
                config, meta, n, nets=True, corrector=False, **PB_NEW), path="new", **PB_NEW)
            add(f"full_stage_old_{n}", "full", n, model_rollout(
                config, meta, n, nets=True, corrector_every="stage", **PB_OLD),
                corrector_every="stage", path="old", **PB_OLD)
        fn, params, steps = solver_rollout(meta, n)
        add(f"spectral_{n}", "spectral", n, (fn, params), steps_per_macro_step=steps)
    measure(cases)

    by_name = {c["name"]: c for c in cases}
    ms = {c["name"]: c["ms_per_macro_step"] for c in cases}
    rows, targets, agreement = [], [], {}
    for c in cases:
        ref_pb, ref_sp = ms[f"physics_new_{c['grid']}"], ms[f"spectral_{c['grid']}"]
        rows.append({k: v for k, v in c.items() if k not in ("fn", "params", "u0", "compiled", "final")}
                    | {"per_physics_new": c["ms_per_macro_step"] / ref_pb,
                       "per_spectral": c["ms_per_macro_step"] / ref_sp})
    for n in grids:
        targets.append({"target": f"Physics Block (new path) <= spectral solver, {n}²",
                        "num": f"physics_new_{n}", "den": f"spectral_{n}", "bound": 1.0})
        old, new = by_name[f"physics_old_{n}"]["final"], by_name[f"physics_new_{n}"]["final"]
        agreement[f"physics_{n}"] = float(np.nanmax(np.abs(old - new)) / np.nanmax(np.abs(old)))
    for every in mpn.CORRECTOR_EVERY:
        targets.append({"target": f"full model (corrector_every={every}) <= 3x Physics Block, {coarse}²",
                        "num": f"full_{every}_{coarse}", "den": f"physics_new_{coarse}", "bound": 3.0})
    old, new = by_name[f"full_stage_old_{coarse}"]["final"], by_name[f"full_stage_{coarse}"]["final"]
    agreement[f"full_stage_{coarse}"] = float(np.nanmax(np.abs(old - new)) / np.nanmax(np.abs(old)))
    return {
        "config": source, "machine": report.machine(), "device_kind": jax.devices()[0].device_kind,
        "load_average_start": list(load_start), "load_average_end": list(os.getloadavg()),
        "batch": FLAGS.batch, "macro_steps_per_call": FLAGS.macro_steps, "repeats": FLAGS.repeats,
        "macro_dt": meta["frame_dt"], "n_micro": config.model.n_micro,
        "integrator": config.model.integrator, "grids": grids,
        "rows": rows, "targets": targets,
        "old_vs_new_max_rel_difference": agreement,
        "total_wall_s": time.perf_counter() - t_start,
    }


LABELS = {
    "physics_old": "Physics Block, old path (conv stencils, 3 FFT pairs, xx + yy)",
    "physics_new": "Physics Block, new path (shifted stencils, fused projection, one Laplacian kernel)",
    "physics_shifted_composed": "Physics Block, new path but 3 FFT pairs",
    "physics_conv_fused": "Physics Block, new path but conv stencils",
    "physics_shifted_fused_xxyy": "Physics Block, new path but xx + yy (two kernels)",
    "full_stage": "full model, corrector every RK stage (paper's)",
    "full_micro": "full model, corrector every micro step",
    "full_macro": "full model, corrector every macro step",
    "no_corrector": "MiNN + MaNN, no corrector",
    "full_stage_old": "full model, every stage, old path",
    "spectral": "spectral ETDRK4 solver",
}


def verdicts(r: dict) -> list[dict]:
    """Each target's record (`report.target`): its ratio from the medians and from the
    fastest rounds (the least disturbed by other load); "verdict" met / missed when both
    agree, else "unsettled"; "met" only when both meet the bound."""
    rows = {row["name"]: row for row in r["rows"]}
    out = []
    for t in r["targets"]:
        num, den = rows[t["num"]], rows[t["den"]]
        median = num["ms_per_macro_step"] / den["ms_per_macro_step"]
        fastest = min(num["ms_runs"]) / min(den["ms_runs"])
        met = [median <= t["bound"], fastest <= t["bound"]]
        given = {k: v for k, v in t.items() if k not in ("met", "ratio_median", "ratio_fastest", "verdict")}
        out.append(report.target(all(met), **given,
                                 ratio_median=median, ratio_fastest=fastest,
                                 verdict="met" if all(met) else "missed" if not any(met) else "unsettled"))
    return out


def markdown(r: dict) -> str:
    la0, la1 = r["load_average_start"], r["load_average_end"]
    lines = [
        (f"Machine: {r['machine']} ({r['device_kind']}). Config `{r['config']}`: ΔT = "
         f"{r['macro_dt']:.4g}, M = {r['n_micro']} {r['integrator']} micro steps; "
         f"{r['batch']} trajectories per call, {r['macro_steps_per_call']} macro steps per call, "
         f"median of {r['repeats']} interleaved rounds; untrained parameters; "
         f"{r.get('pinning', 'not pinned')}."),
        (f"Load average (1/5/15 min) at the start {la0[0]:.2f} / {la0[1]:.2f} / {la0[2]:.2f}, "
         f"at the end {la1[0]:.2f} / {la1[1]:.2f} / {la1[2]:.2f}."),
        "",
        "| configuration | grid | ms per macro step (median) | fastest–slowest round | × new Physics Block | × spectral solver |",
        "|---|---|---|---|---|---|",
    ]
    for row in r["rows"]:
        label = LABELS[row["name"].rsplit("_", 1)[0]]
        if row["kind"] == "spectral":
            label += f" ({row['steps_per_macro_step']} steps per ΔT)"
        lines.append(f"| {label} | {row['grid']}² | {row['ms_per_macro_step']:.2f} | "
                     f"{min(row['ms_runs']):.2f}–{max(row['ms_runs']):.2f} | "
                     f"{row['per_physics_new']:.2f} | {row['per_spectral']:.2f} |")
    lines += ["", "| target | ratio of medians | ratio of fastest rounds | bound | verdict |",
              "|---|---|---|---|---|"]
    lines += [f"| {t['target']} | {t['ratio_median']:.2f} | {t['ratio_fastest']:.2f} | {t['bound']:g} | "
              f"{t['verdict']} |" for t in verdicts(r)]
    agree = ", ".join(f"{k} {v:.1e}" for k, v in r["old_vs_new_max_rel_difference"].items())
    lines += ["", f"Old vs new path after {r['macro_steps_per_call']} macro steps, max |difference| "
              f"/ max |u|: {agree}."]
    bad = [f"{row['name']} ({row['nonfinite_trajectories']})" for row in r["rows"]
           if row["nonfinite_trajectories"]]
    if bad:
        lines.append(f"Non-finite trajectories: {', '.join(bad)}.")
    return "\n".join(lines) + "\n"


def main(argv):
    del argv
    if not FLAGS.render:
        try:
            chosen = benchmarked_config()
        except ValueError as e:    # a bad --config, --variant or --override: one line, no compute
            sys.exit(str(e))
        try:
            pinned = pinning.pin(pinning.parse(FLAGS.cores))
        except (ValueError, RuntimeError) as e:
            sys.exit(f"--cores={','.join(FLAGS.cores)}: {e}")
    results = wd.read_json(FLAGS.out) if FLAGS.render else benchmark(*chosen) | {"pinning": pinned}
    results["targets"] = verdicts(results)   # records: tools/targets.py lists them
    table = markdown(results)
    os.makedirs(os.path.dirname(os.path.abspath(FLAGS.out)), exist_ok=True)
    wd.write_json_atomic(FLAGS.out, results)
    with open(os.path.splitext(FLAGS.out)[0] + ".md", "w") as f:
        f.write(table)
    print(table)
    print(f"wrote {FLAGS.out} ({results['total_wall_s']:.0f} s)")


if __name__ == "__main__":
    run_tool(main)
