"""The soft-max state value of the `softmax` backup (critics.soft_max_value):
V = α log ∫_{[−1,1]^A} exp(Q(a)/α) da from uniform action samples."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common.config import ConfigError, load_config
from lib.maxentdp import agent as agent_lib, critics
from lib.maxentdp.config_schema import validate

soft_max_value = jax.jit(critics.soft_max_value, static_argnums=2)


def test_constant_q_gives_q_plus_log_volume():
    # ∫ exp(k/α) da over [−1, 1]^3 = 8 exp(k/α): V = k + α·3·log 2, for any M.
    q = jnp.full((5, 4), 2.5)
    np.testing.assert_allclose(soft_max_value(q, 0.7, 3), 2.5 + 0.7 * 3 * np.log(2.0),
                               rtol=1e-6)


@pytest.mark.parametrize("c, alpha", [(1.0, 1.0), (4.0, 0.5)])
def test_linear_q_matches_the_closed_form(c, alpha):
    # Q(a) = c·a on [−1, 1]: ∫ exp(c a/α) da = 2 (α/c) sinh(c/α).
    a = jax.random.uniform(jax.random.key(0), (400_000, 1), minval=-1.0, maxval=1.0)
    v = soft_max_value(c * a, alpha, 1)[0]
    exact = alpha * np.log(2 * alpha / c * np.sinh(c / alpha))
    np.testing.assert_allclose(float(v), exact, atol=0.01 * max(1.0, abs(exact)))


def test_small_alpha_approaches_the_hard_max():
    # Two modes, heights 1 at a = 0.5 and 0.8 at a = −0.5, on an even grid of actions: the
    # soft-max tends to the higher one as α → 0 (Laplace: 1 + α log √(πα/20) ≈ 0.968).
    a = jnp.linspace(-1, 1, 2001)[:, None]
    q = jnp.where(a > 0, 1.0 - 20 * (a - 0.5) ** 2, 0.8 - 20 * (a + 0.5) ** 2)
    v = soft_max_value(q, 0.01, 1)[0]
    assert abs(float(v) - float(q.max())) < 0.05


def test_bad_backup_is_rejected():
    config = load_config("configs/maxentdp/maxentdp.py:tiny")
    config.agent.backup = "hardmax"
    with pytest.raises(ConfigError, match="agent.backup"):
        validate(config)
    with pytest.raises(ValueError, match="backup_samples must be >= 1"):
        agent_lib.AgentConfig(backup="softmax", backup_samples=0)
