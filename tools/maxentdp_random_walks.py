r"""Uniform random episodes in the multi-goal environment: how often a warm-up reaches a goal.

    python tools/maxentdp_random_walks.py --episodes=20000 \
        --out=workdirs/maxentdp/random_walks.json

Measures (lib/maxentdp/multigoal.py) the fraction of `episodes` uniform random episodes
from s₀ ~ N(0, 0.1² I) (horizon 30, the quick/official environment) that reach any goal and
each goal, their mean length, and the goal-reaching transitions per goal that the
collector's warm-up stores in its replay buffer after 1,000 and 10,000 random steps, for
`seeds` independent warm-ups. Prints one markdown summary; writes JSON with --out.
"""
from __future__ import annotations

import json

import jax
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.maxentdp import envs, multigoal

flags.DEFINE_integer("episodes", 20_000, "random episodes")
flags.DEFINE_integer("horizon", 30, "episode length limit")
flags.DEFINE_integer("seeds", 5, "independent warm-ups counted per warm-up length")
flags.DEFINE_integer("seed", 0, "PRNG seed")
flags.DEFINE_string("out", None, "write the measurement as JSON here")
FLAGS = flags.FLAGS


def main(argv):
    del argv
    p = envs.MultiGoalParams()
    key_ep, key_wu = jax.random.split(jax.random.key(FLAGS.seed))
    res = multigoal.random_episode_goals(p, FLAGS.horizon, key_ep, FLAGS.episodes)
    res["warmup_hits"] = {}
    for n in (1_000, 10_000):
        f = jax.jit(jax.vmap(lambda k, n=n: multigoal.warmup_goal_hits(p, FLAGS.horizon, k, n)))
        hits = np.asarray(jax.device_get(f(jax.random.split(jax.random.fold_in(key_wu, n),
                                                           FLAGS.seeds))))
        res["warmup_hits"][str(n)] = hits.tolist()            # (seeds, 4)
    any_se = np.sqrt(res["reached_any"] * (1 - res["reached_any"]) / FLAGS.episodes)
    print(f"{FLAGS.episodes} uniform random {FLAGS.horizon}-step episodes: "
          f"{100 * res['reached_any']:.1f} % ± {100 * any_se:.1f} reach a goal; per goal "
          + ", ".join(f"{100 * x:.1f} %" for x in res["reached_per_goal"])
          + f"; mean length {res['mean_length']:.1f} steps.")
    for n, hits in res["warmup_hits"].items():
        h = np.asarray(hits)
        print(f"warm-up of {n} random steps, {FLAGS.seeds} seeds: goal-reaching transitions "
              f"per goal {h.min()}–{h.max()} (mean {h.mean():.1f}; expected "
              f"{np.mean(res['expected_hits_per_goal'][n]):.1f}); per seed {hits}")
    if FLAGS.out:
        with open(FLAGS.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    run_tool(main)
