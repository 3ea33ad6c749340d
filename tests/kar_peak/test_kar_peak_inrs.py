"""INR kinds behind one interface; PEAK encoding closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.kar_peak import encodings
from lib.kar_peak.inrs import INR, KINDS


def test_kar_peak_every_inr_kind_maps_coordinates_to_outputs():
    x = jnp.linspace(-1, 1, 10).reshape(5, 2)
    for kind in KINDS:
        model = INR(kind=kind, width=8, depth=2, out_dim=3, levels=2, features=4)
        y = jax.jit(lambda x, m=model: m.apply(m.init(jax.random.key(0), x), x))(x)
        assert y.shape == (5, 3) and bool(jnp.all(jnp.isfinite(y))), kind
    with pytest.raises(ValueError, match="unknown INR kind"):
        INR(kind="hash").init(jax.random.key(0), x)


def test_kar_peak_encodings_closed_forms():
    x = jnp.array([[0.25, -0.5]])
    pe = encodings.positional_encoding(x, 2)
    expect = np.concatenate([np.sin(np.pi * np.array([0.25, 0.5, -0.5, -1.0])),
                             np.cos(np.pi * np.array([0.25, 0.5, -0.5, -1.0]))])
    np.testing.assert_allclose(pe[0], expect, atol=1e-6)
    peak = encodings.PEAK(features=6, sigma=2.0, order=1, seed=3)
    params = peak.init(jax.random.key(0), x)
    b = encodings.gaussian_frequencies(3, 6, 2, 2.0)
    # at init (a_1 = 1) PEAK is the Fourier feature map of its initial frequencies
    np.testing.assert_allclose(peak.apply(params, x), encodings.fourier_features(x, b), atol=1e-6)
    # order-2 sketch: unit-norm-preserving in expectation, and shape 2·2m
    peak2 = encodings.PEAK(features=6, sigma=2.0, order=2, seed=3)
    assert peak2.apply(peak2.init(jax.random.key(0), x), x).shape == (1, 24)


def test_kar_peak_learnable_frequencies_get_gradients_only_when_enabled():
    x = jax.random.uniform(jax.random.key(1), (8, 2), minval=-1, maxval=1)
    for learn in (True, False):
        model = INR(kind="peak", width=8, depth=1, features=4, learn_frequencies=learn)
        p = jax.jit(model.init)(jax.random.key(0), x)
        g = jax.jit(jax.grad(lambda q, m=model: jnp.sum(m.apply(q, x) ** 2)))(p)
        gf = g["params"]["PEAK_0"]["frequencies"]
        assert (float(jnp.abs(gf).max()) > 0) == learn
        assert float(jnp.abs(g["params"]["PEAK_0"]["coef_1"]).max()) > 0


def test_kar_peak_siren_initialisation_ranges():
    model = INR(kind="siren", width=16, depth=2, omega0=30.0)
    p = jax.jit(model.init)(jax.random.key(0), jnp.zeros((1, 2)))["params"]
    assert float(jnp.abs(p["Dense_0"]["kernel"]).max()) <= 0.5          # U(-1/d, 1/d), d = 2
    assert float(jnp.abs(p["Dense_1"]["kernel"]).max()) <= (6 / 16) ** 0.5 / 30
