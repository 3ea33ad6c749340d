"""The DSL approximator at initialisation reduces to closed-form sines along straight lines."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.dsl import field_lines as fl
from lib.dsl.model import DSL, DSLConfig, count, dsl_param_count, mlp_baseline


def _exits(x, d):
    b, c = x @ d, x @ x - 1.0
    root = np.sqrt(b * b - c)
    return -b - root, -b + root


def test_initial_dsl_basis_is_the_interpolated_sine_basis():
    """At init a ≡ c (a unit vector), p = w = 1, q = 0: on the straight line through x the
    lumped-mass eigenvectors are exact nodal sines √(2/L) sin(kπt/L); the basis value is their
    P1 interpolant at s₀ = −t⁻ (the 'w_norm' basis), divided by the discrete entry slope and
    multiplied by v_k(entry) (the 'entry_slope' basis tested here)."""
    n_nodes, k = 12, 4
    xs = jnp.array([[0.1, -0.3, 0.2], [-0.5, 0.4, 0.0]])
    cfg = DSLConfig(num_modes=k, num_nodes=n_nodes, field_widths=(5,), coef_widths=(5,),
                    amp_widths=(5,), line=fl.LineConfig(num_steps=4, solver="heun"))
    model = DSL(cfg, dim=3, out=2)
    params = jax.jit(model.init)(jax.random.key(0))
    ev_slope = jax.jit(model.evaluate)(params, xs)
    c = np.asarray(params["field"]["params"]["drift"])
    np.testing.assert_allclose(np.linalg.norm(c), 1.0, rtol=1e-6)
    amp_apply = jax.jit(model.amp.apply)       # one compile for both points
    for i, x in enumerate(np.asarray(xs)):
        t_lo, t_hi = _exits(x, c)
        length, s0 = t_hi - t_lo, -t_lo
        assert abs(float(ev_slope.length[i]) - length) < 5e-5
        t = np.linspace(0, length, n_nodes)
        modes = np.arange(1, k + 1)
        nodal = np.sqrt(2 / length) * np.sin(modes[None, :] * np.pi * t[:, None] / length)
        ref = np.array([np.interp(s0, t, nodal[:, j]) for j in range(k)])
        np.testing.assert_allclose(np.asarray(ev_slope.eigenvalues[i]),
                                   4 / (length / (n_nodes - 1)) ** 2
                                   * np.sin(modes * np.pi / (2 * (n_nodes - 1))) ** 2, rtol=1e-4)
        v = np.asarray(amp_apply(params["amp"], jnp.asarray(x + t_lo * c)))
        slope = nodal[1] / t[1]
        np.testing.assert_allclose(np.asarray(ev_slope.basis[i]), v * ref / slope, rtol=2e-4,
                                   atol=2e-5)
        assert abs(float(ev_slope.position[i]) - s0) < 3e-5


def test_param_count_matched_mlp_and_config_errors():
    cfg = DSLConfig(num_modes=5, num_nodes=10, field_widths=(8,), coef_widths=(8,),
                    amp_widths=(8,))
    total = dsl_param_count(cfg, dim=4, out=3)
    # field (4·8+8 + 8·4+4 + drift 4) + coef (4·8+8 + 8·3+3) + amp (4·8+8 + 8·5+5) + head (5·3+3)
    assert total == (40 + 36 + 4) + (40 + 27) + (40 + 45) + 18
    assert count(jax.jit(DSL(cfg, 4, 3).init)(jax.random.key(1))) == total
    mlp, n = mlp_baseline(4, 3, 2, total)
    assert abs(n - total) <= 2 * mlp.widths[0] + 8
    with pytest.raises(ValueError, match="num_modes K = 9 is not allowed: num_nodes = 10"):
        DSL(DSLConfig(num_modes=9, num_nodes=10), 2, 2)
    with pytest.raises(ValueError, match="amplitude = 'free'"):
        DSL(DSLConfig(amplitude="free"), 2, 2)
    with pytest.raises(ValueError, match="domain = 'cube'"):
        DSL(DSLConfig(line=fl.LineConfig(domain="cube")), 2, 2)
