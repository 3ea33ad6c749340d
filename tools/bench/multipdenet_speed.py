"""MultiPDENet against the reference solver on Navier–Stokes: wall time at equal correlation time.

    python tools/bench/multipdenet_speed.py \
        --workdir=workdirs/multipdenet/navier_stokes_quick/multipdenet      # trained params
    python tools/bench/multipdenet_speed.py --variant=tiny                  # smoke run, seconds

Measured side by side in one process, on the test trajectories of the config's dataset
(all of them in one batch, after compilation, median of `--repeats` runs):

(a) MultiPDENet rolling out the test horizon on the coarse grid, and its HCT (the time
    until the Pearson correlation with the truth first drops below `eval.hct_threshold`,
    mean over the test trajectories; `lib.multipdenet.metrics`).
(b) The workspace's pseudo-spectral solver (`lib.pde.navier_stokes`, through
    `emulators.coarse_solver`) at `--factors` × the coarse grid, up to the dataset's fine
    grid. Each run starts from the test initial conditions regenerated exactly as the
    dataset did (`lib.pde.dataset.simulate_coarse` on the dataset's seeds, warm-up on the
    fine grid) and spectrally truncated to that grid, takes the dataset's time step (its
    CFL number), and every frame is truncated to the coarse grid for the metrics. The
    coarsest grid whose mean HCT reaches MultiPDENet's is the match; the speed-up is its
    wall time over MultiPDENet's. At the fine grid the solver is the dataset's own
    simulation, so a match exists whenever the fine grid is among the factors.
(c) Training throughput (steps/s of `make_task`'s jitted train step, after compilation)
    and memory: XLA's compiled footprint (temp + arguments + outputs) of each timed
    function, the process's peak RSS (CPU), and the allocator's peak (GPU, when reported).

Without `--workdir` the parameters are untrained (MultiPDENet's correction networks start
at zero output, so it is the learnable-filter physics at its FD4 initialisation); the
output says so. With `--workdir` the run's own config.json is used, and the newest intact
checkpoint restored. Writes `--out` (JSON) and the markdown table beside it (`.md`).
Not a test: the numbers depend on the machine and its load.
"""
from __future__ import annotations

import os
import platform
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.common import config as config_lib
from lib.common import train_loop
from lib.common import workdir as wd
from lib.multipdenet import emulators
from lib.multipdenet import metrics as mpn_metrics
from lib.multipdenet.runs import load_run, setup
from lib.multipdenet.training import make_task
from lib.pde import dataset as dataset_lib
from lib.pde import downsampling, systems

flags.DEFINE_string("config", "configs/multipdenet/navier_stokes.py", "MultiPDENet config file.")
flags.DEFINE_string("variant", "quick", "Config variant (tiny: a smoke run of seconds).")
flags.DEFINE_string("workdir", "", "A trained MultiPDENet run (its config.json and checkpoints/); "
                    "empty: untrained parameters.")
flags.DEFINE_string("data_root", "", "Dataset cache (default: the config's data_root).")
flags.DEFINE_string("out", "workdirs/bench/multipdenet_speed.json", "Output JSON (and .md beside it).")
flags.DEFINE_list("factors", ["1", "2", "4", "8"], "Solver grids as multiples of the coarse grid "
                  "(capped at the dataset's fine grid, which is always tried last).")
flags.DEFINE_bool("all_resolutions", False, "Run every grid, not only up to the first match.")
flags.DEFINE_integer("repeats", 3, "Timed runs per measurement (median reported).")
flags.DEFINE_float("max_repeat_s", 20.0, "Stop repeating a measurement once its timed runs add "
                   "up to this many seconds.")
flags.DEFINE_integer("train_steps", 10, "Timed training steps.")
FLAGS = flags.FLAGS


# ----------------------------------------------------------------------------- helpers


def _compile(fn: Callable, *args) -> tuple[Callable, float, int]:
    """(compiled fn, compile seconds, XLA's footprint in bytes: temp + arguments + outputs)."""
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    seconds = time.perf_counter() - t0
    m = compiled.memory_analysis()
    footprint = (int(m.temp_size_in_bytes + m.argument_size_in_bytes + m.output_size_in_bytes)
                 if m is not None else -1)
    return compiled, seconds, footprint


def _timed(compiled: Callable, *args) -> tuple[float, list[float], Any]:
    """Median wall time of `compiled(*args)` over up to `--repeats` runs; (median, all, output)."""
    times, out = [], None
    while len(times) < FLAGS.repeats and sum(times) < FLAGS.max_repeat_s:
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def _max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _device_peak_mib() -> float | None:
    stats = jax.devices()[0].memory_stats() or {}
    return stats["peak_bytes_in_use"] / 2**20 if "peak_bytes_in_use" in stats else None


