"""Dynamic DETR's Hungarian matcher: scipy host callback vs the in-graph JAX one.

    python tools/bench/detr_matcher.py --out=workdirs/bench

Side by side in one run (config `loss.matcher`: "scipy" = `lib.detection.matching.assign`,
"jax" = `lib.detection.assignment.assign_jax`):

(a) Assignment alone: a jitted call on a (B, Q, M) float32 cost batch (`--batch`,
    `--queries`, `--objects`; 1..M valid objects per image), median of `--repeats` timed
    calls after compilation.
(b) One Dynamic DETR train step (`lib/dynamic_detr/training.make_task`, dense encoder,
    config `--variant`, its batch): compile time and steps/s over `--steps` steps after
    compilation.
(c) JAX's persistent compilation cache (`jax_compilation_cache_dir`, minimum compile time
    and entry size 0): for each matcher, two fresh processes compile the same train step
    against one empty cache directory; reported are the cache files the train step's compile
    added in each process and each process's compile time (a hit makes the second one
    fast). JAX does not cache executables that contain host callbacks.
Writes `<out>/detr_matcher.json` and `<out>/detr_matcher.md`. Not a test: the numbers
depend on the machine and its load.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.common import config as config_lib, paths
from lib.detection import assignment, matching
from lib.dynamic_detr.spec import EncoderSpec
from lib.dynamic_detr.training import make_task

flags.DEFINE_string("out", "workdirs/bench", "Output directory.")
flags.DEFINE_integer("batch", 32, "(a) images per assignment batch.")
flags.DEFINE_integer("queries", 100, "(a) queries Q.")
flags.DEFINE_integer("objects", 8, "(a) ground-truth slots M.")
flags.DEFINE_integer("repeats", 20, "(a) timed calls.")
flags.DEFINE_string("variant", "quick", "(b, c) Dynamic DETR config variant of the train step.")
flags.DEFINE_integer("steps", 10, "(b) timed train steps.")
flags.DEFINE_string("cache_child", None, "Internal: compile the train step with this matcher "
                    "against --cache_dir and print one JSON line.")
flags.DEFINE_string("cache_dir", None, "Internal: the persistent cache directory of --cache_child.")
FLAGS = flags.FLAGS

MATCHERS = {"scipy": matching.assign, "jax": assignment.assign_jax}


def assignment_time(name: str) -> dict:
    rng = np.random.default_rng(0)
    b, q, m = FLAGS.batch, FLAGS.queries, FLAGS.objects
    cost = jnp.asarray(rng.random((b, q, m)), jnp.float32)
    counts = rng.integers(1, m + 1, b)
    valid = jnp.asarray(np.arange(m)[None, :] < counts[:, None])
    fn = jax.jit(MATCHERS[name])
    t0 = time.perf_counter()
    jax.block_until_ready(fn(cost, valid))
    first = time.perf_counter() - t0
    times = []
    for _ in range(FLAGS.repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(cost, valid))
        times.append(time.perf_counter() - t0)
    return {"matcher": name, "batch": b, "queries": q, "objects": m, "first_call_s": first,
            "ms_per_call": 1e3 * statistics.median(times)}


def _train_step(name: str):
    """(jitted step, its arguments) of the dense pre-training stage of config --variant."""
    config = config_lib.load_config(paths.resolve(f"configs/dynamic_detr/dynamic_detr.py:{FLAGS.variant}"))
    config.loss.matcher = name
    task = make_task(config, EncoderSpec(), lr=config.optim.lr, steps=1000)
    state = task.init_state(jax.random.key(0))
    batch = task.batch_fn(0, np.arange(task.global_batch_size))
    return jax.jit(task.train_step), (state, batch, jax.random.key(1)), config


def train_step_speed(name: str) -> dict:
    step, args, config = _train_step(name)
    t0 = time.perf_counter()
    compiled = step.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    state, batch, key = args
    state, _ = compiled(state, batch, key)                # warm-up
    jax.block_until_ready(state)
    t0 = time.perf_counter()
    for _ in range(FLAGS.steps):
        state, metrics = compiled(state, batch, key)
    jax.block_until_ready((state, metrics))
    seconds = time.perf_counter() - t0
    return {"matcher": name, "variant": FLAGS.variant, "batch": config.data.batch_size,
            "queries": config.model.num_queries, "objects": config.data.max_objects,
            "dec_layers": config.model.dec_layers, "compile_s": compile_s,
            "steps_per_s": FLAGS.steps / seconds}


def _files(directory: str) -> list[str]:
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(directory) for f in fs)


def cache_child(name: str, cache_dir: str) -> dict:
    """Compile the train step once with the persistent cache on; count the files it added."""
    jax.config.update("jax_compilation_cache_dir", cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    step, args, _ = _train_step(name)
    jax.block_until_ready(args)
    before = set(_files(cache_dir))
    t0 = time.perf_counter()
    step.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    added = sorted(set(_files(cache_dir)) - before)
    return {"matcher": name, "compile_s": compile_s, "files_added": len(added),
            "file_names": [os.path.basename(f) for f in added]}


def cache_rows(name: str) -> dict:
    cache_dir = tempfile.mkdtemp(prefix=f"detr_matcher_cache_{name}_")
    runs = []
    try:
        for _ in range(2):
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), f"--cache_child={name}",
                 f"--cache_dir={cache_dir}", f"--variant={FLAGS.variant}"],
                capture_output=True, text=True, check=False, cwd=os.getcwd(),
                env={**os.environ, "PYTHONPATH": os.pathsep.join(
                    [os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])})
            if proc.returncode:
                raise RuntimeError(f"cache child ({name}) failed:\n{proc.stderr[-3000:]}")
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return {"matcher": name, "first": runs[0], "second": runs[1]}


def markdown(header: str, a: list[dict], b: list[dict], c: list[dict]) -> str:
    x = a[0]
    lines = [header, "",
             f"| matcher | (a) assignment, B={x['batch']} Q={x['queries']} M={x['objects']} (ms/call) "
             f"| (b) train step trace + compile (s) | (b) train steps/s | (c) cache files written "
             "(1st / 2nd process) | (c) trace + compile (s), 1st → 2nd process |",
             "|---|---|---|---|---|---|"]
    for ra, rb, rc in zip(a, b, c):
        lines.append(
            f"| {ra['matcher']} | {ra['ms_per_call']:.3g} | {rb['compile_s']:.1f} | "
            f"{rb['steps_per_s']:.2f} | {rc['first']['files_added']} / {rc['second']['files_added']} | "
            f"{rc['first']['compile_s']:.1f} → {rc['second']['compile_s']:.1f} |")
    y = b[0]
    lines += ["", f"(b, c): the `{y['variant']}` config's dense pre-training step (batch {y['batch']}, "
              f"Q = {y['queries']}, M = {y['objects']}, {y['dec_layers']} decoder layers matched "
              "per step), forward + backward + AdamW. Compile times are `jit(step).lower(...).compile()`: "
              "tracing and lowering (not cached) plus XLA compilation or the cache lookup."]
    return "\n".join(lines) + "\n"


def main(_):
    if FLAGS.cache_child:
        print(json.dumps(cache_child(FLAGS.cache_child, FLAGS.cache_dir)))
        return
    device = jax.devices()[0]
    header = (f"Device: {device.device_kind} ({jax.default_backend()}); jax {jax.__version__}; "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
              f"load average {os.getloadavg()[0]:.1f} at start.")
    print(header, flush=True)
    a = [assignment_time(n) for n in MATCHERS]
    print(a, flush=True)
    b = [train_step_speed(n) for n in MATCHERS]
    print(b, flush=True)
    c = [cache_rows(n) for n in MATCHERS]
    print(c, flush=True)
    os.makedirs(FLAGS.out, exist_ok=True)
    flag_names = ("batch", "queries", "objects", "repeats", "variant", "steps")
    with open(os.path.join(FLAGS.out, "detr_matcher.json"), "w") as f:
        json.dump({"header": header, "assignment": a, "train_step": b, "cache": c,
                   "flags": {k: FLAGS[k].value for k in flag_names}}, f, indent=2)
    table = markdown(header, a, b, c)
    with open(os.path.join(FLAGS.out, "detr_matcher.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    run_tool(main)
