"""Generate (or find cached) train/test trajectories of a PDE system.

    python tools/make_pde_data.py --config=configs/pde_data/navier_stokes.py:quick --workdir=data/pde
    python tools/make_pde_data.py --config=configs/pde_data/kdv.py:tiny --config.data.seed=3

Writes `<workdir>/<pde>_<cache key>/{metadata.json,train.npz,test.npz}` (see
`lib/pde/dataset.py`); a second identical request returns at once (a corrupt cache is moved
aside to `<pde>_<cache key>.corrupt-<time>` and rebuilt). For 2-D systems a PNG of the
first trajectory, fine and coarse, goes to `<workdir>/plots/<pde>_<cache key>.png`
(vorticity for Navier–Stokes); making it re-simulates that trajectory on the fine grid
(one compilation, often as long as the generation of a tiny dataset), so it is skipped
when the dataset was cached and its PNG exists; `--noplot` skips it always. On several
devices the batch of trajectories is split over the mesh axis "data".

Long runs: `--shard_size=k` simulates k trajectories at a time and writes each finished
shard to `<workdir>/<pde>_<cache key>.partial/`; rerunning the same command after an
interruption skips the finished shards (the data do not depend on k; it is not part of the
cache key). Each shard logs a line with shards done/total and the ETA, e.g.

    nohup taskset -c 1 python tools/make_pde_data.py \\
        --config=configs/pde_data/navier_stokes.py:front_train_64_large --workdir=data/pde \\
        --shard_size=2 --noplot > make_data.log 2>&1 &

To use several cores, `--processes=N` (with `--shard_size`) starts this command N times,
each pinned to one of this process's cores (round robin) with `--processes=1 --noplot`, waits
for them and then plots; the same command started by hand once per core (`taskset -c 0`,
`taskset -c 1`) does the same. Each process claims the shards it simulates
(`<shard>.claim`), skips the ones another holds, and the first to see every shard assembles
the dataset (see `lib/pde/dataset.py`). One process with several CPU devices
(`JAX_NUM_CPU_DEVICES`) is not the way: for Navier–Stokes at 256² two devices over two cores
took 104 s per trajectory against 64–85 s for one device on one core.
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Sequence

import numpy as np
from absl import flags, logging

# JAX and the simulation load in the functions that simulate, after --help and config errors
from lib.common import cli, config as config_lib
from lib.pde.data_config import SpecError, spec_from_config

flags.DEFINE_bool("plot", True, "Write a PNG of fine and coarse snapshots (2-D systems).")
flags.DEFINE_integer("shard_size", 0, "Simulate and write this many trajectories at a time "
                     "(resumable; see the module docstring); 0: all in one batch, unless "
                     "shards of an interrupted run exist.", lower_bound=0)
flags.DEFINE_integer("processes", 1, "Simulate with this many processes, one per core (see the "
                     "module docstring); needs --shard_size.", lower_bound=1)
PROCESSES_NEED_SHARDS = "--processes > 1 needs --shard_size: the processes share the dataset shard by shard"


def processes_have_shards(values: dict) -> bool:
    """The check behind `PROCESSES_NEED_SHARDS` (absl's multi-flag validator: a flag-name dict)."""
    return values["processes"] == 1 or values["shard_size"] > 0


flags.register_multi_flags_validator(["processes", "shard_size"], processes_have_shards,
                                     PROCESSES_NEED_SHARDS)
FLAGS = flags.FLAGS


def child_commands(argv: Sequence[str], processes: int,
                   cores: Sequence[int]) -> list[tuple[list[str], int]]:
    """The `processes` commands of `--processes` and the core each is pinned to.

    `argv` is this process's (`sys.argv`); every child gets it with `--processes` and
    `--[no]plot` taken out and `--processes=1 --noplot` added, so each simulates shards and
    none plots; child i runs on `sorted(cores)[i % len(cores)]`.
    """
    drop = ("--processes", "-processes", "--plot", "--noplot", "-plot", "-noplot")
    args, skip = [], False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg in ("--processes", "-processes"):
            skip = True                              # its value is the next argument
        elif arg.split("=")[0] not in drop:
            args.append(arg)
    command = [sys.executable, argv[0], *args, "--processes=1", "--noplot"]
    cores = sorted(cores)
    return [(list(command), cores[i % len(cores)]) for i in range(processes)]


def run_processes(commands: list[tuple[list[str], int]]) -> None:
    """Run each command pinned to its core, all at once; wait for all of them. Raises
    RuntimeError naming the first that failed; an interrupt stops all of them."""
    children = []
    try:
        for command, core in commands:
            children.append(subprocess.Popen(
                command, preexec_fn=lambda core=core: os.sched_setaffinity(0, {core})))
            logging.info("process %d (pid %d) on core %d", len(children), children[-1].pid, core)
        codes = [child.wait() for child in children]
    except BaseException:
        for child in children:
            child.terminate()
        raise
    failed = [(i + 1, code) for i, code in enumerate(codes) if code]
    if failed:
        raise RuntimeError(f"process {failed[0][0]} of {len(codes)} exited with status "
                           f"{failed[0][1]}; rerunning the command resumes from the finished shards")


def fine_snapshots(solver, key, warmup_steps: int, every: int, count: int) -> np.ndarray:
    """`count` fine-grid observations of the trajectory started from `key`: after
    `warmup_steps` steps, then every `every` steps; `(count, C, n[, n])`.

    One compiled program (a `fori_loop` over a traced step count) serves the warm-up and
    every interval, so the plot costs one compilation of the solver step, not two.
    `solver`: a `lib.pde.systems.Solver`.
    """
    import jax

    advance = jax.jit(lambda state, n: jax.lax.fori_loop(0, n, lambda _, s: solver.step(s), state))
    observe = jax.jit(solver.observe)
    state = advance(jax.jit(solver.initial_state)(key), warmup_steps)
    frames = [np.asarray(observe(state))]
    for _ in range(count - 1):
        state = advance(state, every)
        frames.append(np.asarray(observe(state)))
    return np.stack(frames)


def _png_path(path: str, workdir: str) -> str:
    return os.path.join(workdir, "plots", os.path.basename(path) + ".png")


def _plot(spec, metadata: dict, path: str, workdir: str) -> str:
    """Fine vs coarse snapshots of train trajectory 0 at 4 times (`spec`: a
    `lib.pde.dataset.DatasetSpec`); returns the PNG path."""
    from lib.pde import dataset, navier_stokes, systems
    from lib.toolbox import plotting

    solver = systems.build(spec.pde, spec.params, spec.dtype)
    stride = max((metadata["n_frames"] - 1) // 3, 1)
    key = dataset.initial_keys(spec.seed, "train", 1)[0]
    fine = fine_snapshots(solver, key, metadata["warmup_steps"], metadata["save_every"] * stride,
                          min(4, metadata["n_frames"]))
    coarse = dataset.load_dataset(path, metadata)["train"]["data"][0, ::stride][: len(fine)]
    if spec.pde == "navier_stokes":
        fine, coarse = (
            np.asarray(navier_stokes.velocity_to_vorticity(f, solver.length)) for f in (fine, coarse)
        )
        name = "vorticity"
    else:
        fine, coarse, name = fine[:, 0], coarse[:, 0], metadata["fields"][0]
    times = metadata["warmup_steps"] * metadata["dt"] + metadata["frame_dt"] * stride * np.arange(len(fine))
    return plotting.field_grid(
        _png_path(path, workdir), [list(fine), list(coarse)],
        row_titles=[f"fine {metadata['fine_grid']}²", f"coarse {metadata['coarse_grid']}²"],
        col_titles=[f"t = {t:.2f}" for t in times], title=f"{spec.pde}: {name}",
    )


def make_dataset(config, workdir: str) -> str:
    """Validate `config`, generate its dataset under `workdir` (or reuse it); returns the path."""
    try:
        spec = spec_from_config(config)
    except SpecError as err:   # a key or value the schema refuses: one line, exit 2
        raise config_lib.ConfigError(str(err)) from None
    import jax

    from lib.common import mesh as mesh_lib, progress as progress_lib
    from lib.pde import dataset, systems

    metadata = dataset.dataset_metadata(spec)
    spawned = FLAGS.processes > 1 and not os.path.isdir(dataset.dataset_path(workdir, metadata))
    if spawned:
        run_processes(child_commands(sys.argv, FLAGS.processes, os.sched_getaffinity(0)))
    mesh = mesh_lib.make_mesh() if jax.device_count() > 1 else None
    total = metadata["warmup_steps"] + (metadata["n_frames"] - 1) * metadata["save_every"]
    bar = progress_lib.Progress(total, desc=f"{spec.pde} ({spec.n_train + spec.n_test} trajectories)")
    with jax.enable_x64(spec.dtype == "float64"):
        path, cached = dataset.generate_dataset(
            spec, workdir, mesh, progress=lambda done, _: bar.update(done, force=done == total),
            shard_size=FLAGS.shard_size or None,
        )
    how = (f"written by {FLAGS.processes} processes" if spawned
           else "found (cached)" if cached else "written")
    logging.info("%s dataset %s: %s", spec.pde, how, path)
    print(path)
    png = _png_path(path, workdir)
    if FLAGS.plot and systems.build(spec.pde, spec.params, spec.dtype).ndim == 2:
        if cached and os.path.isfile(png):
            logging.info("plot: %s (exists)", png)
        else:
            logging.info("plotting: simulating train trajectory 0 again on the fine grid "
                         "(--noplot skips this)")
            with jax.enable_x64(spec.dtype == "float64"):
                logging.info("plot: %s", _plot(spec, metadata, path, workdir))
    return path


if __name__ == "__main__":
    cli.run(make_dataset)
