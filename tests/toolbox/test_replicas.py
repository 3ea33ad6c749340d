"""lib.toolbox.replicas: R replicas in one vmapped step train as each would alone."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from lib.common import optim
from lib.toolbox import replicas


def test_replicas_train_as_if_alone():
    """R replicas in one vmapped step follow, each, the trajectory of one trained alone from
    its own key on its own batch column (shared arguments: batch axis None)."""
    opt = optax.chain(optax.clip_by_global_norm(0.5), optax.adamw(0.05, weight_decay=0.1))
    init = lambda k: {"w": jax.random.normal(k, (3,)), "b": jnp.zeros(())}

    def loss(p, x, y, scale):                       # x (B, 3) per replica, y shared (B,)
        r = x @ p["w"] + p["b"] - y
        return scale * jnp.mean(r ** 2), jnp.max(jnp.abs(r))

    keys = jax.random.split(jax.random.key(3), 4)
    xs = jax.random.normal(jax.random.key(4), (5, 8, 4, 3))          # (steps, B, R, 3)
    y = jnp.linspace(-1.0, 1.0, 8)
    step = jax.jit(replicas.update(loss, opt, batch_axes=(1, None, None), has_aux=True))
    state = replicas.init_state(init, opt, keys)
    for t in range(5):
        state, losses, aux = step(state, xs[t], y, 2.0)
    assert int(state["step"]) == 5 and losses.shape == (4,) and aux.shape == (4,)
    for r in range(4):
        p = init(keys[r])
        p, trace = optim.minimize(lambda p, x: loss(p, x, y, 2.0), p, opt, 5, xs=xs[:, :, r],
                                  has_aux=True)
        for a, b in zip(jax.tree.leaves(p), jax.tree.leaves(state["params"])):
            np.testing.assert_allclose(b[r], a, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(losses[r], trace[0][-1], rtol=1e-6)
    with pytest.raises(ValueError, match="2 batch arguments, 3 batch_axes"):
        step(state, xs[0], y)
