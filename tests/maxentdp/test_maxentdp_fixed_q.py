"""QNE with a FIXED 4-mode Q gives a 4-mode policy (the multi-goal diagnosis, part (b)).

If these fail, a multi-goal collapse could be the policy fit's fault; while they pass, a
collapse with a learned critic has to be looked for in the critic (see the README)."""
import jax
import jax.numpy as jnp
import numpy as np

from lib.maxentdp import diagnostics


def test_sector_helpers_on_a_known_four_mode_q():
    q_fn = diagnostics.four_mode_q(radius=0.6, curvature=20.0, heights=(0.0, 0.0, 0.0, 0.0))
    u = np.linspace(-1.0, 1.0, 81, dtype=np.float32)
    acts = np.stack(np.meshgrid(u, u, indexing="xy"), -1).reshape(-1, 2)
    q = np.asarray(q_fn(jnp.asarray(acts)))
    assert diagnostics.local_maxima(q.reshape(81, 81)) == 4
    np.testing.assert_allclose(diagnostics.grid_sector_mass(acts, q, 1.0), 0.25, atol=1e-3)
    # raising mode 0 by α ln 2 doubles its mass (the modes are far from the sector edges)
    q2 = np.asarray(diagnostics.four_mode_q(0.6, 20.0, (np.log(2.0), 0, 0, 0))(jnp.asarray(acts)))
    np.testing.assert_allclose(diagnostics.grid_sector_mass(acts, q2, 1.0), [0.4, 0.2, 0.2, 0.2],
                               atol=0.01)
    stats = diagnostics.sector_stats(acts, q2, 1.0)
    np.testing.assert_allclose(stats["sector_gap_over_alpha"], [0.0] + [-np.log(2.0)] * 3,
                               atol=1e-5)
    np.testing.assert_allclose(stats["sector_argmax"][0], [0.6, 0.0], atol=0.02)


def test_qne_with_fixed_four_mode_q_keeps_all_modes():
    """A small diffusion policy trained only by QNE (K = 32, tanh bound) towards exp(Q/α) for
    a symmetric 4-mode Q puts 25 % ± 10 % of its samples in each goal sector."""
    res = diagnostics.fit_fixed_q(jax.random.key(0), num_candidates=32, steps=6, updates=300,
                                  batch=32, hidden=(32, 32), time_hidden=(16,), fourier=8,
                                  samples=1000, jit=jax.jit)
    np.testing.assert_allclose(res["expected_mass"], 0.25, atol=1e-3)
    assert np.all(np.abs(np.asarray(res["sector_mass"]) - 0.25) < 0.1), res
