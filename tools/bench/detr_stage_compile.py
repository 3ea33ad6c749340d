"""Dynamic DETR fine-tune stages with and without their train steps compiled ahead.

    python tools/bench/detr_stage_compile.py --variant=tiny --out=workdirs/bench

On the H200 lease every fine-tune stage spent 30-40 s compiling its train step inside its
share of the wall-clock budget. `lib/dynamic_detr/precompile.py` compiles the steps ahead
(in a background thread while pre-training runs, `run.precompile`) into JAX's persistent
cache, so that each stage's own compile becomes a cache read. This benchmark measures
what a stage costs on the clock, in fresh processes against one cache directory:

  cold        a process runs each fine-tune stage (`train_loop.train`, 1 step, from zero
              parameters) with an empty cache: the stage compiles its step itself;
  precompile  a process compiles every stage's step with `precompile.compile_step`;
  warm        a third process runs the same stages: their compiles are cache reads.

Reported per stage: seconds of `train_loop.train` cold and warm, and the precompile time
(which, in a run, overlaps pre-training). The in-graph matcher is used (`loss.matcher =
"jax"`); JAX does not cache steps with the scipy host callback. Writes
`<out>/detr_stage_compile.{json,md}`. Not a test: the numbers depend on machine and load.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import jax
from absl import flags

from lib.common.cli import run_tool
from lib.common import config as config_lib, paths

flags.DEFINE_string("out", "workdirs/bench", "Output directory.")
flags.DEFINE_string("variant", "tiny", "Dynamic DETR config variant.")
flags.DEFINE_integer("stages", 0, "Number of fine-tune stages (0: all of the variant's).")
flags.DEFINE_string("child", None, "Internal: 'stages' or 'precompile'.")
flags.DEFINE_string("cache_dir", None, "Internal: persistent cache directory of --child.")
FLAGS = flags.FLAGS


def _tasks(config):
    """{stage name: fine-tune Task} as the experiment builds them, from zero parameters."""
    from lib.dynamic_detr import training as detr_task
    params = detr_task.zero_params(config)
    vs = detr_task.variants(config)
    vs = vs[:FLAGS.stages] if FLAGS.stages else vs
    return {v.name: detr_task.make_finetune_task(config, v, params) for v in vs}


def child(mode: str, cache_dir: str) -> dict:
    from lib.common import mesh as mesh_lib, train_loop
    from lib.dynamic_detr import precompile
    precompile.enable_cache(cache_dir)
    config = config_lib.load_config(paths.resolve(f"configs/dynamic_detr/dynamic_detr.py:{FLAGS.variant}"))
    config.loss.matcher = "jax"
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    out = {}
    for name, task in _tasks(config).items():
        if mode == "precompile":
            out[name] = precompile.compile_step(task, mesh, config.train.seed)
            continue
        workdir = tempfile.mkdtemp(prefix="detr_stage_")
        try:
            t0 = time.perf_counter()
            train_loop.train(task, train_loop.LoopConfig(num_steps=1, log_every=1, checkpoint_every=1,
                                                         seed=config.train.seed),
                             workdir=workdir, mesh=mesh)
            out[name] = time.perf_counter() - t0
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return out


def _run_child(mode: str, cache_dir: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), f"--child={mode}",
                           f"--cache_dir={cache_dir}", f"--variant={FLAGS.variant}",
                           f"--stages={FLAGS.stages}"],
                          capture_output=True, text=True, check=False, cwd=os.getcwd(), env=env)
    if proc.returncode:
        raise RuntimeError(f"{mode} child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(_):
    if FLAGS.child:
        print(json.dumps(child(FLAGS.child, FLAGS.cache_dir)))
        return
    header = (f"Device: {jax.devices()[0].device_kind} ({jax.default_backend()}); jax {jax.__version__}; "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
              f"load average {os.getloadavg()[0]:.1f} at start; variant `{FLAGS.variant}`.")
    print(header, flush=True)
    cold_dir, warm_dir = tempfile.mkdtemp(prefix="detr_cold_"), tempfile.mkdtemp(prefix="detr_warm_")
    try:
        cold = _run_child("stages", cold_dir)
        pre = _run_child("precompile", warm_dir)
        warm = _run_child("stages", warm_dir)
    finally:
        shutil.rmtree(cold_dir, ignore_errors=True)
        shutil.rmtree(warm_dir, ignore_errors=True)
    lines = [header, "", "| stage | stage on the clock, cold (s) | precompile, ahead (s) | "
             "stage on the clock, precompiled (s) |", "|---|---|---|---|"]
    for name in cold:
        lines.append(f"| {name} | {cold[name]:.1f} | {pre[name]:.1f} | {warm[name]:.1f} |")
    lines.append(f"| **all {len(cold)}** | **{sum(cold.values()):.1f}** | **{sum(pre.values()):.1f}** | "
                 f"**{sum(warm.values()):.1f}** |")
    table = "\n".join(lines) + "\n"
    os.makedirs(FLAGS.out, exist_ok=True)
    with open(os.path.join(FLAGS.out, "detr_stage_compile.json"), "w") as f:
        json.dump({"header": header, "cold": cold, "precompile": pre, "warm": warm}, f, indent=2)
    with open(os.path.join(FLAGS.out, "detr_stage_compile.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    run_tool(main)
