"""Diagnose multi-goal mode collapse: is it the critic, the QNE policy fit, or the α scale?

    python experiments/maxentdp/diagnose_multigoal.py --workdir=workdirs/maxentdp_quick_a10 \
        --out=workdirs/maxentdp_quick_a10/diagnosis.json
    python experiments/maxentdp/diagnose_multigoal.py --fixed_q   # (b) only, no workdir

(a) critic at the start state, for EVERY checkpoint kept in
    `<workdir>/runs/multigoal_{maxentdp,sac}/checkpoints` (the quick config keeps one per
    evaluation chunk): `diagnostics.start_state_report` of min(Q̄₁, Q̄₂)(s₀ = 0, a) on a
    41² action grid: strict local maxima, per goal sector (max_sector Q − max Q)/α, the
    sector masses of exp(Q/α) and of the policy (1,000 samples), their TV distance.
(b) `--fixed_q`: `diagnostics.fixed_q_sweep`, QNE alone with a FIXED 4-mode Q.
(c) the entropy term: α·H (H = `entropy_next` of metrics.jsonl, chunk means) against the
    mean Q of the batch and the training episodes' return.
Prints one JSON object and writes it to --out when given. Checkpoints are only read (each
step is copied to a temporary folder and restored from there).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.common import checkpoint, metrics as metrics_lib, workdir as wd
from lib.maxentdp import critics, diagnostics
from lib.maxentdp.multigoal import Q_GRID
from lib.maxentdp.runs import run_dir
from lib.maxentdp.training import make_task

flags.DEFINE_string("workdir", None, "a multi-goal run's workdir (with runs/ and config.json)")
flags.DEFINE_bool("fixed_q", False, "run the fixed-Q QNE sweep (b)")
flags.DEFINE_string("out", None, "write the JSON here as well")
FLAGS = flags.FLAGS


def load_config(workdir: str) -> ml_collections.ConfigDict:
    return ml_collections.ConfigDict(wd.read_json(os.path.join(workdir, wd.CONFIG)))


def restore_step(task, ckpt_dir: str, step: int, seed: int):
    """The train state saved at `step` (restored from a temporary copy of that step)."""
    abstract = jax.eval_shape(task.init_state, jax.random.key(seed))
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(ckpt_dir, str(step)), os.path.join(tmp, str(step)))
        ckpt = checkpoint.Checkpointer(tmp, save_every=1)
        try:
            state, got = ckpt.restore_latest(abstract)
        finally:
            ckpt.close()
    assert got == step, (got, step)
    return state


def q_over_training(config, workdir: str, algo: str) -> list[dict]:
    env, agent, run, task = make_task(config, "multigoal", algo)
    ckpt_dir = os.path.join(run_dir(workdir, "multigoal", algo), wd.CHECKPOINTS)
    steps = sorted(int(d) for d in os.listdir(ckpt_dir) if d.isdigit())
    q_net = critics.TwinQ(tuple(config.agent.critic_hidden))
    grid = jnp.asarray(diagnostics.action_grid(Q_GRID))

    @jax.jit
    def analyse(seeds, key):
        def per_seed(ag, k):
            q = jnp.min(q_net.apply(ag["target_critic"], jnp.zeros_like(grid), grid), axis=0)
            return q, agent.act(ag, jnp.zeros((1000, 2)), k)
        return jax.vmap(per_seed)(seeds, jax.random.split(key, run.num_seeds))

    out = []
    for step in steps:
        seeds = restore_step(task, ckpt_dir, step, config.train.seed)["seeds"]["agent"]
        q, samples = jax.device_get(analyse(seeds, jax.random.key(3)))
        alpha = np.exp(np.asarray(seeds["log_alpha"]))
        out.append({"env_steps": step * run.chunk_len,
                    **diagnostics.start_state_report(np.asarray(q), np.asarray(samples), alpha)})
    return out


def entropy_scale(workdir: str, algo: str) -> list[dict]:
    rows = metrics_lib.read_metrics(run_dir(workdir, "multigoal", algo))
    return [{"env_steps": r["env_steps"], "alpha": r["alpha"], "entropy_next": r["entropy_next"],
             "alpha_times_entropy": r["alpha"] * r["entropy_next"], "q_mean": r["q_mean"],
             "train_return": r["train_return"]} for r in rows
            if r["alpha"] > 0 and "entropy_next" in r]   # none with agent.backup = "softmax"


def main(_):
    out = {}
    if FLAGS.workdir:
        config = load_config(FLAGS.workdir)
        for algo in config.algos:
            out[f"q_over_training_{algo}"] = q_over_training(config, FLAGS.workdir, algo)
            out[f"entropy_scale_{algo}"] = entropy_scale(FLAGS.workdir, algo)
    if FLAGS.fixed_q:
        out["fixed_q"] = diagnostics.fixed_q_sweep()
    text = json.dumps(out, indent=1)
    print(text)
    if FLAGS.out:
        wd.write_json_atomic(FLAGS.out, out)


if __name__ == "__main__":
    run_tool(main)
