"""The slot transformer: permutation equivariance without positional encoding, time input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.sketchdnn.denoiser import SketchDenoiser, sinusoidal


@jax.jit
def _perturbed(params, key):
    """Params with every leaf randomised (the adaLN modulations start at zero)."""
    leaves, tree = jax.tree.flatten(params)
    keys = jax.random.split(key, len(leaves))
    return jax.tree.unflatten(tree, [l + 0.3 * jax.random.normal(k, l.shape)
                                     for l, k in zip(leaves, keys)])


def test_permuting_slots_permutes_the_output_and_positional_encoding_breaks_it():
    rng = np.random.default_rng(0)         # numpy inputs and checks: fewer XLA compiles
    x = rng.normal(size=(3, 7, 21)).astype(np.float32)
    t = np.array([1, 20, 39], np.int32)
    perm = rng.permutation(7)
    outs = {}
    params = None
    for pe in (False, True):
        net = SketchDenoiser(num_steps=40, width=16, depth=1, heads=2, mlp_ratio=2,
                             positional_encoding=pe)
        if params is None:      # the encoding adds no parameters: one set serves both nets
            params = _perturbed(jax.jit(net.init)(jax.random.key(1), x, t), jax.random.key(2))
        apply = jax.jit(net.apply)
        y, y_perm = np.asarray(apply(params, x, t)), np.asarray(apply(params, x[:, perm], t))
        outs[pe] = float(np.max(np.abs(y_perm - y[:, perm])))
        assert y.shape == (3, 7, 21)
    # the time step reaches the output once the modulations are non-zero
    assert float(np.max(np.abs(np.asarray(apply(params, x, t + 1)) - y))) > 1e-3
    assert outs[False] < 1e-5
    assert outs[True] > 1e-2


def test_sinusoidal_encoding_and_input_checks():
    enc = sinusoidal(5, 8)
    np.testing.assert_allclose(enc[0], [0, 1] * 4, atol=1e-7)
    assert len({tuple(r) for r in np.round(enc, 5)}) == 5
    net = SketchDenoiser(num_steps=10, width=8, depth=1, heads=2)
    with pytest.raises(ValueError, match=r"x must be \(B, S, 21\)"):
        net.init(jax.random.key(0), jnp.zeros((2, 3, 20)), jnp.zeros((2,), jnp.int32))
