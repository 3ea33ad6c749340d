"""Scripted and random episodes in the multi-goal environment (lib/maxentdp/multigoal.py)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.maxentdp import envs, multigoal

P = envs.MultiGoalParams()
H = 30


def test_scripted_actions_from_the_start_state_reach_the_goal_they_point_at():
    """From s₀ = 0 a goal 5 away with threshold 1 is reached at step 5 (step 4 stops exactly
    at distance 1, which is not < 1); actions beyond the box are clipped to 1; standing
    still times out."""
    start = jnp.zeros((5, 2))
    dirs = jnp.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 3.0], [0.0, -1.0], [0.0, 0.0]])
    acts = jnp.broadcast_to(dirs[:, None, :], (5, H, 2))
    goal, length = multigoal.episode_goals(P, H, start, acts)
    np.testing.assert_array_equal(goal, [0, 1, 2, 3, -1])
    np.testing.assert_array_equal(length, [5, 5, 5, 5, H])
    # a diagonal walk passes between the goals: (k, k) is √((5−k)² + k²) ≥ 3.5 from each
    diag = jnp.ones((1, H, 2))
    goal, _ = multigoal.episode_goals(P, H, jnp.zeros((1, 2)), diag)
    assert int(goal[0]) == -1


def test_horizon_mismatch_is_named():
    with pytest.raises(ValueError, match="expected horizon = 30"):
        multigoal.episode_goals(P, H, jnp.zeros((1, 2)), jnp.zeros((1, 10, 2)))


def test_warmup_hits_match_the_episode_rate():
    """The collector-style warm-up (back-to-back episodes, auto-reset) and independent
    episodes measure the same thing: hits per goal ≈ steps / mean length × P(goal). 4 × 5,000
    steps against 4,000 episodes; the counts are Poisson-like (sd ≈ √(4·14) ≈ 7.5 for the
    total over goals of one seed), so a 25 % band on the 4-seed total is > 4 sd wide."""
    rates = multigoal.random_episode_goals(P, H, jax.random.key(0), 4_000)
    assert 0.25 < rates["reached_any"] < 0.35, rates        # measured 29.7 % on 20,000
    hits = jax.jit(jax.vmap(lambda k: multigoal.warmup_goal_hits(P, H, k, 5_000)))(
        jax.random.split(jax.random.key(1), 4))
    expected = 4 * 5_000 / rates["mean_length"] * rates["reached_any"]
    assert abs(int(hits.sum()) - expected) < 0.25 * expected, (hits, expected)