def _scores(pred: np.ndarray, truth: np.ndarray, frame_dt: float, threshold: float) -> dict:
    s = mpn_metrics.evaluate_rollouts(jnp.asarray(pred), jnp.asarray(truth), frame_dt, threshold)
    return {"hct": [float(s["hct"][0]), float(s["hct"][1])],
            "rmse": [float(s["rmse"][0]), float(s["rmse"][1])],
            "correlation_final": float(s["correlation"][0][-1]),
            "nonfinite_trajectories": int((~np.isfinite(pred.reshape(len(pred), -1)).all(1)).sum())}


# ----------------------------------------------------------------------------- setup


def load() -> tuple[Any, dict, emulators.Emulator, Any, train_loop.Task, str, dict]:
    """(config, data, emulator, params, task, source, info): `--workdir`'s trained run (its
    config.json and newest checkpoint, via `runs.load_run`), else `--config:--variant`
    untrained (`runs.setup`)."""
    info = {"trained": False, "workdir": FLAGS.workdir or None, "checkpoint_step": None}
    if FLAGS.workdir:
        run = load_run(FLAGS.workdir, FLAGS.data_root)
        config, data, emulator, params = run.config, run.data, run.emulator, run.params
        source = FLAGS.workdir
        info.update(trained=True, checkpoint_step=int(run.step))
        results = os.path.join(FLAGS.workdir, wd.RESULTS)
        if os.path.isfile(results):
            info["results_json_hct"] = wd.read_json(results).get("hct")
    else:
        source = f"{FLAGS.config}:{FLAGS.variant}"
        config = config_lib.load_config(source)
        if FLAGS.data_root:
            config = config_lib.apply_overrides(config, {"data_root": FLAGS.data_root})
        run = setup(config)
        data, emulator, params = run.data, run.emulator, None
    if config.dataset.pde != "navier_stokes" or config.model.name != "multipdenet":
        raise ValueError(f"{source}: the benchmark needs a MultiPDENet config on navier_stokes, "
                         f"got model {config.model.name!r} on {config.dataset.pde!r}")
    task = make_task(config, emulator, data["train"])
    if params is None:
        params = jax.jit(task.init_state)(jax.random.key(config.train.seed))["params"]
    return config, data, emulator, params, task, source, info


def regenerate_fine_initial_velocity(config, metadata: dict) -> np.ndarray:
    """The test trajectories' first frames on the fine grid, `(n_test, 2, N, N)`.

    Exactly what `lib.pde.dataset.generate_dataset` did (same solver, seeds, warm-up,
    chunking), observed without downsampling.
    """
    solver = systems.build(metadata["pde"], metadata["params"], metadata["dtype"])
    keys = dataset_lib.initial_keys(metadata["seed"], "test", metadata["n_test"])
    fine = dict(metadata, n_frames=1, space_factor=1)
    frames = dataset_lib.simulate_coarse(solver, keys, fine, config.dataset.data.chunk_frames)
    return frames[:, 0]


