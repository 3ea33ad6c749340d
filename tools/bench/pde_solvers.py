"""Speed and accuracy-matched cost of the Kolmogorov-flow solver (`lib/pde/navier_stokes.py`).

    python tools/bench/pde_solvers.py --out=workdirs/bench
    PYTHONPATH=<dir with jax-cfd and exponax> python tools/bench/pde_solvers.py ...  (comparison)

Two measurements, written to `<out>/pde_solvers.json` and `<out>/pde_solvers.md`:

1. Per step, at each `--sizes` grid (2π domain, ν = 1e-3, dt = 0.5·dx/7, float32, batch 1):
   steps/s (median of `--repeats` timed scans after compilation) and peak memory (the
   device allocator's peak where it reports one, else XLA's compiled temp + argument +
   output bytes). Same for jax-cfd (spectral Crank–Nicolson/RK4) and exponax (ETDRK2, its
   default, and ETDRK4) when they import (install them with the `bench` extra).
2. Cost at equal accuracy, for each `--accuracy_viscosities`: from one initial condition (a
   random field warmed up `--warmup` time units on the reference grid), each solver runs
   `--horizon` time units at each `--accuracy_sizes` grid and each `--cfls` time step; the
   reference is this workspace's solver on a grid 4× finer than the largest of them (same
   initial condition, spectrally truncated). Reported per run: wall time (compiled), the
   largest relative L2 vorticity error over the frames (one per time unit), and the time
   until the correlation with the reference first drops below `--target_correlation`; per
   solver, the cheapest run that stays above it for the whole horizon (the JSON keeps the
   error and correlation curves, for other criteria).
Not a test: numbers depend on the machine; the notes quote a run with its command.
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import time
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

from lib.common import report
from lib.common.cli import run_tool
from lib.pde import checks, downsampling, navier_stokes

flags.DEFINE_string("out", "workdirs/bench", "Output directory.")
flags.DEFINE_list("sizes", ["64", "128", "256", "512"], "Grids for the per-step benchmark.")
flags.DEFINE_list("accuracy_sizes", ["32", "64"], "Grids for the accuracy-matched runs.")
flags.DEFINE_list("accuracy_viscosities", ["1e-3", "1e-2"], "Viscosities of the accuracy-matched runs.")
flags.DEFINE_list("cfls", ["0.25", "0.5", "0.9"], "CFL numbers (dt = cfl·dx/7) of the accuracy-matched runs.")
flags.DEFINE_float("horizon", 20.0, "Simulated time of the accuracy-matched runs.")
flags.DEFINE_float("warmup", 5.0, "Warm-up time of the initial condition (reference grid).")
flags.DEFINE_float("target_correlation", 0.8, "A run is accurate while its vorticity correlation "
                   "with the reference stays at or above this (0.8: MultiPDENet's speed-up criterion).")
flags.DEFINE_integer("repeats", 3, "Timed repetitions per per-step measurement.")
flags.DEFINE_float("min_seconds", 1.0, "Each timed per-step scan runs at least about this long.")
FLAGS = flags.FLAGS

LENGTH, NU, MAX_VELOCITY, CFL = 2 * np.pi, 1e-3, 7.0, 0.5
Step = Callable[[jax.Array], jax.Array]  # vorticity (n, n), indexed [y, x] -> next
Builder = Callable[[int, float, float], Step]  # (n, dt, viscosity) -> step


def _dt(n: int, cfl: float = CFL) -> float:
    return checks.stable_time_step(MAX_VELOCITY, cfl, LENGTH / n)


def ours(n: int, dt: float, viscosity: float) -> Step:
    step = navier_stokes.make_step(n, dt, LENGTH, viscosity)
    return lambda omega: step(omega[None])[0]


def jax_cfd_crank_nicolson_rk4(n: int, dt: float, viscosity: float) -> Step:
    """jax-cfd's pseudo-spectral ForcedNavierStokes2D (arrays indexed [x, y]; state in Fourier space)."""
    from jax_cfd.base import grids
    from jax_cfd.spectral import equations, time_stepping

    grid = grids.Grid((n, n), domain=((0, LENGTH), (0, LENGTH)))
    equation = equations.ForcedNavierStokes2D(viscosity, grid, smooth=True)
    step_hat = time_stepping.crank_nicolson_rk4(equation, dt)
    return lambda omega: jnp.fft.irfftn(step_hat(jnp.fft.rfftn(omega.T)), s=(n, n)).T


def _exponax(order: int) -> Builder:
    def build(n: int, dt: float, viscosity: float) -> Step:
        import exponax

        # exponax's state for the same flow is −ωᵀ (its axes are (x, y), its vorticity has the
        # opposite sign) with the forcing sign flipped; checked to agree with lib.pde to 2e-4.
        stepper = exponax.stepper.KolmogorovFlowVorticity(
            2, LENGTH, n, dt, diffusivity=viscosity, drag=-0.1, injection_mode=4,
            injection_scale=-1.0, order=order,
        )
        return lambda omega: -stepper(-omega.T[None])[0].T

    return build


