"""When is the Kolmogorov flow of configs/pde_data/navier_stokes.py statistically steady?

    python tools/bench/multipdenet_attractor.py --n=64 --n_ics=4 --time=40
    python tools/bench/multipdenet_attractor.py --n=32 --n_ics=2 --time=4 --every=0.5  # smoke

Starts `--n_ics` random fields as the dataset does (max speed 7, peak wavenumber 4, seed
`--seed`), runs the spectral ETDRK4 solver on an n² grid with the dataset's physics
(ν = 1e-3, drag 0.1, forcing sin 4y, CFL 0.5), and every `--every` time units records the
energy spectrum (`lib.multipdenet.attractor`), the rms speed and the energy fraction at
|k| >= 8. Writes `--out` (JSON) and a PNG beside it: the spectrum at several times, and
the distance of the spectrum (averaged over the ICs and a running window of `--window`
records) from its mean over the second half of the run, against time, with the first time
it stays under `--tol`. Not a test.
"""
from __future__ import annotations

import math
import os
import time

import jax
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.common import workdir as wd
from lib.multipdenet import attractor
from lib.pde import systems
from lib.toolbox import plotting

flags.DEFINE_integer("n", 64, "Grid.")
flags.DEFINE_integer("n_ics", 4, "Initial conditions.")
flags.DEFINE_float("time", 40.0, "Simulated time units.")
flags.DEFINE_float("every", 1.0, "Record interval (time units).")
flags.DEFINE_float("tol", 0.2, "Stationarity tolerance (relative L1 of the spectrum).")
flags.DEFINE_integer("window", 3, "Records in the running mean of the spectrum.")
flags.DEFINE_bool("render", False, "Only recompute the distance and redraw from --out.")
flags.DEFINE_integer("seed", 7, "Seed of the initial conditions.")
flags.DEFINE_string("out", "workdirs/bench/multipdenet_attractor.json", "Output JSON (PNG beside).")
FLAGS = flags.FLAGS
PHYSICS = dict(length=2 * math.pi, viscosity=1e-3, drag=0.1, forcing_wavenumber=4,
               forcing_scale=1.0, max_velocity=7.0, peak_wavenumber=4.0, cfl=0.5)


def simulate(n: int, n_ics: int, total: float, every: float, seed: int) -> dict:
    solver = systems.build("navier_stokes", dict(PHYSICS, n=n))
    steps = max(1, round(every / solver.dt))
    keys = jax.random.split(jax.random.key(seed), n_ics)
    state = jax.jit(jax.vmap(solver.initial_state))(keys)
    advance = jax.jit(lambda s: jax.lax.fori_loop(0, steps, lambda _, x: jax.vmap(solver.step)(x), s))
    times, spectra, t0 = [], [], time.perf_counter()
    for i in range(int(round(total / (steps * solver.dt))) + 1):
        if i:
            state = advance(state)
        omega = np.asarray(state)[:, 0]
        if not np.isfinite(omega).all():
            raise FloatingPointError(f"non-finite vorticity at t = {i * steps * solver.dt:.3g}")
        times.append(i * steps * solver.dt)
        spectra.append(attractor.energy_spectrum(omega, PHYSICS["length"]))
    spectra = np.asarray(spectra)  # (T, n_ics, K)
    energy = spectra.sum(-1)
    return {"n": n, "n_ics": n_ics, "seed": seed, "dt": solver.dt, "times": times,
            "spectra_mean": spectra.mean(1).tolist(), "rms_speed": np.sqrt(2 * energy).mean(1).tolist(),
            "high_k_fraction": (spectra[..., 8:].sum(-1) / energy).mean(1).tolist(),
            "wall_s": time.perf_counter() - t0}


def figure(r: dict, path: str, tol: float) -> str:
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    t, spectra = np.asarray(r["times"]), np.asarray(r["spectra_mean"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    k = np.arange(1, spectra.shape[1])
    for i in np.unique(np.linspace(0, len(t) - 1, 6).astype(int)):
        a.loglog(k, spectra[i, 1:], label=f"t = {t[i]:.3g}")
    a.set(xlabel="|k|", ylabel="E(k) (mean over ICs)", title=f"energy spectrum, {r['n']}²")
    a.legend(fontsize=7)
    b.semilogy(t, r["distance"], "k.-", label="spectrum distance from late mean")
    b.axhline(tol, color="r", ls="--", label=f"tol {tol:g}")
    if r["settled"] is not None:
        b.axvline(r["settled"], color="g", ls=":", label=f"stays under tol from t = {r['settled']:.3g}")
    b.set(xlabel="time since the random field", ylabel="relative L1", title="stationarity")
    b.legend(fontsize=7)
    return plotting.save(fig, path)


def main(_):
    if FLAGS.render:
        r = wd.read_json(FLAGS.out)
    else:
        r = simulate(FLAGS.n, FLAGS.n_ics, FLAGS.time, FLAGS.every, FLAGS.seed)
    r["distance"] = attractor.stationarity(np.asarray(r["spectra_mean"]), FLAGS.window).tolist()
    r["tol"], r["window"] = FLAGS.tol, FLAGS.window
    r["settled"] = attractor.settled_time(np.asarray(r["times"]), np.asarray(r["distance"]), FLAGS.tol)
    wd.write_json_atomic(FLAGS.out, r)
    print(figure(r, os.path.splitext(FLAGS.out)[0] + ".png", FLAGS.tol))
    for t, d, u, h in zip(r["times"], r["distance"], r["rms_speed"], r["high_k_fraction"]):
        print(f"t = {t:6.2f}  distance {d:.3f}  rms speed {u:.3f}  E(|k|>=8)/E {h:.4f}")
    print(f"settled (distance <= {FLAGS.tol:g} from then on): {r['settled']}; wall {r['wall_s']:.0f} s")


if __name__ == "__main__":
    run_tool(main)