def _solver_rollout(metadata: dict, grid: int, n_steps: int) -> tuple[Callable, int]:
    """`u0 (B, r, r, 2) -> (B, n_steps, m, m, 2)`: the reference solver on grid r at the
    dataset's CFL number, each frame truncated to the coarse grid m."""
    fine, m = metadata["fine_grid"], metadata["coarse_grid"]
    steps_per_frame = max(1, -(-metadata["save_every"] * grid // fine))  # ceil: CFL <= dataset's
    solver = emulators.coarse_solver(dict(metadata, coarse_grid=grid), steps_per_frame)

    def run(u0):
        frames = solver.rollout({}, u0, n_steps)  # (n, B, r, r, 2)
        coarse = downsampling.spectral_truncation(jnp.moveaxis(frames, -1, -3), grid // m)
        return jnp.swapaxes(jnp.moveaxis(coarse, -3, -1), 0, 1)

    return run, steps_per_frame


def solver_grids(metadata: dict) -> list[int]:
    fine, m = metadata["fine_grid"], metadata["coarse_grid"]
    grids = {m * int(f) for f in FLAGS.factors if m * int(f) <= fine and fine % (m * int(f)) == 0}
    return sorted(grids | {fine})


# ----------------------------------------------------------------------------- benchmark


def benchmark() -> dict:
    t_start = time.perf_counter()
    config, data, emulator, params, task, source, params_info = load()
    meta = data["metadata"]
    test = data["test"]
    n_steps = config.eval.n_steps if config.eval.n_steps > 0 else test.shape[1] - 1
    truth, u0 = test[:, 1:n_steps + 1], jnp.asarray(test[:, 0])
    threshold, frame_dt = config.eval.hct_threshold, meta["frame_dt"]
    memory: dict[str, Any] = {"max_rss_mib_after_data": _max_rss_mib()}

    # (a) MultiPDENet on the coarse grid
    mpn_fn = lambda p, u: jnp.swapaxes(emulator.rollout(p, u, n_steps), 0, 1)
    compiled, compile_s, footprint = _compile(mpn_fn, params, u0)
    wall, times, pred = _timed(compiled, params, u0)
    mpn = {"grid": meta["coarse_grid"], "wall_s": wall, "wall_s_runs": times,
           "compile_s": compile_s, "xla_footprint_mib": footprint / 2**20,
           "n_params": emulators.count_params(params),
           **_scores(np.asarray(pred), truth, frame_dt, threshold)}
    memory["max_rss_mib_after_multipdenet_rollout"] = _max_rss_mib()
    print(f"MultiPDENet {meta['coarse_grid']}²: {wall:.3f} s, HCT {mpn['hct'][0]:.4g}", flush=True)

    # (c) training throughput
    state = jax.jit(task.init_state)(jax.random.key(config.train.seed))
    batches = [jax.tree.map(jnp.asarray, task.batch_fn(s, slice(None)))
               for s in range(FLAGS.train_steps + 1)]
    key = jax.random.key(0)
    t0 = time.perf_counter()
    step_fn = jax.jit(task.train_step, donate_argnums=(0,)).lower(state, batches[0], key).compile()
    train_compile_s = time.perf_counter() - t0
    m = step_fn.memory_analysis()
    state, _ = jax.block_until_ready(step_fn(state, batches[0], key))  # first call, untimed
    t0 = time.perf_counter()
    for batch in batches[1:]:
        state, metrics = step_fn(state, batch, key)
    jax.block_until_ready((state, metrics))
    train_s = time.perf_counter() - t0
    training = {"steps": FLAGS.train_steps, "steps_per_s": FLAGS.train_steps / train_s,
                "compile_s": train_compile_s, "batch_size": config.train.batch_size,
                "window": config.train.window, "n_micro": config.model.n_micro,
                "xla_footprint_mib": (m.temp_size_in_bytes + m.argument_size_in_bytes
                                      + m.output_size_in_bytes) / 2**20 if m else None}
    del state, batches
    memory["max_rss_mib_after_training"] = _max_rss_mib()
    print(f"training: {training['steps_per_s']:.3g} steps/s", flush=True)

    # (b) the reference solver, coarse to fine
    t0 = time.perf_counter()
    fine_u0 = regenerate_fine_initial_velocity(config, meta)
    regen_s = time.perf_counter() - t0
    ic_check = downsampling.spectral_truncation(jnp.asarray(fine_u0),
                                                meta["fine_grid"] // meta["coarse_grid"])
    ic_error = float(jnp.max(jnp.abs(jnp.moveaxis(ic_check, 1, -1) - u0)) / jnp.max(jnp.abs(u0)))
    solver_rows, match = [], None
    for grid in solver_grids(meta):
        start = jnp.moveaxis(downsampling.spectral_truncation(jnp.asarray(fine_u0),
                                                              meta["fine_grid"] // grid), 1, -1)
        fn, steps_per_frame = _solver_rollout(meta, grid, n_steps)
        compiled, compile_s, footprint = _compile(fn, start)
        wall, times, frames = _timed(compiled, start)
        row = {"grid": grid, "steps_per_frame": steps_per_frame, "wall_s": wall,
               "wall_s_runs": times, "compile_s": compile_s, "xla_footprint_mib": footprint / 2**20,
               "speed_ratio": wall / mpn["wall_s"],
               **_scores(np.asarray(frames), truth, frame_dt, threshold)}
        solver_rows.append(row)
        print(f"solver {grid}²: {wall:.3f} s, HCT {row['hct'][0]:.4g}", flush=True)
        if match is None and row["hct"][0] >= mpn["hct"][0]:
            match = row
            if not FLAGS.all_resolutions:
                break
    memory["max_rss_mib_after_solver"] = _max_rss_mib()
    memory["device_peak_mib"] = _device_peak_mib()

    reached = match is not None
    compared = match if reached else solver_rows[-1]
    return {
        "config": source, "tag": config.tag, "dataset": data["path"],
        "machine": {"device_kind": jax.devices()[0].device_kind, "platform": jax.default_backend(),
                    "n_devices": jax.device_count(), "cpu_count": os.cpu_count(),
                    "processor": platform.processor() or platform.machine(),
                    "jax": jax.__version__, "python": platform.python_version()},
        "horizon": {"steps": n_steps, "time": n_steps * frame_dt, "frame_dt": frame_dt,
                    "n_test": int(test.shape[0]), "coarse_grid": meta["coarse_grid"],
                    "fine_grid": meta["fine_grid"], "hct_threshold": threshold},
        "params": params_info,
        "multipdenet": mpn,
        "solver": solver_rows,
        "solver_initial_condition": {"regenerate_s": regen_s,
                                     "max_rel_error_vs_test_frame0": ic_error},
        "match": {"reached": reached, "grid": compared["grid"],
                  "speed_ratio": compared["speed_ratio"],
                  "note": ("coarsest solver grid with HCT >= MultiPDENet's" if reached else
                           "no solver grid reached MultiPDENet's HCT; ratio against the finest tried")},
        "training": training,
        "memory": memory,
        "total_wall_s": time.perf_counter() - t_start,
    }


def markdown(r: dict) -> str:
    mc, hz, p, mpn = r["machine"], r["horizon"], r["params"], r["multipdenet"]
    params = (f"trained, checkpoint step {p['checkpoint_step']} of `{p['workdir']}`" if p["trained"]
              else "**untrained** (no --workdir: zero-initialised corrections, FD4 filters)")
    lines = [
        (f"Machine: {mc['device_kind']} ({mc['platform']}, {mc['n_devices']} device(s)), "
         f"{mc['cpu_count']} CPU cores, jax {mc['jax']}. Config `{r['config']}`; "
         f"MultiPDENet parameters: {params}."),
        (f"Horizon: {hz['steps']} macro steps of ΔT = {hz['frame_dt']:.4g} (t = {hz['time']:.3g}), "
         f"{hz['n_test']} test trajectories in one batch, coarse grid {hz['coarse_grid']}², "
         f"fine (dataset) grid {hz['fine_grid']}²; HCT threshold {hz['hct_threshold']:g}."),
        "",
        "| model | grid | solver steps per ΔT | wall time (s) | HCT (mean ± std) | RMSE | time / MultiPDENet's |",
        "|---|---|---|---|---|---|---|",
        (f"| MultiPDENet | {mpn['grid']}² | M = {r['training']['n_micro']} | {mpn['wall_s']:.3f} | "
         f"{mpn['hct'][0]:.3g} ± {mpn['hct'][1]:.2g} | {mpn['rmse'][0]:.3g} | 1 |"),
    ]
    blown = {"MultiPDENet": mpn["nonfinite_trajectories"]}
    blown |= {f"the solver on {s['grid']}²": s["nonfinite_trajectories"] for s in r["solver"]}
    for s in r["solver"]:
        mark = " (match)" if r["match"]["reached"] and s["grid"] == r["match"]["grid"] else ""
        lines.append(f"| reference solver{mark} | {s['grid']}² | {s['steps_per_frame']} | "
                     f"{s['wall_s']:.3f} | {s['hct'][0]:.3g} ± {s['hct'][1]:.2g} | "
                     f"{s['rmse'][0]:.3g} | {s['speed_ratio']:.3g} |")
    m, t, mem = r["match"], r["training"], r["memory"]
    device_peak = "n/a" if mem["device_peak_mib"] is None else f"{mem['device_peak_mib']:.0f}"
    footprint = "n/a" if t["xla_footprint_mib"] is None else f"{t['xla_footprint_mib']:.1f}"
    lines += [f"\n{name}: {k} of {hz['n_test']} test rollouts became non-finite (RMSE nan; "
              "HCT counts the frames before)." for name, k in blown.items() if k]
    lines += [
        "",
        (f"Speed-up at equal HCT: {m['speed_ratio']:.3g}× (solver on {m['grid']}² vs MultiPDENet)."
         if m["reached"] else
         f"No solver grid reached MultiPDENet's HCT; ratio against the finest tried "
         f"({m['grid']}²): {m['speed_ratio']:.3g}×."),
        "",
        ("| training steps/s | batch × window | train-step XLA footprint (MiB) | "
         "peak RSS after training (MiB) | peak RSS overall (MiB) | device peak (MiB) |"),
        "|---|---|---|---|---|---|",
        (f"| {t['steps_per_s']:.3g} | {t['batch_size']} × {t['window']} | {footprint} | "
         f"{mem['max_rss_mib_after_training']:.0f} | {mem['max_rss_mib_after_solver']:.0f} | "
         f"{device_peak} |"),
    ]
    return "\n".join(lines) + "\n"


def main(argv):
    del argv
    results = benchmark()
    table = markdown(results)
    os.makedirs(os.path.dirname(os.path.abspath(FLAGS.out)), exist_ok=True)
    wd.write_json_atomic(FLAGS.out, results)
    with open(os.path.splitext(FLAGS.out)[0] + ".md", "w") as f:
        f.write(table)
    print(table)
    print(f"wrote {FLAGS.out} ({results['total_wall_s']:.0f} s)")


if __name__ == "__main__":
    run_tool(main)