def solvers() -> dict[str, Builder]:
    """This workspace's solver and whichever public ones import."""
    out: dict[str, Builder] = {"lib.pde (ETDRK4)": ours}
    try:
        import jax_cfd.spectral  # noqa: F401

        out["jax-cfd spectral (CN/RK4)"] = jax_cfd_crank_nicolson_rk4
    except ImportError:
        pass
    try:
        import exponax  # noqa: F401

        out["exponax (ETDRK2)"] = _exponax(2)
        out["exponax (ETDRK4)"] = _exponax(4)
    except ImportError:
        pass
    return out


def _run(step: Step, n_steps: int, save_every: int | None = None) -> Callable:
    """Jitted `omega -> (final, frames)`; frames every `save_every` steps (none when None)."""
    every = save_every or n_steps

    def run(omega):
        def frame(state, _):
            state = jax.lax.fori_loop(0, every, lambda _, s: step(s), state)
            return state, state if save_every else None

        return jax.lax.scan(frame, omega, None, length=n_steps // every)

    return jax.jit(run)


def _peak_memory(compiled, device) -> int:
    stats = device.memory_stats() or {}
    if "peak_bytes_in_use" in stats:
        return int(stats["peak_bytes_in_use"])
    m = compiled.memory_analysis()
    return int(m.temp_size_in_bytes + m.argument_size_in_bytes + m.output_size_in_bytes)


def per_step(name: str, build: Callable[[int, float], Step], n: int) -> dict:
    omega = navier_stokes.random_initial_state(jax.random.key(0), n)[0]
    step = build(n, _dt(n), NU)
    probe = _run(step, 10)
    jax.block_until_ready(probe(omega))
    t0 = time.perf_counter()
    jax.block_until_ready(probe(omega))
    n_steps = max(10, int(FLAGS.min_seconds / max(time.perf_counter() - t0, 1e-6) * 10))
    lowered = _run(step, n_steps).lower(omega)
    compiled = lowered.compile()
    jax.block_until_ready(compiled(omega))
    times = []
    for _ in range(FLAGS.repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(omega))
        times.append(time.perf_counter() - t0)
    seconds = statistics.median(times)
    return {"solver": name, "n": n, "steps": n_steps, "steps_per_s": n_steps / seconds,
            "ms_per_step": 1e3 * seconds / n_steps,
            "peak_memory_mb": _peak_memory(compiled, jax.devices()[0]) / 2**20}


def _correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of fields over the last two axes."""
    a = a - a.mean(axis=(-2, -1), keepdims=True)
    b = b - b.mean(axis=(-2, -1), keepdims=True)
    return (a * b).sum(axis=(-2, -1)) / np.sqrt((a * a).sum(axis=(-2, -1)) * (b * b).sum(axis=(-2, -1)))


def accuracy_matched(builders: dict[str, Builder], sizes: list[int], cfls: list[float],
                     viscosity: float) -> tuple[list[dict], dict]:
    """Runs of every solver × grid × CFL against a 4× finer reference (see the module doc)."""
    n_ref = 4 * max(sizes)
    dt_ref = _dt(n_ref)
    omega = navier_stokes.random_initial_state(jax.random.key(1), n_ref)[0]
    omega, _ = _run(ours(n_ref, dt_ref, viscosity), int(round(FLAGS.warmup / dt_ref)))(omega)
    frame_time, n_frames = 1.0, int(round(FLAGS.horizon))
    every_ref = int(round(frame_time / dt_ref))
    t0 = time.perf_counter()
    _, reference = jax.block_until_ready(
        _run(ours(n_ref, dt_ref, viscosity), every_ref * n_frames, every_ref)(omega)
    )
    reference_info = {"viscosity": viscosity, "n": n_ref, "dt": dt_ref,
                      "wall_s_including_compile": time.perf_counter() - t0}
    times = frame_time * np.arange(1, n_frames + 1)
    rows = []
    for n in sizes:
        start = downsampling.spectral_truncation(omega, n_ref // n)
        target = np.asarray(downsampling.spectral_truncation(reference, n_ref // n))
        for cfl in cfls:
            every = int(np.ceil(frame_time / _dt(n, cfl)))  # the CFL step, fitted to the frames
            dt = frame_time / every
            for name, build in builders.items():
                compiled = _run(build(n, dt, viscosity), every * n_frames, every).lower(start).compile()
                t0 = time.perf_counter()
                _, frames = jax.block_until_ready(compiled(start))
                wall = time.perf_counter() - t0
                frames = np.asarray(frames)
                corr = _correlation(frames, target)
                error = np.linalg.norm(frames - target, axis=(-2, -1)) / np.linalg.norm(target, axis=(-2, -1))
                below = np.flatnonzero(~(corr >= FLAGS.target_correlation))
                rows.append({
                    "viscosity": viscosity, "solver": name, "n": n, "cfl": cfl, "dt": dt, "wall_s": wall,
                    "max_error": float(np.max(error)) if np.all(np.isfinite(error)) else float("nan"),
                    "time_above_target": float(times[below[0]] - frame_time if below.size else times[-1]),
                    "correlation": corr.tolist(), "error": error.tolist(),
                })
                print({k: v for k, v in rows[-1].items() if k not in ("correlation", "error")})
    return rows, reference_info


def _cheapest(rows: list[dict]) -> list[dict]:
    """Per viscosity and solver, the fastest run correlated over the whole horizon (or None)."""
    out = []
    for viscosity in sorted({r["viscosity"] for r in rows}):
        for solver in dict.fromkeys(r["solver"] for r in rows):
            ok = [r for r in rows if r["viscosity"] == viscosity and r["solver"] == solver
                  and r["time_above_target"] >= FLAGS.horizon]
            out.append({"viscosity": viscosity, "solver": solver,
                        "run": min(ok, key=lambda r: r["wall_s"]) if ok else None})
    return out


def _markdown(step_rows: list[dict], accuracy_rows: list[dict], references: list[dict],
              cheapest: list[dict], header: str) -> str:
    lines = [header, "", "### Per step (ν = 1e-3, CFL 0.5, float32, batch 1)", "",
             "| solver | grid | steps/s | ms/step | peak memory (MiB) |", "|---|---|---|---|---|"]
    lines += [f"| {r['solver']} | {r['n']}² | {r['steps_per_s']:.1f} | {r['ms_per_step']:.3f} | "
              f"{r['peak_memory_mb']:.1f} |" for r in step_rows]
    for ref in references:
        nu = ref["viscosity"]
        lines += ["", f"### ν = {nu:g}: {FLAGS.horizon:g} time units against the {ref['n']}² reference "
                  f"(dt = {ref['dt']:.3g})", "",
                  f"| solver | grid | CFL | dt | wall time (s) | max rel. L2 error | time with corr ≥ "
                  f"{FLAGS.target_correlation:g} |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['solver']} | {r['n']}² | {r['cfl']:g} | {r['dt']:.3g} | {r['wall_s']:.3g} | "
                  f"{r['max_error']:.3g} | {r['time_above_target']:g} |"
                  for r in accuracy_rows if r["viscosity"] == nu]
        best = [c["run"]["wall_s"] for c in cheapest if c["viscosity"] == nu and c["run"]]
        lines += ["", f"Cheapest run with correlation ≥ {FLAGS.target_correlation:g} for all "
                  f"{FLAGS.horizon:g} time units (ν = {nu:g}):", "",
                  "| solver | grid | CFL | wall time (s) | × fastest |", "|---|---|---|---|---|"]
        for c in cheapest:
            if c["viscosity"] != nu:
                continue
            r = c["run"]
            lines.append(f"| {c['solver']} | — | — | none stays correlated | — |" if r is None else
                         f"| {c['solver']} | {r['n']}² | {r['cfl']:g} | {r['wall_s']:.3g} | "
                         f"{r['wall_s'] / min(best):.2f} |")
    return "\n".join(lines) + "\n"


def main(_):
    builders = solvers()
    device = jax.devices()[0]
    header = (f"Device: {device.device_kind} ({jax.default_backend()}, {jax.device_count()} device(s)); "
              f"jax {jax.__version__}; {platform.processor() or platform.machine()}, "
              f"{report.cores_text()}. Solvers: {', '.join(builders)}.")
    print(header)
    step_rows = []
    for n in map(int, FLAGS.sizes):
        for name, build in builders.items():
            step_rows.append(per_step(name, build, n))
            print(step_rows[-1])
    accuracy_rows, references = [], []
    for viscosity in map(float, FLAGS.accuracy_viscosities):
        rows, reference = accuracy_matched(
            builders, list(map(int, FLAGS.accuracy_sizes)), list(map(float, FLAGS.cfls)), viscosity
        )
        accuracy_rows += rows
        references.append(reference)
    cheapest = _cheapest(accuracy_rows)
    os.makedirs(FLAGS.out, exist_ok=True)
    with open(os.path.join(FLAGS.out, "pde_solvers.json"), "w") as f:
        json.dump({"header": header, "per_step": step_rows, "accuracy": accuracy_rows,
                   "references": references, "cheapest": cheapest,
                   "flags": {k: FLAGS[k].value for k in (
                       "sizes", "accuracy_sizes", "accuracy_viscosities", "cfls", "horizon", "warmup",
                       "target_correlation", "repeats")}}, f, indent=2)
    table = _markdown(step_rows, accuracy_rows, references, cheapest, header)
    with open(os.path.join(FLAGS.out, "pde_solvers.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    run_tool(main)
