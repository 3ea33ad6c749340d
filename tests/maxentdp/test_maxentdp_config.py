"""Bad configs get a clear error before any compute."""
import pytest

from lib.common.config import ConfigError, flatten, load_config
from lib.maxentdp import agent as agent_lib
from lib.maxentdp.config_schema import validate

PATH = "configs/maxentdp/maxentdp.py"


@pytest.mark.parametrize("variant", ["tiny", "quick", "paper", "gpu", "official_full"])
def test_variants_validate(variant):
    validate(load_config(f"{PATH}:{variant}"))


def test_official_variant_has_the_issue_35_multigoal_setup():
    """10,000 random warm-up steps, the official clip bound, K >= 128, >= 50,000 steps, 3 seeds."""
    c = validate(load_config(f"{PATH}:official"))
    mg = c.env.multigoal
    assert c.envs == ("multigoal",) and c.diffusion.bound == "clip"
    assert mg.start_steps == 10_000 and c.diffusion.qne_samples >= 128
    assert mg.env_steps >= 50_000 and mg.num_seeds == 3
    assert load_config(f"{PATH}:quick").diffusion.bound == "tanh"      # the default is kept


def test_official_full_is_official_with_the_official_codes_sizes():
    """Only the sizes differ from `official`: K = 500, T = 20, 50 draws per level, (256, 256)
    networks, batch 256 (and the paper's time MLP and Fourier features)."""
    official, full = (flatten(validate(load_config(f"{PATH}:{v}"))) for v in ("official", "official_full"))
    changed = {k for k in official.keys() | full.keys() if official.get(k) != full.get(k)}
    assert changed == {"tag", "agent.batch_size", "agent.actor_hidden", "agent.critic_hidden",
                       "diffusion.eps_hidden", "diffusion.time_hidden", "diffusion.fourier_dim",
                       "diffusion.steps", "diffusion.qne_samples", "diffusion.logprob_draws"}
    assert (full["diffusion.qne_samples"], full["diffusion.steps"], full["diffusion.logprob_draws"],
            full["agent.batch_size"]) == (500, 20, 50, 256)
    assert tuple(full["agent.critic_hidden"]) == tuple(full["diffusion.eps_hidden"]) == (256, 256)


@pytest.mark.parametrize("key, value, words", [
    ("env.multigoal.alpha", 0.0, "env.multigoal.alpha"),
    ("env.pendulum.alpha", -0.1, "> 0"),
    ("diffusion.steps", 0, "diffusion.steps"),
    ("diffusion.eval_candidates", 0, "diffusion.eval_candidates"),
    ("diffusion.qne_samples", 0, ">= 1"),
    ("diffusion.bound", "sigmoid", "['tanh', 'clip']"),
    ("algos", ("maxentdp", "td3"), "td3"),
    ("env.pendulum.eval_every", 7, "multiple"),
    ("env.multigoal.start_steps", 10_000, "below"),
    ("run.time_budget_s", 0.0, "run.time_budget_s"),
    ("run.time_share.sac", 0.0, "run.time_share.sac"),
])
def test_bad_values_are_rejected_with_the_key_named(key, value, words):
    config = load_config(f"{PATH}:tiny")
    block, _, leaf = key.rpartition(".")
    target = config
    for part in block.split(".") if block else []:
        target = target[part]
    target[leaf] = value
    with pytest.raises(ConfigError, match=None) as err:
        validate(config)
    assert words in str(err.value), str(err.value)


def test_a_log_row_every_chunk_is_required_and_any_checkpoint_interval_is_fine():
    config = load_config(f"{PATH}:gpu")
    config.train.checkpoint_every = 7          # the deadline stop saves its own checkpoint
    validate(config)
    config.train.log_every = 2
    with pytest.raises(ConfigError, match="train.log_every"):
        validate(config)
    config.run.time_budget_s = None            # with or without a budget
    with pytest.raises(ConfigError, match="train.log_every"):
        validate(config)


@pytest.mark.parametrize("kwargs, words", [
    (dict(alpha=0.0), "alpha must be > 0"),
    (dict(steps=0), "diffusion steps must be >= 1"),
    (dict(eval_candidates=0), "eval_candidates must be >= 1"),
    (dict(qne_samples=0), "qne_samples must be >= 1"),
])
def test_agent_config_rejects_bad_values(kwargs, words):
    with pytest.raises(ValueError, match=words):
        agent_lib.AgentConfig(**kwargs)
