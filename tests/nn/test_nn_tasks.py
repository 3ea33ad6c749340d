"""lib/nn/tasks.py: the classifier Task's batches, its loss and first Adam step, bad input."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.nn.tasks import make_classifier_task


class _Linear(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(3)(x.reshape(x.shape[0], -1))


def _data(n=20):
    rng = np.random.default_rng(0)
    return rng.random((n, 4, 4)).astype(np.float32), rng.integers(0, 3, n)


def test_batches_are_the_seeded_draws_of_seed_salt_step():
    images, labels = _data()
    task = make_classifier_task(_Linear(), images, labels, lr=0.1, batch_size=6, seed=5, salt=7)
    idx = np.random.default_rng([5, 7, 3]).integers(0, 20, 6)
    batch = task.batch_fn(3, slice(2, 5))
    np.testing.assert_array_equal(batch["x"], images[idx][2:5])
    np.testing.assert_array_equal(batch["y"], labels[idx][2:5])
    other = make_classifier_task(_Linear(), images, labels, lr=0.1, batch_size=6, seed=5, salt=8)
    everything = slice(None)
    assert not np.array_equal(other.batch_fn(3, everything)["x"], task.batch_fn(3, everything)["x"])


def test_loss_is_the_cross_entropy_and_the_first_adam_step_moves_each_weight_by_lr():
    images, labels = _data()
    model, lr = _Linear(), 0.01
    task = make_classifier_task(model, images, labels, lr=lr, batch_size=8, seed=1, salt=0)
    state = task.init_state(jax.random.key(0))
    batch = task.batch_fn(0, slice(None))
    new, metrics = task.train_step(state, batch, jax.random.key(1))
    logits = model.apply(state["params"], jnp.asarray(batch["x"]))
    expect = -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(8), batch["y"]])
    np.testing.assert_allclose(metrics["loss"], expect, rtol=1e-6)
    moved = jax.tree.leaves(jax.tree.map(lambda a, b: jnp.abs(a - b), new["params"],
                                         state["params"]))
    for m in moved:   # Adam's first update is lr · g / (|g| + eps): lr wherever g is not tiny
        np.testing.assert_allclose(m[m > lr / 10], lr, rtol=1e-3)


def test_mismatched_images_and_labels_are_named():
    images, labels = _data()
    with pytest.raises(ValueError, match="20 images, 19 labels"):
        make_classifier_task(_Linear(), images, labels[:19], lr=0.1, batch_size=4, seed=0, salt=0)
