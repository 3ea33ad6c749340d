"""The long-rollout training levers of `lib.multipdenet.training`: pushforward, noise, the
correlation term and recomputation, each against a closed form or its plain counterpart."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import emulators, training
from lib.nn import FNO


def _scaling_emulator():
    """u_{k+1} = a · u_k with the scalar parameter a: every loss has a closed form."""
    def rollout(a, u0, n, remat=False):
        del remat
        return jnp.stack([a ** (k + 1) * u0 for k in range(n)])
    return emulators.Emulator(init=lambda key, u: jnp.float32(1.0), rollout=rollout, trainable=True)


def test_pushforward_starts_from_the_models_own_state_without_its_gradient():
    em = _scaling_emulator()
    rng = np.random.default_rng(0)
    u0 = jnp.asarray(rng.normal(size=(3, 5, 1)), jnp.float32)
    target = jnp.asarray(rng.normal(size=(3, 4, 5, 1)), jnp.float32)
    batch, a = {"u0": u0, "target": target}, jnp.float32(0.9)
    loss, grad = jax.value_and_grad(training.window_loss, argnums=1)(em, a, batch, 2, pushforward=2)
    # the window compares a·s and a²·s with labels 3 and 4, where s = a²·u0 is held fixed
    s = a ** 2 * u0
    expect = (jnp.sum((a * s - target[:, 2]) ** 2) + jnp.sum((a ** 2 * s - target[:, 3]) ** 2)) / (2 * u0.size)
    dexpect = (jnp.sum(2 * (a * s - target[:, 2]) * s)
               + jnp.sum(2 * (a ** 2 * s - target[:, 3]) * 2 * a * s)) / (2 * u0.size)
    np.testing.assert_allclose(loss, expect, rtol=1e-6)
    np.testing.assert_allclose(grad, dexpect, rtol=1e-5)
    # without pushforward the same labels 1-2 give the plain BPTT loss
    plain = training.window_loss(em, a, batch, 2)
    np.testing.assert_allclose(plain, (jnp.sum((a * u0 - target[:, 0]) ** 2)
                                       + jnp.sum((a ** 2 * u0 - target[:, 1]) ** 2)) / (2 * u0.size), rtol=1e-6)


def test_correlation_term_is_zero_for_an_affine_match_and_two_for_a_sign_flip():
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.normal(size=(2, 3, 8, 8, 2)), jnp.float32)
    np.testing.assert_allclose(training.correlation(x, 2 * x + 3), 1.0, rtol=1e-6)
    np.testing.assert_allclose(training.correlation(x, -x), -1.0, rtol=1e-6)
    em = _scaling_emulator()
    batch = {"u0": x[0], "target": jnp.stack([-x[0], -x[0]], 1)}  # a = 1 predicts u0, the labels are -u0
    mse = training.window_loss(em, jnp.float32(1.0), batch, 2)
    both = training.window_loss(em, jnp.float32(1.0), batch, 2, corr_weight=0.5)
    np.testing.assert_allclose(both - mse, 0.5 * 2.0, rtol=1e-5)


def test_noise_has_the_asked_fraction_of_each_samples_rms():
    u0 = jnp.concatenate([jnp.ones((1, 64, 64, 2)), 10 * jnp.ones((1, 64, 64, 2))])
    noisy = training.add_noise(u0, jax.random.key(0), 0.05)
    std = np.asarray(jnp.std(noisy - u0, axis=(1, 2, 3)))
    np.testing.assert_allclose(std, [0.05, 0.5], rtol=0.03)
    assert jnp.array_equal(training.add_noise(u0, jax.random.key(0), 0.0), u0)


def test_remat_gives_the_same_loss_and_gradient():
    em = emulators.autoregressive(FNO(out_channels=2, modes=3, width=4, depth=1,
                                      projection_width=8, spatial_dims=2))
    rng = np.random.default_rng(2)
    u0 = jnp.asarray(rng.normal(size=(2, 8, 8, 2)), jnp.float32)
    params = em.init(jax.random.key(0), u0)
    # perturb the zero-initialised output layer so the gradient flows through every step
    params = jax.tree.map(lambda p: p + 0.1 * jnp.ones_like(p), params)
    batch = {"u0": u0, "target": jnp.asarray(rng.normal(size=(2, 3, 8, 8, 2)), jnp.float32)}
    loss = lambda r: jax.value_and_grad(training.window_loss, argnums=1)(em, params, batch, 3, remat=r)
    (l0, g0), (l1, g1) = loss(False), loss(True)
    np.testing.assert_allclose(l0, l1, rtol=1e-6)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-7), g0, g1)
    assert any(float(jnp.abs(g).max()) > 0 for g in jax.tree.leaves(g0))
